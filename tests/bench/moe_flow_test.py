"""bench/triton/moe_vs_vllm.py's flow without a GPU: three runs that spread
vLLM's sweep over parts, each carrying on the last one's record.

torch, the fused-MoE module, the compiles and the timer are stand-ins (the
timer returns a time per config, so each part's best is known); the script's
own code, its record and its summary are real.

  python3 -m unittest -v moe_flow_test   (from tests/bench)
"""
import contextlib
import io
import json
import os
import sys
import tempfile
import types
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


class _Tensor:
    def __truediv__(self, other):
        return self

    def flatten(self):
        return self


def _stand_ins():
    torch = types.ModuleType("torch")
    torch.bfloat16 = "bfloat16"
    torch.manual_seed = lambda seed: None
    torch.randn = lambda *a, **k: _Tensor()
    torch.empty = lambda *a, **k: _Tensor()
    fm = types.ModuleType("fused_moe")
    fm.moe_routing = lambda g, k: (_Tensor(), _Tensor())
    fm.moe_align_block_size = lambda ids, bm, e: (_Tensor(), _Tensor(), _Tensor())
    fm.invoke_grouped_gemm = lambda *a: None
    return {"torch": torch, "fused_moe": fm}


def time_of(config):
    """A made-up time per config: the fastest has BLOCK_SIZE_M 64, BLOCK_SIZE_N 128, BLOCK_SIZE_K 64."""
    return (10.0 + abs(config["BLOCK_SIZE_M"] - 64) / 8 + abs(config["BLOCK_SIZE_N"] - 128) / 16
            + abs(config["BLOCK_SIZE_K"] - 64) / 32 + config["num_stages"] / 100 + config["GROUP_SIZE_M"] / 1000
            + config["num_warps"] / 10000)


