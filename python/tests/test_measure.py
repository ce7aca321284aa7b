"""tunekit_triton.measure against the cases of tests/measure/measure_test.cpp."""

import math
import os
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

from tunekit_triton.measure import (EARLY_STOP_SAMPLES, UNBOUNDED, MeasureSettings, collect_samples,  # noqa: E402
                                    early_stop_bar, out_of_time_note, summarize)


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
        self.assertAlmostEqual(s.spread, math.sqrt(5.0 / 3.0) / 2.5, places=12)
        # Four samples bound the median only by their range: (4 - 1) / (2 * 2.5).
        self.assertAlmostEqual(s.noise, 3.0 / 5.0, places=12)

    def test_noise_is_the_medians_confidence_interval(self):
        # 50 samples 100 +- 0.1 k: order statistics 18 and 33, 15 steps of 0.1.
        s = summarize(around(100, 0.1, 50))
        self.assertAlmostEqual(s.noise, 1.5 / (2 * s.median), places=9)
        self.assertLess(summarize(around(100, 0.1 * 50 / 200.0, 200)).noise, s.noise)

    def test_one_preempted_sample_barely_moves_the_noise(self):
        v = around(100, 0.02, 30)
        quiet = summarize(v).noise
        v[-1] = 5000.0
        s = summarize(v)
        self.assertLess(s.noise, 2 * quiet + 1e-3)
        self.assertGreater(s.spread, 1.0)
        self.assertFalse(s.bimodal)

    def test_two_groups_of_times_are_bimodal(self):
        two = [100 + 0.1 * (i % 5) for i in range(20)] + [130 + 0.1 * (i % 5) for i in range(20)]
        self.assertTrue(summarize(two).bimodal)
        self.assertFalse(summarize([100 + 2.0 * i * i / 40 for i in range(40)]).bimodal)
        self.assertFalse(summarize([100 - 5 * math.log(1 - (i + 0.5) / 40) for i in range(40)]).bimodal)
        self.assertFalse(summarize([100 + (i % 2) * 0.01 for i in range(40)]).bimodal)
        self.assertFalse(summarize(sorted(two)[15:24]).bimodal)

    def test_odd_and_empty(self):
        self.assertEqual(summarize([9.0, 1.0, 5.0]).median, 5.0)
        self.assertEqual(summarize([]).count, 0)


