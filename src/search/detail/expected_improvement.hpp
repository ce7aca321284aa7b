#pragma once
// Expected improvement of a normal prediction over a target, the acquisition
// of the surrogate's moves and of `bayes`: with improvement = target - mean
// and sd the prediction's standard deviation,
//   EI = improvement * Phi(improvement / sd) + sd * phi(improvement / sd).
#include <algorithm>
#include <cmath>

namespace tunekit::detail {

inline double expected_improvement(double improvement, double sd) {
  const double u = improvement / sd;
  return improvement * 0.5 * std::erfc(-u / std::sqrt(2.0)) + sd * std::exp(-0.5 * u * u) / std::sqrt(2.0 * M_PI);
}

// An upper bound that costs neither erfc nor exp: EI <= max(improvement, 0)
// + sd * phi(0), so a candidate whose bound is below the best EI so far can
// be passed over.
inline double expected_improvement_bound(double improvement, double sd) {
  return std::max(improvement, 0.0) + sd / std::sqrt(2.0 * M_PI);
}

}  // namespace tunekit::detail
