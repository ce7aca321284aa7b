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
  // With fewer than 6 samples the interval is the whole range.
  double noise = 0;
  double spread = 0;  // relative standard deviation, stdev / mean (nvbench's "noise")
  // Two groups of times: at least a fifth of the samples on each side of a
  // gap wider than twice either group's interquartile range (and 1% of the
  // median); at least 10 samples.
  bool bimodal = false;
  std::size_t count = 0;
};

Statistics summarize(std::span<const Microseconds> samples);

}  // namespace tunekit
