"""Helpers shared by the kernel benchmarks in bench/kernels (issue #5):
running `tunekit tune` and reading its JSON export, reading a spec's launch
expressions, compiling a .cu with CuPy, and handing torch tensors to CuPy.

Nothing here touches the GPU at import time; torch and cupy are imported by
the functions that need them.
"""
import json
import math
import os
import re
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
COPY_BW = 4.25e12  # H200 device-to-device copy, bytes read + written per second (/work/shared/gpu/README.md)


def log(*a):
    print(*a, flush=True)


# ---- tunekit ------------------------------------------------------------------

def tunekit_tune(tunekit, spec, out_dir, json_path, sizes=None, extra=(), fresh=False):
    """Runs `tunekit tune SPEC` (sizes: {name: value} given as axes -a NAME=[VALUE],
    each replacing that name in every size of the spec; the duplicates this
    makes are merged by tunekit) and returns the parsed JSON export. The DB and build cache in out_dir are shared between calls, so a
    rerun resumes."""
    cmd = [tunekit, "tune", spec, "--no-progress", "-o", out_dir, "--json", json_path,
           "--csv", os.path.splitext(json_path)[0] + ".csv"]
    for k, v in (sizes or {}).items():
        cmd += ["-a", f"{k}=[{v}]"]
    if fresh:
        cmd.append("--fresh")
    cmd += list(extra)
    log("$", " ".join(cmd))
    t0 = time.monotonic()
    p = subprocess.run(cmd, capture_output=True, text=True)
    wall = time.monotonic() - t0
    tail = [ln for ln in p.stdout.strip().splitlines() if ln.startswith(("best:", "default:", "speedup", "verification",
                                                                          "time:", "no valid", "size {"))
            or re.match(r"^\d+ trials?", ln)]
    log("\n".join("  " + ln for ln in tail[-12:]))
    log(f"  ({wall:.1f} s)")
    if p.returncode != 0:
        log(p.stdout[-3000:])
        log(p.stderr[-3000:])
        raise SystemExit(f"tunekit failed ({p.returncode}): {' '.join(cmd)}")
    with open(json_path) as f:
        return json.load(f)


def ok_trials(size_report):
    """The trials of one size of a JSON export that ran correctly, fastest first."""
    ts = [t for t in size_report["trials"] if t["status"] == "ok" and t.get("time_us") is not None]
    return sorted(ts, key=lambda t: t["time_us"])


def best_trial(size_report, where=None):
    """The fastest ok trial (optionally among those whose config passes `where`)."""
    for t in ok_trials(size_report):
        if where is None or where(t["config"]):
            return t
    return None


# Parameters a spec pins to the problem size (gemm_mma's load PATH): not part
# of a config's identity across shapes.
SIZE_PINNED = ("PATH",)


def config_key(cfg):
    return tuple(sorted((k, v) for k, v in cfg.items() if k not in SIZE_PINNED))


def gemm_mma_path(size):
    """gemm_mma.yaml's PATH constraint: the load path a shape needs."""
    K, N = size["K"], size["N"]
    if size["B_NK"]:
        return 1 if K % 8 == 0 else 2
    return 3 if K % 8 == 0 and N % 8 == 0 else (4 if K % 8 == 0 else 5)


# ---- spec launch expressions ----------------------------------------------------

def _split_flow(text):
    """Splits the inside of a YAML flow list at top-level commas (quotes and
    brackets respected)."""
    items, depth, cur, quote = [], 0, "", None
    for ch in text:
        if quote:
            cur += ch
            if ch == quote:
                quote = None
            continue
        if ch in "\"'":
            quote = ch
            cur += ch
        elif ch in "([{":
            depth += 1
            cur += ch
        elif ch in ")]}":
            depth -= 1
            cur += ch
        elif ch == "," and depth == 0:
            items.append(cur)
            cur = ""
        else:
            cur += ch
    if cur.strip():
        items.append(cur)
    return [i.strip().strip("\"'") for i in items]


