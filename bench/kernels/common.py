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


def _flow_value(text):
    """A YAML flow value as Python: a mapping as a dict, a list as a list,
    a scalar as its text (unquoted)."""
    t = text.strip()
    if t.startswith("{"):
        items = (kv.split(":", 1) for kv in _split_flow(t[1:t.rindex("}")]))
        return {k.strip(): _flow_value(v) for k, v in items}
    if t.startswith("["):
        return [_flow_value(x) for x in _split_flow(t[1:t.rindex("]")])]
    return t.strip("\"'")


def _as_text(v):
    """PyYAML's values with every scalar as text, as _flow_value gives them."""
    if isinstance(v, dict):
        return {k: _as_text(x) for k, x in v.items()}
    if isinstance(v, list):
        return [_as_text(x) for x in v]
    return str(v)


def _section_lines(spec_path, key):
    """The lines of a spec's top-level `key:` block, comments cut, for the
    readers below when PyYAML is missing."""
    inside = False
    with open(spec_path) as f:
        for line in f:
            s = line.split(" #")[0].rstrip()
            if re.match(rf"^{key}:\s*$", s):
                inside = True
            elif inside and s and not s.startswith(" "):
                return
            elif inside:
                yield s


def spec_launch(spec_path):
    """{'grid': [expr...], 'block': [expr...], 'cluster': [expr...],
    'shared_memory': expr or None, 'flags': [flag...]} from the spec's
    `kernel:` mapping. Uses PyYAML when present, else reads the keys from
    flow-style lines (the style of this repository's specs)."""
    try:
        import yaml  # noqa: WPS433
        with open(spec_path) as f:
            k = yaml.safe_load(f)["kernel"]
        as_list = lambda v: [str(x) for x in (v if isinstance(v, list) else [v])]  # noqa: E731
        return {"grid": as_list(k["grid"]), "block": as_list(k["block"]), "cluster": as_list(k.get("cluster", 1)),
                "shared_memory": str(k["shared_memory"]) if k.get("shared_memory") is not None else None,
                "flags": as_list(k.get("flags", []))}
    except ImportError:
        pass
    out = {"grid": None, "block": None, "cluster": ["1"], "shared_memory": None, "flags": []}
    for s in _section_lines(spec_path, "kernel"):
        m = re.match(r"^\s+(grid|block|cluster|shared_memory|flags):\s*(.*)$", s)
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


def spec_source_entry(spec_path):
    """The spec's kernel source (a path next to the spec) and entry."""
    with open(spec_path) as f:
        text = f.read()
    src = re.search(r"^\s+source:\s*(\S+)", text, re.M).group(1)
    entry = re.search(r"^\s+entry:\s*(\S+)", text, re.M).group(1)
    return os.path.join(os.path.dirname(spec_path), src), entry


def spec_arguments(spec_path):
    """The spec's `arguments` as dicts (name, type, size or value, role, ...).
    PyYAML when present, else the flow-mapping lines (`  - {name: A, ...}`)
    this repository's specs use."""
    try:
        import yaml  # noqa: WPS433
        with open(spec_path) as f:
            return [_as_text(a) for a in yaml.safe_load(f)["arguments"]]
    except ImportError:
        pass
    out = []
    for s in _section_lines(spec_path, "arguments"):
        m = re.match(r"^\s+-\s*\{(.*)\}\s*$", s)
        if m:
            out.append(_flow_value("{" + m.group(1) + "}"))
        elif re.match(r"^\s+-\s", s):
            raise ValueError(f"{spec_path}: an argument that is not one flow mapping ({s.strip()}) needs PyYAML")
    if not out:
        raise ValueError(f"{spec_path}: cannot read its arguments")
    return out


