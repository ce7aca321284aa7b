"""The worker side of a trial, as src/evaluator/worker.cpp orders it.

A runner knows how to prepare arguments, load a built variant, run it once
and time it; handle_request() puts these in the order every tunekit worker
uses (prepare, load, run once and verify, then time), and serve() answers
requests until the tuner closes the pipe. A runner that reports itself
poisoned (a sticky CUDA error such as an illegal address) makes the tuner
replace the worker process before the next request.
"""

from __future__ import annotations

import time
import traceback
from typing import Optional

from .measure import MeasureSettings, Sampling, out_of_time_note
from .protocol import Channel, Request, Result, Verification, answer_json


class Runner:
    """What a backend supplies. Failures are returned as Results, never raised."""

    poisoned: bool = False

    def prepare(self, request: Request) -> Optional[Result]:
        """Creates (or keeps) the argument values; a failure as a Result."""
        raise NotImplementedError

    def load(self, request: Request) -> Optional[Result]:
        raise NotImplementedError

    def run_once(self, request: Request) -> Optional[Result]:
        raise NotImplementedError

    def save_outputs(self, path: str) -> str:
        """Writes the outputs for later verification; an error text or ''."""
        raise NotImplementedError

    def nan_output(self) -> str:
        """The first NaN of a floating-point output ("output 'c' has nan at
        element 7"), or ''. Outputs start as NaN: after the reference, one is
        an element it did not write."""
        return ""

    def verify(self, path: str, atol: float, rtol: float) -> Verification:
        raise NotImplementedError

    def time(self, request: Request) -> Result:
        raise NotImplementedError

    def take_busy_us(self) -> float:
        """The device's time in the calls outside time() since the last take
        (the verified call, the call after the timed ones), which
        handle_request adds to the trial they belong to; 0 where the runner
        does not time them."""
        return 0.0


def take_sampling(result: Result, sampled: Sampling, settings: MeasureSettings) -> None:
    """A sampling's outcome in its trial's result, as every runner reports it
    (src/evaluator/worker.cpp's take_sampling): the samples, slower when the
    early stop cut them short, the note of one the deadline stopped."""
    result.samples_us = sampled.samples
    if sampled.cut_short:
        result.status = "slower"
    result.error = out_of_time_note(sampled, settings)


def handle_request(runner: Runner, rq: Request) -> tuple[Result, bool]:
    """One request: (its result, whether the worker must be replaced)."""
    result, restart = _answer(runner, rq)
    # Every call of the request is its trial's busy time, the check's after
    # the timed ones too, not the next trial's (src/evaluator/worker.cpp).
    result.busy_us += runner.take_busy_us()
    return result, restart


def _answer(runner: Runner, rq: Request) -> tuple[Result, bool]:

    def fail(r: Result) -> tuple[Result, bool]:
        return r, runner.poisoned

    if (failed := runner.prepare(rq)) is not None:
        return fail(failed)
    if (failed := runner.load(rq)) is not None:
        return fail(failed)

    if rq.op == "reference":
        if (failed := runner.run_once(rq)) is not None:
            return fail(failed)
        # A NaN would make every config's element there wrong ("expected
        # nan"): the reference's fault, said once (src/evaluator/worker.cpp).
        if bad := runner.nan_output():
            return Result.failure("wrong_result", "the reference's " + bad), runner.poisoned
        result = Result()
        if error := runner.save_outputs(rq.reference_file):
            result = Result.failure("launch_error", error)
        return result, runner.poisoned

    verification = Verification()
    verify_us = 0.0
    if rq.reference_file:
        if (failed := runner.run_once(rq)) is not None:
            return fail(failed)
        t0 = time.perf_counter()
        verification = runner.verify(rq.reference_file, rq.atol, rq.rtol)
        verify_us = (time.perf_counter() - t0) * 1e6
        if not verification.passed:
            # A wrong variant is not worth timing.
            r = Result(status="wrong_result", error=verification.detail, verification=verification, verify_us=verify_us)
            return r, runner.poisoned
    result = runner.time(rq)
    result.verification = verification
    result.verify_us = verify_us
    # The first call's outputs were right; a kernel whose result changes from
    # call to call (a race, state kept between calls) is wrong too. One more
    # call after the timed ones, into outputs poisoned again (run_once does):
    # the last timed call's outputs would still hold the first call's right
    # answer from a kernel that stops working after it (a counter left set,
    # a flag that skips the work), which was then timed as nearly empty.
    # Only where every call starts from the same inputs, and not for a loser
    # cut short (src/evaluator/worker.cpp does the same).
    if rq.reference_file and result.status == "ok" and all(a.role != "inout" for a in rq.arguments):
        if (failed := runner.run_once(rq)) is not None:
            return fail(failed)
        t0 = time.perf_counter()
        again = runner.verify(rq.reference_file, rq.atol, rq.rtol)
        result.verify_us += (time.perf_counter() - t0) * 1e6
        if not again.passed:
            error = ("right on its first call, wrong on a call after its timed ones (its result changes from call "
                     "to call: a race, or state kept between calls): " + again.detail)
            return Result(status="wrong_result", error=error, verification=again,
                          verify_us=result.verify_us), runner.poisoned
    return result, runner.poisoned


def serve(runner: Runner, channel: Channel) -> int:
    # Started, imports done: the tuner's clock for the first trial starts now
    # (src/evaluator/detail/protocol.hpp, ready_line).
    channel.answer({"ready": True})
    for j in channel.requests():
        # The tuner's clock for the trial runs from about now: sampling must
        # leave room for the answer before it kills the worker.
        arrived = time.monotonic()
        try:
            rq = Request.from_json(j)
            rq.measure.answer_by = arrived + rq.measure.timeout_s
            result, restart = handle_request(runner, rq)
        except Exception as e:  # a malformed request, or a bug in a runner
            result = Result.failure("launch_error", f"exception: {type(e).__name__}: {e}\n{traceback.format_exc(limit=4)}")
            restart = runner.poisoned
        channel.answer(answer_json(result, restart))
        if restart:
            return 0
    return 0
