"""The sampling loop of src/measure/measure.cpp, in Python, for the Triton worker.

tunekit has one measurement core; the Triton worker cannot call the C++ one
(it runs in a Python process), so this module is its line-by-line mirror,
and tests/test_measure.py checks it against the same cases as
tests/measure/measure_test.cpp. The mapping of the spec's `measure:` keys:

  warmup       -> MeasureSettings.warmup_us: time spent warming up, at least one call
  min_samples  -> min_samples
  max_samples  -> max_samples
  max_time     -> max_time_s: cap on sampling time (warm-up not counted)
  noise        -> target_noise: stop once the median is known to within this (the
                  relative half-width of its 95% confidence interval, as tunekit's
                  Statistics::noise; not nvbench's stdev/mean, which one preempted
                  sample keeps above any target)
  cache        -> cache: "cold" (flush by overwriting), "cold-read" (flush by reading), "hot"
  timeout      -> enforced by the tuner, which kills the worker; here answer_by (the
                  request's arrival + timeout_s, set by the worker, never sent) stops
                  sampling short once another sample would leave no time to answer
  early_stop   -> early_stop, with best_so_far_us from the tuner: a config whose first
                  EARLY_STOP_SAMPLES samples are all over early_stop x the best so far
                  is cut short (status slower)
  graph        -> graph: time replays of a CUDA graph of the launch (Triton only)

Nothing here imports torch or triton: the loop takes a `sample` callable and
a clock, so a fake runner drives it on any machine.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from typing import Callable, List, Optional

# A config is judged on this many samples (kEarlyStopSamples in measure.hpp).
EARLY_STOP_SAMPLES = 3
UNBOUNDED = 2 ** 64 - 1  # SIZE_MAX: no limit known
# The share of the timeout left before answer_by beyond two of the longest
# calls (kTimeoutMargin in measure.hpp).
TIMEOUT_MARGIN = 0.1

@dataclass
class MeasureSettings:
    warmup_us: float = 50_000.0
    min_samples: int = 5
    max_samples: int = 200
    max_time_s: float = 2.0
    target_noise: float = 0.02
    cache: str = "cold"
    timeout_s: float = 60.0
    graph: bool = False
    early_stop: float = 3.0
    best_so_far_us: Optional[float] = None
    answer_by: Optional[float] = None  # the clock's seconds by which the worker must answer

    @staticmethod
    def from_json(j: dict) -> "MeasureSettings":
        return MeasureSettings(
            warmup_us=float(j.get("warmup_us", 50_000.0)),
            min_samples=int(j.get("min_samples", 5)),
            max_samples=int(j.get("max_samples", 200)),
            max_time_s=float(j.get("max_time_s", 2.0)),
            target_noise=float(j.get("target_noise", 0.02)),
            cache=str(j.get("cache", "cold")),
            timeout_s=float(j.get("timeout_s", 60.0)),
            graph=bool(j.get("graph", False)),
            early_stop=float(j.get("early_stop", 0.0)),
            best_so_far_us=None if j.get("best_so_far_us") is None else float(j["best_so_far_us"]),
        )


CACHE_MODES = ("cold", "hot", "cold-read")


def is_cold(cache: str) -> bool:
    return cache != "hot"


@dataclass
class Statistics:
    median: float = 0.0
    min: float = 0.0
    max: float = 0.0
    mean: float = 0.0
    noise: float = 0.0  # relative half-width of the median's 95% confidence interval (statistics.hpp)
    spread: float = 0.0  # relative standard deviation, stdev / mean (nvbench's "noise")
    bimodal: bool = False
    count: int = 0


def _quantile(v: List[float], q: float) -> float:
    """Linear interpolation (type 7) of the sorted values v."""
    pos = q * (len(v) - 1)
    lo = int(pos)
    hi = min(lo + 1, len(v) - 1)
    return v[lo] + (pos - lo) * (v[hi] - v[lo])


def _median_of_sorted(v: List[float]) -> float:
    n = len(v)
    return v[n // 2] if n % 2 else 0.5 * (v[n // 2 - 1] + v[n // 2])


def median_noise(v: List[float], median: float) -> float:
    """As measure.cpp's median_noise: the order statistics at ranks
    n/2 -+ 0.98 sqrt(n) (1-based) of the sorted v, clamped to the sample,
    over twice the median."""
    n = len(v)
    if n < 2 or not (median > 0):
        return 0.0
    half = 0.98 * math.sqrt(n)
    lower = math.floor(n / 2 - half)
    upper = math.ceil(1 + n / 2 + half)
    j = min(max(lower, 1), n) - 1
    k = min(max(upper, 1), n) - 1
    return (v[k] - v[j]) / (2 * median)


def _bimodal(v: List[float]) -> bool:
    """As measure.cpp's bimodal: a split with a fifth of the sorted samples
    on each side whose gap is over twice either side's interquartile range
    and 1% of the median."""
    n = len(v)
    if n < 10:
        return False
    median = _median_of_sorted(v)
    if not (median > 0):
        return False
    fifth = (n + 4) // 5
    for k in range(fifth, n - fifth + 1):
        gap = v[k] - v[k - 1]
        if (gap > 0.01 * median and gap > 2 * (_quantile(v[:k], 0.75) - _quantile(v[:k], 0.25))
                and gap > 2 * (_quantile(v[k:], 0.75) - _quantile(v[k:], 0.25))):
            return True
    return False


def summarize(samples: List[float]) -> Statistics:
    """As tunekit::summarize: median, extremes, mean, the median's noise,
    the spread (stdev/mean, n-1) and bimodality."""
    s = Statistics(count=len(samples))
    if not samples:
        return s
    v = sorted(samples)
    n = len(v)
    s.min, s.max = v[0], v[-1]
    s.median = _median_of_sorted(v)
    s.mean = sum(v) / n
    if n > 1 and s.mean > 0:
        ss = sum((x - s.mean) ** 2 for x in v)
        s.spread = math.sqrt(ss / (n - 1)) / s.mean
    s.noise = median_noise(v, s.median)
    s.bimodal = _bimodal(v)
    return s


def early_stop_bar(s: MeasureSettings) -> Optional[float]:
    """early_stop x best_so_far, or None (off, no best yet, or a best of 0)."""
    if not (s.early_stop > 0) or s.best_so_far_us is None or not (s.best_so_far_us > 0):
        return None
    return s.best_so_far_us * s.early_stop


@dataclass
class Sampling:
    samples: List[float]
    cut_short: bool = False  # stopped by the early stop (the trial is slower)
    out_of_time: bool = False  # stopped before the stop rule by the trial's deadline (answer_by)


def out_of_time_note(sampled: Sampling, settings: MeasureSettings) -> str:
    """As tunekit::out_of_time_note: what a trial its deadline stopped says
    beside its time (its error), or ""."""
    if not sampled.out_of_time:
        return ""
    n = len(sampled.samples)
    return (f"sampling stopped after {n} sample{'' if n == 1 else 's'} (min_samples {settings.min_samples}) to "
            f"answer within the trial's timeout ({settings.timeout_s:g} s: measure.timeout, --timeout)")


def _noise_met(samples: List[float], target: float) -> bool:
    """The median's confidence interval, as measure.cpp: a kernel that stays
    noisy runs until the time cap, one preempted sample does not."""
    v = sorted(samples)
    return median_noise(v, _median_of_sorted(v)) < target


def collect_samples(
    settings: MeasureSettings,
    flush: Optional[Callable[[], None]],
    sample: Callable[[int], float],
    clock: Callable[[], float] = time.monotonic,
) -> Sampling:
    """Warm up, then sample until the noise target, max_samples, max_time, the early stop or the deadline.

    As tunekit::collect_samples: `flush` runs before every call (warm-up too)
    when the cache mode is cold or cold-read and a flush is given; its time
    is not counted. `sample(at_most)` runs the kernel once and returns
    microseconds; `at_most` is how many more calls the loop makes, at most,
    before it next decides something (UNBOUNDED: no limit known), so a runner
    that enqueues calls in groups enqueues no more. `clock` returns seconds.
    With an early-stop bar, the warm-up's calls after the first are judged
    as they come; the first EARLY_STOP_SAMPLES samples decide, and samples
    that do not confirm a warm-up ended early are discarded after the rest
    of the warm-up. With answer_by (in the clock's seconds), sampling stops
    (out_of_time) once the time left is under two of the longest sampling
    calls plus TIMEOUT_MARGIN of the timeout, whatever min_samples asks;
    there is always at least one sample.
    """
    k = EARLY_STOP_SAMPLES
    cold = is_cold(settings.cache) and flush is not None
    bar = early_stop_bar(settings)

    def call(at_most: int) -> float:
        if cold:
            flush()
        return sample(at_most)

    warm_start = clock()
    warm_calls = above_in_a_row = 0
    looks_slower = False
    while True:
        at_most = UNBOUNDED if bar is None or warm_calls > k else (1 if warm_calls == 0 else k + 1 - warm_calls)
        t = call(at_most)
        if bar is not None and warm_calls > 0:
            above_in_a_row = above_in_a_row + 1 if t > bar else 0
        warm_calls += 1
        looks_slower = above_in_a_row >= k
        if looks_slower or (clock() - warm_start) * 1e6 >= settings.warmup_us:
            break

    out = Sampling(samples=[])
    samples = out.samples
    min_samples = max(1, settings.min_samples)
    max_samples = max(min_samples, settings.max_samples)
    judged = bar is None
    # The longest sampling call: what the next one, and the check after the
    # timed ones, may take (the warm-up's first call may load the kernel).
    longest = 0.0
    margin = settings.timeout_s * TIMEOUT_MARGIN
    start = clock()
    while len(samples) < max_samples:
        at_most = max_samples - len(samples)
        if not judged:
            at_most = min(at_most, k - len(samples))
        called = clock()
        samples.append(call(at_most))
        now = clock()
        longest = max(longest, now - called)
        if not judged and len(samples) == k:
            judged = True
            if min(samples) > bar:
                out.cut_short = True
                return out
            if looks_slower:
                # The calls that ended the warm-up are not confirmed: finish it, start over.
                while (clock() - warm_start) * 1e6 < settings.warmup_us:
                    call(UNBOUNDED)
                samples.clear()
                start = clock()
                continue
        if len(samples) >= min_samples and (now - start >= settings.max_time_s
                                            or _noise_met(samples, settings.target_noise)):
            break
        if (len(samples) < max_samples and settings.answer_by is not None
                and now + 2 * longest + margin >= settings.answer_by):
            out.out_of_time = True
            break
    return out