class SpecLaunch:
    """One config of a kernel launched as its spec says (grid, block, cluster,
    shared memory, argument list), through CuPy: `bound` gives the tensors for
    named arguments; every other buffer is allocated zeroed (scratch and
    counters in these specs) and scalars take their `value` expressions.
    A clustered config, or one with tensor maps, goes through DriverLaunch.
    Calling it launches on torch's current stream."""

    def __init__(self, spec_path, source, entry, cfg, size, bound, cache_dir):
        import numpy as np
        import torch
        self.cfg, self.size = cfg, size
        launch = spec_launch(spec_path)
        self.fn, self.how, self.attrs = compile_kernel(source, entry, cfg, cache_dir, launch["flags"])
        names = dict(size, **cfg, sm_count=torch.cuda.get_device_properties(0).multi_processor_count)
        self.grid, self.block, self.smem = launch_dims(launch, names)
        self.cluster = cluster_dims(launch, names)
        set_smem(self.fn, self.smem)
        dtypes = {"bf16": torch.bfloat16, "f32": torch.float32, "u32": torch.int32, "i32": torch.int32}
        self.scratch, args = {}, []  # scratch: kept on self, since a graph replays these pointers
        spec_args = spec_arguments(spec_path)
        for a in spec_args:
            if "tensor_map" in a:
                of = a["tensor_map"]["of"]
                buf = bound.get(of)
                if buf is None:
                    raise ValueError(f"{spec_path}: tensor map {a['name']} is over {of}, which is not bound")
                elem = next(x["type"] for x in spec_args if x["name"] == of)
                args.append(TensorMap(buf, elem, a["tensor_map"], names))
            elif a["name"] in bound:
                args.append(to_cupy(bound[a["name"]]))
            elif "value" in a:
                args.append(np.int32(eval_expr(a["value"], names)))
            else:
                t = torch.zeros(max(1, int(eval_expr(a["size"], names))), device="cuda", dtype=dtypes[a["type"]])
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


def cluster_dims(launch, names):
    """The spec's thread-block cluster for these names, padded to 3 axes."""
    c = [int(eval_expr(e, names)) for e in launch.get("cluster", ["1"])]
    return tuple(c + [1] * (3 - len(c)))


class TensorMap:
    """A spec's `tensor_map` argument (docs/spec-format.md) over a torch
    tensor, encoded as tunekit's worker encodes it: cuTensorMapEncodeTiled,
    dims and box innermost first, a dense row-major array, out-of-range box
    elements read as zero (or NaN), L2 promotion 128 bytes unless the spec says
    otherwise. `value` is the 128-byte, 64-byte aligned CUtensorMap."""
    DATA_TYPES = {"bf16": 9, "f16": 6, "f32": 7, "f64": 8, "u8": 0, "i8": 0, "u16": 1, "i16": 1, "u32": 2,
                  "i32": 3, "u64": 4, "i64": 5}
    # the spec's words (docs/spec-format.md) as the driver's enums
    SWIZZLES = {"none": 0, "32": 1, "64": 2, "128": 3}
    L2_PROMOTIONS = {"none": 0, "64": 1, "128": 2, "256": 3}

    def __init__(self, tensor, elem_type, spec, names):
        import ctypes
        # 128 bytes on a 64-byte boundary, as CUtensorMap is declared
        self._raw = (ctypes.c_uint8 * 192)()
        self.value = (ctypes.c_uint64 * 16).from_buffer(self._raw, -ctypes.addressof(self._raw) % 64)
        dims = [int(eval_expr(e, names)) for e in spec["dims"]]
        box = [int(eval_expr(e, names)) for e in spec["box"]] + [1] * (len(dims) - len(spec["box"]))
        rank = len(dims)
        strides, stride = [], tensor.element_size()
        for d in dims[:-1]:
            stride *= d
            strides.append(stride)
        u64s, u32s = ctypes.c_uint64 * rank, ctypes.c_uint32 * rank
        l2 = self.L2_PROMOTIONS[str(spec.get("l2_promotion", "128"))]
        oob = 1 if str(spec.get("oob", "zero")) == "nan" else 0
        self._tensor = tensor  # kept alive: the map holds its address
        rc = ctypes.CDLL("libcuda.so.1").cuTensorMapEncodeTiled(
            self.value, self.DATA_TYPES[elem_type], rank, ctypes.c_void_p(tensor.data_ptr()),
            u64s(*dims), (ctypes.c_uint64 * max(1, rank - 1))(*strides), u32s(*box), u32s(*([1] * rank)), 0,
            self.SWIZZLES[str(spec.get("swizzle", "none"))], l2, oob)
        if rc != 0:
            raise RuntimeError(f"cuTensorMapEncodeTiled(dims {dims}, box {box}): CUresult {rc}")


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
            elif isinstance(a, np.int32):
                holders.append(ctypes.c_int32(int(a)))
            elif isinstance(a, TensorMap):
                holders.append(a.value)  # by value: the driver copies the 128 bytes it points at
            else:
                raise TypeError(f"DriverLaunch takes CuPy arrays, np.int32 and TensorMaps, not {type(a)}")
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


