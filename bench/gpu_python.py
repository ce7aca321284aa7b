"""What the Python GPU benchmarks need before they start: torch with an
NVIDIA GPU, and the tunekit binary they run. Checked after the arguments are
parsed, so that --help and a bad flag answer on any machine, and a machine
without a GPU or a build gets a sentence naming what is missing instead of a
traceback."""

import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def add_tunekit_argument(ap):
    """--tunekit, defaulting to the binary a plain build of this checkout makes."""
    ap.add_argument("--tunekit", default=os.path.join(ROOT, "build", "bin", "tunekit"),
                    help="the tunekit binary to run (default: %(default)s, what `cmake --build build` makes; "
                    "on a GPU machine scripts/gpu.sh builds build-gpu/tunekit/bin/tunekit)")


def require_tunekit(path):
    """Exits 2 naming the binary when it is not there to run: subprocess would
    raise FileNotFoundError from deep inside the first tune."""
    if not (os.path.isfile(path) and os.access(path, os.X_OK)):
        me = os.path.basename(sys.argv[0])
        print(f"{me}: no tunekit binary at {path}: build it or pass --tunekit PATH", file=sys.stderr)
        raise SystemExit(2)


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
