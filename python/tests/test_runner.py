"""tunekit_triton.runner's arguments, with torch on the CPU (skipped where
torch is missing: scripts/test.sh's build/pyenv has it)."""

import os
import sys
import types
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

try:
    import torch  # noqa: F401
    from tunekit_triton.protocol import Argument, answer_json  # noqa: E402
    from tunekit_triton.runner import TritonRunner  # noqa: E402
except ImportError:
    torch = None


def request(*arguments):
    return types.SimpleNamespace(arguments=list(arguments), seed=7)


@unittest.skipIf(torch is None, "no torch here")
class Arguments(unittest.TestCase):
    def test_an_input_a_config_wrote_into_is_as_generated_at_the_next_request(self):
        runner = TritonRunner()
        rq = request(Argument(name="x", type="f32", role="in", count=64))
        self.assertIsNone(runner.prepare(rq))
        generated = runner.args["x"].clone()
        runner.args["x"].fill_(0.0)  # what a config's stray store would do
        self.assertIsNone(runner.prepare(rq))
        self.assertTrue(torch.equal(runner.args["x"], generated))

    def test_a_device_out_of_memory_is_the_machines_fault(self):
        runner = TritonRunner()
        oom = type("OutOfMemoryError", (RuntimeError,), {})

        def no_room(a, seed):
            raise oom("CUDA out of memory. Tried to allocate 2.00 GiB")

        runner._make_buffer = no_room
        failed = runner.prepare(request(Argument(name="x", type="f32", role="in", count=64)))
        self.assertEqual((failed.status, failed.fault), ("resource_limit", "environment"))
        self.assertEqual(answer_json(failed, False)["fault"], "environment")
        self.assertIn("out of memory", failed.error)


if __name__ == "__main__":
    unittest.main()
