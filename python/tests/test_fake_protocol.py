"""The worker protocol and the compile helper, end to end through real pipes,
with the fake runner (no Triton, no GPU): every status a trial can get."""

import json
import os
import select
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
PYDIR = os.path.dirname(HERE)
KERNEL = os.path.join(HERE, "data", "fake_kernel.py")


class Helper:
    """A helper process as tunekit starts one: requests on stdin, answers on fd 3."""

    def __init__(self, mode, cache):
        r, w = os.pipe()
        env = dict(os.environ, TUNEKIT_TRITON_FAKE="1", PYTHONPATH=PYDIR)
        self.proc = subprocess.Popen([sys.executable, "-m", "tunekit_triton", mode, "--cache", cache,
                                      "--answer-fd", str(w)],
                                     stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                     pass_fds=(w,), env=env, text=True)
        os.close(w)
        self.answers = os.fdopen(r, "r")
        if mode == "worker":
            # A worker says it is ready before its first request.
            first = self.answers.readline() if select.select([self.answers], [], [], 120.0)[0] else ""
            if not first or json.loads(first) != {"ready": True}:
                self.close()
                raise AssertionError(f"the worker's first line is {first!r}, not {{\"ready\": true}}")

    def ask(self, request, timeout=30.0):
        self.proc.stdin.write(json.dumps(request) + "\n")
        self.proc.stdin.flush()
        ready, _, _ = select.select([self.answers], [], [], timeout)
        if not ready:
            return None  # a hang: the caller kills, as the tuner does
        line = self.answers.readline()
        return json.loads(line) if line else "EOF"

    def close(self):
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()
        self.answers.close()
        try:
            self.proc.stdin.close()
        except BrokenPipeError:
            pass


