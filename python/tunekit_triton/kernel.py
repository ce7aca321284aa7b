"""Loading a kernel author's Python file and reading its @triton.jit entry.

Shared by the inspect helper (load-time checks of a spec), the compile
helper and the worker, so that all three import a file the same way: under
a module name derived from its path, with its folder on sys.path (a kernel
file may import its siblings).
"""

from __future__ import annotations

import hashlib
import importlib.util
import inspect
import os
import sys
import traceback
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional

# Launch options of Triton's CUDA backend when the installed Triton cannot be
# asked (the interpreter, a fake run). The live list comes from CUDAOptions.
FALLBACK_LAUNCH_OPTIONS = ("num_warps", "num_stages", "num_ctas", "maxnreg", "enable_fp_fusion",
                           "launch_cooperative_grid", "launch_pdl")
# CUDAOptions fields that are no per-launch choice a tuner should make.
_NOT_TUNABLE = {"ptx_version", "ptx_options", "ir_override", "extern_libs", "debug", "backend_name", "arch",
                "supported_fp8_dtypes", "deprecated_fp8_dot_operand_dtypes", "allowed_dot_input_precisions",
                "instrumentation_mode", "sanitize_overflow", "warp_size", "cluster_dims",
                "max_num_imprecise_acc_default", "default_dot_input_precision", "enable_reflect_ftz"}


class KernelLoadError(Exception):
    """A located problem with the kernel file: `line` and `column` are 0 when
    unknown."""

    def __init__(self, message: str, line: int = 0, kind: str = "import", column: int = 0):
        super().__init__(message)
        self.line = line
        self.column = column
        self.kind = kind


def interpreting() -> bool:
    return os.environ.get("TRITON_INTERPRET", "0") not in ("", "0")


def module_name_for(path: str) -> str:
    return "tunekit_kernel_" + hashlib.sha1(os.path.abspath(path).encode()).hexdigest()[:12]


_modules: Dict[str, Any] = {}


def load_module(path: str):
    """Imports `path` once per process. Raises KernelLoadError with the line
    of the failure inside that file when the traceback names one."""
    path = os.path.abspath(path)
    stamp = (path, os.path.getmtime(path) if os.path.exists(path) else 0)
    if stamp in _modules:
        return _modules[stamp]
    if not os.path.exists(path):
        raise KernelLoadError(f"no such file: {path}")
    folder = os.path.dirname(path)
    if folder not in sys.path:
        sys.path.insert(0, folder)
    name = module_name_for(path)
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException as e:  # SyntaxError, ImportError, anything the file raises
        sys.modules.pop(name, None)
        line = column = 0
        # A syntax error in a sibling the file imports is located at the import.
        if isinstance(e, SyntaxError) and e.filename and os.path.abspath(e.filename) == path:
            line, column = e.lineno or 0, e.offset or 0
        if not line:
            for frame in reversed(traceback.extract_tb(e.__traceback__)):
                if os.path.abspath(frame.filename) == path:
                    line = frame.lineno or 0
                    break
        raise KernelLoadError(f"{os.path.basename(path)} does not import: {type(e).__name__}: {e}", line,
                              column=column) from e
    _modules[stamp] = module
    return module


def is_jit_function(obj) -> bool:
    # A decorator over one (@triton.autotune, @triton.heuristics) has the
    # same attributes, but its `fn` is the jit function, not Python's.
    return type(obj).__name__ in ("JITFunction", "InterpretedFunction") or (
        inspect.isfunction(getattr(obj, "fn", None)) and hasattr(obj, "run") and hasattr(obj, "arg_names"))


_DECORATORS = {"Autotuner": "@triton.autotune", "Heuristics": "@triton.heuristics"}


def _decorated_jit(obj):
    """(the decorators' names, outermost first, the @triton.jit function)
    when obj wraps one in decorators that launch it their own way; None
    otherwise."""
    names = []
    while not is_jit_function(obj) and getattr(obj, "fn", None) is not None and hasattr(obj, "run"):
        names.append(_DECORATORS.get(type(obj).__name__, type(obj).__name__))
        obj = obj.fn
    return (names, obj) if names and is_jit_function(obj) else None


def python_function(obj):
    """The function under a @triton.jit (the decorated Python function)."""
    return getattr(obj, "fn", obj)