def compile_kernel(source, entry, config, cache_dir, flags=()):
    """The kernel `entry` of `source` built with the spec's `flags`, then -D
    defines from `config`: CuPy's RawModule through NVRTC; when NVRTC refuses
    the source (e.g. it needs sm_90a-only instructions or host headers), nvcc
    -cubin for sm_90a loaded with RawModule(path=...)."""
    import cupy as cp
    key = (source, entry, tuple(flags), tuple(sorted(config.items())))  # every define, size-pinned ones too
    if key in _modules:
        return _modules[key]
    defines = list(flags) + [f"-D{k}={v}" for k, v in config.items()]
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
        tag = "_".join([f.lstrip("-").replace("=", "") for f in flags] + [f"{k}{v}" for k, v in config.items()])
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
STORE_FLUSH_SRC = r"""
extern "C" __global__ void store_flush(uint4* p, unsigned long long n, unsigned v) {
  for (unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x; i < n;
       i += (unsigned long long)gridDim.x * blockDim.x)
    p[i] = make_uint4(v, v, v, v);
}
"""
_flush_bufs = {}
# The store flushes' word: (added every flush, the first flush's word minus that)
STORE_STEPS = {"store": (1, 0), "store0": (0, 0), "store2": (2, 0), "storec": (0, 0x5A5A5A5A)}


