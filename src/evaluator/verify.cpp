#include "evaluator/detail/verify.hpp"

#include "core/detail/cores.hpp"

#include <sched.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <optional>
#include <system_error>
#include <thread>
#include <type_traits>
#include <type_traits>
#include <vector>

#include <fmt/format.h>

#include "evaluator/detail/host_data.hpp"
#include "tunekit/evaluator.hpp"

namespace tunekit {

namespace {

// What a part of an output gives: its maxima, its failures and the first.
struct Tally {
  double max_abs = 0, max_rel = 0;
  std::uint64_t bad = 0, first_bad = 0;
};

// The careful loop: every case of NaN and infinity, and where the first
// failing element is. Its maxima and counts are kept in locals: updated
// through the reference, they were stored at every element.
template <class T>
void compare_block(const T* got, const T* expected, std::uint64_t from, std::uint64_t to, const Tolerance& tol,
                   Tally& tally) {
  double max_abs = tally.max_abs, max_rel = tally.max_rel;
  std::uint64_t bad = tally.bad, first_bad = tally.first_bad;
  for (std::uint64_t i = from; i < to; ++i) {
    const double g = detail::as_double(got[i]);
    const double e = detail::as_double(expected[i]);
    if (std::isnan(e)) {
      if (!std::isnan(g)) {
        if (!bad++) first_bad = i;
      }
      continue;
    }
    if (std::isinf(e)) {  // a right answer only as itself: inf - inf is NaN
      if (g != e && !bad++) first_bad = i;
      if (g != e) max_abs = max_rel = INFINITY;
      continue;
    }
    const double diff = std::fabs(g - e);  // NaN when g is NaN
    if (std::isnan(diff) || std::isinf(diff)) {
      if (!bad++) first_bad = i;
      max_abs = INFINITY;
      max_rel = INFINITY;
      continue;
    }
    if (diff > max_abs) max_abs = diff;
    if (e != 0) max_rel = std::max(max_rel, diff / std::fabs(e));
    else if (diff > 0) max_rel = INFINITY;
    if (!(diff <= tol.atol + tol.rtol * std::fabs(e)))
      if (!bad++) first_bad = i;
  }
  tally = Tally{max_abs, max_rel, bad, first_bad};
}

// Every verified trial compares its whole output, and the careful loop takes
// about 7 ns an element on a 2 GHz core: for a 4096 x 4096 GEMM's output
// (16.8 million elements) that is more than the kernel's whole measurement.
// So each block of the output is screened first by a loop the compiler
// vectorizes (no branches, and kLanes maxima kept apart so that nothing is
// reassociated), and only a block where some element fails the screen, or
// is not finite, goes through the careful loop.
//
// Outputs of 16 and 32-bit floats are screened in float, four elements to
// a 16-byte vector (the 4096^2 bfloat16 output: 157 -> 20 ms on the 2-core
// CI machine). An element passes the screen only with a margin that float's
// rounding cannot cross, so the screen never passes an element the careful
// loop would fail. The maxima of a block that passes are then float's,
// within a float rounding of the exact ones: they are reported, nothing
// decides on them. Other types (double outputs, integers) go through the
// careful loop: screened in double they were no faster.
template <class T>
constexpr bool kScreened =
    std::is_same_v<T, detail::Half> || std::is_same_v<T, detail::BFloat16> || std::is_same_v<T, float>;

// An element as float, for the screen. A half's conversion without
// branches: normal numbers and zeros exactly, subnormals, infinities and
// NaN as NaN, which fails the screen (the careful loop takes them).
template <class T>
float as_screen(T v) {
  if constexpr (std::is_same_v<T, detail::Half>) {
    const std::uint32_t b = v.bits, exponent = b & 0x7c00u, sign = (b & 0x8000u) << 16;
    const std::uint32_t normal = sign | (((b & 0x7fffu) << 13) + ((127u - 15u) << 23));
    const std::uint32_t zero_or_nan = (b & 0x3ffu) ? 0x7fc00000u : sign;
    const std::uint32_t bits = exponent == 0 ? zero_or_nan : exponent == 0x7c00u ? 0x7fc00000u : normal;
    float f;
    std::memcpy(&f, &bits, 4);
    return f;
  } else if constexpr (std::is_same_v<T, detail::BFloat16>) {
    return detail::to_float(v);
  } else {
    return v;
  }
}

// The screen's tolerances: the spec's rounded down to float. With a margin
// of 2^-20 (float's rounding of the difference and of the bound is within
// 2^-22), and no bound below float's smallest normal, where rounding is not
// relative, they pass nothing the rule in double fails.
struct ScreenTolerance {
  explicit ScreenTolerance(const Tolerance& tol)
      : atol(std::nextafter(static_cast<float>(tol.atol), 0.0f)),
        rtol(std::nextafter(static_cast<float>(tol.rtol), 0.0f)) {}
  float atol, rtol;
  static constexpr float kMargin = 1.0f + 1.0f / (1 << 20);
  static constexpr float kLowestBound = std::numeric_limits<float>::min();
};

template <class T>
bool screen_block(const T* got, const T* expected, std::uint64_t from, std::uint64_t to, const ScreenTolerance& tol,
                  double& max_abs, double& max_rel) {
  using C = float;
  const C atol = tol.atol, rtol = tol.rtol, margin = ScreenTolerance::kMargin;
  const C lowest_bound = ScreenTolerance::kLowestBound;
  constexpr std::size_t kLanes = 16;
  C top_abs[kLanes] = {}, top_rel[kLanes] = {};
  unsigned fails[kLanes] = {};
  std::uint64_t i = from;
  const std::uint64_t lanes_end = from + (to - from) / kLanes * kLanes;
  while (i < to) {
    // kLanes elements at a time, then the rest one by one in lane 0.
    const std::size_t width = i < lanes_end ? kLanes : 1;
    for (std::size_t k = 0; k < width; ++k) {
      const C e = as_screen(expected[i + k]), size = std::fabs(e);
      const C diff = std::fabs(as_screen(got[i + k]) - e);
      const C bound = atol + rtol * size;
      const C rel = diff / size;  // infinite where e is 0 and diff is not; NaN where both are (skipped)
      // Bitwise, not logical: no branch. NaN fails every comparison.
      const bool pass = (diff == C(0)) |
                        ((diff * margin <= bound) & (bound >= lowest_bound) & (diff <= std::numeric_limits<C>::max()));
      fails[k] += !pass;
      top_abs[k] = diff > top_abs[k] ? diff : top_abs[k];
      top_rel[k] = rel > top_rel[k] ? rel : top_rel[k];
    }
    i += width;
  }
  unsigned failed = 0;
  for (std::size_t k = 0; k < kLanes; ++k) {
    failed += fails[k];
    max_abs = std::max(max_abs, static_cast<double>(top_abs[k]));
    max_rel = std::max(max_rel, static_cast<double>(top_rel[k]));
  }
  return failed == 0;
}

// Whether a screened block's maximum, within float's rounding of the exact
// one, may lie on the other side of `tolerance` than the exact one does. The
// summary names the tolerance that admitted the outputs by comparing the
// maxima with atol and rtol (max abs diff <= atol: every element within
// atol), so such a block's maxima are taken from the careful loop, exact in
// double: a float-rounded 1.0 for a difference of 1 + 2^-30 said "within
// atol" (1.0) of outputs that passed only by atol + rtol x |ref|. A float
// difference is 0 only where the elements are equal, and a relative one
// that is not 0 is at least 2^-24: a maximum or a tolerance of 0 is on its
// side exactly.
bool near_a_tolerance(double maximum, double tolerance) {
  if (maximum == 0 || tolerance == 0) return false;
  constexpr double kRounding = 1.0 + 1.0 / (1 << 18);  // far above float's 2^-24 (twice, for a quotient)
  return maximum <= tolerance * kRounding && maximum >= tolerance / kRounding;
}

// `screen`: the screen's tolerances, or none where the block goes straight
// to the careful loop.
template <class T>
Tally compare_range(const T* got, const T* expected, std::uint64_t from, std::uint64_t to, const Tolerance& tol,
                    const std::optional<ScreenTolerance>& screen) {
  Tally t;
  constexpr std::uint64_t kBlock = 4096;
  for (std::uint64_t at = from; at < to; at += kBlock) {
    const std::uint64_t end = std::min(to, at + kBlock);
    if constexpr (kScreened<T>) {
      double max_abs = 0, max_rel = 0;
      if (screen && screen_block(got, expected, at, end, *screen, max_abs, max_rel) &&
          !near_a_tolerance(max_abs, tol.atol) && !near_a_tolerance(max_rel, tol.rtol)) {
        t.max_abs = std::max(t.max_abs, max_abs);
        t.max_rel = std::max(t.max_rel, max_rel);
        continue;
      }
    }
    compare_block(got, expected, at, end, tol, t);
  }
  return t;
}

// The parts are contiguous and in order, each on its own thread but the
// first: the verdict, the count, the first failure and the maxima are the
// same as from one pass.
// An element as a reason shows it: a float in its own shortest form, not
// the 17 digits of the double it widens to, so the console's one line keeps
// where the first difference is and what it got.
template <class T>
std::string element_text(T v) {
  if constexpr (std::is_same_v<T, float>) return fmt::format("{}", v);
  else return fmt::format("{}", detail::as_double(v));
}

template <class T>
Verification compare(const T* got, const T* expected, std::uint64_t n, const Tolerance& tol, std::string_view name,
                     std::size_t parts) {
  parts = std::max<std::size_t>(1, std::min<std::uint64_t>(parts, n / detail::kVerifyPartElements));
  std::vector<Tally> tallies(parts);
  // The screen's margin assumes tolerances of 0 or more (a spec's are).
  std::optional<ScreenTolerance> screen;
  if (kScreened<T> && tol.atol >= 0 && tol.rtol >= 0) screen.emplace(tol);
  auto bounds = [&](std::size_t p) { return n / parts * p; };
  auto run = [&](std::size_t p) {
    tallies[p] = compare_range(got, expected, bounds(p), p + 1 == parts ? n : bounds(p + 1), tol, screen);
  };
  std::vector<std::thread> threads;
  for (std::size_t p = 1; p < parts; ++p) {
    try {
      threads.emplace_back(run, p);
    } catch (const std::system_error&) {
      run(p);  // no thread to be had: this one does it
    }
  }
  run(0);
  for (auto& t : threads) t.join();

  Verification v;
  v.checked = true;
  std::uint64_t bad = 0, first_bad = 0;
  for (const Tally& t : tallies) {
    v.max_abs_diff = std::max(v.max_abs_diff, t.max_abs);
    v.max_rel_err = std::max(v.max_rel_err, t.max_rel);
    if (t.bad && !bad) first_bad = t.first_bad;
    bad += t.bad;
  }
  v.passed = bad == 0;
  if (!v.passed)
    v.detail = fmt::format("{}: {} of {} elements differ; first at [{}]: got {}, expected {} (atol {:g}, rtol {:g})",
                           name, bad, n, first_bad, element_text(got[first_bad]), element_text(expected[first_bad]),
                           tol.atol, tol.rtol);
  return v;
}

}  // namespace

namespace detail {

Verification compare_outputs_in_parts(ElementType type, const void* got, const void* expected, std::uint64_t count,
                                      const Tolerance& tol, std::string_view name, std::size_t parts) {
  Verification v;
  with_type(type, [&](auto zero) {
    using T = decltype(zero);
    v = compare(static_cast<const T*>(got), static_cast<const T*>(expected), count, tol, name, parts);
  });
  return v;
}

}  // namespace detail

// A large output is compared on several cores: a 4096^2 bfloat16 output
// took 17.8 ms a trial on one core of the H200's host, a third of the
// trial's whole evaluation (lab/runs/issue-23/time_split_h200_4096.log).
// Nothing runs on the device meanwhile, so the threads take nothing from a
// measurement; the cores are those the worker may run on (a worker pinned
// to one core compares on it alone).
Verification compare_outputs(ElementType type, const void* got, const void* expected, std::uint64_t count,
                             const Tolerance& tol, std::string_view name) {
  static const std::size_t parts = std::min<std::size_t>(detail::usable_cores(), detail::kVerifyMaxParts);
  return detail::compare_outputs_in_parts(type, got, expected, count, tol, name, parts);
}

}  // namespace tunekit
