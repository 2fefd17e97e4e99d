"""npukit: neural-network operators with the exact semantics of NPUs and runtimes.

Every function works on numpy arrays. Operators that ONNX defines take ONNX's
name in snake case and ONNX's attribute names as keywords; the seed-only
operators keep their seed names.
"""
from ._npukit import *  # noqa: F401,F403
from ._npukit import __version__  # noqa: F401
