"""A fake compiler and runner: the whole Triton path without Triton or a GPU.

With TUNEKIT_TRITON_FAKE=1 the helper processes run this instead of Triton,
so tests on a CPU-only machine drive tunekit's Triton backend end to end:
the builder's pool of compile helpers, the worker protocol, the statuses
(compile_error, resource_limit, launch_error, wrong_result, crash, timeout)
and the sampling loop. A fake kernel file is plain Python:

    def kernel(x, out, n, BLOCK: "tl.constexpr"):   # the signature, as a jit entry's
        pass
    def behaviour(config):                           # what a config does
        return {"time_us": 10.0 / config["BLOCK"], "run": "ok"}

behaviour() may return: compile ("ok", "error: <message>", "crash", "hang"),
shared_memory and registers (checked against the limits like real ones),
run ("ok", "launch_error", "sticky", "crash", "hang", "wrong", and for a
kernel right on its first call only "wrong_later" (later calls write wrong
values) or "once" (later calls write nothing)), time_us and noise (the
relative spread of its samples).
"""

from __future__ import annotations

import inspect
import json
import math
import os
import random
import signal
import time
from typing import Any, Dict, Optional

from . import kernel as kernel_mod
from .compile import _answer, check_arguments, write_descriptor
from .measure import collect_samples
from .protocol import Argument, Request, Result, Verification
from .worker import Runner, take_sampling

FAKE_DEVICE = {
    "device": "fake GPU (tunekit_triton.fake)",
    "shared_memory_per_block_optin": 232448,
    "shared_memory_per_block": 49152,
    "max_threads_per_block": 1024,
    "registers_per_block": 65536,
    "sm_count": 132,
    "l2_bytes": 62914560,
    "warp_size": 32,
    "compute_capability": 90,
}


def enabled() -> bool:
    return os.environ.get("TUNEKIT_TRITON_FAKE", "0") not in ("", "0")


def _die(how: str):
    if how == "crash":
        os.kill(os.getpid(), signal.SIGSEGV)
    while True:  # hang: the tuner's timeout must end this process
        time.sleep(3600)


def compile_variant(rq: Dict[str, Any]) -> Dict[str, Any]:
    source, entry = rq["source"], rq["entry"]
    config = rq.get("config", {})
    try:
        module = kernel_mod.load_module(source)
        fn = kernel_mod.find_function(module, entry, source)
    except kernel_mod.KernelLoadError as e:
        return _answer("compile_error", str(e) + (f" (line {e.line})" if e.line else ""))
    sig = kernel_mod.signature_of(fn)
    meta, options, unknown = kernel_mod.split_config(config, sig, list(kernel_mod.FALLBACK_LAUNCH_OPTIONS))
    if unknown:
        return _answer("compile_error", f"parameter {', '.join(unknown)} is neither a tl.constexpr of {entry} "
                                        f"nor a Triton launch option")
    if why := check_arguments(sig, [Argument.from_json(a) for a in rq.get("args", [])], meta, entry):
        return _answer("compile_error", why)
    b = dict(module.behaviour(dict(config))) if hasattr(module, "behaviour") else {}
    what = str(b.get("compile", "ok"))
    if what in ("crash", "hang"):
        _die(what)
    if what.startswith("error"):
        return _answer("compile_error", what.partition(":")[2].strip() or "fake compile error")
    limits = rq.get("limits", {})
    res = {"shared_memory": int(b.get("shared_memory", 0)), "registers": int(b.get("registers", 32)),
           "threads": 32 * int(options.get("num_warps", 4))}
    optin = int(limits.get("shared_memory_per_block_optin", 0) or 0)
    if optin and res["shared_memory"] > optin:
        return _answer("resource_limit", f"{res['shared_memory']} bytes of shared memory; the device allows "
                                         f"{optin} per block", resources=res)
    regs = int(limits.get("registers_per_block", 0) or 0)
    if regs and res["registers"] * res["threads"] > regs:
        return _answer("resource_limit", f"{res['registers']} registers x {res['threads']} threads; the device "
                                         f"has {regs} per block", resources=res)
    write_descriptor(rq["descriptor"], {"kind": "fake", "source": os.path.abspath(source), "entry": entry,
                                        "meta": meta, "options": options, "behaviour": b, "resources": res})
    return _answer("ok", resources=res, compile_s=0.0)