def flush_fn(kind):
    """A function that flushes the L2 the given way ("write" as do_bench: 256 MB
    of stores; "store": 256 MB of stores as tunekit's worker makes them, a
    word that grows by one every flush; "store0" the same writing zeros,
    "store2" a word that grows by two (its lowest bit never changes),
    "storec" one constant non-zero word; "worker" the worker's own PTX kernel;
    "read": a 1 GiB read; "none": none, for hot-cache probes)."""
    import torch
    if kind not in _flush_bufs:
        if kind == "write":
            buf = torch.empty(64 << 20, dtype=torch.int32, device="cuda")
            _flush_bufs[kind] = lambda: buf.zero_()
        elif kind in STORE_STEPS:
            # tunekit's worker's flush (src/backend/cuda/worker.cpp): 16-byte
            # stores of a word that grows by one every flush (the other kinds:
            # the word STORE_STEPS gives), 4 blocks of 512 threads per SM,
            # over 256 MB
            import cupy as cp
            import numpy as np
            store = cp.RawKernel(STORE_FLUSH_SRC, "store_flush")
            buf = torch.empty(256_000_000 // 4, dtype=torch.int32, device="cuda")
            n16, grid, count = np.uint64(buf.numel() // 4), (4 * torch.cuda.get_device_properties(0).multi_processor_count,), [0]

            step, first = STORE_STEPS[kind]
            count[0] = first

            def f():  # (on CuPy's current stream: call it under torch_stream())
                count[0] += step
                store(grid, (512,), (to_cupy(buf), n16, np.uint32(count[0])))
            _flush_bufs[kind] = f
        elif kind == "worker":
            # the very PTX kernel tunekit's worker flushes with (its source,
            # src/backend/cuda/worker.cpp), which the driver compiles from
            # PTX, launched as the worker launches it
            import re
            import cupy as cp
            import numpy as np
            with open(os.path.join(ROOT, "src", "backend", "cuda", "worker.cpp")) as fh:
                ptx = re.search(r'kFlushPtx = R"\((.*?)\)";', fh.read(), re.S).group(1)
            path = os.path.join("/tmp", f"tunekit-flush-{os.getpid()}.ptx")
            with open(path, "w") as fh:
                fh.write(ptx)
            fn = cp.RawModule(path=path).get_function("tunekit_flush")
            buf = torch.empty(256_000_000 // 4, dtype=torch.int32, device="cuda")
            n16, grid, count = np.uint64(buf.numel() // 4), (4 * torch.cuda.get_device_properties(0).multi_processor_count,), [0]

            def f():  # (on CuPy's current stream: call it under torch_stream())
                count[0] += 1
                fn(grid, (512,), (to_cupy(buf), n16, np.uint32(count[0]), np.uint32(0)))
            _flush_bufs[kind] = f
        elif kind == "read":
            buf = torch.ones(256 << 20, dtype=torch.float32, device="cuda")
            _flush_bufs[kind] = lambda: buf.sum()
        elif kind == "none":
            # No flush, but a ~0.1 ms spin in its place: the timed launch must
            # still find the GPU busy, or its sample holds the CPU's launch
            # latency (15 us through DriverLaunch) instead of the kernel.
            _flush_bufs[kind] = lambda: torch.cuda._sleep(200_000)
        else:
            raise ValueError(f"flush must be one of {FLUSHES + tuple(STORE_STEPS) + ('worker', 'none')}, not {kind!r}")
    return _flush_bufs[kind]


# A flush like tunekit's worker's that leaves time stamps (for the probes
# that place a kernel's time by %globaltimer, bench/gpu/swap_probe.py and
# clock_probe.py): `flush_end` is the latest %globaltimer any block saw at
# its end; for slot >= 0, flush_log[slot] holds block 0's clock64 and
# nanoseconds over its life and its end time, so each sample comes with the
# SM clock just before it.
STAMPED_FLUSH_SRC = r"""
__device__ unsigned long long flush_end;
__device__ unsigned long long flush_log[8192 * 3];
extern "C" __global__ void stamped_flush(uint4* p, unsigned long long n, unsigned v, int slot) {
  unsigned long long c0 = clock64(), t0, t1;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
  for (unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x; i < n;
       i += (unsigned long long)gridDim.x * blockDim.x)
    p[i] = make_uint4(v, v, v, v);
  __syncthreads();
  if (threadIdx.x != 0) return;
  const unsigned long long c1 = clock64();
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t1));
  atomicMax(&flush_end, t1);
  if (blockIdx.x == 0 && slot >= 0) {
    flush_log[3 * (slot % 8192)] = c1 - c0;
    flush_log[3 * (slot % 8192) + 1] = t1 - t0;
    flush_log[3 * (slot % 8192) + 2] = t1;
  }
}
// successive distinct %globaltimer readings of one thread: the timer's step
extern "C" __global__ void timer_steps(unsigned long long* out, int n) {
  unsigned long long last, t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(last));
  for (int i = 0; i < n;) {
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    if (t != last) { out[i++] = t - last; last = t; }
  }
}
"""


def module_global(fn, name):
    """A __device__ array of a CuPy-loaded kernel's module (RawKernel `fn`), as
    a CuPy array of u64 over the same memory."""
    import ctypes
    import cupy as cp
    cuda = ctypes.CDLL("libcuda.so.1")
    mod, dptr, size = ctypes.c_void_p(), ctypes.c_uint64(), ctypes.c_size_t()
    if cuda.cuFuncGetModule(ctypes.byref(mod), ctypes.c_void_p(fn.kernel.ptr)) != 0:
        raise RuntimeError("cuFuncGetModule failed")
    if cuda.cuModuleGetGlobal_v2(ctypes.byref(dptr), ctypes.byref(size), mod, name.encode()) != 0:
        raise RuntimeError(f"no {name} in the module")
    mem = cp.cuda.UnownedMemory(dptr.value, size.value, None)
    return cp.ndarray((size.value // 8,), dtype=cp.uint64, memptr=cp.cuda.MemoryPointer(mem, 0))


class StampedFlush:
    """STAMPED_FLUSH_SRC over 256 MB, launched as tunekit's worker launches
    its flush (4 blocks of 512 threads per SM, a value that changes every
    flush); call it with a slot to log block 0's clock. `end` and `log` are
    the module's flush_end and flush_log (rows of clock ticks, ns, end)."""

    def __init__(self):
        import cupy as cp
        import torch
        mod = cp.RawModule(code=STAMPED_FLUSH_SRC, options=("-std=c++17",))
        self._fn = mod.get_function("stamped_flush")
        self.end = module_global(self._fn, "flush_end")
        self.log = module_global(self._fn, "flush_log").reshape(-1, 3)
        self._steps = mod.get_function("timer_steps")
        self._buf = torch.empty(256_000_000 // 4, dtype=torch.int32, device="cuda")
        self._grid = (4 * torch.cuda.get_device_properties(0).multi_processor_count,)
        self._count = 0

    def __call__(self, slot=-1):  # (on CuPy's current stream: call it under torch_stream())
        import numpy as np
        self._count += 1
        self._fn(self._grid, (512,), (to_cupy(self._buf), np.uint64(self._buf.numel() // 4), np.uint32(self._count),
                                       np.int32(slot)))

    def timer_step_ns(self, n=256):
        """The median step of %globaltimer, in ns."""
        import cupy as cp
        import numpy as np
        import torch
        out = cp.zeros(n, dtype=cp.uint64)
        self._steps((1,), (1,), (out, np.int32(n)))
        torch.cuda.synchronize()
        return int(np.median(out.get()))


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


# Ways of streaming bytes from DRAM, compared by bench/gpu/stream_access_probe.py
# (docs/PERFORMANCE.md, run 10): 16-byte register loads (ldg_U_PF_ILV: U in
# flight per thread; PF 1 = .L2::256B hint, 2 = evict-first policy; ILV 1 =
# grid-strided, 0 = a contiguous share per block), cp.async into a ring
# (cpa_V_S_PF), bulk copies driven by one lane (bulk_C_S_ILV_EF: S chunks of
# C bytes in flight; EF = evict-first), bulk copies of 8 row segments
# (brows_SEG_S_EF) and gemm_skinny's pattern (rows_NW_D_PF_SPLIT). Nothing is
# written unless a checksum hits a magic value.
STREAM_SRC = r"""
typedef unsigned long long u64;
typedef unsigned int u32;

// -DSTREAM_TIMELINE: the bulk kernels and empty_kernel store %globaltimer per
// block (entry, first chunk's arrival, last chunk's arrival, exit) for
// bench/gpu/swap_probe.py's timelines.
#ifdef STREAM_TIMELINE
__device__ u64 probe_times[4096 * 4];
#define STAMP(slot)                                                     \
  do {                                                                  \
    u64 t_;                                                             \
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t_));             \
    if (blockIdx.x < 4096) probe_times[blockIdx.x * 4 + (slot)] = t_;   \
  } while (0)
#else
#define STAMP(slot) do {} while (0)
#endif

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

// V 16-byte copies per thread per stage, S stages; every thread reads back
// one word of what it copied itself (cp.async.wait_group orders that).
template <int V, int S, int PF>
__device__ void cpasync_stream(const uint4* p, u64 n, float* out) {
  extern __shared__ uint4 ring[];
  const u64 lo = n * blockIdx.x / gridDim.x, hi = n * (blockIdx.x + 1) / gridDim.x;
  const u64 chunk = (u64)V * blockDim.x;
  u32 acc = 0;
  auto issue = [&](u64 c, int s) {
#pragma unroll
    for (int v = 0; v < V; ++v) {
      const u64 i = c + v * blockDim.x + threadIdx.x;
      const bool ok = i < hi;
      const u32 dst = smem_u32(ring + (s * V + v) * blockDim.x + threadIdx.x);
      if (PF == 2)
        asm volatile("cp.async.cg.shared.global.L2::cache_hint [%0], [%1], 16, %2, %3;" ::"r"(dst), "l"(p + (ok ? i : lo)), "r"(ok ? 16 : 0), "l"(evict_first_policy()));
      else if (PF)
        asm volatile("cp.async.cg.shared.global.L2::256B [%0], [%1], 16, %2;" ::"r"(dst), "l"(p + (ok ? i : lo)), "r"(ok ? 16 : 0));
      else
        asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;" ::"r"(dst), "l"(p + (ok ? i : lo)), "r"(ok ? 16 : 0));
    }
    asm volatile("cp.async.commit_group;");
  };
#pragma unroll
  for (int s = 0; s < S; ++s) issue(lo + s * chunk, s);
  int s = 0;
  for (u64 c = lo; c < hi; c += chunk) {
    asm volatile("cp.async.wait_group %0;" ::"n"(S - 1) : "memory");
    acc ^= ring[s * V * blockDim.x + threadIdx.x].x;
    issue(c + S * chunk, s);
    s = s + 1 == S ? 0 : s + 1;
  }
  asm volatile("cp.async.wait_group 0;" ::: "memory");
  if (acc == 0x9e3779b9u) out[blockIdx.x] = 1.f;
}

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
    STAMP(0);
    for (int s = 0; s < S; ++s)
      asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(smem_u32(bars + s)));
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
    for (u64 c = 0; c < nch; ++c) {
      const int s = (int)(c % S);
      if (c >= S) {
        bar_wait(smem_u32(bars + s), (u32)(((c - S) / S) & 1));
        if (c == S) STAMP(1);
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
    STAMP(2);
    STAMP(3);
  }
  if (acc == 0x9e3779b9u) out[blockIdx.x] = 1.f;
}

// gemm_stream's B pattern: rows of 8 KiB in groups of 8; unit u = (row group
// u / (8192 / SEG), segment u % (8192 / SEG)) is 8 bulk copies of SEG bytes,
// one per row; block b takes units i * gridDim + b (the grid sweeps B in
// address order). One warp per block, lane 0 drives S units in flight.
template <int SEG, int S, int EF>
__device__ void bulkrows_stream(const unsigned char* p, int rows, float* out) {
  extern __shared__ __align__(128) unsigned char smem[];
  unsigned long long* bars = reinterpret_cast<unsigned long long*>(smem + S * 8 * SEG);
  const int segs = 8192 / SEG;
  const u64 units = (u64)(rows / 8) * segs;
  const u64 nch = units > blockIdx.x ? (units - blockIdx.x + gridDim.x - 1) / gridDim.x : 0;
  u32 acc = 0;
  if (threadIdx.x == 0) {
    const u64 pol = evict_first_policy();
    for (int s = 0; s < S; ++s) asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(smem_u32(bars + s)));
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
    for (u64 c = 0; c < nch; ++c) {
      const int s = (int)(c % S);
      if (c >= S) {
        bar_wait(smem_u32(bars + s), (u32)(((c - S) / S) & 1));
        acc ^= *reinterpret_cast<volatile u32*>(smem + s * 8 * SEG);
      }
      const u64 u = c * gridDim.x + blockIdx.x;
      const u64 base = (u / segs) * 8 * 8192 + (u % segs) * SEG;
      asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(smem_u32(bars + s)), "r"(8 * SEG) : "memory");
      for (int j = 0; j < 8; ++j) {
        if (EF)
          asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes.L2::cache_hint [%0], [%1], %2, [%3], %4;"
                       ::"r"(smem_u32(smem + (s * 8 + j) * SEG)), "l"(p + base + j * 8192), "r"(SEG), "r"(smem_u32(bars + s)), "l"(pol) : "memory");
        else
          asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];"
                       ::"r"(smem_u32(smem + (s * 8 + j) * SEG)), "l"(p + base + j * 8192), "r"(SEG), "r"(smem_u32(bars + s)) : "memory");
      }
    }
    for (u64 c = nch > S ? nch - S : 0; c < nch; ++c) bar_wait(smem_u32(bars + c % S), (u32)((c / S) & 1));
  }
  if (acc == 0x9e3779b9u) out[blockIdx.x] = 1.f;
}

// gemm_skinny's B pattern over `rows` rows of 8 KiB: warp task = (group of
// 8 * NW rows, one of SPLIT slices of the row); lane (g, t) loads row
// r0 + 8j + g, bytes 64 kg + 16 t; D k-groups in flight, refilled as consumed.
template <int NW, int D, int PF, int SPLIT>
__device__ void rows_stream(const unsigned char* p, int rows, float* out) {
  const int lane = threadIdx.x & 31, g = lane >> 2, t = lane & 3;
  const int warps = blockDim.x >> 5;
  const int gw = blockIdx.x * warps + (threadIdx.x >> 5), tw = gridDim.x * warps;
  const int groups = rows / (8 * NW), tasks = groups * SPLIT;
  const int kgs = 8192 / 64 / SPLIT;  // k-groups (64 bytes) per slice
  u32 acc = 0;
  for (int task = gw; task < tasks; task += tw) {
    const int r0 = (task % groups) * 8 * NW;
    const unsigned char* base = p + (u64)(r0 + g) * 8192 + (task / groups) * kgs * 64 + 16 * t;
    uint4 b[D][NW];
#pragma unroll
    for (int d = 0; d < D; ++d)
#pragma unroll
      for (int j = 0; j < NW; ++j) b[d][j] = ldg<PF>(base + (u64)8 * j * 8192 + d * 64);
    for (int kg = 0; kg < kgs; kg += D) {
#pragma unroll
      for (int d = 0; d < D; ++d)
#pragma unroll
        for (int j = 0; j < NW; ++j) {
          acc ^= b[d][j].x ^ b[d][j].w;
          const int k = kg + d + D;
          b[d][j] = k < kgs ? ldg<PF>(base + (u64)8 * j * 8192 + k * 64) : make_uint4(0, 0, 0, 0);
        }
    }
  }
  if (acc == 0x9e3779b9u) out[blockIdx.x] = 1.f;
}

#define LDG(U, PF, ILV) extern "C" __global__ void ldg_##U##_##PF##_##ILV(const uint4* p, u64 n, float* o) { ldg_stream<U, PF, ILV>(p, n, o); }
LDG(4, 0, 0) LDG(8, 0, 0) LDG(16, 0, 0) LDG(4, 0, 1) LDG(8, 0, 1) LDG(16, 0, 1) LDG(8, 1, 0) LDG(2, 0, 0) LDG(1, 0, 0) LDG(2, 0, 1)
LDG(4, 2, 1) LDG(8, 2, 1) LDG(16, 2, 1) LDG(8, 2, 0) LDG(2, 2, 1)
#define CPA(V, S, PF) extern "C" __global__ void cpa_##V##_##S##_##PF(const uint4* p, u64 n, float* o) { cpasync_stream<V, S, PF>(p, n, o); }
CPA(1, 2, 0) CPA(1, 4, 0) CPA(2, 4, 0) CPA(4, 4, 0) CPA(2, 8, 0) CPA(4, 8, 0) CPA(2, 4, 1) CPA(2, 4, 2) CPA(1, 2, 2)
#define BULK(C, S, ILV, EF) extern "C" __global__ void bulk_##C##_##S##_##ILV##_##EF(const unsigned char* p, u64 n, float* o) { bulk_stream<C, S, ILV, EF>(p, n, o); }
BULK(4096, 4, 0, 0) BULK(4096, 8, 0, 0) BULK(8192, 4, 0, 0) BULK(8192, 8, 0, 0) BULK(16384, 4, 0, 0) BULK(16384, 8, 0, 0)
BULK(32768, 4, 0, 0) BULK(32768, 6, 0, 0) BULK(16384, 12, 0, 0) BULK(4096, 8, 1, 0) BULK(16384, 4, 1, 0) BULK(8192, 8, 1, 0) BULK(2048, 8, 0, 0)
BULK(4096, 8, 1, 1) BULK(16384, 4, 1, 1) BULK(8192, 8, 1, 1) BULK(16384, 4, 0, 1)
#define BROWS(SEG, S, EF) extern "C" __global__ void brows_##SEG##_##S##_##EF(const unsigned char* p, int rows, float* o) { bulkrows_stream<SEG, S, EF>(p, rows, o); }
BROWS(512, 16, 1) BROWS(1024, 8, 1) BROWS(2048, 4, 1) BROWS(2048, 8, 1) BROWS(4096, 2, 1) BROWS(4096, 4, 1) BROWS(8192, 2, 1) BROWS(2048, 4, 0)
#define ROWS(NW, D, PF, SP) extern "C" __global__ void rows_##NW##_##D##_##PF##_##SP(const unsigned char* p, int rows, float* o) { rows_stream<NW, D, PF, SP>(p, rows, o); }
ROWS(2, 4, 1, 4) ROWS(2, 4, 0, 4) ROWS(2, 8, 1, 4) ROWS(2, 8, 0, 4) ROWS(4, 4, 1, 2) ROWS(1, 8, 1, 8) ROWS(2, 4, 1, 8) ROWS(2, 8, 1, 1)
ROWS(2, 8, 2, 4) ROWS(2, 4, 2, 4) ROWS(1, 8, 2, 8)
extern "C" __global__ void empty_kernel(float* out) {
  if (threadIdx.x == 0) { STAMP(0); STAMP(3); }
  if (threadIdx.x == 1023) out[0] = 1.f;
}
"""
# The ideal read (stream_read_us) takes the fastest of the methods and launch
# shapes that won in run 10: grid-strided register loads, and evict-first
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
    n = [int(x) for x in n]
    if kind == "cpa":  # V copies per thread per stage, S stages
        return n[0] * n[1] * threads * 16
    if kind == "bulk":  # S chunks of C bytes, S mbarriers
        return n[0] * n[1] + 8 * n[1]
    if kind == "brows":  # S stages of 8 segments of SEG bytes, S mbarriers
        return n[1] * 8 * n[0] + 8 * n[1]
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
    """The arguments of a STREAM_SRC kernel reading nbytes of buf: the bulk and
    row kernels count bytes (rows of 8 KiB), the others 16-byte words."""
    import cupy as cp
    if kernel.startswith(("rows", "brows")):
        return (buf, cp.int32(nbytes // 8192), out)
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


def empty_kernel_us(flush="write", n=100):
    """An empty launch timed as timed_us: the fixed cost in every figure."""
    import cupy as cp
    mod = stream_module()
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