class FakeProtocol(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.compiler = Helper("compile-server", os.path.join(self.tmp.name, "cache"))
        self.worker = Helper("worker", os.path.join(self.tmp.name, "cache"))

    def tearDown(self):
        self.compiler.close()
        self.worker.close()
        self.tmp.cleanup()

    def args(self):
        return [{"name": "x", "type": "f32", "role": "in", "count": 16, "fill": "random", "fill_value": 0},
                {"name": "out", "type": "f32", "role": "out", "count": 16, "fill": "zeros", "fill_value": 0},
                {"name": "n", "type": "i32", "role": "scalar", "count": 0, "fill": "random", "fill_value": 0,
                 "scalar": 16}]

    def compile(self, mode, block=64, **config):
        descriptor = os.path.join(self.tmp.name, f"v{mode}_{block}.json")
        answer = self.compiler.ask({"op": "compile", "source": KERNEL, "entry": "fake_kernel",
                                    "config": {"BLOCK": block, "MODE": mode, "num_warps": 4, **config},
                                    "args": self.args(), "descriptor": descriptor,
                                    "limits": {"shared_memory_per_block_optin": 232448,
                                               "registers_per_block": 65536}})
        return answer, descriptor

    def trial(self, descriptor, reference_file="", op="trial", timeout=30.0):
        return self.worker.ask({"op": op, "artifact": descriptor, "hash": "h", "entry": "fake_kernel",
                                "grid": [1, 1, 1], "block": [1, 1, 1], "shared_memory": 0, "args": self.args(),
                                "reference_file": reference_file, "atol": 1e-6, "rtol": 1e-5,
                                "measure": {"warmup_us": 0, "min_samples": 5, "max_samples": 20, "max_time_s": 1,
                                            "target_noise": 0.02, "cache": "cold", "timeout_s": 5},
                                "seed": 1, "flush_bytes": 0}, timeout)

    def reference(self):
        with open(os.path.join(self.tmp.name, "ref.json"), "w") as f:
            json.dump({"kind": "python", "source": KERNEL, "entry": "behaviour"}, f)
        ref_out = os.path.join(self.tmp.name, "ref_out.json")
        answer = self.trial(os.path.join(self.tmp.name, "ref.json"), ref_out, op="reference")
        self.assertEqual(answer["status"], "ok", answer)
        return ref_out

    def test_ok_variant_is_verified_and_timed(self):
        answer, descriptor = self.compile(0, block=64)
        self.assertEqual(answer["status"], "ok", answer)
        self.assertEqual(answer["resources"]["shared_memory"], 64 * 1024)
        result = self.trial(descriptor, self.reference())
        self.assertEqual(result["status"], "ok", result)
        self.assertEqual(len(result["samples_us"]), 5)  # noiseless: stops at min_samples
        self.assertAlmostEqual(result["samples_us"][0], 1.0)
        self.assertTrue(result["verification"]["passed"])
        self.assertGreater(result["verify_us"], 0.0)  # the comparison's time, on the host
        self.assertFalse(result["restart"])

    def test_cold_samples_report_their_flushes(self):
        # The tune's time line says how much of the measuring was flushing,
        # as the CUDA worker's answers let it.
        _, descriptor = self.compile(0, block=64)
        rq = {"op": "trial", "artifact": descriptor, "hash": "h", "entry": "fake_kernel", "grid": [1, 1, 1],
              "args": self.args(), "reference_file": "", "atol": 1e-6, "rtol": 1e-5, "seed": 1,
              "flush_bytes": 3 << 20,
              "measure": {"warmup_us": 0, "min_samples": 5, "max_samples": 5, "max_time_s": 1,
                          "target_noise": 0.02, "cache": "cold"}}
        self.assertGreater(self.worker.ask(rq)["flush_us"], 0.0)
        rq["measure"]["cache"] = "hot"
        self.assertEqual(self.worker.ask(rq)["flush_us"], 0.0)

    def test_compile_error_carries_the_message(self):
        answer, _ = self.compile(1)
        self.assertEqual(answer["status"], "compile_error")
        self.assertIn("planted compile error", answer["error"])

    def test_shared_memory_over_the_device_is_a_resource_limit(self):
        answer, _ = self.compile(0, block=256)  # 256 KiB > 227 KiB
        self.assertEqual(answer["status"], "resource_limit")
        self.assertIn("262144 bytes of shared memory", answer["error"])

    def test_registers_over_the_block_is_a_resource_limit(self):
        answer, _ = self.compile(7, block=64, num_warps=16)  # 255 x 512 > 65536
        self.assertEqual(answer["status"], "resource_limit")
        self.assertIn("registers", answer["error"])

    def test_undeclared_meta_parameter_is_named(self):
        answer, _ = self.compile(0, BLOK_N=32)
        self.assertEqual(answer["status"], "compile_error")
        self.assertIn("BLOK_N", answer["error"])

    def test_launch_error_and_wrong_result_keep_the_worker(self):
        ref = self.reference()
        _, d = self.compile(2)
        self.assertEqual(self.trial(d, ref)["status"], "launch_error")
        _, d = self.compile(5)
        wrong = self.trial(d, ref)
        self.assertEqual(wrong["status"], "wrong_result")
        self.assertIn("got 2.0, expected 1.0", wrong["error"])
        _, d = self.compile(0)
        self.assertEqual(self.trial(d, ref)["status"], "ok")

    def test_a_kernel_right_on_its_first_call_only_is_wrong(self):
        ref = self.reference()
        _, d = self.compile(8)
        wrong = self.trial(d, ref)
        self.assertEqual(wrong["status"], "wrong_result", wrong)
        self.assertIn("wrong on a call after its timed ones", wrong["error"])
        self.assertIn("got 2.0, expected 1.0", wrong["error"])
        self.assertEqual(wrong["samples_us"], [])

    def test_a_kernel_that_stops_working_after_its_first_call_is_wrong(self):
        # Its outputs after the timed calls still hold the first call's right
        # values (it wrote nothing since): the call checked after timing
        # starts from outputs poisoned again, as src/evaluator/worker.cpp's.
        ref = self.reference()
        _, d = self.compile(9)
        wrong = self.trial(d, ref)
        self.assertEqual(wrong["status"], "wrong_result", wrong)
        self.assertIn("wrong on a call after its timed ones", wrong["error"])
        self.assertIn("got nan, expected 1.0", wrong["error"])
        self.assertEqual(wrong["samples_us"], [])

    def test_an_output_the_reference_leaves_unwritten_is_its_error(self):
        # Outputs start as NaN: kept, it would make every config "expected nan".
        with open(os.path.join(self.tmp.name, "ref.json"), "w") as f:
            json.dump({"kind": "python", "source": KERNEL, "entry": "unwriting_reference"}, f)
        answer = self.trial(os.path.join(self.tmp.name, "ref.json"), os.path.join(self.tmp.name, "ref_out.json"),
                            op="reference")
        self.assertEqual(answer["status"], "wrong_result", answer)
        self.assertEqual(answer["error"], "the reference's output 'out' has nan at element 0")

    def test_sticky_error_asks_for_a_new_worker(self):
        _, d = self.compile(6)
        result = self.trial(d)
        self.assertEqual(result["status"], "launch_error")
        self.assertTrue(result["restart"])
        self.assertEqual(self.worker.ask({"op": "trial"}, 10.0), "EOF")  # it exited after answering

    def test_crash_closes_the_pipe(self):
        _, d = self.compile(3)
        self.assertEqual(self.trial(d), "EOF")
        self.assertEqual(self.worker.proc.wait(10), -11)

    def test_hang_is_left_for_the_tuner_to_kill(self):
        _, d = self.compile(4)
        self.assertIsNone(self.trial(d, timeout=1.0))
        self.assertIsNone(self.worker.proc.poll())


class Inspect(unittest.TestCase):
    def inspect(self, request, fake=True):
        env = dict(os.environ, PYTHONPATH=PYDIR)
        if fake:
            env["TUNEKIT_TRITON_FAKE"] = "1"
        out = subprocess.run([sys.executable, "-m", "tunekit_triton", "inspect"], input=json.dumps(request),
                             capture_output=True, text=True, env=env, timeout=60)
        self.assertEqual(out.returncode, 0, out.stderr)
        return json.loads(out.stdout)

    def test_reports_each_problem_with_its_line(self):
        r = self.inspect({"source": KERNEL, "entry": "fake_kernel", "parameters": ["BLOCK", "MOD", "num_warps"],
                          "arguments": ["x", "outt", "n"]})
        self.assertEqual(r["constexprs"], ["BLOCK", "MODE"])
        what = {e["what"]: e for e in r["errors"]}
        self.assertIn("did you mean 'MODE'", what["parameter"]["message"])
        self.assertEqual(what["parameter"]["line"], 6)
        self.assertIn("did you mean 'out'", what["argument"]["message"])
        self.assertIn("takes 'out'", what["arguments"]["message"])
        self.assertIn("'MODE' has no value", what["constexpr"]["message"])

    def test_a_file_that_does_not_import(self):
        r = self.inspect({"source": os.path.join(HERE, "data", "broken_import.py"), "entry": "k"})
        self.assertEqual(r["errors"][0]["what"], "import")
        self.assertIn("planted", r["errors"][0]["message"])
        self.assertEqual(r["errors"][0]["line"], 8)

    def test_missing_entry_lists_what_there_is(self):
        r = self.inspect({"source": KERNEL, "entry": "fake_kernal"})
        self.assertEqual(r["errors"][0]["what"], "entry")
        self.assertIn("fake_kernel", r["errors"][0]["message"])

    def test_constexprs_keys_are_constexprs_of_the_entry(self):
        r = self.inspect({"source": KERNEL, "entry": "fake_kernel", "parameters": ["BLOCK"],
                          "constexprs": ["MODE", "n", "MOD"], "arguments": ["x", "out", "n"]})
        errors = [e for e in r["errors"] if e["what"] == "constexprs"]
        self.assertEqual([e["name"] for e in errors], ["n", "MOD"], r["errors"])
        self.assertIn("a runtime argument of fake_kernel, not a tl.constexpr", errors[0]["message"])
        self.assertIn("did you mean 'MODE'", errors[1]["message"])
        self.assertNotIn("has no value", json.dumps(r["errors"]))  # MODE has its value from constexprs

    def test_a_torch_reference_is_compiled(self):
        r = self.inspect({"source": KERNEL, "entry": "fake_kernel", "parameters": ["BLOCK", "MODE"],
                          "arguments": ["x", "out", "n"], "torch": "x * 2)"})
        self.assertEqual([(e["what"], e["column"]) for e in r["errors"]], [("torch", 6)], r["errors"])
        self.assertIn("unmatched ')'", r["errors"][0]["message"])

    def test_a_syntax_error_is_located_at_its_column(self):
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "k.py")
            with open(path, "w") as f:
                f.write("def k(x):\n    return (x))\n")
            r = self.inspect({"source": path, "entry": "k"})
        self.assertEqual([(e["what"], e["line"], e["column"]) for e in r["errors"]], [("import", 2, 15)])

    def test_the_answer_is_on_a_line_of_its_own_after_what_the_file_prints(self):
        # tunekit reads the last line that is a JSON object
        # (src/backend/triton/triton_backend.cpp, last_json_line); a print
        # without a newline at import must not share it.
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "k.py")
            with open(path, "w") as f:
                f.write("import sys\nsys.stdout.write('loading kernels... ')\n"
                        "def k(x, BLOCK: 'tl.constexpr'):\n    pass\n")
            env = dict(os.environ, PYTHONPATH=PYDIR, TUNEKIT_TRITON_FAKE="1")
            out = subprocess.run([sys.executable, "-m", "tunekit_triton", "inspect"],
                                 input=json.dumps({"source": path, "entry": "k", "parameters": ["BLOK"],
                                                   "arguments": ["x"]}),
                                 capture_output=True, text=True, env=env, timeout=60)
        self.assertEqual(out.returncode, 0, out.stderr)
        self.assertTrue(out.stdout.startswith("loading kernels... "), out.stdout)
        last = out.stdout.rstrip("\n").rpartition("\n")[2]
        self.assertTrue(last.startswith("{"), out.stdout)
        message = json.loads(last)["errors"][0]["message"]
        self.assertIn("nor a launch option of Triton; did you mean 'BLOCK'?", message)

    def test_a_missing_setup_function_is_reported_once(self):
        # Each argument it makes names it (four for the fused MoE's routing).
        setup = KERNEL + ":fake_setupp"
        r = self.inspect({"source": KERNEL, "entry": "fake_kernel", "parameters": ["BLOCK", "MODE"],
                          "arguments": ["x", "out", "n"], "setups": [setup, setup, setup]})
        self.assertEqual([(e["what"], e["name"]) for e in r["errors"]], [("setup", setup)], r["errors"])

    def test_a_syntax_error_in_a_sibling_is_located_at_the_import(self):
        with tempfile.TemporaryDirectory() as d:
            with open(os.path.join(d, "sibling.py"), "w") as f:
                f.write("\n\nx = (1))\n")
            path = os.path.join(d, "k.py")
            with open(path, "w") as f:
                f.write("import os\nimport sibling\n")
            r = self.inspect({"source": path, "entry": "k"})
        self.assertEqual([(e["what"], e["file"], e["line"]) for e in r["errors"]], [("import", path, 2)])


if __name__ == "__main__":
    unittest.main()
