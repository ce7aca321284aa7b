"""Helpers shared by the kernel-library benchmarks in bench/kernels: running
`tunekit tune` and reading its JSON export, launching one config as `tunekit
resolve` works it out (compiled with CuPy, torch tensors handed to it), timing
under a chosen L2 flush as do_bench does, and the ideal streaming read that
floors a bandwidth-bound kernel.

Nothing here touches the GPU at import time; torch and cupy are imported by
the functions that need them.
"""
import json
import os
import re
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "bench"))
from gpu_python import require_gpu_torch  # noqa: E402,F401  (each script calls it after parsing its flags)

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


# ---- a config resolved by tunekit ------------------------------------------------
#
# What a launch needs (the entry, the defines, grid, block, cluster, dynamic
# shared memory, each argument's size or value, the tensor maps) comes from
# `tunekit resolve SPEC --json`, which works it out exactly as a trial does:
# no reading of the spec here.

_tunekit = None


def use_tunekit(path):
    """The tunekit binary resolve() runs from now on (a bench's --tunekit)."""
    global _tunekit
    _tunekit = path


def default_tunekit():
    """The tunekit binary: use_tunekit()'s, else $TUNEKIT, else the GPU build
    of scripts/gpu.sh (build-gpu/), else build/bin/tunekit."""
    if _tunekit:
        return _tunekit
    if os.environ.get("TUNEKIT"):
        return os.environ["TUNEKIT"]
    for path in (os.path.join(ROOT, "build-gpu", "tunekit", "bin", "tunekit"), os.path.join(ROOT, "build", "bin", "tunekit")):
        if os.path.exists(path):
            return path
    raise SystemExit("no tunekit binary: build one (scripts/gpu.sh build makes build-gpu/) or set $TUNEKIT")


class ResolveError(Exception):
    """`tunekit resolve` refused: a name that is no parameter or size, a config
    outside the space (unless ignore_constraints), a variant that does not
    compile (build=True). The message is tunekit's."""


_resolved = {}


def resolve_command(spec, size=None, config=None, tunekit=None, ignore_constraints=False, properties=None,
                    build=False, out_dir=None):
    """The `tunekit resolve ... --json` command line for one config at one size."""
    cmd = [tunekit or default_tunekit(), "resolve", spec, "--json"]
    for k, v in (size or {}).items():
        cmd += ["--size", f"{k}={v}"]
    for k, v in (config or {}).items():
        cmd += ["--config", f"{k}={v}"]
    if ignore_constraints:
        cmd.append("--ignore-constraints")
    if properties:
        cmd += ["--properties", properties]
    if build:
        cmd.append("--build")
    if out_dir:
        cmd += ["--out-dir", out_dir]
    return cmd


def resolve(spec, size=None, config=None, tunekit=None, ignore_constraints=False, properties=None, build=False,
            out_dir=None):
    """tunekit's resolution of `config` (parameters it leaves out take the
    spec's default; one a constraint pins to the size is computed for it) at
    `size` (names it leaves out keep the spec's first size): the parsed JSON of
    `tunekit resolve --json` (docs in `tunekit resolve --help`). Remembered per
    arguments; raises ResolveError with tunekit's message when it refuses."""
    cmd = resolve_command(spec, size, config, tunekit, ignore_constraints, properties, build, out_dir)
    key = tuple(cmd)
    if key not in _resolved:
        p = subprocess.run(cmd, capture_output=True, text=True)
        if p.returncode != 0:
            raise ResolveError(f"{' '.join(cmd)}:\n{(p.stderr or p.stdout).strip()}")
        _resolved[key] = json.loads(p.stdout)
    return _resolved[key]


_gpu_properties = []  # [the file, or None], once per process


