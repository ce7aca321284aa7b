// y = a*x + y, tunable through CCCL-style %RANGE% annotations alone: no spec
// file is needed. Each variant is compiled with `#define TUNE_UNROLL v` and
// `#define TUNE_BLOCK v` in front.
//
//   build/bin/tunekit tune examples/saxpy/saxpy.cpp --size N=1000000 --entry saxpy \
//       --arg x:f32:N --arg y:f32:N:1.0:inout --arg n:i32=N
//
// %RANGE% TUNE_UNROLL unroll 1:4:1
// %RANGE% TUNE_BLOCK block 1024:4096:1024

extern "C" void saxpy(const float* x, float* y, int n) {
  // Blocks keep a slice of x and y in L1 while the unrolled body streams it.
  for (int b = 0; b < n; b += TUNE_BLOCK) {
    const int end = b + TUNE_BLOCK < n ? b + TUNE_BLOCK : n;
    int i = b;
    for (; i + TUNE_UNROLL <= end; i += TUNE_UNROLL)
      for (int u = 0; u < TUNE_UNROLL; ++u) y[i + u] = 2.0f * x[i + u] + y[i + u];
    for (; i < end; ++i) y[i] = 2.0f * x[i] + y[i];
  }
}
