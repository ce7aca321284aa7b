// out = transpose(in) for an n x n matrix of floats, walked in
// TILE_I x TILE_J tiles so that the rows read and the columns written stay
// in cache. The tile sizes arrive as -D defines; the defaults let the file
// compile without them.
#ifndef TILE_I
#define TILE_I 8
#endif
#ifndef TILE_J
#define TILE_J 8
#endif

extern "C" void transpose(const float* in, float* out, int n) {
  for (int ib = 0; ib < n; ib += TILE_I)
    for (int jb = 0; jb < n; jb += TILE_J)
      for (int i = ib; i < ib + TILE_I && i < n; ++i)
        for (int j = jb; j < jb + TILE_J && j < n; ++j) out[j * n + i] = in[i * n + j];
}

// The reference: the plain double loop.
extern "C" void transpose_naive(const float* in, float* out, int n) {
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) out[j * n + i] = in[i * n + j];
}