def gpu_properties_file(tunekit=None):
    """This machine's first CUDA device as `tunekit devices --json` describes
    it, saved once to a file: SpecLaunch passes it to resolve as --properties,
    so that each resolution reads the GPU's properties without initialising
    the driver again. None where tunekit finds no CUDA device."""
    if not _gpu_properties:
        path = None
        p = subprocess.run([tunekit or default_tunekit(), "devices", "--json"], capture_output=True, text=True)
        if p.returncode == 0:
            cuda = [b for b in json.loads(p.stdout)["backends"] if b["backend"] == "cuda" and b["devices"]]
            if cuda:
                fd, path = tempfile.mkstemp(prefix="tunekit-gpu-", suffix=".json")
                with os.fdopen(fd, "w") as f:
                    json.dump(cuda[0]["devices"][0], f)
        _gpu_properties.append(path)
    return _gpu_properties[0]


def spec_name(spec, tunekit=None, properties=None):
    """The spec's `name`, which names tunekit's exports and emitted policies."""
    return resolve(spec, tunekit=tunekit, ignore_constraints=True, properties=properties)["name"]


# A resolved argument's type as numpy's scalar type (by name: numpy is only
# imported where a kernel is launched).
SCALAR_TYPES = {"i8": "int8", "i16": "int16", "i32": "int32", "i64": "int64", "u8": "uint8", "u16": "uint16",
                "u32": "uint32", "u64": "uint64", "f16": "float16", "f32": "float32", "f64": "float64"}
# Swizzle and L2 promotion in bytes (as resolve gives them) as the driver's enums.
SWIZZLES = {0: 0, 32: 1, 64: 2, 128: 3}
L2_PROMOTIONS = {0: 0, 64: 1, 128: 2, 256: 3}


def launch_plan(resolved):
    """What a CuPy launch of a resolved config needs, in plain Python: source,
    entry, flags, defines ("NAME=V"), grid, block and cluster as 3-tuples,
    dynamic shared memory, and the arguments as resolve lists them."""
    k = resolved["kernel"]
    if k["injection"] != "defines":
        raise ValueError(f"{resolved['spec']}: its config is written into the source (tunable lines or %RANGE%); "
                         "launch tunekit's own build instead (tunekit resolve --build)")
    launch = resolved["launch"]
    if launch is None:
        raise ValueError(f"{resolved['spec']}: a {resolved['language']} kernel has no launch geometry")
    return {"source": k["source"], "entry": k["entry"], "flags": list(k["flags"]),
            "defines": list(k["defines"]),
            "grid": tuple(launch["grid"]), "block": tuple(launch["block"]), "cluster": tuple(launch["cluster"]),
            "smem": int(launch["shared_memory"]), "arguments": resolved["arguments"]}


class SpecLaunch:
    """One config of a kernel launched as `tunekit resolve` works it out (grid,
    block, cluster, shared memory, argument list), through CuPy: `bound` gives
    the tensors for named buffer arguments; every other buffer is allocated
    zeroed (scratch and counters in these specs) and scalars take their
    resolved values. A clustered config, or one with tensor maps, goes through
    DriverLaunch. Calling it launches on torch's current stream.

    cfg may leave parameters out (see resolve). A config outside the spec's
    space is launched anyway, with a note: decode_attention.py runs one
    shape's tuned config at shapes whose tunes pruned it."""

    def __init__(self, spec_path, cfg, size, bound, cache_dir, tunekit=None):
        import numpy as np
        import torch
        self.cfg, self.size = cfg, size
        self.resolved = resolve(spec_path, size, cfg, tunekit, ignore_constraints=True,
                                properties=gpu_properties_file(tunekit))
        if not self.resolved["valid"]:
            log(f"  note: {os.path.basename(spec_path)} {cfg} at {size} is outside the spec's space "
                f"({self.resolved['invalid_reason']}); launched anyway")
        plan = launch_plan(self.resolved)
        self.fn, self.how, self.attrs = compile_kernel(plan["source"], plan["entry"], plan["defines"], cache_dir,
                                                       plan["flags"])
        self.grid, self.block, self.cluster, self.smem = plan["grid"], plan["block"], plan["cluster"], plan["smem"]
        set_smem(self.fn, self.smem)
        dtypes = {"bf16": torch.bfloat16, "f16": torch.float16, "f32": torch.float32, "f64": torch.float64,
                  "u32": torch.int32, "i32": torch.int32, "u64": torch.int64, "i64": torch.int64, "u8": torch.uint8,
                  "i8": torch.int8, "u16": torch.int16, "i16": torch.int16}
        self.scratch, args = {}, []  # scratch: kept on self, since a graph replays these pointers
        for a in plan["arguments"]:
            if a["role"] == "tensor_map":
                m = a["tensor_map"]
                buf = bound.get(m["of"])
                if buf is None:
                    raise ValueError(f"{spec_path}: tensor map {a['name']} is over {m['of']}, which is not bound")
                args.append(TensorMap(buf, a["type"], m))
            elif a["name"] in bound:
                args.append(to_cupy(bound[a["name"]]))
            elif a["role"] == "scalar":
                args.append(getattr(np, SCALAR_TYPES[a["type"]])(a["value"]))
            else:
                t = torch.zeros(max(1, int(a["count"])), device="cuda", dtype=dtypes[a["type"]])
                self.scratch[a["name"]] = t
                args.append(to_cupy(t))
        self.args = tuple(args)
        self.bound = bound  # kept alive with the launch, as the scratch is
        # CuPy cannot pass a tensor map by value; cuLaunchKernelEx can
        by_driver = self.cluster != (1, 1, 1) or any(isinstance(x, TensorMap) for x in args)
        self.launch_ex = DriverLaunch(self.fn, self.grid, self.block, self.smem, self.cluster, self.args) \
            if by_driver else None

    def __call__(self):
        if self.launch_ex is not None:
            self.launch_ex()
        else:
            self.fn(self.grid, self.block, self.args, shared_mem=self.smem)


