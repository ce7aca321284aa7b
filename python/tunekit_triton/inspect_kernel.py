"""Load-time checks of a Triton spec, and the device as constraints see it.

inspect_request() imports the kernel file (and the reference's and setup
functions' files) and reports every problem with the line it is on: a file
that does not import, an entry that is no @triton.jit function, a spec
parameter that is neither a tl.constexpr of the entry nor a launch option of
the installed Triton, a kernel parameter that no argument gives. tunekit's
spec loader turns them into errors located in the spec.
"""

from __future__ import annotations

import os
from typing import Any, Dict, List

from . import fake
from . import kernel as kernel_mod


def _error(what: str, message: str, name: str = "", line: int = 0, file: str = "") -> Dict[str, Any]:
    return {"what": what, "name": name, "message": message, "line": line, "file": file}


def triton_version() -> str:
    try:
        import triton

        return triton.__version__
    except Exception:
        return ""


def inspect_request(rq: Dict[str, Any]) -> Dict[str, Any]:
    out: Dict[str, Any] = {"errors": [], "constexprs": [], "parameters": [], "launch_options": []}
    fake_mode = fake.enabled()
    if not fake_mode:
        version = triton_version()
        if not version:
            out["triton_missing"] = "python3 has no triton module (pip install triton)"
            return out
        out["triton"] = version
    source, entry = rq["source"], rq["entry"]
    errors: List[Dict[str, Any]] = out["errors"]
    try:
        module = kernel_mod.load_module(source)
        fn = (kernel_mod.find_function if fake_mode else kernel_mod.find_entry)(module, entry, source)
    except kernel_mod.KernelLoadError as e:
        errors.append(_error(e.kind, str(e), entry, e.line, source))
        return out
    sig = kernel_mod.signature_of(fn)
    out["constexprs"] = sig.constexprs
    out["parameters"] = sig.parameters
    options = list(kernel_mod.FALLBACK_LAUNCH_OPTIONS) if fake_mode or kernel_mod.interpreting() \
        else kernel_mod.launch_option_names()
    out["launch_options"] = options
    for name in rq.get("parameters", []):
        if name in sig.constexprs or name in options:
            continue
        if name in sig.parameters:
            msg = (f"parameter '{name}' is a runtime argument of {entry}, not a tl.constexpr: declare it "
                   f"'{name}: tl.constexpr' to tune it")
        else:
            near = kernel_mod.closest(name, sig.constexprs + options)
            msg = (f"parameter '{name}' is neither a tl.constexpr of {entry} (those are: "
                   f"{', '.join(sig.constexprs) or 'none'}) nor a launch option of Triton {out.get('triton', '')}"
                   + (f"; did you mean '{near}'?" if near else ""))
        errors.append(_error("parameter", msg, name, sig.line, source))
    names = rq.get("arguments", [])
    runtime = [p for p in sig.parameters if p not in sig.constexprs]
    for name in names:
        if name not in sig.parameters:
            near = kernel_mod.closest(name, runtime)
            errors.append(_error("argument", f"argument '{name}' is no parameter of {entry} (its parameters: "
                                             f"{', '.join(sig.parameters)})" +
                                 (f"; did you mean '{near}'?" if near else ""), name, sig.line, source))
        elif name in sig.constexprs:
            errors.append(_error("argument", f"argument '{name}' is a tl.constexpr of {entry}: make it a "
                                             "parameter of the spec", name, sig.line, source))
    for p in runtime:
        if p not in names and p not in sig.with_defaults:
            errors.append(_error("arguments", f"{entry} takes '{p}', which no argument of the spec gives",
                                 p, sig.line, source))
    for p in sig.constexprs:
        if p not in rq.get("parameters", []) and p not in sig.with_defaults:
            errors.append(_error("constexpr", f"{entry}'s tl.constexpr '{p}' has no value: make it a parameter of "
                                              "the spec (a list of one value fixes it)", p, sig.line, source))
    for what, ref in (("reference", rq.get("reference")),):
        if not ref:
            continue
        try:
            kernel_mod.find_function(kernel_mod.load_module(ref["source"]), ref["entry"], ref["source"])
        except kernel_mod.KernelLoadError as e:
            errors.append(_error(what, str(e), ref["entry"], e.line, ref["source"]))
    for setup in rq.get("setups", []):
        path, _, name = setup.rpartition(":")
        try:
            kernel_mod.find_function(kernel_mod.load_module(path), name, path)
        except kernel_mod.KernelLoadError as e:
            errors.append(_error("setup", str(e), name, e.line, path))
    return out


def describe(device: int) -> Dict[str, Any]:
    """{"device": name, property: value, ...}: what constraints read."""
    if fake.enabled():
        return dict(fake.FAKE_DEVICE)
    version = triton_version()
    if kernel_mod.interpreting():
        d = dict(fake.FAKE_DEVICE)
        d["device"] = f"triton interpreter on the CPU (triton {version}; limits of an sm_90 GPU)"
        return d
    import torch
    from triton.runtime import driver

    props = torch.cuda.get_device_properties(device)
    tp = driver.active.utils.get_device_properties(device)
    return {
        "device": f"{props.name} (triton {version}, torch {torch.__version__})",
        "shared_memory_per_block_optin": int(tp["max_shared_mem"]),
        "shared_memory_per_block": int(getattr(props, "shared_memory_per_block", 49152)),
        "shared_memory_per_sm": int(getattr(props, "shared_memory_per_multiprocessor", 0)),
        "max_threads_per_block": 1024,
        "registers_per_block": int(tp["max_num_regs"]),
        "registers_per_sm": int(getattr(props, "regs_per_multiprocessor", 0)),
        "sm_count": int(tp["multiprocessor_count"]),
        "l2_bytes": int(getattr(props, "L2_cache_size", 0)),
        "warp_size": int(tp.get("warpSize", 32)),
        "compute_capability": props.major * 10 + props.minor,
        "cc_major": props.major,
        "cc_minor": props.minor,
        "memory_bytes": int(props.total_memory),
        "triton_version": version,
    }
