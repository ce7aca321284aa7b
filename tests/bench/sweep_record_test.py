"""bench/triton/sweep_record.py: the vLLM-method sweep of moe_vs_vllm.py,
split into parts and merged across runs, without a GPU.

  python3 -m unittest -v sweep_record_test   (from tests/bench)
"""
import json
import os
import sys
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "bench", "triton"))
import sweep_record as sr  # noqa: E402


def entry(us, config, seconds=10.0, timed=5):
    return {"best": config, "best_us": us, "seconds": seconds, "timed": timed}


def compiled(seconds, valid=50):
    return {"seconds": seconds, "valid": valid}


class SweepRecord(unittest.TestCase):
    def test_parts_cover_the_space_once(self):
        space = [{"i": i} for i in range(10)]
        parts = [sr.part_of(space, (k, 3)) for k in range(3)]
        self.assertEqual(sorted(c["i"] for p in parts for c in p), list(range(10)))
        self.assertEqual([c["i"] for c in parts[1]], [1, 4, 7])
        self.assertEqual(sr.part_of(space, (0, 1)), space)

    def test_a_bad_part_says_what_is_expected(self):
        for text, says in (("1", "expected K/N"), ("a/b", "expected K/N"), ("3/3", "0 <= K < N"),
                           ("0/0", "0 <= K < N")):
            with self.assertRaises(sr.SweepError) as e:
                sr.parse_part(text)
            self.assertIn(says, str(e.exception))
        self.assertEqual(sr.parse_part("2/4"), (2, 4))

    def test_a_batch_counts_once_its_parts_cover_the_space(self):
        r = sr.merge(sr.empty(), (0, 2), compiled(30.0), {1: entry(60.0, "a"), 4096: entry(900.0, "b", seconds=1300)})
        self.assertEqual(sr.swept(r), {})
        self.assertEqual(sr.missing(r, [1, 2, 4096], 2), {1: [1], 2: [0, 1], 4096: [1]})
        r = sr.merge(r, (1, 2), compiled(32.0), {1: entry(57.5, "c")})
        done = sr.swept(r)
        self.assertEqual(list(done), [1])
        self.assertEqual(done[1]["best"], "c")  # the best over the parts
        self.assertEqual(done[1]["seconds"], 20.0)  # the parts' sweep times add up
        self.assertEqual(done[1]["timed"], 10)
        self.assertEqual(sr.missing(r, [1, 4096], 2), {4096: [1]})

    def test_parts_of_different_splits_do_not_make_a_whole(self):
        r = sr.merge(sr.empty(), (0, 2), compiled(1.0), {8: entry(5.0, "a")})
        r = sr.merge(r, (1, 3), compiled(1.0), {8: entry(4.0, "b")})
        r = sr.merge(r, (2, 3), compiled(1.0), {8: entry(4.0, "b")})
        self.assertEqual(sr.swept(r), {})
        r = sr.merge(r, (0, 3), compiled(1.0), {8: entry(6.0, "c")})
        self.assertEqual(sr.swept(r)[8]["best"], "b")  # the split into 3, not the lone 0/2
        self.assertEqual(sr.swept(r)[8]["timed"], 15)

    def test_merging_keeps_the_previous_record(self):
        r0 = sr.empty()
        r1 = sr.merge(r0, (0, 2), compiled(30.0), {1: entry(60.0, "a")})
        sr.merge(r1, (1, 2), compiled(32.0), {1: entry(57.5, "c")})
        self.assertEqual(r0, sr.empty())
        self.assertEqual(list(r1["timed"]["1"]), ["0/2"])

    def test_a_part_compiled_again_keeps_its_first_compile_time(self):
        # The second run found the binaries in a warm cache: 2 s is not what compiling them costs.
        r = sr.merge(sr.empty(), (0, 1), compiled(110.0, valid=1304), {1: entry(57.5, "a")})
        r = sr.merge(r, (0, 1), compiled(2.0, valid=1304), {2: entry(60.0, "b")})
        self.assertEqual(r["compiled"]["0/1"], {"seconds": 110.0, "valid": 1304})
        self.assertEqual(sr.full_wall(r, [1, 2]), 110.0 + 10.0 + 10.0)  # compile once, each batch its seconds

    def test_the_full_wall_needs_every_compile_and_every_cost(self):
        r = sr.merge(sr.empty(), (0, 2), compiled(30.0), {1: entry(60.0, "a")})
        r = sr.merge(r, (1, 2), compiled(32.0), {1: entry(57.5, "c")})
        self.assertEqual(sr.valid(r), 100)
        self.assertIsNone(sr.full_wall(r, [1, 2]))  # no cost known at 2
        r["per_config_s"]["2"] = 0.5
        self.assertAlmostEqual(sr.full_wall(r, [1, 2]), 30 + 32 + 20 + 0.5 * 100)
        half = sr.merge(sr.empty(), (0, 2), compiled(30.0), {1: entry(60.0, "a")})
        self.assertIsNone(sr.valid(half))
        self.assertIsNone(sr.full_wall(half, [1]))  # part 1 never compiled

    def test_the_first_runs_summary_reads_as_one_whole_part(self):
        # The sweep of the first runs on the H200 (lab/runs/triton/run2_moe_vs_vllm.json):
        # batch 1 swept whole, the others sampled.
        with open(os.path.join(ROOT, "tests", "bench", "data", "moe_first_sweep.json")) as f:
            first = json.load(f)["sweep"]
        r = sr.load(first)
        self.assertEqual(sr.valid(r), first["valid"])
        self.assertEqual(list(sr.swept(r)), [1])
        self.assertEqual(sr.swept(r)[1]["best_us"], first["best"]["1"]["best_us"])
        batches = [int(m) for m in first["per_config_s"]]
        self.assertAlmostEqual(sr.full_wall(r, batches), first["estimated_full_wall_s"], delta=1.0)
        # A later run adds the parts of batch 2 split in two.
        r = sr.merge(r, (0, 2), None, {2: entry(70.0, "x")})
        r = sr.merge(r, (1, 2), None, {2: entry(65.0, "y")})
        self.assertEqual(sorted(sr.swept(r)), [1, 2])
        with self.assertRaises(sr.SweepError):
            sr.load({"something": 1})


if __name__ == "__main__":
    unittest.main()
