#pragma once
// Exact comparison of an int with a float, as Python compares them: one rule
// for a Value's equality and order and for the constraint engine.
#include <cmath>
#include <cstdint>

namespace tunekit::detail {

inline constexpr double kTwo63 = 9223372036854775808.0;

// -1, 0 or 1 as the int i is below, at or above the double d; 2 for a NaN.
// Converting i first would make 9007199254740993 equal to
// 9007199254740992.0.
inline int compare_int_double(std::int64_t i, double d) {
  if (std::isnan(d)) return 2;
  if (d >= kTwo63) return -1;
  if (d < -kTwo63) return 1;
  const double t = std::trunc(d);
  const auto ti = static_cast<std::int64_t>(t);
  if (i != ti) return i < ti ? -1 : 1;
  return d > t ? -1 : d < t ? 1 : 0;
}

}  // namespace tunekit::detail
