#!/usr/bin/env python3
"""tunekit's worker, replayed through the driver API from Python (issue #5,
run 15i): does its way of timing explain why it reads gemm_gemv at
(1, 4096, 4096) about 0.9 us above common.timed_us (lab/runs/issue-5-run-15.md,
run 15f)?

  python3 lab/probes/worker_replica_probe.py DIR [--with-torch] [--torch-data] [--null-stream] [--carveout PERCENT]   # DIR: a `tunekit tune -o DIR` of one gemm_gemv config

No torch and no CuPy in this process (unless --with-torch, which
initialises torch and calls cuBLAS once first, or --torch-data, which
draws A and B with torch; --null-stream times on the legacy default stream
instead of the worker's non-blocking one, --carveout sets the kernel's
preferred shared memory carveout): ctypes calls into libcuda as
src/backend/cuda/worker.cpp does. It retains the primary context, makes a
non-blocking stream, cuMemAllocs A, B, C and a 256 MB flush buffer, and
loads the cubin tunekit built in DIR and the worker's own PTX flush (read
from worker.cpp). Then it times in two ways, alternating:
  worker   a group of one sample, one wait, then one group of 210 samples
           enqueued back to back (flush, event, kernel, event); the median
           of the 200 samples after the first, as the worker's warm-up and
           grouping leave them
  timed_us 100 unrecorded flush + kernel pairs, then 300 samples enqueued
           back to back, as common.timed_us does
The launch is run 14f's config: 256 blocks of 256 threads (the spec's grid
for it), no dynamic shared memory. Each round then times the timed_us way
with B and the flush buffer allocated otherwise: by the virtual memory API
in 2 MiB physical chunks, as torch's expandable segments allocate, or in
one 32 MiB chunk; and with the flush made otherwise: the worker's kernel
with one 16-byte store per thread over a grid that covers the buffer (the
order torch's zero_ writes in), or the driver's cuMemsetD32Async.
"""
import ctypes
import glob
import json
import os
import re
import statistics
import sys

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
N = K = 4096


class Driver:
    def __init__(self):
        self.lib = ctypes.CDLL("libcuda.so.1")

    def __call__(self, name, *args):
        rc = getattr(self.lib, name)(*args)
        if rc != 0:
            raise RuntimeError(f"{name}: CUresult {rc}")


