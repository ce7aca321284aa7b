"""handle_request with a stub runner (no Triton, no GPU): which trial a call's
device time belongs to."""

import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from tunekit_triton.protocol import Request, Result, Verification  # noqa: E402
from tunekit_triton.worker import Runner, handle_request  # noqa: E402


class StubRunner(Runner):
    """Each call outside time() keeps the device 5 us, as TritonRunner.run_once
    counts it; time() reports its own 1 us of samples."""

    def __init__(self):
        self.pending_busy_us = 0.0

    def take_busy_us(self):
        busy, self.pending_busy_us = self.pending_busy_us, 0.0
        return busy

    def prepare(self, rq):
        return None

    def load(self, rq):
        return None

    def run_once(self, rq):
        self.pending_busy_us += 5.0
        return None

    def verify(self, path, atol, rtol):
        return Verification(checked=True)

    def time(self, rq):
        return Result(samples_us=[1.0], busy_us=1.0)


class BusyTime(unittest.TestCase):
    def test_every_call_of_a_request_is_its_own_trials_busy_time(self):
        runner = StubRunner()
        rq = Request.from_json({"op": "trial", "reference_file": "ref.json",
                                "args": [{"name": "y", "type": "f32", "role": "out", "count": 4}]})
        first, _ = handle_request(runner, rq)
        # the verified call, the timed samples, and the call after them
        self.assertEqual(first.busy_us, 5.0 + 1.0 + 5.0)
        second, _ = handle_request(runner, rq)
        self.assertEqual(second.busy_us, 11.0)  # none of the first trial's


if __name__ == "__main__":
    unittest.main()