def spec_launch(spec_path):
    """{'grid': [expr...], 'block': [expr...], 'shared_memory': expr or None}
    from the spec's `kernel:` mapping. Uses PyYAML when present, else reads the
    three keys from flow-style lines (the style of this repository's specs)."""
    try:
        import yaml  # noqa: WPS433
        with open(spec_path) as f:
            k = yaml.safe_load(f)["kernel"]
        as_list = lambda v: [str(x) for x in (v if isinstance(v, list) else [v])]  # noqa: E731
        return {"grid": as_list(k["grid"]), "block": as_list(k["block"]),
                "shared_memory": str(k["shared_memory"]) if k.get("shared_memory") is not None else None}
    except ImportError:
        pass
    out = {"grid": None, "block": None, "shared_memory": None}
    in_kernel = False
    with open(spec_path) as f:
        for line in f:
            s = line.split(" #")[0].rstrip()
            if re.match(r"^kernel:\s*$", s):
                in_kernel = True
                continue
            if in_kernel and s and not s.startswith(" "):
                break
            m = re.match(r"^\s+(grid|block|shared_memory):\s*(.*)$", s) if in_kernel else None
            if not m:
                continue
            key, val = m.group(1), m.group(2).strip()
            if key == "shared_memory":
                out[key] = val.strip("\"'")
            elif val.startswith("["):
                out[key] = _split_flow(val[1:val.rindex("]")])
            else:
                out[key] = [val.strip("\"'")]
    if out["grid"] is None or out["block"] is None:
        raise ValueError(f"{spec_path}: cannot read kernel.grid / kernel.block")
    return out


