"""Load-time checks of a Triton spec, and the device as constraints see it.

inspect_request() imports the kernel file (and the reference's and setup
functions' files) and reports every problem: a file that does not import (at
its line and column), an entry that is no @triton.jit function, a spec
parameter that is neither a tl.constexpr of the entry nor a launch option of
the installed Triton, a kernel.constexprs key that is no tl.constexpr of it,
a kernel parameter that no argument gives, a missing reference or setup
function, a torch reference that does not compile. Each error's `what` and
`name` say which spec key it is about; tunekit's spec loader locates it there
(src/backend/triton/triton_backend.cpp, spec_location).
"""

from __future__ import annotations

import os
from typing import Any, Dict, List

from . import fake
from . import kernel as kernel_mod


def _error(what: str, message: str, name: str = "", line: int = 0, file: str = "", column: int = 0) -> Dict[str, Any]:
    """`line` and `column` are in `file`; for a torch reference, `column` is
    in the expression."""
    return {"what": what, "name": name, "message": message, "line": line, "column": column, "file": file}


def _torch_errors(expression: str) -> List[Dict[str, Any]]:
    """A torch reference that is no Python expression, found before a run
    needs it."""
    try:
        compile(expression, "<reference.torch>", "eval")
    except (SyntaxError, ValueError) as e:  # ValueError: a NUL in the text
        msg = getattr(e, "msg", str(e))
        column = (e.offset or 0) if getattr(e, "lineno", 0) == 1 else 0
        return [_error("torch", f"'reference.torch' is no Python expression: {msg}", column=column)]
    return []


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
    if rq.get("torch"):
        errors += _torch_errors(rq["torch"])
    try:
        module = kernel_mod.load_module(source)
        if fake_mode:  # a fake kernel is a plain function standing for a @triton.jit one
            fn = kernel_mod.find_function(module, entry, source, "a @triton.jit function")
        else:
            fn = kernel_mod.find_entry(module, entry, source)
    except kernel_mod.KernelLoadError as e:
        errors.append(_error(e.kind, str(e), entry, e.line, source, e.column))
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
            triton = f"Triton {out['triton']}" if out.get("triton") else "Triton"  # no version when faked
            msg = (f"parameter '{name}' is neither a tl.constexpr of {entry} (those are: "
                   f"{', '.join(sig.constexprs) or 'none'}) nor a launch option of {triton}"
                   + (f"; did you mean '{near}'?" if near else ""))
        errors.append(_error("parameter", msg, name, sig.line, source))
    constexprs = rq.get("constexprs", [])
    listing = f"{entry}'s tl.constexpr parameters: {', '.join(sig.constexprs) or 'none'}"
    for name in constexprs:
        # A launch option fixed by the size reaches Triton as a tuned one does.
        if name in sig.constexprs or name in options:
            continue
        if name in sig.parameters:
            msg = (f"'{name}' in 'kernel.constexprs' is a runtime argument of {entry}, not a tl.constexpr: "
                   f"expected a tl.constexpr parameter ({listing}); a runtime argument takes its value from "
                   "'arguments'")
        else:
            near = kernel_mod.closest(name, sig.constexprs)
            msg = (f"'{name}' in 'kernel.constexprs' is no argument of {entry}: expected a tl.constexpr "
                   f"parameter ({listing})" + (f"; did you mean '{near}'?" if near else ""))
        errors.append(_error("constexprs", msg, name, sig.line, source))
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
        if p not in rq.get("parameters", []) and p not in constexprs and p not in sig.with_defaults:
            errors.append(_error("constexpr", f"{entry}'s tl.constexpr '{p}' has no value: make it a parameter of "
                                              "the spec (a list of one value fixes it)", p, sig.line, source))
    if ref := rq.get("reference"):
        try:
            kernel_mod.find_function(kernel_mod.load_module(ref["source"]), ref["entry"], ref["source"],
                                     "the reference, a function of the arguments by name")
        except kernel_mod.KernelLoadError as e:
            # A file that does not import is located in it; a missing function, at the spec's entry.
            what = "import" if e.kind == "import" else "reference"
            errors.append(_error(what, str(e), ref["entry"], e.line, ref["source"], e.column))
    # Every argument a setup function makes names it: one report per function.
    for setup in dict.fromkeys(rq.get("setups", [])):
        path, _, name = setup.rpartition(":")
        try:
            kernel_mod.find_function(kernel_mod.load_module(path), name, path,
                                     f"a setup function, {name}(args, meta) returning the arguments' values")
        except kernel_mod.KernelLoadError as e:
            errors.append(_error("import" if e.kind == "import" else "setup", str(e), setup, e.line, path, e.column))
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
