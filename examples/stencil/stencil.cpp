// One step of a 2D five-point Jacobi stencil (heat diffusion) on an N x M
// grid of floats, row-major:
//   out[i][j] = C0 * in[i][j] + C1 * (in[i-1][j] + in[i+1][j] + in[i][j-1] + in[i][j+1])
// for the interior; the border is copied. The grid is walked in TY x TX
// tiles (rows x columns), so a tile's three input rows stay in cache while
// the tile is swept. Tunables arrive as -D defines (each has a default, so
// the file compiles without any):
//   TX      tile width in columns (the contiguous, vectorised direction)
//   TY      tile height in rows
//   UNROLL  rows of a tile computed together (their shared input rows are
//           loaded once per column block)
//   PAR     what the OpenMP threads split: 0 = rows of tiles, 1 = all tiles
// stencil_naive is the reference: the same arithmetic in one plain loop nest,
// so results match to the last bit.
#ifndef TX
#define TX 256
#endif
#ifndef TY
#define TY 4
#endif
#ifndef UNROLL
#define UNROLL 1
#endif
#ifndef PAR
#define PAR 0
#endif

#include <algorithm>
#include <cstring>

namespace {

constexpr float C0 = 0.5f, C1 = 0.125f;

inline float point(const float* in, int M, int i, int j) {
  const float* row = in + static_cast<long>(i) * M;
  return C0 * row[j] + C1 * (row[j - M] + row[j + M] + row[j - 1] + row[j + 1]);
}

// Rows [i0, i1) by columns [j0, j1) of the interior, UNROLL rows at a time.
void tile(const float* in, float* out, int M, int i0, int i1, int j0, int j1) {
  int i = i0;
  for (; i + UNROLL <= i1; i += UNROLL)
    for (int j = j0; j < j1; ++j)
      for (int u = 0; u < UNROLL; ++u) out[static_cast<long>(i + u) * M + j] = point(in, M, i + u, j);
  for (; i < i1; ++i)
    for (int j = j0; j < j1; ++j) out[static_cast<long>(i) * M + j] = point(in, M, i, j);
}

void copy_border(const float* in, float* out, int N, int M) {
  std::memcpy(out, in, sizeof(float) * M);
  std::memcpy(out + static_cast<long>(N - 1) * M, in + static_cast<long>(N - 1) * M, sizeof(float) * M);
  for (int i = 1; i < N - 1; ++i) {
    out[static_cast<long>(i) * M] = in[static_cast<long>(i) * M];
    out[static_cast<long>(i) * M + M - 1] = in[static_cast<long>(i) * M + M - 1];
  }
}

}  // namespace

extern "C" void stencil(const float* in, float* out, int N, int M) {
  if (N < 3 || M < 3) {
    std::memcpy(out, in, sizeof(float) * N * M);
    return;
  }
  copy_border(in, out, N, M);
  const int rows = N - 2, cols = M - 2;
  const int tiles_y = (rows + TY - 1) / TY, tiles_x = (cols + TX - 1) / TX;
#if PAR == 0
#pragma omp parallel for schedule(static)
  for (int ty = 0; ty < tiles_y; ++ty)
    for (int tx = 0; tx < tiles_x; ++tx) {
#else
#pragma omp parallel for collapse(2) schedule(static)
  for (int ty = 0; ty < tiles_y; ++ty)
    for (int tx = 0; tx < tiles_x; ++tx) {
#endif
      const int i0 = 1 + ty * TY, j0 = 1 + tx * TX;
      tile(in, out, M, i0, std::min(i0 + TY, N - 1), j0, std::min(j0 + TX, M - 1));
    }
}

extern "C" void stencil_naive(const float* in, float* out, int N, int M) {
  std::memcpy(out, in, sizeof(float) * N * M);
  for (int i = 1; i < N - 1; ++i)
    for (int j = 1; j < M - 1; ++j) out[static_cast<long>(i) * M + j] = point(in, M, i, j);
}
