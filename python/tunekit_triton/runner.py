"""The Triton runner: torch tensors on one device, Triton launches, CUDA-event timing.

The worker never sees a config: a trial's artifact is the descriptor the
compile helper wrote (source, entry, meta-parameters, launch options,
resources), and its request carries the resolved grid and arguments.

Timing follows the CUDA worker (src/backend/cuda/worker.cpp):
- cold / cold-read: before every sample a flush overwrites (reads) a buffer
  of `flush_bytes` (4x the L2, at least 256 MB, as do_bench zeroes);
- samples are enqueued in groups (flush, event, launch, event) and read
  after one wait, a group being about 20 ms of GPU work, so the GPU runs
  under the steady load that triton.testing.do_bench times under;
- hot kernels shorter than 10 us, and every kernel when the spec says
  `measure: {graph: true}`, are timed as replays of a CUDA graph of
  launches (about 200 us of them when hot, one when cold: the flush stays
  outside the graph), each sample being the replay's time over its launches;
- the loop itself (warm-up, min/max samples, time cap, noise target) is
  measure.collect_samples, the mirror of tunekit's.
Under TRITON_INTERPRET=1 (the CPU interpreter) the same order runs with
tensors on the CPU and a host clock; those times mean nothing beyond the
protocol working.
"""

from __future__ import annotations

import inspect
import json
import os
import time
import traceback
from typing import Any, Dict, List, Optional

from . import kernel as kernel_mod
from .measure import collect_samples, summarize
from .protocol import Argument, Request, Result, Verification
from .worker import Runner, take_sampling

SHORT_KERNEL_US = 10.0
BATCH_TARGET_US = 200.0
GROUP_TARGET_US = 20000.0
MAX_GROUP = 512

# torch's text of the CUDA errors after which the context is unusable.
STICKY_ERRORS = ("illegal memory access", "misaligned address", "unspecified launch failure",
                 "device-side assert", "illegal instruction", "an illegal", "unknown error", "launch timed out")


def torch_dtype(name: str):
    import torch

    table = {"f32": torch.float32, "f64": torch.float64, "f16": torch.float16, "bf16": torch.bfloat16,
             "i8": torch.int8, "i16": torch.int16, "i32": torch.int32, "i64": torch.int64, "u8": torch.uint8}
    for n, attr in (("u16", "uint16"), ("u32", "uint32"), ("u64", "uint64")):
        if hasattr(torch, attr):
            table[n] = getattr(torch, attr)
    if name not in table:
        raise ValueError(f"element type {name} has no torch dtype here")
    return table[name]


def poison_int(element_size: int, signed: bool) -> int:
    """0xA5 in every byte, as the C++ workers poison integer outputs, as the
    value an integer of that size holds (torch's fill_ refuses 0xA5 for an
    int8: -0x5B is the same byte)."""
    return int.from_bytes(b"\xa5" * element_size, "little", signed=signed)


def is_float(name: str) -> bool:
    return name in ("f32", "f64", "f16", "bf16")


def classify_exception(e: BaseException) -> tuple[str, bool]:
    """(status, sticky) for an exception out of a compile or a launch."""
    name = type(e).__name__
    text = str(e)
    if name == "OutOfResources" or "out of resource" in text:
        return "resource_limit", False
    if name in ("CompilationError", "CompileTimeAssertionFailure", "UnsupportedLanguageConstruct") or \
            type(e).__module__.startswith("triton.compiler"):
        return "compile_error", False
    lowered = text.lower()
    sticky = "cuda error" in lowered and any(s in lowered for s in STICKY_ERRORS)
    return "launch_error", sticky


class UserCodeRaised(Exception):
    """A function of the user's (a reference, a setup function) that raised,
    named, with the line in its file where it did. Its message names the
    user's exception; short_trace() adds no class name of tunekit's."""

    def __init__(self, e: BaseException, path: str, who: str):
        line = 0
        for frame in traceback.extract_tb(e.__traceback__):
            if os.path.abspath(frame.filename) == os.path.abspath(path):
                line = frame.lineno or 0
        where = f"{path}:{line}" if line else path
        super().__init__(f"{who} raised at {where}: {type(e).__name__}: {e}")


