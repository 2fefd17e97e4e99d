// A core header (fixture for the layering check).
#pragma once