def eval_expr(expr, names):
    """Evaluates a tunekit T1 expression (the Python subset) over sizes, config
    values and machine properties."""
    env = {"__builtins__": {}, "ceil_div": lambda a, b: -(-a // b), "min": min, "max": max, "abs": abs,
           "ceil": math.ceil}
    env.update(names)
    return eval(expr, env)  # noqa: S307 (our own spec files)


def launch_dims(launch, names):
    grid = tuple(int(eval_expr(e, names)) for e in launch["grid"])
    block = tuple(int(eval_expr(e, names)) for e in launch["block"])
    smem = int(eval_expr(launch["shared_memory"], names)) if launch["shared_memory"] else 0
    return grid, block, smem


# ---- CuPy -----------------------------------------------------------------------

_modules = {}


def cuda_include():
    for var in ("CUDA_HOME", "CUDA_PATH"):
        v = os.environ.get(var)
        if v and os.path.exists(os.path.join(v, "include", "cuda_bf16.h")):
            return os.path.join(v, "include")
    return "/usr/local/cuda/include" if os.path.exists("/usr/local/cuda/include/cuda_bf16.h") else None


def nvcc_path():
    for var in ("CUDA_HOME", "CUDA_PATH"):
        v = os.environ.get(var)
        if v and os.path.exists(os.path.join(v, "bin", "nvcc")):
            return os.path.join(v, "bin", "nvcc")
    return "/usr/local/cuda/bin/nvcc" if os.path.exists("/usr/local/cuda/bin/nvcc") else "nvcc"


def compile_kernel(source, entry, config, cache_dir):
    """The kernel `entry` of `source` built with -D defines from `config`:
    CuPy's RawModule through NVRTC; when NVRTC refuses the source (e.g. it
    needs sm_90a-only instructions or host headers), nvcc -cubin for sm_90a
    loaded with RawModule(path=...)."""
    import cupy as cp
    key = (source, entry, tuple(sorted(config.items())))  # every define, size-pinned ones too
    if key in _modules:
        return _modules[key]
    defines = [f"-D{k}={v}" for k, v in config.items()]
    with open(source) as f:
        code = f.read()
    opts = ["-std=c++17"] + defines
    inc = cuda_include()
    if inc:
        opts.append("-I" + inc)
    opts.append("-I" + os.path.dirname(os.path.abspath(source)))
    try:
        fn = cp.RawModule(code=code, options=tuple(opts)).get_function(entry)
        fn.attributes  # forces the compile and load now, not inside a graph capture
        how = "nvrtc"
    except Exception as e:  # noqa: BLE001
        log(f"  NVRTC failed for {os.path.basename(source)} {config} ({str(e).splitlines()[0][:200]}); trying nvcc")
        os.makedirs(cache_dir, exist_ok=True)
        tag = "_".join(f"{k}{v}" for k, v in config.items())
        cubin = os.path.join(cache_dir, f"{os.path.splitext(os.path.basename(source))[0]}_{tag}.cubin")
        cmd = [nvcc_path(), "-std=c++17", "-gencode=arch=compute_90a,code=sm_90a", "-cubin", *defines,
               "-o", cubin, source]
        p = subprocess.run(cmd, capture_output=True, text=True)
        if p.returncode != 0:
            raise SystemExit(f"nvcc failed: {' '.join(cmd)}\n{p.stderr[-3000:]}")
        fn = cp.RawModule(path=cubin).get_function(entry)
        how = "nvcc"
    attrs = fn.attributes
    _modules[key] = (fn, how, attrs)
    return _modules[key]


def set_smem(fn, smem):
    """Dynamic shared memory above 48 KiB needs the opt-in attribute."""
    if smem > 48 * 1024:
        fn.max_dynamic_shared_size_bytes = smem


def to_cupy(t):
    """A torch CUDA tensor as a CuPy array over the same memory (bf16 as int16:
    CuPy has no bf16; the kernel only sees the pointer)."""
    import cupy as cp
    import torch
    if t.dtype == torch.bfloat16:
        t = t.view(torch.int16)
    return cp.from_dlpack(t)


def torch_stream():
    """CuPy's handle on torch's current stream, so that CuPy launches, torch
    work, do_bench's events and CUDA-graph capture all see one stream."""
    import cupy as cp
    import torch
    return cp.cuda.ExternalStream(torch.cuda.current_stream().cuda_stream)


def do_bench_us(fn, rep=200):
    """triton.testing.do_bench median (L2 flushed before each run), in us."""
    import triton.testing
    return 1000.0 * triton.testing.do_bench(fn, warmup=25, rep=rep, return_mode="median")


# ---- timing under a chosen L2 flush ---------------------------------------------
#
# do_bench (and tunekit's `cache: cold`) flush the L2 by writing 256 MB, which
# leaves it full of dirty lines: the timed kernel then pays for writing them
# back as its reads evict them (bench/gpu/stream_floor_probe.py: a 32 MiB read
# takes 14.2 us after it, 12.0 us after a read flush). A read flush
# (tunekit's `cache: cold-read`) evicts the kernel's data and leaves only
# clean lines. Both are offered so that a figure can say which it used.
FLUSHES = ("write", "read")
_flush_bufs = {}


def flush_fn(kind):
    """A function that flushes the L2 the given way ("write" as do_bench: 256 MB
    of stores; "read": a 1 GiB read)."""
    import torch
    if kind not in _flush_bufs:
        if kind == "write":
            buf = torch.empty(64 << 20, dtype=torch.int32, device="cuda")
            _flush_bufs[kind] = lambda: buf.zero_()
        elif kind == "read":
            buf = torch.ones(256 << 20, dtype=torch.float32, device="cuda")
            _flush_bufs[kind] = lambda: buf.sum()
        else:
            raise ValueError(f"flush must be one of {FLUSHES}, not {kind!r}")
    return _flush_bufs[kind]


def timed_us(fn, flush="write", n=200, warmup_ms=25.0):
    """Median of n samples of fn, each after the given L2 flush and timed by
    its own event pair, enqueued back to back after about warmup_ms of the
    same (clocks ramp up under load), as do_bench does. With flush="write"
    this is do_bench's procedure."""
    import torch
    f = flush_fn(flush)
    est0, est1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    est0.record()
    for _ in range(5):
        f()
        fn()
    est1.record()
    torch.cuda.synchronize()
    for _ in range(max(1, int(warmup_ms * 5 / max(est0.elapsed_time(est1), 1e-3)))):
        f()
        fn()
    start = [torch.cuda.Event(enable_timing=True) for _ in range(n)]
    end = [torch.cuda.Event(enable_timing=True) for _ in range(n)]
    for i in range(n):
        f()
        start[i].record()
        fn()
        end[i].record()
    torch.cuda.synchronize()
    return 1000.0 * sorted(a.elapsed_time(b) for a, b in zip(start, end))[n // 2]


# An ideal streaming read: block b reads its contiguous share of n 16-byte
# words, U loads in flight per thread, and writes nothing (unless a checksum
# hits a magic value). No kernel that must read those bytes can beat it by
# much, so it is the floor a bandwidth-bound kernel is held to.
STREAM_SRC = r"""
template <int U>
__device__ void stream(const uint4* __restrict__ p, unsigned long long n, float* out) {
  const unsigned long long lo = n * blockIdx.x / gridDim.x, hi = n * (blockIdx.x + 1) / gridDim.x;
  unsigned acc = 0;
  unsigned long long i = lo + threadIdx.x;
  for (; i + (U - 1) * blockDim.x < hi; i += U * blockDim.x) {
    uint4 v[U];
#pragma unroll
    for (int u = 0; u < U; ++u) {
      const uint4* q = p + i + u * blockDim.x;
      asm volatile("ld.global.nc.L1::no_allocate.v4.u32 {%0,%1,%2,%3}, [%4];"
                   : "=r"(v[u].x), "=r"(v[u].y), "=r"(v[u].z), "=r"(v[u].w) : "l"(q));
    }
#pragma unroll
    for (int u = 0; u < U; ++u) acc ^= v[u].x ^ v[u].y ^ v[u].z ^ v[u].w;
  }
  for (; i < hi; i += blockDim.x) { uint4 v = p[i]; acc ^= v.x ^ v.w; }
  if (acc == 0x9e3779b9u) out[blockIdx.x] = 1.f;
}
extern "C" __global__ void empty_kernel(float* out) { if (threadIdx.x == 1023) out[0] = 1.f; }
extern "C" __global__ void stream4(const uint4* p, unsigned long long n, float* out) { stream<4>(p, n, out); }
extern "C" __global__ void stream8(const uint4* p, unsigned long long n, float* out) { stream<8>(p, n, out); }
extern "C" __global__ void stream16(const uint4* p, unsigned long long n, float* out) { stream<16>(p, n, out); }
"""
STREAM_SHAPES = ((4, 1, 1024), (4, 4, 256), (8, 2, 1024), (16, 1, 1024), (16, 4, 256))  # (U, blocks per SM, threads)
_stream_cache = {}


def _stream_module():
    import cupy as cp
    if "stream" not in _modules:
        _modules["stream"] = cp.RawModule(code=STREAM_SRC, options=("-std=c++17",))
    return _modules["stream"]


def stream_read_us(nbytes, flush="write", n=100):
    """The fastest of a few launch shapes of the ideal streaming read of
    nbytes (rounded down to 16), timed as timed_us; (us, 'U=.. GxT')."""
    import cupy as cp
    import torch
    key = (nbytes, flush)
    if key in _stream_cache:
        return _stream_cache[key]
    mod = _stream_module()
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    buf = cp.zeros(max(16, nbytes) // 4, dtype=cp.uint32)
    out = cp.zeros(1 << 16, dtype=cp.float32)
    n16 = max(1, nbytes // 16)
    best = None
    with torch_stream():
        for u, per_sm, threads in STREAM_SHAPES:
            g = max(1, min(sms * per_sm, n16 // (threads * u)))
            fn = mod.get_function(f"stream{u}")
            t = timed_us(lambda: fn((g,), (threads,), (buf, cp.uint64(n16), out)), flush, n=n)
            if best is None or t < best[0]:
                best = (t, f"U={u} {g}x{threads}")
    del buf
    _stream_cache[key] = best
    return best


def empty_kernel_us(flush="write", n=100):
    """An empty launch timed as timed_us: the fixed cost in every figure."""
    import cupy as cp
    mod = _stream_module()
    out = cp.zeros(1, dtype=cp.float32)
    fn = mod.get_function("empty_kernel")
    with torch_stream():
        return timed_us(lambda: fn((1,), (1024,), (out,)), flush, n=n)


def write_json(path, obj):
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    with open(path, "w") as f:
        json.dump(obj, f, indent=2, default=str)
    log(f"wrote {path}")


def fail(msg):
    print(msg, file=sys.stderr, flush=True)
    raise SystemExit(1)