def short_trace(e: BaseException, limit: int = 2000) -> str:
    text = str(e) if isinstance(e, UserCodeRaised) else f"{type(e).__name__}: {e}"
    if len(text) > limit:
        text = text[:limit] + " [...]"
    return text


class TritonRunner(Runner):
    def __init__(self, device_index: int = 0):
        import torch

        self.torch = torch
        self.interpret = kernel_mod.interpreting()
        self.cuda = torch.cuda.is_available() and not self.interpret
        self.device = torch.device("cuda", device_index) if self.cuda else torch.device("cpu")
        if self.cuda:
            torch.cuda.set_device(self.device)
        self.args: Dict[str, Any] = {}
        self.arg_specs: List[Argument] = []
        self.keys: Dict[str, tuple] = {}
        self.version = 0  # bumped when any input is regenerated
        self.saved_inout: Dict[str, Any] = {}
        self.setup_cache: Dict[tuple, Dict[str, Any]] = {}
        self.file_data: Dict[str, Any] = {}  # fill: {file}: by argument, (file version, host copy)
        self.descriptor: Dict[str, Any] = {}
        self.launch = None
        self.flush_buf = None
        self.flush_us = 0.0
        self.flush_mode = None
        self.pending_busy_us = 0.0
        self.poisoned = False
        self.sticky = ""

    # ---- arguments ---------------------------------------------------------

    def _generator(self, seed: int, name: str):
        g = self.torch.Generator(device=self.device)
        g.manual_seed((seed * 1_000_003 + sum(ord(c) * 31 ** i for i, c in enumerate(name))) % (2 ** 63))
        return g

    def _file_data(self, a: Argument):
        """A file fill's elements on the host, read once per version of the
        file and kept for the argument's next refill (tunekit checked the
        file's type and length against the argument)."""
        key = (a.fill_file, a.fill_stamp, a.fill_offset, a.type, a.count)
        kept = self.file_data.get(a.name)
        if kept is None or kept[0] != key:
            dtype = torch_dtype(a.type)
            with open(a.fill_file, "rb") as f:
                f.seek(a.fill_offset)
                raw = bytearray(f.read(a.count * self.torch.empty(0, dtype=dtype).element_size()))
            data = self.torch.frombuffer(raw, dtype=dtype) if raw else self.torch.empty(0, dtype=dtype)
            kept = self.file_data[a.name] = (key, data)
        return kept[1]

    def _make_buffer(self, a: Argument, seed: int):
        return self._fill(self.torch.empty(a.dims, dtype=torch_dtype(a.type), device=self.device), a, seed)

    def _fill(self, t, a: Argument, seed: int):
        """The argument's values, written into t: the same for the same seed."""
        torch = self.torch
        if a.fill == "zeros" or a.role == "out":
            return t.zero_()
        if a.fill == "constant":
            return t.fill_(a.fill_value)
        if a.fill == "file":
            return t.copy_(self._file_data(a).reshape(t.shape))
        if a.fill == "sequence":
            n = t.numel()
            return t.copy_((torch.arange(n, dtype=torch.float64, device=self.device) + a.fill_value).reshape(t.shape))
        g = self._generator(seed, a.name)
        if a.fill == "normal":
            # standard normal, as numpy.random.randn (Kernel Tuner's fill)
            return t.normal_(0.0, 1.0, generator=g)
        if is_float(a.type):
            # uniform in [-1, 1), as tunekit's host fill
            return t.uniform_(-1.0, 1.0, generator=g)
        return t.random_(0, 100, generator=g)

    def prepare(self, rq: Request) -> Optional[Result]:
        try:
            self.arg_specs = rq.arguments
            for a in rq.arguments:
                if a.setup:
                    continue
                if a.role == "scalar":
                    v = a.scalar
                    self.args[a.name] = int(v) if not is_float(a.type) else float(v)
                    continue
                key = a.key() + (rq.seed,)
                if self.keys.get(a.name) != key:
                    self.args[a.name] = self._make_buffer(a, rq.seed)
                    self.keys[a.name] = key
                    self.saved_inout.pop(a.name, None)
                    if a.role in ("in", "scratch", "inout"):
                        self.version += 1
                elif a.role in ("in", "scratch"):
                    # The same values again, in place (same seed): a config
                    # that wrote into its input (a bug, a store past its
                    # output's end) would leave every later config computing
                    # from other data, failing by no fault of its own. The
                    # C++ workers look for such a write; on the device
                    # generating the input again costs about what comparing
                    # it would.
                    self._fill(self.args[a.name], a, rq.seed)
                if a.role == "inout" and a.name not in self.saved_inout:
                    self.saved_inout[a.name] = self.args[a.name].clone()
        except Exception as e:
            failed = self._fail(e, "preparing the arguments")
            if type(e).__name__ == "OutOfMemoryError":
                # The device's memory, not the kernel (src/backend/cuda/worker.cpp's fail_allocation).
                failed.status, failed.fault = "resource_limit", "environment"
            return failed
        return None

    def _restore_for_verification(self):
        for a in self.arg_specs:
            if a.setup:
                continue
            if a.role == "inout":
                self.args[a.name].copy_(self.saved_inout[a.name])
            elif a.role == "out":
                t = self.args[a.name]
                if t.is_floating_point():
                    t.fill_(float("nan"))
                else:
                    t.fill_(poison_int(t.element_size(), t.dtype.is_signed))

    def _inputs(self) -> Dict[str, Any]:
        return {a.name: self.args[a.name] for a in self.arg_specs if not a.setup and a.name in self.args}

    def _setup_values(self, meta: Dict[str, Any]) -> Dict[str, Any]:
        wanted = [a for a in self.arg_specs if a.setup]
        out: Dict[str, Any] = {}
        for fn_ref in sorted({a.setup for a in wanted}):
            # The scalars too: a size that differs from the last in a scalar
            # alone (topk) keeps the buffers, and so the version.
            scalars = tuple(sorted((a.name, repr(self.args.get(a.name))) for a in self.arg_specs
                                   if a.role == "scalar" and not a.setup))
            key = (fn_ref, self.version, scalars, tuple(sorted(meta.items())))
            if key not in self.setup_cache:
                path, _, name = fn_ref.rpartition(":")
                fn = kernel_mod.find_function(kernel_mod.load_module(path), name, path)
                try:
                    produced = fn(self._inputs(), dict(meta))
                except Exception as e:
                    raise UserCodeRaised(e, path, f"the setup function {name}") from e
                if not isinstance(produced, dict):
                    raise TypeError(f"the setup function {name} returned {type(produced).__name__}, not a dict "
                                    "of argument values")
                if len(self.setup_cache) > 8:
                    self.setup_cache.clear()
                self.setup_cache[key] = produced
            produced = self.setup_cache[key]
            for a in wanted:
                if a.setup != fn_ref:
                    continue
                if a.name not in produced:
                    raise KeyError(f"the setup function {fn_ref.rpartition(':')[2]} returned no '{a.name}' "
                                   f"(it returned {', '.join(produced) or 'nothing'})")
                out[a.name] = produced[a.name]
        return out

    # ---- loading -----------------------------------------------------------

    def load(self, rq: Request) -> Optional[Result]:
        if self.poisoned:
            return Result.failure("launch_error", "the CUDA context is lost: " + self.sticky)
        try:
            with open(rq.artifact) as f:
                d = json.load(f)
        except (OSError, ValueError) as e:
            return Result.failure("launch_error", f"cannot read the build descriptor {rq.artifact}: {e}")
        self.descriptor = d
        try:
            kind = d.get("kind")
            if kind == "triton":
                self.launch = self._triton_launch(d, rq)
            elif kind == "python":
                self.launch = self._python_reference(d)
            elif kind == "torch":
                self.launch = self._torch_reference(d)
            else:
                return Result.failure("launch_error", f"unknown build descriptor kind '{kind}' in {rq.artifact}")
        except kernel_mod.KernelLoadError as e:
            return Result.failure("launch_error", str(e) + (f" (line {e.line})" if e.line else ""))
        except Exception as e:
            return self._fail(e, "loading")
        return None

    def _triton_launch(self, d: Dict[str, Any], rq: Request):
        path, entry = d["source"], d["entry"]
        fn = kernel_mod.find_entry(kernel_mod.load_module(path), entry, path)
        meta = dict(d.get("meta", {}))
        tuned_options = dict(d.get("options", {}))
        # The interpreter takes no launch options; a setup function still
        # sees them, as documented.
        options = {} if self.interpret else tuned_options
        grid = tuple(int(x) for x in rq.grid)
        setup = self._setup_values({**meta, **tuned_options})
        kwargs = {}
        for a in self.arg_specs:
            if a.passed:
                kwargs[a.name] = setup[a.name] if a.setup else self.args[a.name]
        kwargs.update(meta)
        kwargs.update(options)

        def launch():
            fn[grid](**kwargs)

        return launch

    def _call_with_declared(self, fn, values: Dict[str, Any]):
        params = inspect.signature(fn).parameters
        if any(p.kind == inspect.Parameter.VAR_KEYWORD for p in params.values()):
            return fn(**values)
        missing = [n for n, p in params.items() if p.default is inspect.Parameter.empty and n not in values
                   and p.kind in (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)]
        if missing:
            raise TypeError(f"the reference {fn.__name__} takes {', '.join(missing)}, which no argument of the "
                            f"spec is named (arguments: {', '.join(values)})")
        return fn(**{n: values[n] for n in params if n in values})

    def _store_reference_result(self, produced):
        outputs = [a for a in self.arg_specs if a.role in ("out", "inout") and not a.setup]
        if produced is None:
            return
        if isinstance(produced, dict):
            items = produced.items()
        elif len(outputs) == 1:
            items = [(outputs[0].name, produced)]
        else:
            raise TypeError(f"the reference returned one {type(produced).__name__} but the spec has "
                            f"{len(outputs)} outputs; return a dict of them by name")
        for name, value in items:
            if name not in self.args:
                raise KeyError(f"the reference returned '{name}', which no output argument is named")
            target = self.args[name]
            value = self.torch.as_tensor(value, device=target.device)
            if value.numel() != target.numel():
                raise ValueError(f"the reference's '{name}' has {value.numel()} elements; the argument has "
                                 f"{target.numel()} (shape {list(target.shape)})")
            target.copy_(value.reshape(target.shape).to(target.dtype))

    def _python_reference(self, d: Dict[str, Any]):
        path, entry = d["source"], d["entry"]
        fn = kernel_mod.find_function(kernel_mod.load_module(path), entry, path)

        def launch():
            try:
                produced = self._call_with_declared(fn, self._inputs())
            except Exception as e:
                raise UserCodeRaised(e, path, f"the reference {entry}") from e
            self._store_reference_result(produced)

        return launch

    def _torch_reference(self, d: Dict[str, Any]):
        code = compile(d["expression"], "<reference expression>", "eval")

        def launch():
            scope = {"torch": self.torch, **self._inputs()}
            self._store_reference_result(eval(code, scope))  # the spec's own expression

        return launch

    # ---- running -----------------------------------------------------------

    def _sync(self):
        if self.cuda:
            self.torch.cuda.synchronize(self.device)

    def _fail(self, e: BaseException, during: str) -> Result:
        status, sticky = classify_exception(e)
        if self.cuda and not sticky:
            # An asynchronous fault surfaces at the next synchronisation.
            try:
                self.torch.cuda.synchronize(self.device)
            except Exception as later:
                e, sticky = later, True
                status = "launch_error"
        if sticky:
            self.poisoned = True
            self.sticky = short_trace(e, 300)
        # The user's own function names itself and its line.
        where = "" if status in ("compile_error", "resource_limit") or isinstance(e, UserCodeRaised) else f"{during}: "
        return Result.failure(status, where + short_trace(e))

    def run_once(self, rq: Request) -> Optional[Result]:
        try:
            self._restore_for_verification()
            t0 = time.perf_counter()
            self.launch()
            self._sync()
            self.pending_busy_us += (time.perf_counter() - t0) * 1e6
        except Exception as e:
            return self._fail(e, "the launch")
        return None

    def save_outputs(self, path: str) -> str:
        outputs = {a.name: self.args[a.name].detach().cpu() for a in self.arg_specs
                   if a.role in ("out", "inout") and not a.setup}
        try:
            tmp = path + ".tmp"
            self.torch.save(outputs, tmp)
            os.replace(tmp, path)
        except Exception as e:
            return f"cannot save the reference outputs to {path}: {e}"
        return ""

    def nan_output(self) -> str:
        for a in self.arg_specs:
            if a.role not in ("out", "inout") or a.setup:
                continue
            t = self.args[a.name]
            if not t.is_floating_point():
                continue
            nan = self.torch.isnan(t.detach().flatten())
            if bool(nan.any()):
                return f"output '{a.name}' has nan at element {int(nan.nonzero()[0, 0])}"
        return ""

    def verify(self, path: str, atol: float, rtol: float) -> Verification:
        torch = self.torch
        v = Verification(checked=True)
        # Compared on the device, in float32 (float64 for float64 outputs):
        # copying a large output to the host per trial would cost more than
        # timing it. The reference outputs stay loaded while trials use them.
        if getattr(self, "_expected_path", None) != path:
            try:
                loaded = torch.load(path)
            except Exception as e:
                v.passed = False
                v.detail = f"cannot read the reference outputs {path}: {e}"
                return v
            self._expected_path = path
            self._expected = {n: t.to(self.device) for n, t in loaded.items()}
        for name, expected in self._expected.items():
            got = self.args[name].detach()
            wide = torch.float64 if got.dtype == torch.float64 else torch.float32
            g = got.to(wide).flatten()
            e = expected.to(wide).flatten()
            if g.numel() != e.numel():
                v.passed = False
                v.detail = f"{name}: {g.numel()} elements, the reference has {e.numel()}"
                return v
            diff = (g - e).abs()
            bad = ~(diff <= atol + rtol * e.abs())
            bad |= torch.isnan(g) & ~torch.isnan(e)
            finite = ~torch.isnan(diff)
            if finite.any():
                v.max_abs_diff = max(v.max_abs_diff, float(diff[finite].max()))
                rel = diff[finite] / e[finite].abs().clamp_min(1e-30)
                v.max_rel_err = max(v.max_rel_err, float(rel.max()))
            if not finite.all():
                v.max_abs_diff = float("inf")
            n_bad = int(bad.sum())
            if n_bad and v.passed:
                i = int(bad.nonzero()[0, 0])
                v.passed = False
                v.detail = (f"{name}: {n_bad} of {g.numel()} elements differ; first at [{i}]: got {float(g[i])}, "
                            f"expected {float(e[i])} (atol {atol:g}, rtol {rtol:g})")
        return v

    # ---- timing ------------------------------------------------------------

    def _ensure_flush(self, nbytes: int, mode: str):
        torch = self.torch
        n = max(nbytes // 4, 1)
        if self.flush_buf is None or self.flush_buf.numel() != n:
            self.flush_buf = torch.zeros(n, dtype=torch.int32, device=self.device)
            self.flush_mode = None
        if self.flush_mode != mode:
            self._flush(mode)
            s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            s.record()
            self._flush(mode)
            e.record()
            e.synchronize()
            self.flush_us = s.elapsed_time(e) * 1000.0
            self.flush_mode = mode

    def _flush(self, mode: str):
        if mode == "cold-read":
            # reads the whole buffer; the one-element result is all it writes
            self._sink = self.flush_buf.max()
        else:
            self.flush_value = (getattr(self, "flush_value", 0) + 1) & 0x7FFFFFFF
            self.flush_buf.fill_(self.flush_value)

    def take_busy_us(self) -> float:
        busy, self.pending_busy_us = self.pending_busy_us, 0.0
        return busy

    def time(self, rq: Request) -> Result:
        result = Result()
        if not self.cuda:
            return self._time_on_host(rq, result)
        torch = self.torch
        m = rq.measure
        mode = m.cache
        cold = mode != "hot" and rq.flush_bytes > 0
        try:
            if cold:
                self._ensure_flush(rq.flush_bytes, mode)
            batch = 1
            if not cold:
                once = min(self._time_launches(1, result) for _ in range(4))
                if m.graph or once < SHORT_KERNEL_US:
                    batch = int(min(max(BATCH_TARGET_US / max(once, 0.5), 2.0), 1000.0))
            graph = None
            if m.graph or batch > 1:
                graph = self._capture(batch)
            starts: List[Any] = []
            stops: List[Any] = []
            group: List[float] = []
            state = {"next": 0, "size": 1}

            def sample(at_most: int) -> float:
                if state["next"] == len(group):
                    # never more calls than the loop makes before it next decides
                    size = max(1, min(at_most, state["size"]))
                    while len(starts) < size:
                        starts.append(torch.cuda.Event(enable_timing=True))
                        stops.append(torch.cuda.Event(enable_timing=True))
                    for i in range(size):
                        if cold:
                            self._flush(mode)
                            result.flush_us += self.flush_us  # as timed once for this mode (_ensure_flush)
                        starts[i].record()
                        if graph is not None:
                            graph.replay()
                        else:
                            self.launch()
                        stops[i].record()
                    stops[size - 1].synchronize()
                    group.clear()
                    for i in range(size):
                        us = starts[i].elapsed_time(stops[i]) * 1000.0
                        group.append(us)
                        result.busy_us += us
                    state["next"] = 0
                    per_sample = group[-1] + (self.flush_us if cold else 0.0)
                    state["size"] = int(min(max(GROUP_TARGET_US / max(per_sample, 1.0), 1.0), MAX_GROUP))
                state["next"] += 1
                return group[state["next"] - 1] / batch

            sampled = collect_samples(m, None, sample)
            take_sampling(result, sampled, m)
        except Exception as e:
            failed = self._fail(e, "timing")
            failed.busy_us = result.busy_us
            return failed
        return result

    def _time_launches(self, n: int, result: Result) -> float:
        torch = self.torch
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record()
        for _ in range(n):
            self.launch()
        e.record()
        e.synchronize()
        us = s.elapsed_time(e) * 1000.0
        result.busy_us += us
        return us

    def _capture(self, n: int):
        torch = self.torch
        side = torch.cuda.Stream(self.device)
        side.wait_stream(torch.cuda.current_stream(self.device))
        with torch.cuda.stream(side):
            self.launch()  # loads the kernel outside the capture
        torch.cuda.current_stream(self.device).wait_stream(side)
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            for _ in range(n):
                self.launch()
        torch.cuda.synchronize(self.device)
        return graph

    def _time_on_host(self, rq: Request, result: Result) -> Result:
        def sample(at_most: int) -> float:
            t0 = time.perf_counter()
            self.launch()
            us = (time.perf_counter() - t0) * 1e6
            result.busy_us += us
            return us

        try:
            sampled = collect_samples(rq.measure, None, sample)
            take_sampling(result, sampled, rq.measure)
        except Exception as e:
            failed = self._fail(e, "timing")
            failed.busy_us = result.busy_us
            return failed
        return result


def statistics(result: Result):
    return summarize(result.samples_us)
