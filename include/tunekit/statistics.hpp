#pragma once
// What a trial's samples say: the median the tuner ranks by, the spread
// around it, and how many samples were taken.
#include <cstddef>
#include <span>

#include "tunekit/units.hpp"

namespace tunekit {

struct Statistics {
  Microseconds median{0}, min{0}, max{0}, mean{0};
  double noise = 0;  // relative standard deviation (stdev / mean)
  std::size_t count = 0;
};

Statistics summarize(std::span<const Microseconds> samples);

}  // namespace tunekit
