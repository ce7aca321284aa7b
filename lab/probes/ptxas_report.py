"""What NVRTC's log and nvcc's output hold with ptxas -v on this machine (a
probe for src/backend/cuda/builder.cpp's ptxas_resources): compiles the
CUDA build test's source and prints both raw reports."""

import ctypes
import os
import shutil
import subprocess
import tempfile

SOURCE = r'''
#include <cuda_fp16.h>
#include <cuda_bf16.h>
template <int UNROLL>
__global__ void scale(const float* x, float* y, float a, int n) {
  int i = (blockIdx.x * blockDim.x + threadIdx.x) * UNROLL;
#pragma unroll
  for (int u = 0; u < UNROLL; ++u)
    if (i + u < n) y[i + u] = a * x[i + u] * FACTOR;
}
extern "C" __global__ void plain(__nv_bfloat16* y, __half h, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = __float2bfloat16(__half2float(h));
}
'''


def main():
    for name in ("libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so"):
        try:
            n = ctypes.CDLL(name)
            break
        except OSError:
            n = None
    major, minor = ctypes.c_int(), ctypes.c_int()
    n.nvrtcVersion(ctypes.byref(major), ctypes.byref(minor))
    print(f"NVRTC {name}: {major.value}.{minor.value}")
    inc = next((d for d in (os.environ.get("CUDA_HOME", ""), "/usr/local/cuda") if d and os.path.exists(d + "/include/cuda_fp16.h")), "")
    for entry in ("plain", "scale<4>"):
        prog = ctypes.c_void_p()
        n.nvrtcCreateProgram(ctypes.byref(prog), SOURCE.encode(), b"scale.cu", 0, None, None)
        n.nvrtcAddNameExpression(prog, entry.encode())
        opts = [b"--gpu-architecture=sm_90a", b"-DFACTOR=2"] + ([f"--include-path={inc}/include".encode()] if inc else []) + [b"--ptxas-options=-v"]
        r = n.nvrtcCompileProgram(prog, len(opts), (ctypes.c_char_p * len(opts))(*opts))
        size = ctypes.c_size_t()
        n.nvrtcGetProgramLogSize(prog, ctypes.byref(size))
        log = ctypes.create_string_buffer(size.value)
        n.nvrtcGetProgramLog(prog, log)
        lowered = ctypes.c_char_p()
        n.nvrtcGetLoweredName(prog, entry.encode(), ctypes.byref(lowered))
        print(f"--- NVRTC {entry} (lowered {lowered.value}), result {r}, log {size.value} bytes:\n{log.value.decode(errors='replace')}")
    nvcc = shutil.which("nvcc") or ("/usr/local/cuda/bin/nvcc" if os.path.exists("/usr/local/cuda/bin/nvcc") else None)
    if nvcc:
        with tempfile.TemporaryDirectory() as d:
            open(d + "/k.cu", "w").write(SOURCE)
            p = subprocess.run([nvcc, "-cubin", "-gencode=arch=compute_90a,code=sm_90a", "--ptxas-options=-v", "-DFACTOR=2",
                                "-o", d + "/k.cubin", d + "/k.cu"], capture_output=True, text=True)
            print(f"--- nvcc {nvcc} rc {p.returncode}\nstdout:\n{p.stdout}\nstderr:\n{p.stderr}")


if __name__ == "__main__":
    main()
