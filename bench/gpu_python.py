"""What the Python GPU benchmarks need before they start: torch with an
NVIDIA GPU. Checked after the arguments are parsed, so that --help and a bad
flag answer on any machine, and a machine without a GPU gets a sentence
naming what is missing instead of a traceback."""

import os
import sys


def require_gpu_torch():
    """torch, when it sees a GPU; else exits 2 saying what is missing."""
    me = os.path.basename(sys.argv[0])
    try:
        import torch
    except ImportError:
        print(f"{me}: needs torch with CUDA and an NVIDIA GPU; this Python ({sys.executable}) has no torch",
              file=sys.stderr)
        raise SystemExit(2)
    if not torch.cuda.is_available():
        print(f"{me}: needs an NVIDIA GPU; torch {torch.__version__} sees none (no device or driver here)",
              file=sys.stderr)
        raise SystemExit(2)
    return torch
