"""tunekit_triton.measure against the cases of tests/measure/measure_test.cpp."""

import math
import os
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

from tunekit_triton.measure import MeasureSettings, collect_samples, summarize  # noqa: E402


class FakeClock:
    """Advances by each sample's own duration, so time caps are exact."""

    def __init__(self):
        self.t = 0.0

    def __call__(self):
        return self.t


class Summarize(unittest.TestCase):
    def test_median_min_max_noise(self):
        s = summarize([4.0, 1.0, 3.0, 2.0])
        self.assertEqual(s.count, 4)
        self.assertEqual(s.median, 2.5)
        self.assertEqual((s.min, s.max, s.mean), (1.0, 4.0, 2.5))
        self.assertAlmostEqual(s.noise, math.sqrt(5.0 / 3.0) / 2.5, places=12)

    def test_odd_and_empty(self):
        self.assertEqual(summarize([9.0, 1.0, 5.0]).median, 5.0)
        self.assertEqual(summarize([]).count, 0)


class CollectSamples(unittest.TestCase):
    def settings(self, **kw):
        m = MeasureSettings(warmup_us=0.0)
        for k, v in kw.items():
            setattr(m, k, v)
        return m

    def test_stops_at_min_samples_when_quiet(self):
        calls = []
        s = collect_samples(self.settings(min_samples=7, max_samples=100, target_noise=0.01), None,
                            lambda: calls.append(1) or 10.0)
        self.assertEqual(len(s), 7)
        self.assertEqual(len(calls), 8)  # one warm-up call, then the samples

    def test_noisy_runs_to_max_samples(self):
        i = [0]

        def sample():
            i[0] += 1
            return 10.0 if i[0] % 2 else 20.0

        s = collect_samples(self.settings(min_samples=3, max_samples=40, max_time_s=10.0, target_noise=0.01), None,
                            sample)
        self.assertEqual(len(s), 40)

    def test_time_cap_ends_a_noisy_kernel(self):
        clock = FakeClock()

        def sample():
            clock.t += 0.001
            return 1000.0

        s = collect_samples(self.settings(min_samples=2, max_samples=10 ** 6, max_time_s=0.05, target_noise=0.0),
                            None, sample, clock)
        self.assertGreaterEqual(len(s), 2)
        self.assertLessEqual(len(s), 51)

    def test_cold_flushes_before_every_sample_hot_never(self):
        order = []
        collect_samples(self.settings(min_samples=5, max_samples=5, cache="cold"), lambda: order.append("flush"),
                        lambda: order.append("run") or 1.0)
        self.assertEqual(order, ["flush", "run"] * 6)  # one warm-up call, five samples
        order.clear()
        collect_samples(self.settings(min_samples=5, max_samples=5, cache="cold-read"), lambda: order.append("flush"),
                        lambda: order.append("run") or 1.0)
        self.assertEqual(order.count("flush"), order.count("run"))
        order.clear()
        collect_samples(self.settings(min_samples=5, max_samples=5, cache="hot"), lambda: order.append("flush"),
                        lambda: order.append("run") or 1.0)
        self.assertNotIn("flush", order)

    def test_warmup_runs_until_its_time_is_spent(self):
        clock = FakeClock()
        calls = [0]

        def sample():
            calls[0] += 1
            clock.t += 0.002
            return 2000.0

        m = self.settings(min_samples=1, max_samples=1)
        m.warmup_us = 10_000.0  # 10 ms: five 2 ms calls, then one sample
        collect_samples(m, None, sample, clock)
        self.assertEqual(calls[0], 6)

    def test_settings_from_the_protocol(self):
        m = MeasureSettings.from_json({"warmup_us": 100.0, "min_samples": 3, "max_samples": 9, "max_time_s": 0.5,
                                       "target_noise": 0.05, "cache": "cold-read", "timeout_s": 7.0, "graph": True})
        self.assertEqual((m.warmup_us, m.min_samples, m.max_samples, m.max_time_s, m.target_noise, m.cache,
                          m.timeout_s, m.graph), (100.0, 3, 9, 0.5, 0.05, "cold-read", 7.0, True))


if __name__ == "__main__":
    unittest.main()