def around(centre, step, n):
    return [centre + step * (i - n // 2) for i in range(n)]


class CollectSamples(unittest.TestCase):
    def settings(self, **kw):
        m = MeasureSettings(warmup_us=0.0)
        for k, v in kw.items():
            setattr(m, k, v)
        return m

    def test_stops_at_min_samples_when_quiet(self):
        calls = []
        s = collect_samples(self.settings(min_samples=7, max_samples=100, target_noise=0.01), None,
                            lambda n: calls.append(1) or 10.0).samples
        self.assertEqual(len(s), 7)
        self.assertEqual(len(calls), 8)  # one warm-up call, then the samples

    def test_noisy_runs_to_max_samples(self):
        i = [0]

        def sample(n):
            i[0] += 1
            return 10.0 if i[0] % 2 else 20.0

        s = collect_samples(self.settings(min_samples=3, max_samples=40, max_time_s=10.0, target_noise=0.01), None,
                            sample).samples
        self.assertEqual(len(s), 40)

    def test_one_preempted_sample_does_not_keep_a_quiet_kernel_sampling(self):
        # The stop rule is measure.cpp's (the median's confidence interval):
        # stdev/mean would stay over any target after the 5 ms sample, and
        # the loop would run to max_samples.
        i = [0]

        def sample(n):
            i[0] += 1
            return 5000.0 if i[0] == 4 else 100.0 + 0.01 * (i[0] % 3)

        s = collect_samples(self.settings(min_samples=5, max_samples=200, max_time_s=3600.0, target_noise=0.02),
                            None, sample).samples
        self.assertIn(5000.0, s)
        self.assertLess(len(s), 20)

    def test_time_cap_ends_a_noisy_kernel(self):
        clock = FakeClock()

        def sample(n):
            clock.t += 0.001
            return 1000.0

        s = collect_samples(self.settings(min_samples=2, max_samples=10 ** 6, max_time_s=0.05, target_noise=0.0),
                            None, sample, clock).samples
        self.assertGreaterEqual(len(s), 2)
        self.assertLessEqual(len(s), 51)

    def test_the_deadline_stops_sampling_short_of_min_samples(self):
        # Half a second a call, 4 s to answer: min_samples 50 would take 25 s.
        # Sampling stops once two calls and 10% of the timeout no longer fit.
        clock = FakeClock()

        def sample(n):
            clock.t += 0.5
            return 500_000.0

        m = self.settings(min_samples=50, max_samples=100, max_time_s=3.0, target_noise=0.0, timeout_s=4.0,
                          answer_by=4.0)
        s = collect_samples(m, None, sample, clock)
        self.assertTrue(s.out_of_time)
        # The warm-up's call ends at 0.5 s; after the sample that ends at 3 s
        # there is room for the check after the timed ones, and no more.
        self.assertEqual(len(s.samples), 5)
        self.assertEqual(clock.t, 3.0)
        self.assertEqual(out_of_time_note(s, m), "sampling stopped after 5 samples (min_samples 50) to answer within "
                         "the trial's timeout (4 s: measure.timeout, --timeout)")
        # Without a deadline, or with one far off, the stop rule is the same as ever.
        clock.t = 0.0
        m.answer_by = None
        m.min_samples = 7
        s = collect_samples(m, None, sample, clock)
        self.assertEqual((len(s.samples), s.out_of_time), (7, False))
        self.assertEqual(out_of_time_note(s, m), "")

    def test_cold_flushes_before_every_sample_hot_never(self):
        order = []
        collect_samples(self.settings(min_samples=5, max_samples=5, cache="cold"), lambda: order.append("flush"),
                        lambda n: order.append("run") or 1.0)
        self.assertEqual(order, ["flush", "run"] * 6)  # one warm-up call, five samples
        order.clear()
        collect_samples(self.settings(min_samples=5, max_samples=5, cache="cold-read"), lambda: order.append("flush"),
                        lambda n: order.append("run") or 1.0)
        self.assertEqual(order.count("flush"), order.count("run"))
        order.clear()
        collect_samples(self.settings(min_samples=5, max_samples=5, cache="hot"), lambda: order.append("flush"),
                        lambda n: order.append("run") or 1.0)
        self.assertNotIn("flush", order)

    def test_warmup_runs_until_its_time_is_spent(self):
        clock = FakeClock()
        calls = [0]

        def sample(n):
            calls[0] += 1
            clock.t += 0.002
            return 2000.0

        m = self.settings(min_samples=1, max_samples=1)
        m.warmup_us = 10_000.0  # 10 ms: five 2 ms calls, then one sample
        collect_samples(m, None, sample, clock)
        self.assertEqual(calls[0], 6)

    def test_settings_from_the_protocol(self):
        m = MeasureSettings.from_json({"warmup_us": 100.0, "min_samples": 3, "max_samples": 9, "max_time_s": 0.5,
                                       "target_noise": 0.05, "cache": "cold-read", "timeout_s": 7.0, "graph": True,
                                       "early_stop": 3.0, "best_so_far_us": None})
        self.assertEqual((m.warmup_us, m.min_samples, m.max_samples, m.max_time_s, m.target_noise, m.cache,
                          m.timeout_s, m.graph, m.early_stop, m.best_so_far_us),
                         (100.0, 3, 9, 0.5, 0.05, "cold-read", 7.0, True, 3.0, None))


def early_stop_settings(best_us, factor=3.0):
    """Warm-up of one call, sampling that stops at min_samples (a constant kernel has no noise)."""
    return MeasureSettings(warmup_us=0.0, min_samples=5, max_samples=50, max_time_s=3600.0, target_noise=0.01,
                           early_stop=factor, best_so_far_us=best_us)


class ScriptedKernel:
    """The n-th call (from 0) takes times[n], the last one after that; records the hints."""

    def __init__(self, times):
        self.times, self.calls, self.at_most = times, 0, []

    def __call__(self, hint):
        if self.calls > 100000:
            raise RuntimeError("the sampling loop does not end")
        self.at_most.append(hint)
        t = self.times[min(self.calls, len(self.times) - 1)]
        self.calls += 1
        return t


class EarlyStop(unittest.TestCase):
    """The cases of tests/measure/measure_test.cpp's EarlyStop suite."""

    def test_the_bar_is_the_factor_times_the_best(self):
        self.assertEqual(early_stop_bar(early_stop_settings(10.0)), 30.0)
        self.assertIsNone(early_stop_bar(early_stop_settings(10.0, 0.0)))
        self.assertIsNone(early_stop_bar(early_stop_settings(None)))
        self.assertIsNone(early_stop_bar(early_stop_settings(0.0)))

    def test_a_loser_is_cut_after_its_first_samples(self):
        k = ScriptedKernel([40.0])
        s = collect_samples(early_stop_settings(10.0), None, k)
        self.assertTrue(s.cut_short)
        self.assertEqual(s.samples, [40.0] * EARLY_STOP_SAMPLES)
        self.assertEqual(k.calls, 1 + EARLY_STOP_SAMPLES)

    def test_one_sample_at_or_under_the_bar_keeps_it_going(self):
        for under in (30.0, 12.0):
            m = early_stop_settings(10.0)
            m.target_noise = 1.0
            s = collect_samples(m, None, ScriptedKernel([40.0, 40.0, under, 40.0]))
            self.assertFalse(s.cut_short, under)
            self.assertEqual(len(s.samples), 5, under)

    def test_off_or_without_a_best_every_config_is_measured_in_full(self):
        for m in (early_stop_settings(10.0, 0.0), early_stop_settings(None)):
            s = collect_samples(m, None, ScriptedKernel([40.0]))
            self.assertFalse(s.cut_short)
            self.assertEqual(len(s.samples), 5)

    def test_fewer_samples_than_the_verdict_needs_are_never_cut(self):
        m = early_stop_settings(10.0)
        m.min_samples = m.max_samples = 2
        s = collect_samples(m, None, ScriptedKernel([40.0]))
        self.assertFalse(s.cut_short)
        self.assertEqual(len(s.samples), 2)

    def test_a_loser_ends_its_warm_up_early(self):
        m = early_stop_settings(10.0)
        m.warmup_us = 3600e6
        k = ScriptedKernel([1000.0, 40.0])
        s = collect_samples(m, None, k)
        self.assertTrue(s.cut_short)
        self.assertEqual(len(s.samples), EARLY_STOP_SAMPLES)
        self.assertEqual(k.calls, 1 + 2 * EARLY_STOP_SAMPLES)

    def test_samples_that_do_not_confirm_the_warm_up_start_over(self):
        clock = FakeClock()
        m = early_stop_settings(10.0)
        m.warmup_us = 1e6
        k = ScriptedKernel([1000.0, 40.0, 40.0, 40.0, 11.0, 11.0, 11.0, 10.0])

        def sample(hint):
            clock.t += 0.001  # a millisecond a call: the warm-up's second passes
            return k(hint)

        s = collect_samples(m, None, sample, clock)
        self.assertFalse(s.cut_short)
        self.assertEqual(s.samples, [10.0] * 5)
        self.assertGreater(k.calls, 1 + 2 * EARLY_STOP_SAMPLES + 5)

    def test_hints_keep_groups_no_larger_than_the_verdict_needs(self):
        k = ScriptedKernel([10.0])
        s = collect_samples(early_stop_settings(10.0), None, k)
        self.assertFalse(s.cut_short)
        self.assertEqual(k.at_most, [1, 3, 2, 1, 47, 46])
        plain = ScriptedKernel([10.0])
        collect_samples(early_stop_settings(None), None, plain)
        self.assertEqual(plain.at_most, [UNBOUNDED, 50, 49, 48, 47, 46])


if __name__ == "__main__":
    unittest.main()
