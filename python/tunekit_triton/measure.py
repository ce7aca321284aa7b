"""The sampling loop of src/measure/measure.cpp, in Python, for the Triton worker.

tunekit has one measurement core; the Triton worker cannot call the C++ one
(it runs in a Python process), so this module is its line-by-line mirror,
and tests/test_measure.py checks it against the same cases as
tests/measure/measure_test.cpp. The mapping of the spec's `measure:` keys:

  warmup       -> MeasureSettings.warmup_us: time spent warming up, at least one call
  min_samples  -> min_samples
  max_samples  -> max_samples
  max_time     -> max_time_s: cap on sampling time (warm-up not counted)
  noise        -> target_noise: stop once stdev/mean < this (nvbench's rule)
  cache        -> cache: "cold" (flush by overwriting), "cold-read" (flush by reading), "hot"
  timeout      -> enforced by the tuner, which kills the worker (not here)
  graph        -> graph: time replays of a CUDA graph of the launch (Triton only)

Nothing here imports torch or triton: the loop takes a `sample` callable and
a clock, so a fake runner drives it on any machine.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from typing import Callable, List, Optional


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
    noise: float = 0.0  # relative standard deviation (stdev / mean)
    count: int = 0


def summarize(samples: List[float]) -> Statistics:
    """As tunekit::summarize: median, extremes, mean and stdev/mean (n-1)."""
    s = Statistics(count=len(samples))
    if not samples:
        return s
    v = sorted(samples)
    n = len(v)
    s.min, s.max = v[0], v[-1]
    s.median = v[n // 2] if n % 2 else 0.5 * (v[n // 2 - 1] + v[n // 2])
    s.mean = sum(v) / n
    if n > 1 and s.mean > 0:
        ss = sum((x - s.mean) ** 2 for x in v)
        s.noise = math.sqrt(ss / (n - 1)) / s.mean
    return s


def collect_samples(
    settings: MeasureSettings,
    flush: Optional[Callable[[], None]],
    sample: Callable[[], float],
    clock: Callable[[], float] = time.monotonic,
) -> List[float]:
    """Warm up, then sample until the noise target, max_samples or max_time.

    `flush` runs before every sample (warm-up too) when the cache mode is
    cold or cold-read and a flush is given; its time is not counted. `sample`
    runs the kernel once and returns microseconds. `clock` returns seconds.
    """
    cold = is_cold(settings.cache) and flush is not None
    warm_start = clock()
    while True:
        if cold:
            flush()
        sample()
        if (clock() - warm_start) * 1e6 >= settings.warmup_us:
            break

    samples: List[float] = []
    min_samples = max(1, settings.min_samples)
    max_samples = max(min_samples, settings.max_samples)
    start = clock()
    while len(samples) < max_samples:
        if cold:
            flush()
        samples.append(sample())
        if len(samples) < min_samples:
            continue
        if clock() - start >= settings.max_time_s:
            break
        if summarize(samples).noise < settings.target_noise:
            break
    return samples
