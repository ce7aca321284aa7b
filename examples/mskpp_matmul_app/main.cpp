// The application around the msKPP matmul kernel: what msKPP's autotune_v2
// tunes at application level. build.sh compiles this file together with a
// variant of ../mskpp_matmul/matmul.cpp (found on the include path), and
// tunekit runs the program once per sample:
//
//   app M N K [REPEATS]
//
// It times the kernel (one untimed call, then the fastest of REPEATS), checks
// a few rows against the naive reference, and prints
//
//   time_us: 1234.5
//
// A wrong result exits with status 1, which tunekit records as a crash.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

#include "matmul.cpp"  // the variant tunekit wrote, via -I{dir}

int main(int argc, char** argv) {
  if (argc < 4) {
    std::fprintf(stderr, "usage: %s M N K [REPEATS]\n", argv[0]);
    return 2;
  }
  const int M = std::atoi(argv[1]), N = std::atoi(argv[2]), K = std::atoi(argv[3]);
  const int repeats = argc > 4 ? std::max(1, std::atoi(argv[4])) : 3;
  if (M <= 0 || N <= 0 || K <= 0) {
    std::fprintf(stderr, "M, N and K must be positive\n");
    return 2;
  }
  std::vector<float> A(static_cast<std::size_t>(M) * K), B(static_cast<std::size_t>(K) * N),
      C(static_cast<std::size_t>(M) * N);
  std::mt19937 rng(1);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  for (auto& x : A) x = dist(rng);
  for (auto& x : B) x = dist(rng);

  matmul(A.data(), B.data(), C.data(), M, N, K);  // warm-up
  double best_us = 1e300;
  for (int r = 0; r < repeats; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    matmul(A.data(), B.data(), C.data(), M, N, K);
    const auto t1 = std::chrono::steady_clock::now();
    best_us = std::min(best_us, std::chrono::duration<double, std::micro>(t1 - t0).count());
  }

  // Check the first, a middle and the last row against the reference.
  std::vector<float> row(N);
  for (int i : {0, M / 2, M - 1}) {
    matmul_naive(&A[static_cast<std::size_t>(i) * K], B.data(), row.data(), 1, N, K);
    for (int j = 0; j < N; ++j) {
      const float got = C[static_cast<std::size_t>(i) * N + j];
      if (!(std::fabs(got - row[j]) <= 1e-3f + 1e-4f * std::fabs(row[j]))) {
        std::fprintf(stderr, "wrong result at C[%d][%d]: %g, expected %g\n", i, j, got, row[j]);
        return 1;
      }
    }
  }
  std::printf("time_us: %.3f\n", best_us);
  return 0;
}
