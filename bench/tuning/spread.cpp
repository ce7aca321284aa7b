// A planted spread for bench/tuning/early_stop.py: each config naps
// 200 us x (1 + (A - 3)^2 + (B - 5)^2), so the best (A = 3, B = 5) is
// unique and well apart from the rest, and the times range over 42x, as a
// real space's often do. Napping keeps the figures apart from how busy the
// machine's cores are; the copy gives verification something to check.
#include <unistd.h>

#ifdef A
extern "C" void spread(const float* x, float* y, int n) {
  for (int i = 0; i < n; ++i) y[i] = x[i];
  usleep(200 * (1 + (A - 3) * (A - 3) + (B - 5) * (B - 5)));
}
#endif

extern "C" void spread_ref(const float* x, float* y, int n) {
  for (int i = 0; i < n; ++i) y[i] = x[i];
}
