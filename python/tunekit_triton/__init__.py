"""tunekit's Triton backend, Python side: the worker, the compile helper and the load-time checks.

The C++ backend (src/backend/triton/) starts these as child processes of a
python3 that has triton and torch; see python/README.md.
"""

PROTOCOL_VERSION = 1
