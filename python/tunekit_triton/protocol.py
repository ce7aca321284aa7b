"""The tuner <-> worker protocol of src/evaluator/detail/protocol.hpp.

One JSON object per line, on two pipes that tunekit names in the environment
(open_channel()), so whatever a kernel (or Triton, or torch) prints on stdout
or stderr goes to the worker's log and cannot corrupt the stream. The same framing serves the
compile helper (`compile` requests) and the fake runner used by the tests.
"""

from __future__ import annotations

import json
import math
import os
import sys
from dataclasses import dataclass, field
from typing import Any, Dict, Iterator, List, Optional

from .measure import MeasureSettings, summarize

STATUSES = (
    "ok",
    "invalid",
    "compile_error",
    "resource_limit",
    "launch_error",
    "crash",
    "timeout",
    "wrong_result",
    "slower",
)


@dataclass
class Argument:
    """A ResolvedArgument (src/evaluator/detail/protocol.hpp) as JSON gives it."""

    name: str
    type: str
    role: str
    count: int = 0
    shape: List[int] = field(default_factory=list)  # empty: [count]
    fill: str = "random"
    fill_value: float = 0.0
    scalar: Any = None
    setup: str = ""  # fill: {setup: fn}: the value comes from that Python function
    passed: bool = True  # false: read by the setup function and the reference, not passed to the kernel
    # fill: {file: F}: count elements of the type, raw, from fill_offset on
    # (past an .npy header); fill_stamp changes when the file does.
    fill_file: str = ""
    fill_offset: int = 0
    fill_stamp: str = ""

    @staticmethod
    def from_json(j: dict) -> "Argument":
        return Argument(
            name=j["name"],
            type=j["type"],
            role=j["role"],
            count=int(j.get("count", 0)),
            shape=[int(x) for x in j.get("shape", [])],
            fill=j.get("fill", "random"),
            fill_value=float(j.get("fill_value", 0.0)),
            scalar=j.get("scalar"),
            setup=j.get("setup", ""),
            passed=bool(j.get("pass", True)),
            fill_file=j.get("fill_file", {}).get("path", ""),
            fill_offset=int(j.get("fill_file", {}).get("offset", 0)),
            fill_stamp=j.get("fill_file", {}).get("stamp", ""),
        )

    @property
    def is_buffer(self) -> bool:
        return self.role in ("in", "scratch", "out", "inout")

    @property
    def dims(self) -> List[int]:
        return self.shape if self.shape else [self.count]

    def key(self) -> tuple:
        return (self.name, self.type, self.role, tuple(self.dims), self.fill, self.fill_value, self.setup,
                self.fill_file, self.fill_stamp)


@dataclass
class Request:
    op: str  # "reference" or "trial"
    artifact: str
    hash: str
    entry: str
    grid: List[int]
    arguments: List[Argument]
    reference_file: str
    atol: float
    rtol: float
    measure: MeasureSettings
    seed: int
    flush_bytes: int

    @staticmethod
    def from_json(j: dict) -> "Request":
        return Request(
            op=j.get("op", "trial"),
            artifact=j.get("artifact", ""),
            hash=j.get("hash", ""),
            entry=j.get("entry", ""),
            grid=[int(x) for x in j.get("grid", [1, 1, 1])],
            arguments=[Argument.from_json(a) for a in j.get("args", [])],
            reference_file=j.get("reference_file", ""),
            atol=float(j.get("atol", 1e-6)),
            rtol=float(j.get("rtol", 1e-5)),
            measure=MeasureSettings.from_json(j.get("measure", {})),
            seed=int(j.get("seed", 1)),
            flush_bytes=int(j.get("flush_bytes", 0)),
        )


@dataclass
class Verification:
    checked: bool = False
    passed: bool = True
    max_abs_diff: float = 0.0
    max_rel_err: float = 0.0
    detail: str = ""