@dataclass
class KernelSignature:
    parameters: List[str] = field(default_factory=list)  # every parameter, in order
    constexprs: List[str] = field(default_factory=list)
    with_defaults: List[str] = field(default_factory=list)
    line: int = 0  # where the function starts in its file


def _is_constexpr(annotation) -> bool:
    if annotation is inspect.Parameter.empty:
        return False
    if isinstance(annotation, str):
        return annotation.split(".")[-1] == "constexpr"
    return getattr(annotation, "__name__", "") == "constexpr"


def signature_of(jit_fn) -> KernelSignature:
    fn = python_function(jit_fn)
    sig = KernelSignature()
    for p in inspect.signature(fn).parameters.values():
        sig.parameters.append(p.name)
        if _is_constexpr(p.annotation):
            sig.constexprs.append(p.name)
        if p.default is not inspect.Parameter.empty:
            sig.with_defaults.append(p.name)
    try:
        sig.line = inspect.getsourcelines(fn)[1]
    except (OSError, TypeError):
        sig.line = 0
    return sig


def jit_functions(module) -> List[str]:
    return [n for n, v in vars(module).items() if is_jit_function(v)]


def _not_found(obj, entry: str, path: str, expected: str, kinds: str, names: List[str]) -> KernelLoadError:
    """What is wrong with `entry` of the file at `path`, what was expected,
    and the file's functions of the `kinds` expected."""
    file = os.path.basename(path)
    if obj is None:
        problem = f"{file} has no function '{entry}'"
    elif inspect.isfunction(obj):
        problem = f"'{entry}' in {file} is a plain Python function"
    else:
        problem = f"'{entry}' in {file} is not a function (its type is {type(obj).__name__})"
    near = closest(entry, names) if obj is None else None
    return KernelLoadError(f"{problem}: expected {expected} ({file}'s {kinds}: {', '.join(names) or 'none'})"
                           + (f"; did you mean '{near}'?" if near else ""), 0, "entry")


def find_entry(module, entry: str, path: str):
    obj = getattr(module, entry, None)
    if (decorated := _decorated_jit(obj)) is not None:
        # The autotuner would pick its own config at each launch, whatever
        # the trial's; its signature (*args, **kwargs) hides the kernel's.
        names, jit = decorated
        file = os.path.basename(path)
        line = signature_of(jit).line
        at = f" (line {line})" if line else ""
        raise KernelLoadError(
            f"'{entry}' in {file}{at} is wrapped in {' and '.join(names)}: expected a @triton.jit function "
            f"that tunekit launches with each trial's config itself. Keep the jit function under a name of its own "
            f"and point kernel.entry at it, e.g. '{entry}_jit = triton.jit(...)' and "
            f"'{entry} = triton.autotune(...)({entry}_jit)'", 0, "entry")
    if obj is None or not is_jit_function(obj):
        raise _not_found(obj, entry, path, "a @triton.jit function", "@triton.jit functions", jit_functions(module))
    return obj


def find_function(module, entry: str, path: str, expected: str = "a Python function"):
    obj = getattr(module, entry, None)
    if obj is None or not callable(obj):
        names = [n for n, v in vars(module).items() if callable(v) and not n.startswith("_")
                 and getattr(v, "__module__", None) == module.__name__]
        raise _not_found(obj, entry, path, expected, "functions", names)
    return obj


def launch_option_names() -> List[str]:
    """The launch options the installed Triton's CUDA backend takes."""
    try:
        import dataclasses

        from triton.backends.nvidia.compiler import CUDAOptions

        return [f.name for f in dataclasses.fields(CUDAOptions) if f.name not in _NOT_TUNABLE]
    except Exception:
        return list(FALLBACK_LAUNCH_OPTIONS)


def split_config(config: Dict[str, Any], sig: KernelSignature, options: List[str]):
    """(meta-parameters, launch options, unknown names) of a config."""
    meta, opts, unknown = {}, {}, []
    for name, value in config.items():
        if name in sig.constexprs:
            meta[name] = value
        elif name in options:
            opts[name] = value
        else:
            unknown.append(name)
    return meta, opts, unknown


def closest(name: str, candidates: List[str]) -> Optional[str]:
    import difflib

    m = difflib.get_close_matches(name, candidates, n=1, cutoff=0.6)
    return m[0] if m else None
