"""The compile helper: builds one variant ahead of measurement.

tunekit's Triton builder keeps a pool of these processes (one per build job)
and sends each a `compile` request: the kernel file, its entry, the config
and the resolved arguments. The helper splits the config into meta-parameters
(the entry's tl.constexpr parameters) and launch options (num_warps,
num_stages and the others the installed Triton's CUDA backend takes), then
compiles with JITFunction.warmup on placeholder tensors of the arguments'
dtypes and the scalars' real values, so that the specialisation (and hence
Triton's cache key) is the one the worker's launch computes: the worker
then loads the binary from the shared TRITON_CACHE_DIR instead of compiling.

After compiling it checks what the binary needs against the device: shared
memory against the opt-in limit, registers times threads against the
registers of a block, threads against the kernel's own maximum; a variant
over any of them is a resource_limit, decided before anything is launched.
It answers with the status and writes the build descriptor the worker reads.
"""

from __future__ import annotations

import json
import os
import time
import traceback
from typing import Any, Dict, List

from . import kernel as kernel_mod
from .protocol import Argument


def _answer(status: str, error: str = "", **extra) -> Dict[str, Any]:
    return {"status": status, "error": error, **extra}


def write_descriptor(path: str, descriptor: Dict[str, Any]) -> None:
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump(descriptor, f, indent=1)
    os.replace(tmp, path)


def check_arguments(sig: kernel_mod.KernelSignature, arguments: List[Argument], meta: Dict[str, Any],
                    entry: str) -> str:
    """Why the spec's arguments cannot call `entry`, or ''."""
    runtime = [p for p in sig.parameters if p not in sig.constexprs]
    names = [a.name for a in arguments]
    extra = [n for n in names if n not in sig.parameters]
    if extra:
        hints = [f"'{n}'" + (f" (did you mean '{c}'?)" if (c := kernel_mod.closest(n, runtime)) else "") for n in extra]
        return f"argument {', '.join(hints)} is no parameter of {entry} (its parameters: {', '.join(sig.parameters)})"
    constexpr_args = [n for n in names if n in sig.constexprs]
    if constexpr_args:
        return (f"argument {', '.join(constexpr_args)} is a tl.constexpr of {entry}: give it as a parameter of the "
                "spec (a meta-parameter), not as an argument")
    missing = [p for p in runtime if p not in names and p not in sig.with_defaults]
    if missing:
        return f"{entry} takes {', '.join(missing)}, which no argument of the spec gives"
    missing_meta = [p for p in sig.constexprs if p not in meta and p not in sig.with_defaults]
    if missing_meta:
        return (f"{entry}'s tl.constexpr {', '.join(missing_meta)} has no value: make it a parameter of the spec "
                "(a list of one value fixes it)")
    return ""


def compile_variant(rq: Dict[str, Any]) -> Dict[str, Any]:
    t0 = time.perf_counter()
    source, entry = rq["source"], rq["entry"]
    config: Dict[str, Any] = rq.get("config", {})
    arguments = [Argument.from_json(a) for a in rq.get("args", [])]
    limits: Dict[str, Any] = rq.get("limits", {})
    try:
        module = kernel_mod.load_module(source)
        fn = kernel_mod.find_entry(module, entry, source)
    except kernel_mod.KernelLoadError as e:
        return _answer("compile_error", str(e) + (f" (line {e.line})" if e.line else ""))
    sig = kernel_mod.signature_of(fn)
    options_known = kernel_mod.launch_option_names()
    meta, options, unknown = kernel_mod.split_config(config, sig, options_known)
    if unknown:
        hints = []
        for n in unknown:
            near = kernel_mod.closest(n, sig.constexprs + options_known)
            hints.append(f"'{n}'" + (f" (did you mean '{near}'?)" if near else ""))
        return _answer("compile_error",
                       f"parameter {', '.join(hints)} is neither a tl.constexpr of {entry} "
                       f"(those are: {', '.join(sig.constexprs) or 'none'}) nor a Triton launch option "
                       f"({', '.join(options_known)})")
    if why := check_arguments(sig, arguments, meta, entry):
        return _answer("compile_error", why)
    descriptor = {"kind": "triton", "source": os.path.abspath(source), "entry": entry, "meta": meta,
                  "options": options}
    if kernel_mod.interpreting():
        # The interpreter runs the Python itself: nothing to compile.
        descriptor["resources"] = {}
        descriptor["interpreted"] = True
        write_descriptor(rq["descriptor"], descriptor)
        return _answer("ok", resources={}, compile_s=time.perf_counter() - t0)

    import torch
    from triton.runtime.jit import MockTensor

    from .runner import is_float, torch_dtype

    kwargs: Dict[str, Any] = {}
    for a in arguments:
        if a.role == "scalar":
            kwargs[a.name] = float(a.scalar) if is_float(a.type) else int(a.scalar)
        else:
            kwargs[a.name] = MockTensor(torch_dtype(a.type), a.dims)
    kwargs.update(meta)
    kwargs.update(options)
    try:
        compiled = fn.warmup(grid=(1,), **kwargs)
    except Exception as e:
        from .runner import classify_exception

        status, _ = classify_exception(e)
        if status == "launch_error":
            status = "compile_error"
        return _answer(status, f"{type(e).__name__}: {e}")
    if hasattr(compiled, "result"):
        compiled = compiled.result()
    md = compiled.metadata
    shared = int(getattr(md, "shared", 0) or 0)
    num_warps = int(getattr(md, "num_warps", options.get("num_warps", 4)))
    threads = num_warps * 32 * int(getattr(md, "num_ctas", 1) or 1)
    resources = {"shared_memory": shared, "num_warps": num_warps, "threads": threads}
    optin = int(limits.get("shared_memory_per_block_optin", 0) or 0)
    if optin and shared > optin:
        return _answer("resource_limit",
                       f"{shared} bytes of shared memory; the device allows {optin} per block", resources=resources)
    try:
        compiled._init_handles()  # loads the binary: registers and spills become known
    except Exception as e:
        return _answer("resource_limit" if "out of resource" in str(e) else "compile_error",
                       f"{type(e).__name__}: {e}", resources=resources)
    resources["registers"] = int(getattr(compiled, "n_regs", 0) or 0)
    resources["spills"] = int(getattr(compiled, "n_spills", 0) or 0)
    regs_block = int(limits.get("registers_per_block", 0) or 0)
    if regs_block and resources["registers"] * threads > regs_block:
        return _answer("resource_limit",
                       f"{resources['registers']} registers x {threads} threads = {resources['registers'] * threads}; "
                       f"the device has {regs_block} per block", resources=resources)
    max_threads = int(limits.get("max_threads_per_block", 0) or 0)
    if max_threads and threads > max_threads:
        return _answer("resource_limit", f"{threads} threads per block; the device allows {max_threads}",
                       resources=resources)
    max_spills = rq.get("max_spills")
    if max_spills is not None and resources["spills"] > int(max_spills):
        return _answer("resource_limit",
                       f"{resources['spills']} registers spilled; the spec allows {max_spills}", resources=resources)
    descriptor["resources"] = resources
    write_descriptor(rq["descriptor"], descriptor)
    return _answer("ok", resources=resources, compile_s=time.perf_counter() - t0)


def handle(rq: Dict[str, Any]) -> Dict[str, Any]:
    try:
        return compile_variant(rq)
    except Exception as e:  # a bug here must not look like the kernel's
        return _answer("compile_error", f"the compile helper failed: {type(e).__name__}: {e}\n"
                                        f"{traceback.format_exc(limit=4)}")