@dataclass
class Result:
    status: str = "ok"
    error: str = ""
    samples_us: List[float] = field(default_factory=list)
    busy_us: float = 0.0
    flush_us: float = 0.0  # the cold flushes before the samples (the tune's "flushing caches")
    verify_us: float = 0.0  # comparing the outputs with the reference, on the host
    verification: Verification = field(default_factory=Verification)
    # "environment" when the machine failed, not the config (its memory
    # taken by another process): the config is measured again later.
    fault: str = ""

    @staticmethod
    def failure(status: str, error: str) -> "Result":
        assert status in STATUSES, status
        return Result(status=status, error=error)


def _finite_or_none(v: float) -> Optional[float]:
    return v if math.isfinite(v) else None


def answer_json(result: Result, restart: bool) -> dict:
    j = {
        "status": result.status,
        "error": result.error,
        "samples_us": list(result.samples_us),
        "busy_us": result.busy_us,
        "flush_us": result.flush_us,
        "verify_us": result.verify_us,
        "restart": restart,
    }
    if result.fault:
        j["fault"] = result.fault
    if result.verification.checked:
        v = result.verification
        j["verification"] = {
            "passed": v.passed,
            "max_abs_diff": _finite_or_none(v.max_abs_diff),
            "max_rel_err": _finite_or_none(v.max_rel_err),
            "detail": v.detail,
        }
    return j


class Channel:
    """Reads request lines from `in_fd`, writes answer lines to `out_fd`, each
    prefixed with `token` and a space when there is one."""

    def __init__(self, in_fd: int = 0, out_fd: int = 3, token: str = ""):
        self._in = os.fdopen(in_fd, "r", buffering=1, closefd=False)
        self._out = os.fdopen(out_fd, "w", buffering=1, closefd=False)
        self._prefix = token + " " if token else ""

    def requests(self) -> Iterator[dict]:
        for line in self._in:
            line = line.strip()
            if line:
                yield json.loads(line)

    def answer(self, j: dict) -> None:
        sys.stdout.flush()
        sys.stderr.flush()
        self._out.write(self._prefix + json.dumps(j) + "\n")
        self._out.flush()


def _hide(fd: int) -> int:
    """Moves `fd` to a free descriptor at a random place above 100, where a
    kernel that writes to fd 3 or 4 does not find it."""
    import fcntl
    import random

    moved = fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 100 + random.randrange(800))
    os.close(fd)
    return moved


def open_channel(answer_fd: int = 3) -> Channel:
    """The worker's end of src/evaluator/detail/channel.hpp's channel: as
    tunekit starts it, requests on $TUNEKIT_REQUEST_FD and answers on
    $TUNEKIT_REPLY_FD, prefixed with $TUNEKIT_REPLY_TOKEN, both moved out of a
    kernel's way; the process exits within half a second of the tuner
    ($TUNEKIT_PARENT_PID).
    Started by hand (no variables): stdin and `answer_fd`."""
    parent = os.environ.get("TUNEKIT_PARENT_PID")
    if parent:
        # Not prctl(PR_SET_PDEATHSIG): it fires when the *thread* that
        # started us ends, and compile helpers are started by build threads
        # that end after each batch. A watcher sees the tuner itself go.
        import threading
        import time

        def watch(pid: int) -> None:
            while os.getppid() == pid:
                time.sleep(0.5)
            os._exit(1)

        if os.getppid() != int(parent):  # the tuner died already
            os._exit(1)
        threading.Thread(target=watch, args=(int(parent),), daemon=True, name="tunekit-parent-watch").start()
    if "TUNEKIT_REQUEST_FD" not in os.environ:
        return Channel(0, answer_fd)
    requests = _hide(int(os.environ.pop("TUNEKIT_REQUEST_FD")))
    replies = _hide(int(os.environ.pop("TUNEKIT_REPLY_FD", "4")))
    token = os.environ.pop("TUNEKIT_REPLY_TOKEN", "")
    # Whatever else the tuner's process had open is not the kernel's: a write
    # to a pipe nobody reads would kill the worker with SIGPIPE.
    low, high = sorted((requests, replies))
    os.closerange(3, low)
    os.closerange(low + 1, high)
    os.closerange(high + 1, 65536)
    return Channel(requests, replies, token)


def statistics_of(result: Result):
    return summarize(result.samples_us)


Json = Dict[str, Any]