def parse_config(text):
    """A config written NAME=V,NAME=V (or separated by spaces) as a dict of ints."""
    return {kv.split("=")[0]: int(kv.split("=")[1]) for kv in re.split(r"[,\s]+", text.strip()) if kv}


class TensorMap:
    """A resolved `tensor_map` argument (docs/spec-format.md) over a torch
    tensor, encoded as tunekit's worker encodes it: cuTensorMapEncodeTiled,
    dims and box innermost first, a dense row-major array, out-of-range box
    elements read as zero (or NaN). `value` is the 128-byte, 64-byte aligned
    CUtensorMap."""
    DATA_TYPES = {"bf16": 9, "f16": 6, "f32": 7, "f64": 8, "u8": 0, "i8": 0, "u16": 1, "i16": 1, "u32": 2,
                  "i32": 3, "u64": 4, "i64": 5}

    def __init__(self, tensor, elem_type, resolved_map):
        import ctypes
        # 128 bytes on a 64-byte boundary, as CUtensorMap is declared
        self._raw = (ctypes.c_uint8 * 192)()
        self.value = (ctypes.c_uint64 * 16).from_buffer(self._raw, -ctypes.addressof(self._raw) % 64)
        dims = [int(d) for d in resolved_map["dims"]]
        box = [int(b) for b in resolved_map["box"]] + [1] * (len(dims) - len(resolved_map["box"]))
        rank = len(dims)
        strides, stride = [], tensor.element_size()
        for d in dims[:-1]:
            stride *= d
            strides.append(stride)
        u64s, u32s = ctypes.c_uint64 * rank, ctypes.c_uint32 * rank
        l2 = L2_PROMOTIONS[int(resolved_map["l2_promotion"])]
        oob = 1 if resolved_map["oob"] == "nan" else 0
        self._tensor = tensor  # kept alive: the map holds its address
        rc = ctypes.CDLL("libcuda.so.1").cuTensorMapEncodeTiled(
            self.value, self.DATA_TYPES[elem_type], rank, ctypes.c_void_p(tensor.data_ptr()),
            u64s(*dims), (ctypes.c_uint64 * max(1, rank - 1))(*strides), u32s(*box), u32s(*([1] * rank)), 0,
            SWIZZLES[int(resolved_map["swizzle"])], l2, oob)
        if rc != 0:
            raise RuntimeError(f"cuTensorMapEncodeTiled(dims {dims}, box {box}): CUresult {rc}")


