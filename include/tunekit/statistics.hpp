#pragma once
// What a trial's samples say: the median the tuner ranks by, how sure that
// median is, the spread around it, and whether the samples fall into two
// groups (a bimodal trial's median depends on which group won).
#include <cstddef>
#include <span>

#include "tunekit/units.hpp"

namespace tunekit {

struct Statistics {
  Microseconds median{0}, min{0}, max{0}, mean{0};
  // The relative half-width of the distribution-free 95% confidence interval
  // of the median (order statistics; no normality assumed): (x[k] - x[j]) /
  // (2 * median). This is what a measurement's noise target is compared
  // with. An outlier (a preempted sample) moves it by one rank at most,
  // where it would dominate a standard deviation; more samples narrow it.
  // With fewer than 6 samples the interval is the whole range, which holds
  // the median less surely: noise_level says how surely.
  double noise = 0;
  // The probability that noise's interval holds the true median
  // (median_interval_level): 0.95 or more from 6 samples on; 0.5 at 2,
  // 0.75 at 3, 0.875 at 4, 0.9375 at 5; 0 for fewer than 2.
  double noise_level = 0;
  double spread = 0;  // relative standard deviation, stdev / mean (nvbench's "noise")
  // Two groups of times: at least a fifth of the samples on each side of a
  // gap wider than twice either group's interquartile range (and 1% of the
  // median); at least 10 samples.
  bool bimodal = false;
  std::size_t count = 0;
};

Statistics summarize(std::span<const Microseconds> samples);

// The level of the median's interval among n samples that Statistics::noise
// is the half-width of: the exact, distribution-free probability that it
// holds the median.
double median_interval_level(std::size_t n);

}  // namespace tunekit
