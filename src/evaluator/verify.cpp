#include <cmath>
#include <cstring>

#include <fmt/format.h>

#include "evaluator/detail/host_data.hpp"
#include "tunekit/evaluator.hpp"

namespace tunekit {

namespace {

template <class T>
Verification compare(const T* got, const T* expected, std::uint64_t n, const Tolerance& tol, std::string_view name) {
  Verification v;
  v.checked = true;
  std::uint64_t bad = 0, first_bad = 0;
  for (std::uint64_t i = 0; i < n; ++i) {
    const double g = detail::as_double(got[i]);
    const double e = detail::as_double(expected[i]);
    if (std::isnan(e)) {
      if (!std::isnan(g)) {
        if (!bad++) first_bad = i;
      }
      continue;
    }
    const double diff = std::fabs(g - e);  // NaN when g is NaN
    if (std::isnan(diff) || std::isinf(diff)) {
      if (!bad++) first_bad = i;
      v.max_abs_diff = INFINITY;
      v.max_rel_err = INFINITY;
      continue;
    }
    if (diff > v.max_abs_diff) v.max_abs_diff = diff;
    if (e != 0) v.max_rel_err = std::max(v.max_rel_err, diff / std::fabs(e));
    else if (diff > 0) v.max_rel_err = INFINITY;
    if (!(diff <= tol.atol + tol.rtol * std::fabs(e)))
      if (!bad++) first_bad = i;
  }
  v.passed = bad == 0;
  if (!v.passed)
    v.detail = fmt::format("{}: {} of {} elements differ; first at [{}]: got {}, expected {}", name, bad, n, first_bad,
                           detail::as_double(got[first_bad]), detail::as_double(expected[first_bad]));
  return v;
}

}  // namespace

Verification compare_outputs(ElementType type, const void* got, const void* expected, std::uint64_t count,
                             const Tolerance& tol, std::string_view name) {
  Verification v;
  detail::with_type(type, [&](auto zero) {
    using T = decltype(zero);
    v = compare(static_cast<const T*>(got), static_cast<const T*>(expected), count, tol, name);
  });
  return v;
}

}  // namespace tunekit