# numpy's scalar types (SCALAR_TYPES) as the ctypes a kernel parameter is passed as
CTYPES = {"int8": "c_int8", "int16": "c_int16", "int32": "c_int32", "int64": "c_int64", "uint8": "c_uint8",
          "uint16": "c_uint16", "uint32": "c_uint32", "uint64": "c_uint64", "float32": "c_float",
          "float64": "c_double"}


class DriverLaunch:
    """Launches a CuPy-loaded kernel through the driver's cuLaunchKernelEx,
    on torch's current stream: CuPy's own launch can neither set the cluster
    attribute nor pass a tensor map by value. As tunekit's worker does, a
    cluster of one block is launched without the attribute, and clusters of
    9 to 16 blocks get CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED
    first."""

    def __init__(self, fn, grid, block, smem, cluster, args):
        import ctypes
        import cupy as cp
        import numpy as np
        c_uint3 = ctypes.c_uint * 3

        class Value(ctypes.Union):  # CUlaunchAttributeValue: 64 bytes
            _fields_ = [("pad", ctypes.c_char * 64), ("cluster", c_uint3)]

        class Attribute(ctypes.Structure):  # CUlaunchAttribute: id, 4 bytes of padding, value
            _fields_ = [("id", ctypes.c_int), ("pad", ctypes.c_char * 4), ("value", Value)]

        class Config(ctypes.Structure):  # CUlaunchConfig
            _fields_ = [("grid", c_uint3), ("block", c_uint3), ("smem", ctypes.c_uint), ("stream", ctypes.c_void_p),
                        ("attrs", ctypes.POINTER(Attribute)), ("num_attrs", ctypes.c_uint)]

        self._cuda = ctypes.CDLL("libcuda.so.1")
        self._fn = ctypes.c_void_p(fn.kernel.ptr)  # the CUfunction behind a CuPy RawKernel
        if cluster[0] * cluster[1] * cluster[2] > 8:
            rc = self._cuda.cuFuncSetAttribute(self._fn, 14, 1)  # NON_PORTABLE_CLUSTER_SIZE_ALLOWED
            if rc != 0:
                raise RuntimeError(f"cuFuncSetAttribute(non-portable cluster) failed: CUresult {rc}")
        self._attr = Attribute(id=4)  # CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION
        self._attr.value.cluster = c_uint3(*cluster)
        dim3 = lambda v: c_uint3(*(tuple(v) + (1,) * (3 - len(v))))  # noqa: E731 (specs may give 1 or 2 axes)
        self._config = Config(grid=dim3(grid), block=dim3(block), smem=smem, attrs=ctypes.pointer(self._attr),
                              num_attrs=1 if cluster[0] * cluster[1] * cluster[2] > 1 else 0)
        holders = []
        for a in args:
            if isinstance(a, cp.ndarray):
                holders.append(ctypes.c_void_p(a.data.ptr))
            elif isinstance(a, np.generic) and a.dtype.name in CTYPES:
                holders.append(getattr(ctypes, CTYPES[a.dtype.name])(a.item()))
            elif isinstance(a, TensorMap):
                holders.append(a.value)  # by value: the driver copies the 128 bytes it points at
            else:
                raise TypeError(f"DriverLaunch takes CuPy arrays, numpy scalars and TensorMaps, not {type(a)}")
        self._holders = holders  # kept alive: the driver reads them at each launch
        self._params = (ctypes.c_void_p * len(holders))(*[ctypes.cast(ctypes.pointer(h), ctypes.c_void_p)
                                                          for h in holders])
        self._config_ref = ctypes.byref(self._config)

    def __call__(self):
        import torch
        # The stream is read at each launch: a graph capture launches on its own.
        self._config.stream = torch.cuda.current_stream().cuda_stream
        rc = self._cuda.cuLaunchKernelEx(self._config_ref, self._fn, self._params, None)
        if rc != 0:
            raise RuntimeError(f"cuLaunchKernelEx failed: CUresult {rc}")


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


