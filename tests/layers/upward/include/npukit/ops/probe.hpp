// An ops header (fixture for the layering check).
#pragma once
