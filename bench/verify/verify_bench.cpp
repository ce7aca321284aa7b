// What verifying one trial's outputs costs (the worker does it for every
// config before timing it): tunekit's compare_outputs against the plain
// element-by-element loop of the same rule, and HostArguments::verify's
// first call on a reference file (it reads the file) against the next (it
// keeps the file's contents). One output of N x N elements; N = 4096 is a
// 4096^3 GEMM's. Prints the best of --repeat runs of each. compare_outputs
// splits a large output over the cores it may use (up to 8); the element
// loop runs on one.
//
//   bench/verify/run.sh [--build DIR] [-- [--n 4096] [--repeat 7]]
#include <algorithm>
#include <chrono>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "core/detail/cores.hpp"
#include "evaluator/detail/host_arguments.hpp"
#include "evaluator/detail/host_data.hpp"
#include "evaluator/detail/verify.hpp"
#include "tunekit/evaluator.hpp"

using namespace tunekit;

namespace {

double best_ms(int repeat, const std::function<void()>& f) {
  double best = INFINITY;
  for (int k = 0; k < repeat; ++k) {
    const auto t0 = std::chrono::steady_clock::now();
    f();
    best = std::min(best, std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  }
  return best;
}

// The rule, one element at a time in double, with the maxima reported
// (the largest difference, relative too): compare_outputs' loop before it
// screened blocks in float.
template <class T>
bool elementwise(const T* got, const T* expected, std::uint64_t n, const Tolerance& tol, double& max_abs,
                 double& max_rel) {
  std::uint64_t bad = 0;
  for (std::uint64_t i = 0; i < n; ++i) {
    const double g = detail::as_double(got[i]), e = detail::as_double(expected[i]);
    if (std::isnan(e)) {
      bad += !std::isnan(g);
      continue;
    }
    const double d = std::fabs(g - e);
    if (!std::isfinite(d)) {
      ++bad;
      max_abs = max_rel = INFINITY;
      continue;
    }
    if (d > max_abs) max_abs = d;
    if (e != 0) max_rel = std::max(max_rel, d / std::fabs(e));
    else if (d > 0) max_rel = INFINITY;
    bad += !(d <= tol.atol + tol.rtol * std::fabs(e));
  }
  return bad == 0;
}

template <class T>
void row(const char* name, ElementType type, std::uint64_t n, int repeat) {
  // Values in [1, 2) and a reference one rounding step away in a third of them.
  std::vector<T> expected(n), got(n);
  std::uint64_t s = 42;
  for (std::uint64_t i = 0; i < n; ++i) {
    const std::uint64_t r = detail::splitmix64(s);
    expected[i] = detail::from_double<T>(1.0 + static_cast<double>(r % 1000) / 1000.0);
    got[i] = r % 3 ? expected[i] : detail::from_double<T>(detail::as_double(expected[i]) * (1 + 1e-3));
  }
  const Tolerance tol{0.05, 0.008};
  bool ok_fast = false, ok_plain = false;
  const double fast =
      best_ms(repeat, [&] { ok_fast = compare_outputs(type, got.data(), expected.data(), n, tol, "C").passed; });
  double max_abs = 0, max_rel = 0;
  const double plain =
      best_ms(repeat, [&] { ok_plain = elementwise(got.data(), expected.data(), n, tol, max_abs, max_rel); });
  std::printf("| %s | %llu | %.1f | %.1f | %.1fx | %s |\n", name, static_cast<unsigned long long>(n), fast, plain,
              plain / fast, ok_fast == ok_plain ? "same" : "DIFFERENT");
}

}  // namespace

int main(int argc, char** argv) {
  std::uint64_t side = 4096;
  int repeat = 7;
  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    if (flag != "--n" && flag != "--repeat") {
      std::fprintf(stderr, "verify_bench: unknown flag %s (expected --n N or --repeat R)\n", argv[i]);
      return 2;
    }
    if (i + 1 >= argc) {
      std::fprintf(stderr, "verify_bench: %s needs a value\n", argv[i]);
      return 2;
    }
    const std::string value = argv[++i];
    // Whole numbers of 1 or more only: no output or no run has no best time.
    char* end = nullptr;
    errno = 0;
    const unsigned long long v = std::strtoull(value.c_str(), &end, 10);
    const unsigned long long most = flag == "--n" ? 1ull << 16 : 1000000;
    if (value.empty() || value[0] == '-' || *end != '\0' || errno != 0 || v < 1 || v > most) {
      std::fprintf(stderr, "verify_bench: %s: '%s' is not a whole number from 1 to %llu\n", flag.c_str(), value.c_str(),
                   most);
      return 2;
    }
    if (flag == "--n") side = v;
    else repeat = static_cast<int>(v);
  }
  const std::uint64_t n = side * side;
  std::printf("compare_outputs, best of %d: one output of %llu x %llu elements, on up to %zu cores\n\n", repeat,
              static_cast<unsigned long long>(side), static_cast<unsigned long long>(side),
              std::min(tunekit::detail::usable_cores(), tunekit::detail::kVerifyMaxParts));
  std::printf(
      "| type | elements | tunekit ms | element by element ms | ratio | verdict |\n|---|---|---|---|---|---|\n");
  row<detail::BFloat16>("bf16", ElementType::bf16, n, repeat);
  row<detail::Half>("f16", ElementType::f16, n, repeat);
  row<float>("f32", ElementType::f32, n, repeat);
  row<double>("f64", ElementType::f64, n, repeat);

  // HostArguments::verify on a saved reference: the first call reads it.
  const std::vector<ResolvedArgument> args{{"C", ElementType::bf16, Role::out, n, Fill::random, 0, {}, {}}};
  detail::HostArguments host;
  host.prepare(args, 7);
  auto* out = static_cast<detail::BFloat16*>(host.data(0));  // a kernel's numbers, not the poison prepare leaves
  std::uint64_t s = 7;
  for (std::uint64_t i = 0; i < n; ++i)
    out[i] = detail::from_double<detail::BFloat16>(static_cast<double>(detail::splitmix64(s) % 2000) / 1000.0 - 1.0);
  const auto file = std::filesystem::temp_directory_path() / "tunekit_verify_bench.bin";
  if (std::string error = host.save_outputs(file.string()); !error.empty()) {
    std::fprintf(stderr, "verify_bench: %s\n", error.c_str());
    return 1;
  }
  const Tolerance tol{0.05, 0.008};
  // Two files of the same contents taken in turn: each call reads its file.
  const auto other = file.string() + ".2";
  std::filesystem::copy_file(file, other, std::filesystem::copy_options::overwrite_existing);
  bool passed = true;
  int turn = 0;
  const double read = best_ms(repeat, [&] { passed &= host.verify(++turn % 2 ? other : file.string(), tol).passed; });
  host.verify(file.string(), tol);
  const double kept = best_ms(repeat, [&] { passed &= host.verify(file.string(), tol).passed; });
  std::filesystem::remove(file);
  std::filesystem::remove(other);
  std::printf(
      "\nHostArguments::verify, bf16 (%s): a reference file read %.1f ms, kept from the last call %.1f ms: "
      "%.1fx\n",
      passed ? "passed" : "FAILED", read, kept, read / kept);
  return 0;
}