def compile_kernel(source, entry, defines, cache_dir, flags=()):
    """The kernel `entry` of `source` built with the spec's `flags`, then
    `defines` ("NAME=V", as -D): CuPy's RawModule through NVRTC; when NVRTC
    refuses the source (e.g. it needs sm_90a-only instructions or host
    headers), nvcc -cubin for sm_90a loaded with RawModule(path=...)."""
    import cupy as cp
    key = (source, entry, tuple(flags), tuple(sorted(defines)))  # every define, size-pinned ones too
    if key in _modules:
        return _modules[key]
    options = list(flags) + [f"-D{d}" for d in defines]
    with open(source) as f:
        code = f.read()
    opts = ["-std=c++17"] + options
    inc = cuda_include()
    if inc:
        opts.append("-I" + inc)
    opts.append("-I" + os.path.dirname(os.path.abspath(source)))
    try:
        fn = cp.RawModule(code=code, options=tuple(opts)).get_function(entry)
        fn.attributes  # forces the compile and load now, not inside a graph capture
        how = "nvrtc"
    except Exception as e:  # noqa: BLE001
        log(f"  NVRTC failed for {os.path.basename(source)} {' '.join(defines)} ({str(e).splitlines()[0][:200]}); "
            "trying nvcc")
        os.makedirs(cache_dir, exist_ok=True)
        tag = "_".join([f.lstrip("-").replace("=", "") for f in flags] + [d.replace("=", "") for d in defines])
        cubin = os.path.join(cache_dir, f"{os.path.splitext(os.path.basename(source))[0]}_{tag}.cubin")
        cmd = [nvcc_path(), "-std=c++17", "-gencode=arch=compute_90a,code=sm_90a", "-cubin", *options,
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
# back as its reads evict them (docs/measurement.md: a 32 MiB read takes 14.2
# us after it, 12.0 us after a read flush). A read flush (tunekit's `cache:
# cold-read`) evicts the kernel's data and leaves only clean lines. Both are
# offered so that a figure can say which it used.
FLUSHES = ("write", "read")
_flush_bufs = {}


def _write_flush():
    import torch
    buf = torch.empty(64 << 20, dtype=torch.int32, device="cuda")
    return lambda: buf.zero_()


def _read_flush():
    import torch
    buf = torch.ones(256 << 20, dtype=torch.float32, device="cuda")
    return lambda: buf.sum()


def _no_flush():
    # No flush, but a ~0.1 ms spin in its place: the timed launch must still
    # find the GPU busy, or its sample holds the CPU's launch latency (15 us
    # through DriverLaunch) instead of the kernel.
    import torch
    return lambda: torch.cuda._sleep(200_000)


# kind -> what makes that flush. lab/probes/lab_common.py adds the probes'
# kinds (the worker's own PTX flush, store kernels writing chosen words).
FLUSH_MAKERS = {"write": _write_flush, "read": _read_flush, "none": _no_flush}


def flush_fn(kind):
    """A function that flushes the L2 the given way ("write" as do_bench: 256 MB
    of stores; "read": a 1 GiB read; "none": none, for hot-cache probes; and
    whatever FLUSH_MAKERS holds besides)."""
    if kind not in _flush_bufs:
        if kind not in FLUSH_MAKERS:
            raise ValueError(f"flush must be one of {tuple(FLUSH_MAKERS)}, not {kind!r}")
        _flush_bufs[kind] = FLUSH_MAKERS[kind]()
    return _flush_bufs[kind]


def timed_us(fn, flush="write", n=200, warmup_ms=25.0):
    """Median of n samples of fn, each after the given L2 flush and timed by
    its own event pair, enqueued back to back after about warmup_ms of the
    same (clocks ramp up under load), as do_bench does. With flush="write"
    this is do_bench's procedure."""
    return sorted(timed_samples(fn, flush, n, warmup_ms))[n // 2]


def warm_up(fn, flush, warmup_ms=25.0):
    """About warmup_ms of flush() then fn(), unrecorded (clocks ramp up under
    load); the count comes from timing 5 such pairs first."""
    import torch
    est0, est1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    est0.record()
    for _ in range(5):
        flush()
        fn()
    est1.record()
    torch.cuda.synchronize()
    for _ in range(max(1, int(warmup_ms * 5 / max(est0.elapsed_time(est1), 1e-3)))):
        flush()
        fn()


def timed_samples(fn, flush="write", n=200, warmup_ms=25.0):
    """timed_us's n samples, in us, in the order they ran; flush is a kind of
    flush_fn or a function of one's own."""
    import torch
    f = flush if callable(flush) else flush_fn(flush)
    warm_up(fn, f, warmup_ms)
    start = [torch.cuda.Event(enable_timing=True) for _ in range(n)]
    end = [torch.cuda.Event(enable_timing=True) for _ in range(n)]
    for i in range(n):
        f()
        start[i].record()
        fn()
        end[i].record()
    torch.cuda.synchronize()
    return [1000.0 * a.elapsed_time(b) for a, b in zip(start, end)]


# Ways of streaming bytes from DRAM, the two that won when
# lab/probes/stream_access_probe.py compared many (lab/runs/issue-5-run-10.md):
# 16-byte register loads (ldg_U_PF_ILV: U in flight per thread; PF 1 =
# .L2::256B hint, 2 = evict-first policy; ILV 1 = grid-strided, 0 = a
# contiguous share per block) and bulk copies driven by one lane
# (bulk_C_S_ILV_EF: S chunks of C bytes in flight; EF = evict-first). The
# probe's other ways are in lab/probes/lab_common.py. Nothing is written
# unless a checksum hits a magic value.
STREAM_SRC = r"""
typedef unsigned long long u64;
typedef unsigned int u32;

__device__ __forceinline__ u64 evict_first_policy() {
  u64 pol;
  asm volatile("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;" : "=l"(pol));
  return pol;
}

// PF: 1 = .L2::256B prefetch hint; 2 = an L2 evict-first cache policy (the
// line is the first to go when its set needs room, so a streamed byte
// replaces another streamed byte instead of a dirty line of the flush).
template <int PF>
__device__ __forceinline__ uint4 ldg(const void* p) {
  uint4 v;
  if (PF == 2)
    asm volatile("ld.global.nc.L1::no_allocate.L2::cache_hint.v4.u32 {%0,%1,%2,%3}, [%4], %5;"
                 : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "l"(p), "l"(evict_first_policy()));
  else if (PF)
    asm volatile("ld.global.nc.L1::no_allocate.L2::256B.v4.u32 {%0,%1,%2,%3}, [%4];"
                 : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "l"(p));
  else
    asm volatile("ld.global.nc.L1::no_allocate.v4.u32 {%0,%1,%2,%3}, [%4];"
                 : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "l"(p));
  return v;
}

// U loads in flight per thread; ILV: grid-strided (block b's i-th round is
// round i * gridDim + b) instead of a contiguous share per block.
template <int U, int PF, int ILV>
__device__ void ldg_stream(const uint4* p, u64 n, float* out) {
  u32 acc = 0;
  const u64 step = (u64)U * blockDim.x;
  if (ILV) {
    for (u64 base = (u64)blockIdx.x * step; base < n; base += step * gridDim.x) {
      uint4 v[U];
#pragma unroll
      for (int u = 0; u < U; ++u) {
        const u64 i = base + u * blockDim.x + threadIdx.x;
        v[u] = i < n ? ldg<PF>(p + i) : make_uint4(0, 0, 0, 0);
      }
#pragma unroll
      for (int u = 0; u < U; ++u) acc ^= v[u].x ^ v[u].w;
    }
  } else {
    const u64 lo = n * blockIdx.x / gridDim.x, hi = n * (blockIdx.x + 1) / gridDim.x;
    for (u64 base = lo; base < hi; base += step) {
      uint4 v[U];
#pragma unroll
      for (int u = 0; u < U; ++u) {
        const u64 i = base + u * blockDim.x + threadIdx.x;
        v[u] = i < hi ? ldg<PF>(p + i) : make_uint4(0, 0, 0, 0);
      }
#pragma unroll
      for (int u = 0; u < U; ++u) acc ^= v[u].x ^ v[u].w;
    }
  }
  if (acc == 0x9e3779b9u) out[blockIdx.x] = 1.f;
}

__device__ __forceinline__ u32 smem_u32(const void* p) { return (u32)__cvta_generic_to_shared(p); }

__device__ __forceinline__ void bar_wait(u32 bar, u32 parity) {
  asm volatile(
      "{\n.reg .pred done;\nWAIT_%=:\n"
      "mbarrier.try_wait.parity.shared::cta.b64 done, [%0], %1;\n"
      "@!done bra WAIT_%=;\n}\n" ::"r"(bar), "r"(parity) : "memory");
}

// One warp per block; lane 0 keeps S chunks of C bytes in flight through the
// copy engine. ILV: chunk i of block b is chunk i * gridDim + b of the buffer.
template <int C, int S, int ILV, int EF>
__device__ void bulk_stream(const unsigned char* p, u64 nbytes, float* out) {
  extern __shared__ __align__(128) unsigned char smem[];
  unsigned long long* bars = reinterpret_cast<unsigned long long*>(smem + S * C);
  u64 lo, hi, nch;
  if (ILV) {
    nch = (nbytes + C - 1) / C;
    nch = nch > blockIdx.x ? (nch - blockIdx.x + gridDim.x - 1) / gridDim.x : 0;
    lo = 0; hi = nbytes;
  } else {
    const u64 n16 = nbytes / 16;
    lo = n16 * blockIdx.x / gridDim.x * 16; hi = n16 * (blockIdx.x + 1) / gridDim.x * 16;
    nch = (hi - lo + C - 1) / C;
  }
  u32 acc = 0;
  if (threadIdx.x == 0) {
    for (int s = 0; s < S; ++s)
      asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(smem_u32(bars + s)));
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
    for (u64 c = 0; c < nch; ++c) {
      const int s = (int)(c % S);
      if (c >= S) {
        bar_wait(smem_u32(bars + s), (u32)(((c - S) / S) & 1));
        acc ^= *reinterpret_cast<volatile u32*>(smem + s * C);
      }
      const u64 off = ILV ? (c * gridDim.x + blockIdx.x) * (u64)C : lo + c * (u64)C;
      const u32 bytes = (u32)(hi - off < (u64)C ? hi - off : (u64)C);
      asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(smem_u32(bars + s)), "r"(bytes) : "memory");
      if (EF)
        asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes.L2::cache_hint [%0], [%1], %2, [%3], %4;"
                     ::"r"(smem_u32(smem + s * C)), "l"(p + off), "r"(bytes), "r"(smem_u32(bars + s)), "l"(evict_first_policy()) : "memory");
      else
        asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];"
                     ::"r"(smem_u32(smem + s * C)), "l"(p + off), "r"(bytes), "r"(smem_u32(bars + s)) : "memory");
    }
    for (u64 c = nch > S ? nch - S : 0; c < nch; ++c) bar_wait(smem_u32(bars + c % S), (u32)((c / S) & 1));
  }
  if (acc == 0x9e3779b9u) out[blockIdx.x] = 1.f;
}

#define LDG(U, PF, ILV) extern "C" __global__ void ldg_##U##_##PF##_##ILV(const uint4* p, u64 n, float* o) { ldg_stream<U, PF, ILV>(p, n, o); }
LDG(4, 0, 0) LDG(8, 0, 0) LDG(16, 0, 0) LDG(4, 0, 1) LDG(8, 0, 1) LDG(16, 0, 1) LDG(8, 1, 0) LDG(2, 0, 0) LDG(1, 0, 0) LDG(2, 0, 1)
LDG(4, 2, 1) LDG(8, 2, 1) LDG(16, 2, 1) LDG(8, 2, 0) LDG(2, 2, 1)
#define BULK(C, S, ILV, EF) extern "C" __global__ void bulk_##C##_##S##_##ILV##_##EF(const unsigned char* p, u64 n, float* o) { bulk_stream<C, S, ILV, EF>(p, n, o); }
BULK(4096, 4, 0, 0) BULK(4096, 8, 0, 0) BULK(8192, 4, 0, 0) BULK(8192, 8, 0, 0) BULK(16384, 4, 0, 0) BULK(16384, 8, 0, 0)
BULK(32768, 4, 0, 0) BULK(32768, 6, 0, 0) BULK(16384, 12, 0, 0) BULK(4096, 8, 1, 0) BULK(16384, 4, 1, 0) BULK(8192, 8, 1, 0) BULK(2048, 8, 0, 0)
BULK(4096, 8, 1, 1) BULK(16384, 4, 1, 1) BULK(8192, 8, 1, 1) BULK(16384, 4, 0, 1)
"""
# The ideal read (stream_read_us) takes the fastest of the methods and launch
# shapes that won in the probe's comparison: grid-strided register loads, and evict-first
# bulk copies, which were the fastest after a write flush.
# (kernel, blocks per SM, threads)
STREAM_SHAPES = (("ldg_2_0_1", 8, 128), ("ldg_4_0_1", 1, 1024), ("ldg_4_0_1", 4, 256), ("ldg_8_0_1", 8, 128),
                 ("ldg_16_0_1", 8, 128), ("bulk_16384_4_1_1", 1, 32), ("bulk_16384_4_1_1", 2, 32),
                 ("bulk_4096_8_1_1", 2, 32), ("bulk_8192_8_1_1", 1, 32))
_stream_cache = {}


def stream_module():
    """STREAM_SRC compiled once (CuPy, NVRTC)."""
    import cupy as cp
    if "stream" not in _modules:
        _modules["stream"] = cp.RawModule(code=STREAM_SRC, options=("-std=c++17",))
    return _modules["stream"]


def stream_smem(kernel, threads):
    """The dynamic shared memory a STREAM_SRC kernel needs, from its name."""
    kind, *n = kernel.split("_")
    if kind == "bulk":  # S chunks of C bytes, S mbarriers
        return int(n[0]) * int(n[1]) + 8 * int(n[1])
    return 0


def stream_launch(kernel, blocks, threads, buf, nbytes, out):
    """A call that launches STREAM_SRC's `kernel` over nbytes of buf."""
    fn = stream_module().get_function(kernel)
    smem = stream_smem(kernel, threads)
    if smem > 48 * 1024:
        fn.max_dynamic_shared_size_bytes = smem
    args = stream_args(kernel, buf, nbytes, out)
    return lambda: fn((blocks,), (threads,), args, shared_mem=smem)


def stream_args(kernel, buf, nbytes, out):
    """The arguments of a STREAM_SRC kernel reading nbytes of buf: the bulk
    kernels count bytes, the others 16-byte words."""
    import cupy as cp
    if kernel.startswith("bulk"):
        return (buf, cp.uint64(nbytes // 16 * 16), out)
    return (buf, cp.uint64(nbytes // 16), out)


def stream_read_us(nbytes, flush="write", n=100):
    """The fastest of STREAM_SHAPES reading nbytes (rounded down to 16),
    timed as timed_us: (us, 'kernel GxT')."""
    import cupy as cp
    import torch
    key = (nbytes, flush)
    if key in _stream_cache:
        return _stream_cache[key]
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    buf = cp.zeros(max(16, nbytes) // 4, dtype=cp.uint32)
    out = cp.zeros(1 << 16, dtype=cp.float32)
    best = None
    with torch_stream():
        for kernel, per_sm, threads in STREAM_SHAPES:
            g = sms * per_sm
            t = timed_us(stream_launch(kernel, g, threads, buf, nbytes, out), flush, n=n)
            if best is None or t < best[0]:
                best = (t, f"{kernel} {g}x{threads}")
    del buf
    _stream_cache[key] = best
    return best


def write_json(path, obj):
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    with open(path, "w") as f:
        json.dump(obj, f, indent=2, default=str)
    log(f"wrote {path}")


def fail(msg):
    print(msg, file=sys.stderr, flush=True)
    raise SystemExit(1)