class FakeRunner(Runner):
    """Outputs are one number per output argument: the reference writes 1.0
    (or what a reference function of no parameters returns), a variant whose
    behaviour says run: wrong writes 2.0. Each checked call starts from
    outputs poisoned to NaN, as the real runner's do."""

    def __init__(self):
        self.behaviour: Dict[str, Any] = {}
        self.kind = ""
        self.outputs: Dict[str, float] = {}
        self.rng = random.Random(1)
        self.poisoned = False
        self.calls = 0  # of the loaded variant
        self.reference_value = 1.0

    def prepare(self, rq: Request) -> Optional[Result]:
        return None

    def load(self, rq: Request) -> Optional[Result]:
        if self.poisoned:
            return Result.failure("launch_error", "the (fake) CUDA context is lost")
        try:
            with open(rq.artifact) as f:
                d = json.load(f)
        except (OSError, ValueError) as e:
            return Result.failure("launch_error", f"cannot read the build descriptor {rq.artifact}: {e}")
        self.kind = d.get("kind", "")
        self.behaviour = d.get("behaviour", {})
        self.reference_value = 1.0
        if self.kind == "python":
            try:
                fn = kernel_mod.find_function(kernel_mod.load_module(d["source"]), d["entry"], d["source"])
            except kernel_mod.KernelLoadError as e:
                return Result.failure("launch_error", str(e))
            if not inspect.signature(fn).parameters:
                self.reference_value = float(fn())
        self.outputs_names = [a.name for a in rq.arguments if a.role in ("out", "inout")]
        self.calls = 0
        return None

    def _run(self) -> Optional[Result]:
        what = str(self.behaviour.get("run", "ok"))
        if what in ("crash", "hang"):
            _die(what)
        if what == "launch_error":
            return Result.failure("launch_error", "fake launch failure")
        if what == "sticky":
            self.poisoned = True
            return Result.failure("launch_error", "CUDA error: an illegal memory access was encountered (fake)")
        return None

    def run_once(self, rq: Request) -> Optional[Result]:
        if self.kind != "fake":  # the reference
            self.outputs = {n: self.reference_value for n in self.outputs_names}
            return None
        if failed := self._run():
            return failed
        what = self.behaviour.get("run")
        later = self.calls > 0
        self.calls += 1
        if what == "once" and later:  # writes nothing: the poisoned outputs stay
            self.outputs = {n: float("nan") for n in self.outputs_names}
            return None
        value = 2.0 if what == "wrong" or (what == "wrong_later" and later) else 1.0
        self.outputs = {n: value for n in self.outputs_names}
        return None

    def nan_output(self) -> str:
        for name, value in self.outputs.items():
            if math.isnan(value):
                return f"output '{name}' has nan at element 0"
        return ""

    def save_outputs(self, path: str) -> str:
        with open(path, "w") as f:
            json.dump(self.outputs, f)
        return ""

    def verify(self, path: str, atol: float, rtol: float) -> Verification:
        with open(path) as f:
            expected = json.load(f)
        v = Verification(checked=True)
        for name, e in expected.items():
            g = self.outputs.get(name, float("nan"))
            d = abs(g - e)
            v.max_abs_diff = max(v.max_abs_diff, d)
            if not d <= atol + rtol * abs(e):
                v.passed = False
                v.detail = f"{name}: 1 of 1 elements differ; first at [0]: got {g}, expected {e}"
        return v

    def time(self, rq: Request) -> Result:
        if failed := self._run():
            return failed
        t = float(self.behaviour.get("time_us", 10.0))
        noise = float(self.behaviour.get("noise", 0.0))
        r = Result()

        cold = rq.measure.cache != "hot" and rq.flush_bytes > 0

        def sample(at_most: int) -> float:
            if cold:  # a flush at 3 TB/s before each sample, as the real runner's
                r.flush_us += rq.flush_bytes / 3e6
            us = t * (1.0 + noise * (2 * self.rng.random() - 1))
            r.busy_us += us
            return us

        if self.behaviour.get("run") == "wrong_later":  # right on its first call only, as a race may be
            self.outputs = {n: 2.0 for n in self.outputs_names}
        # run: once writes nothing after its first call: its outputs keep that call's right values
        sampled = collect_samples(rq.measure, (lambda: None), sample)
        self.calls += 1  # (and more: later calls are all that run_once asks about)
        take_sampling(r, sampled, rq.measure)
        return r
