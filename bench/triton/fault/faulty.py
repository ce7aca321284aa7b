"""A copy kernel with a planted fault: OFFSET moves every load out of bounds.

bench/triton/autotune_fault.py tunes it twice over the same configs, one of
which has OFFSET = 2**28 (a read 1 GiB past the buffer): with
@triton.autotune in the process, and with tunekit (faulty.yaml).
"""

import triton
import triton.language as tl


@triton.jit
def faulty_copy(x, y, n, BLOCK: tl.constexpr, OFFSET: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    inside = offs < n
    tl.store(y + offs, tl.load(x + offs + OFFSET, mask=inside), mask=inside)


def copy_reference(x):
    return x.clone()
