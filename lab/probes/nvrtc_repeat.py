"""Whether NVRTC's log keeps ptxas's report (-v) when the same program is
compiled again in one process, with and without the driver loaded: on the
H100 machine the CUDA build test's third compile of one source had an empty
log (lab/runs/h100-2026-12-06/README.md)."""

import ctypes
import os
import sys

sys.path.insert(0, os.path.dirname(__file__))
from ptxas_report import SOURCE  # noqa: E402


def main():
    n = ctypes.CDLL("libnvrtc.so.13")
    inc = "/usr/local/cuda/include"

    def compile_once(entry, source=SOURCE, extra=()):
        prog = ctypes.c_void_p()
        n.nvrtcCreateProgram(ctypes.byref(prog), source.encode(), b"scale.cu", 0, None, None)
        n.nvrtcAddNameExpression(prog, entry.encode())
        opts = [b"--gpu-architecture=sm_90a", b"-DFACTOR=2", f"--include-path={inc}".encode(), b"--ptxas-options=-v"]
        opts += [o.encode() for o in extra]
        r = n.nvrtcCompileProgram(prog, len(opts), (ctypes.c_char_p * len(opts))(*opts))
        size = ctypes.c_size_t()
        n.nvrtcGetProgramLogSize(prog, ctypes.byref(size))
        n.nvrtcDestroyProgram(ctypes.byref(prog))
        return r, size.value

    print("=== repeats, no driver loaded")
    for i, entry in enumerate(["scale<4>", "plain", "plain", "plain"]):
        print(i, entry, compile_once(entry))
    print("nonce comment:", compile_once("plain", SOURCE + "\n// nonce 1\n"))
    print("nonce define:", compile_once("plain", extra=["-DTUNEKIT_NONCE=7"]))
    cuda = ctypes.CDLL("libcuda.so.1")
    print("=== cuInit", cuda.cuInit(0))
    for i in range(3):
        print(i, "plain", compile_once("plain"))
    print("nonce comment:", compile_once("plain", SOURCE + "\n// nonce 2\n"))


if __name__ == "__main__":
    main()