def main():
    d = Driver()
    tk_dir = sys.argv[1]
    if "--with-torch" in sys.argv[2:]:
        # torch first, in this process and the same primary context: does
        # anything it sets up move the kernel?
        import torch
        x = torch.ones(64, 64, device="cuda", dtype=torch.bfloat16)
        torch.matmul(x, x)
        torch.cuda.synchronize()
        print("torch initialised first (cuBLAS called once)")
    cubin = None
    for path in glob.glob(os.path.join(tk_dir, "cache", "cuda", "build", "*.cubin")):
        with open(path[: -len(".cubin")] + ".json") as fh:
            if json.load(fh)["lowered"] == "gemm_gemv":
                cubin = path
    with open(os.path.join(ROOT, "src", "backend", "cuda", "worker.cpp")) as fh:
        ptx = re.search(r'kFlushPtx = R"\((.*?)\)";', fh.read(), re.S).group(1).encode() + b"\0"

    u64, vp = ctypes.c_uint64, ctypes.c_void_p
    d("cuInit", 0)
    dev, ctx, stream = ctypes.c_int(), vp(), vp()
    d("cuDeviceGet", ctypes.byref(dev), 0)
    d("cuDevicePrimaryCtxRetain", ctypes.byref(ctx), dev)
    d("cuCtxSetCurrent", ctx)
    if "--null-stream" in sys.argv[2:]:
        print("on the legacy default stream")  # (stream stays NULL)
    else:
        d("cuStreamCreate", ctypes.byref(stream), 1)  # CU_STREAM_NON_BLOCKING, as the worker

    def alloc(nbytes):
        p = u64()
        d("cuMemAlloc_v2", ctypes.byref(p), ctypes.c_size_t(nbytes))
        return p

    class Location(ctypes.Structure):
        _fields_ = [("type", ctypes.c_int), ("id", ctypes.c_int)]

    class Prop(ctypes.Structure):  # CUmemAllocationProp
        _fields_ = [("type", ctypes.c_int), ("handle_types", ctypes.c_int), ("location", Location),
                    ("win32", vp), ("flags", ctypes.c_ubyte * 8)]

    class Access(ctypes.Structure):  # CUmemAccessDesc
        _fields_ = [("location", Location), ("flags", ctypes.c_int)]

    def alloc_vmm(nbytes, page):
        """Virtual memory management, as torch's expandable segments
        allocate: physical chunks of `page` bytes (one cuMemCreate each)
        mapped one after another into a reserved range."""
        prop = Prop(type=1, handle_types=0, location=Location(type=1, id=0))  # pinned, on device 0
        gran = ctypes.c_size_t()
        d("cuMemGetAllocationGranularity", ctypes.byref(gran), ctypes.byref(prop), 0)
        page = max(page, gran.value)
        size = -(-nbytes // page) * page
        p = u64()
        d("cuMemAddressReserve", ctypes.byref(p), ctypes.c_size_t(size), ctypes.c_size_t(0), u64(0), u64(0))
        for off in range(0, size, page):
            h = u64()
            d("cuMemCreate", ctypes.byref(h), ctypes.c_size_t(page), ctypes.byref(prop), u64(0))
            d("cuMemMap", u64(p.value + off), ctypes.c_size_t(page), ctypes.c_size_t(0), h, u64(0))
        acc = Access(location=Location(type=1, id=0), flags=3)  # read and write
        d("cuMemSetAccess", p, ctypes.c_size_t(size), ctypes.byref(acc), ctypes.c_size_t(1))
        return p

    rng = np.random.default_rng(1)
    def bf16(n):  # uniform in [-1, 1), rounded to bf16 (the top half of an fp32)
        return (rng.uniform(-1, 1, n).astype(np.float32).view(np.uint32) >> 16).astype(np.uint16)
    a_host, b_host = bf16(K), bf16(N * K)
    if "--torch-data" in sys.argv[2:]:
        # the values drawn as the Python benches draw them (torch's uniform_
        # on the GPU, bf16 rounded to nearest), copied here
        import torch
        a_host, b_host = (torch.empty(n, device="cuda", dtype=torch.bfloat16).uniform_(-1, 1).view(torch.int16)
                          .cpu().numpy().view(np.uint16) for n in (K, N * K))
        print("A and B drawn by torch")
    A, C = alloc(a_host.nbytes), alloc(2 * N)
    flush_bytes = 256_000_000
    # B and the flush buffer by cuMemAlloc (as the worker), or by 2 MiB
    # physical chunks (as torch's expandable segments), or one 32 MiB chunk
    Bs = {"cuMemAlloc": alloc(b_host.nbytes), "vmm 2 MiB": alloc_vmm(b_host.nbytes, 2 << 20),
          "vmm 32 MiB": alloc_vmm(b_host.nbytes, 32 << 20)}
    Fs = {"cuMemAlloc": alloc(flush_bytes), "vmm 2 MiB": alloc_vmm(flush_bytes, 2 << 20)}
    B, F = u64(Bs["cuMemAlloc"].value), u64(Fs["cuMemAlloc"].value)  # what the launches pass
    d("cuMemcpyHtoD_v2", A, a_host.ctypes.data_as(vp), ctypes.c_size_t(a_host.nbytes))
    for b in Bs.values():
        d("cuMemcpyHtoD_v2", b, b_host.ctypes.data_as(vp), ctypes.c_size_t(b_host.nbytes))

    mod, fmod, fn, ffn = vp(), vp(), vp(), vp()
    with open(cubin, "rb") as fh:
        image = fh.read()
    d("cuModuleLoadData", ctypes.byref(mod), ctypes.c_char_p(image))
    d("cuModuleGetFunction", ctypes.byref(fn), mod, b"gemm_gemv")
    if "--carveout" in sys.argv[2:]:  # CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT, in percent
        d("cuFuncSetAttribute", fn, 9, int(sys.argv[sys.argv.index("--carveout") + 1]))
    carve = ctypes.c_int()
    d("cuFuncGetAttribute", ctypes.byref(carve), 9, fn)
    print(f"preferred shared memory carveout: {carve.value}")
    d("cuModuleLoadData", ctypes.byref(fmod), ctypes.c_char_p(ptx))
    d("cuModuleGetFunction", ctypes.byref(ffn), fmod, b"tunekit_flush")

    m, n, k, nk = ctypes.c_int(1), ctypes.c_int(N), ctypes.c_int(K), ctypes.c_int(1)
    kparams = (vp * 7)(*[ctypes.cast(ctypes.pointer(x), vp) for x in (A, B, C, m, n, k, nk)])
    n16, value, read = u64(flush_bytes // 16), ctypes.c_uint(0), ctypes.c_uint(0)
    fparams = (vp * 4)(*[ctypes.cast(ctypes.pointer(x), vp) for x in (F, n16, value, read)])
    sms = ctypes.c_int()
    d("cuDeviceGetAttribute", ctypes.byref(sms), 16, dev)  # CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT

    flush_kind = ["worker"]

    def flush():
        value.value += 1
        if flush_kind[0] == "worker":  # the worker's launch: 4 blocks per SM, a grid-strided loop
            d("cuLaunchKernel", ffn, 4 * sms.value, 1, 1, 512, 1, 1, 0, stream, fparams, None)
        elif flush_kind[0] == "one store per thread":  # the same kernel, each thread one 16-byte store
            d("cuLaunchKernel", ffn, -(-n16.value // 512), 1, 1, 512, 1, 1, 0, stream, fparams, None)
        else:  # the driver's memset
            d("cuMemsetD32Async", F, ctypes.c_uint(value.value), ctypes.c_size_t(flush_bytes // 4), stream)

    def kernel():
        d("cuLaunchKernel", fn, 256, 1, 1, 256, 1, 1, 0, stream, kparams, None)

    events = []
    def ensure_events(count):
        while len(events) < count:
            a, b = vp(), vp()
            d("cuEventCreate", ctypes.byref(a), 0)
            d("cuEventCreate", ctypes.byref(b), 0)
            events.append((a, b))

    def group(count, warm=0):
        ensure_events(count)
        for _ in range(warm):
            flush()
            kernel()
        for i in range(count):
            flush()
            d("cuEventRecord", events[i][0], stream)
            kernel()
            d("cuEventRecord", events[i][1], stream)
        d("cuEventSynchronize", events[count - 1][1])
        out = []
        for i in range(count):
            ms = ctypes.c_float()
            d("cuEventElapsedTime", ctypes.byref(ms), events[i][0], events[i][1])
            out.append(1000.0 * ms.value)
        return out

    c_host = np.empty(N, dtype=np.uint16)
    kernel()
    d("cuStreamSynchronize", stream)
    d("cuMemcpyDtoH_v2", c_host.ctypes.data_as(vp), C, ctypes.c_size_t(c_host.nbytes))
    ref = (a_host.astype(np.uint32) << 16).view(np.float32).astype(np.float64) @ \
        (b_host.reshape(N, K).astype(np.uint32) << 16).view(np.float32).astype(np.float64).T
    got = (c_host.astype(np.uint32) << 16).view(np.float32)
    print(f"cubin {os.path.basename(cubin)}: max abs diff against fp64 {np.abs(got - ref).max():.3g}")

    for rnd in range(4):
        B.value, F.value = Bs["cuMemAlloc"].value, Fs["cuMemAlloc"].value
        group(1)
        w = group(210)[1:201]
        t = group(300, warm=100)
        print(f"round {rnd}: worker-style {statistics.median(w):.2f} us (p10 {np.percentile(w, 10):.2f}, "
              f"p90 {np.percentile(w, 90):.2f}) | timed_us-style {statistics.median(t):.2f} us "
              f"(p10 {np.percentile(t, 10):.2f}, p90 {np.percentile(t, 90):.2f})")
        cells = []
        for kind in ("one store per thread", "memset", "worker"):
            flush_kind[0] = kind
            cells.append(f"{kind}: {statistics.median(group(300, warm=100)):.2f}")
        print("  timed_us-style by flush: " + " | ".join(cells))
        cells = []
        for bn, bp in Bs.items():
            for fname, fp in Fs.items():
                B.value, F.value = bp.value, fp.value  # (the parameter arrays point at B and F)
                cells.append(f"B {bn}, flush {fname}: {statistics.median(group(300, warm=100)):.2f}")
        print("  timed_us-style by allocation: " + " | ".join(cells))


if __name__ == "__main__":
    main()
