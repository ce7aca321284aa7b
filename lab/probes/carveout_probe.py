#!/usr/bin/env python3
"""What does a kernel pay for its shared memory right after the L2 flush?
(issue #5: the fixed cost under the latency-bound goals.)

  python3 lab/probes/carveout_probe.py

do_bench's flush (torch's fill kernel) uses no shared memory, so the SMs run it
with the largest L1. A timed kernel that asks for shared memory makes them
switch the L1 / shared-memory split (the carveout) first. This times, after
each flush (common.timed_us), the same do-nothing kernel (132 x 128 threads)
launched with 0 to 200 KiB of dynamic shared memory, and with no shared memory
but a preferred carveout of 100% (the split changes, nothing is allocated),
then the ideal register-load read of 1 and 32 MiB (STREAM_SRC's ldg_4_0_1,
4 blocks of 256 per SM) with and without an unused shared-memory request, the
request once with the driver's choice of split and once with the largest.
If the split is what costs, the carveout-only launch costs what the large
requests do.
"""

import lab_common  # noqa: E402,F401  (bench/kernels on the path, the lab's flushes registered)
import common  # noqa: E402

# Identical kernels, one module per variant (CuPy caches modules by their
# source, hence the tag): a function's carveout preference is its own
# attribute and must not leak into the next variant.
SRC = r"""
extern "C" __global__ void idle(float* out) { extern __shared__ float s[]; if (threadIdx.x == 4095) out[0] = s[0]; }
"""
KIB = 1024


def main():
    import cupy as cp
    import torch

    out = cp.zeros(1024, dtype=cp.float32)
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    rows = []

    def idle_kernel(smem, carveout=None):
        fn = cp.RawModule(code=SRC + f"// {smem} {carveout}\n").get_function("idle")
        if smem > 48 * KIB:
            fn.max_dynamic_shared_size_bytes = smem
        if carveout is not None:
            fn.preferred_shared_memory_carveout = carveout
        args = (out,)
        return lambda: fn((sms,), (128,), args, shared_mem=smem)

    def read_kernel(nbytes, smem, carveout=None):
        buf = cp.zeros(nbytes // 4, dtype=cp.uint32)
        code = common.STREAM_SRC + f"// {nbytes} {smem}\n"
        fn = cp.RawModule(code=code, options=("-std=c++17",)).get_function("ldg_4_0_1")
        if smem > 48 * KIB:
            fn.max_dynamic_shared_size_bytes = smem
        if carveout is not None:
            fn.preferred_shared_memory_carveout = carveout
        args = common.stream_args("ldg_4_0_1", buf, nbytes, out)
        return (lambda: fn((4 * sms,), (256,), args, shared_mem=smem)), buf

    with common.torch_stream():
        for smem in (0, 1 * KIB, 8 * KIB, 32 * KIB, 100 * KIB, 200 * KIB):
            f = idle_kernel(smem)
            rows.append((f"idle kernel, {smem // KIB} KiB dynamic shared memory",
                         [common.timed_us(f, fl) for fl in common.FLUSHES]))
        f = idle_kernel(0, carveout=100)
        rows.append(("idle kernel, 0 KiB, preferred carveout 100%", [common.timed_us(f, fl) for fl in common.FLUSHES]))
        for mib in (1, 32):
            # (32 KiB, 100%): the largest split, so that the four blocks per SM stay resident
            for smem, carveout in ((0, None), (32 * KIB, None), (32 * KIB, 100)):
                f, buf = read_kernel(mib << 20, smem, carveout)
                pref = "" if carveout is None else f", preferred carveout {carveout}%"
                rows.append((f"read {mib} MiB (ldg_4_0_1, 4 x 256 per SM), {smem // KIB} KiB shared memory{pref}",
                             [common.timed_us(f, fl) for fl in common.FLUSHES]))
                del buf

    print("\n| kernel | after the write flush, us | after the read flush, us |")
    print("|---|---|---|")
    for label, (w, r) in rows:
        print(f"| {label} | {w:.2f} | {r:.2f} |")


if __name__ == "__main__":
    main()
