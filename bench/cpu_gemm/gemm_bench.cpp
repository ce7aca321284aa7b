// Benchmark harness for the tunekit matmul example.
//
// Compiled together with examples/matmul/matmul.cpp (included below) and a
// set of -D values for its tunables, e.g.
//   g++ -std=c++20 -O3 -march=native -fopenmp -DMC=128 -DKC=256 ...
//       bench/cpu_gemm/gemm_bench.cpp -lopenblas -o gemm_bench  (one line)
//
// One run measures ONE implementation (so that OpenMP and OpenBLAS worker
// threads spinning after a call never steal cores from the other one):
//   gemm_bench --impl kernel|naive|openblas --size S [--m M --n N --k K]
//              [--reps R] [--min-time SEC] [--threads T] [--label NAME]
// and prints one line of key=value pairs:
//   impl=kernel label=tuned M=512 N=512 K=512 gflops=... median_ms=...
//   min_ms=... reps=... err=... ok=1 config=MC=..,KC=.. openblas_core=...
// `err` is max|C - C_openblas| / max|C_openblas| (normwise relative error);
// kernel and naive results are checked against OpenBLAS after timing (ok=0
// and exit status 2 when err > --tol, default 1e-4).
// Timing: std::chrono::steady_clock, warm-up calls first, then at least
// --reps calls (default 5) and until --min-time seconds (default 0.3) have
// been spent (at most --max-reps, default 200); the median is reported.

#include <cblas.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#ifndef KERNEL_SOURCE
#include "../../examples/matmul/matmul.cpp"
#else
#include KERNEL_SOURCE
#endif

namespace {

#define TK_STR2(x) #x
#define TK_STR(x) TK_STR2(x)
const char* kConfig = "MC=" TK_STR(MC) ",KC=" TK_STR(KC) ",NC=" TK_STR(NC) ",MR=" TK_STR(MR) ",NR=" TK_STR(
    NR) ",UNROLL=" TK_STR(UNROLL) ",LOOP_ORDER=" TK_STR(LOOP_ORDER) ",PAR=" TK_STR(PAR) ",THREADS=" TK_STR(THREADS);

[[noreturn]] void usage(const char* msg) {
  std::fprintf(stderr,
               "gemm_bench: %s\nusage: gemm_bench --impl kernel|naive|openblas --size S [--m M --n N --k K]\n"
               "       [--reps R] [--max-reps R] [--min-time SEC] [--warmup N] [--threads T] [--label NAME]\n"
               "       [--tol X] [--no-check] [--seed N]\n",
               msg);
  std::exit(64);
}

void openblas_ref(const float* A, const float* B, float* C, int M, int N, int K) {
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, M, N, K, 1.0f, A, K, B, N, 0.0f, C, N);
}

}  // namespace

int main(int argc, char** argv) {
  std::string impl, label;
  int M = 0, N = 0, K = 0, reps = 5, max_reps = 200, warmup = 2, threads = 2;
  double min_time = 0.3, tol = 1e-4;
  bool check = true;
  unsigned seed = 1;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto next = [&]() -> const char* {
      if (i + 1 >= argc) usage(("missing value after " + a).c_str());
      return argv[++i];
    };
    if (a == "--impl") impl = next();
    else if (a == "--size") M = N = K = std::atoi(next());
    else if (a == "--m") M = std::atoi(next());
    else if (a == "--n") N = std::atoi(next());
    else if (a == "--k") K = std::atoi(next());
    else if (a == "--reps") reps = std::atoi(next());
    else if (a == "--max-reps") max_reps = std::atoi(next());
    else if (a == "--min-time") min_time = std::atof(next());
    else if (a == "--warmup") warmup = std::atoi(next());
    else if (a == "--threads") threads = std::atoi(next());
    else if (a == "--label") label = next();
    else if (a == "--tol") tol = std::atof(next());
    else if (a == "--no-check") check = false;
    else if (a == "--seed") seed = unsigned(std::atoi(next()));
    else usage(("unknown argument " + a).c_str());
  }
  if (impl != "kernel" && impl != "naive" && impl != "openblas") usage("--impl must be kernel, naive or openblas");
  if (M <= 0 || N <= 0 || K <= 0) usage("sizes must be positive");
  if (reps < 1) reps = 1;
  if (max_reps < reps) max_reps = reps;
  if (label.empty()) label = impl;

  openblas_set_num_threads(threads);
  std::vector<float> A(std::size_t(M) * K), B(std::size_t(K) * N), C(std::size_t(M) * N);
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  for (auto& x : A) x = dist(rng);
  for (auto& x : B) x = dist(rng);

  void (*fn)(const float*, const float*, float*, int, int, int) = impl == "kernel"  ? matmul
                                                                  : impl == "naive" ? matmul_naive
                                                                                    : openblas_ref;

  using clk = std::chrono::steady_clock;
  for (int w = 0; w < warmup; ++w) fn(A.data(), B.data(), C.data(), M, N, K);
  std::vector<double> times;
  double spent = 0;
  while (int(times.size()) < max_reps && (int(times.size()) < reps || spent < min_time)) {
    std::fill(C.begin(), C.end(), std::nanf(""));  // every call must write all of C
    auto t0 = clk::now();
    fn(A.data(), B.data(), C.data(), M, N, K);
    double t = std::chrono::duration<double>(clk::now() - t0).count();
    times.push_back(t);
    spent += t;
  }
  std::vector<double> sorted = times;
  std::sort(sorted.begin(), sorted.end());
  std::size_t n = sorted.size();
  double median = n % 2 ? sorted[n / 2] : 0.5 * (sorted[n / 2 - 1] + sorted[n / 2]);
  double gflops = 2.0 * M * N * double(K) / median * 1e-9;

  double err = 0;
  bool ok = true;
  if (check && impl != "openblas") {
    std::vector<float> R(C.size());
    openblas_ref(A.data(), B.data(), R.data(), M, N, K);
    double maxref = 0, maxdiff = 0;
    for (std::size_t i = 0; i < R.size(); ++i) {
      maxref = std::max(maxref, double(std::fabs(R[i])));
      double d = std::fabs(double(C[i]) - double(R[i]));
      if (!(d <= maxdiff)) maxdiff = std::isnan(d) ? INFINITY : d;
    }
    err = maxref > 0 ? maxdiff / maxref : maxdiff;
    ok = err <= tol;
  }

  std::printf(
      "impl=%s label=%s M=%d N=%d K=%d gflops=%.2f median_ms=%.3f min_ms=%.3f reps=%zu err=%.3g ok=%d "
      "config=%s openblas_core=%s openblas_threads=%d\n",
      impl.c_str(), label.c_str(), M, N, K, gflops, median * 1e3, sorted[0] * 1e3, n, err, ok ? 1 : 0,
      impl == "kernel" ? kConfig : "-", openblas_get_corename(), openblas_get_num_threads());
  return ok ? 0 : 2;
}