class MoeFlow(unittest.TestCase):
    def setUp(self):
        self._modules = dict(sys.modules)
        sys.modules.update(_stand_ins())
        sys.path.insert(0, os.path.join(ROOT, "bench", "triton"))
        for name in ("common", "moe_vs_vllm", "sweep_record"):
            sys.modules.pop(name, None)
        import common
        import moe_vs_vllm

        self.mv = moe_vs_vllm
        last_config = {}

        def fn(self_problem, config):
            last_config["c"] = config
            return lambda: None

        moe_vs_vllm.Problem.fn = fn
        common.require_gpu_torch = lambda: sys.modules["torch"]  # the stand-in: no GPU needed here
        common.vllm_graph_time = lambda f: time_of(last_config["c"])
        # A third of the configs do not compile (over the shared memory, say).
        common.compile_all = lambda jobs: [("OutOfResources: x", 0.0, 0, 0, 0) if i % 3 == 0 else ("ok", 0.01, 0, 0, 0)
                                           for i, _ in enumerate(jobs)]
        space = moe_vs_vllm.vllm_space()
        moe_vs_vllm.run_tunekit = lambda args, log: (
            5.0, {m: space[7] for m in args.batches}, {m: {"ok": 40} for m in args.batches})
        self.dir = tempfile.mkdtemp(prefix="moe-flow-")

    def tearDown(self):
        for name in [n for n in sys.modules if n not in self._modules]:
            del sys.modules[name]
        sys.modules.update(self._modules)
        sys.path.remove(os.path.join(ROOT, "bench", "triton"))

    def run_script(self, *argv):
        sys.argv = ["moe_vs_vllm.py", "--tunekit", "unused", "--out", self.dir, "--no-layer", "--batches", "1,2,4096",
                    "--sample", "2", *argv]
        with contextlib.redirect_stdout(io.StringIO()) as out:
            self.mv.main()
        return out.getvalue()

    def summary(self, name):
        with open(os.path.join(self.dir, name)) as f:
            return json.load(f)

    def test_a_sweep_spread_over_runs_is_merged_and_what_is_left_is_listed(self):
        s1 = os.path.join(self.dir, "s1.json")
        out = self.run_script("--sweep-batches", "1", "--summary", s1)
        first = self.summary("s1.json")
        self.assertEqual(first["sweep_left"], {"2": [0], "4096": [0]})
        self.assertIn("sweep/tunekit", out)

        s2 = os.path.join(self.dir, "s2.json")
        self.run_script("--sweep-batches", "4096", "--sweep-part", "0/2", "--previous", s1, "--summary", s2)
        self.assertEqual(self.summary("s2.json")["sweep_left"], {"2": [0, 1], "4096": [1]})

        s3 = os.path.join(self.dir, "s3.json")
        out = self.run_script("--sweep-batches", "4096,2", "--sweep-part", "1/2", "--previous", s2, "--summary", s3)
        third = self.summary("s3.json")
        self.assertEqual(third["sweep_left"], {"2": [0]})  # batch 2 has only part 1 of 2
        timed = third["sweep"]["timed"]
        self.assertEqual(sorted(timed["4096"]), ["0/2", "1/2"])
        # Every config that compiles was timed once at 4096, over the two parts.
        valid = sum(1 for i in range(len(self.mv.vllm_space())) if i % 3 != 0)
        self.assertEqual(sum(e["timed"] for e in timed["4096"].values()), valid)
        # The best over the parts is the space's best among the configs that compile.
        best = min((c for i, c in enumerate(self.mv.vllm_space()) if i % 3 != 0), key=time_of)
        best_4096 = min(timed["4096"].values(), key=lambda e: e["best_us"])["best"]
        self.assertEqual(best_4096, best)
        self.assertIn("| 4096 ", out)
        self.assertIn("the whole 3-batch sweep", out)
        self.assertIn("estimated_full_wall_s", third)

    def test_a_later_run_can_keep_the_tune_and_the_compile_of_an_earlier_one(self):
        s1 = os.path.join(self.dir, "s1.json")
        cache = os.path.join(self.dir, "triton-cache")
        times = os.path.join(self.dir, "times.jsonl")
        self.run_script("--sweep-batches", "1", "--sweep-cache", cache, "--summary", s1, "--times", times)
        with open(times) as f:
            lines = [json.loads(line) for line in f]
        self.assertEqual([(r["M"], r["part"]) for r in lines], [(1, "0/1")])
        space = self.mv.vllm_space()
        self.assertEqual(len(lines[0]["times"]), sum(1 for i in range(len(space)) if i % 3 != 0))
        first_row = lines[0]["times"][0]  # tunekit's pick (the stand-in tune picks position 7) is timed first
        self.assertEqual(first_row[:-1], [space[7][k] for k in self.mv.KEYS])
        self.assertEqual(first_row[-1], time_of(space[7]))
        self.assertEqual(lines[0]["cut"], [])
        self.assertEqual(os.environ["TRITON_CACHE_DIR"], cache)
        first = self.summary("s1.json")

        def no_tune(args, log):
            raise AssertionError("--keep-tunekit tuned again")

        self.mv.run_tunekit = no_tune
        s2 = os.path.join(self.dir, "s2.json")
        out = self.run_script("--sweep-batches", "2", "--previous", s1, "--keep-tunekit", "--sweep-cache", cache,
                              "--summary", s2)
        second = self.summary("s2.json")
        self.assertEqual(second["tunekit"], first["tunekit"])
        self.assertIn("tunekit's tune of", out)
        self.assertEqual(second["sweep_left"], {"4096": [0]})
        self.assertEqual(second["sweep"]["compiled"], first["sweep"]["compiled"])

    def test_a_cut_sweep_finds_the_same_best_and_estimates_what_vllm_would_have_spent(self):
        import common

        launches = []

        def one_launch(fn):
            fn()  # the stand-in Problem.fn records the config in last_config
            launches.append(1)
            return common.vllm_graph_time(fn)

        common.one_launch_us = one_launch
        full, cut = os.path.join(self.dir, "full.json"), os.path.join(self.dir, "cut.json")
        times = os.path.join(self.dir, "times.jsonl")
        self.run_script("--sweep-batches", "4096", "--summary", full)
        self.run_script("--sweep-batches", "4096", "--summary", cut, "--sweep-cut", "1.5", "--times", times)
        entry_full = self.summary("full.json")["sweep"]["timed"]["4096"]["0/1"]
        entry_cut = self.summary("cut.json")["sweep"]["timed"]["4096"]["0/1"]
        self.assertEqual(entry_cut["best"], entry_full["best"])
        self.assertEqual(entry_cut["timed"], entry_full["timed"])
        # Made-up times span 10 to 50 us: a cut at 1.5x the best so far leaves out most configs.
        self.assertGreater(entry_cut["cut"], entry_cut["timed"] // 2)
        self.assertEqual(len(launches), entry_cut["timed"] - 1)  # all but the first
        self.assertGreater(entry_cut["cut_estimated_s"], 0)
        self.assertGreaterEqual(entry_cut["seconds"], entry_cut["cut_estimated_s"])
        with open(times) as f:
            line = json.loads(f.readline())
        self.assertEqual(len(line["cut"]), entry_cut["cut"])
        self.assertEqual(len(line["times"]), entry_cut["timed"])

    def test_a_cut_too_close_to_the_noise_is_refused(self):
        with self.assertRaises(SystemExit) as e:
            self.run_script("--sweep-cut", "1.1")
        self.assertIn("expected 0 (off) or a factor >= 1.5", str(e.exception.code))

    def test_keep_tunekit_without_a_previous_run_is_refused(self):
        with self.assertRaises(SystemExit) as e:
            self.run_script("--keep-tunekit")
        self.assertIn("give --previous", str(e.exception.code))


if __name__ == "__main__":
    unittest.main()
