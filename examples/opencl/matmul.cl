// C = A * B (row-major, M x K times K x N) in OpenCL C, tiled in local
// memory. Tunables arrive as -D defines:
//   TS  - the square tile of C a work-group computes (TS x TS)
//   WPT - rows of C each work-item computes (the work-group is TS x TS/WPT)
// The host launches grid [N/TS, M/TS] work-groups of block [TS, TS/WPT].
#ifndef TS
#define TS 16
#endif
#ifndef WPT
#define WPT 1
#endif
#define RTS (TS / WPT)

__kernel void matmul_tiled(__global const float* A, __global const float* B, __global float* C, int M, int N,
                           int K) {
  const int lc = get_local_id(0);  // column in the tile
  const int lr = get_local_id(1);  // first row in the tile
  const int col = get_group_id(0) * TS + lc;
  const int tile_row = get_group_id(1) * TS;
  __local float As[TS][TS];
  __local float Bs[TS][TS];
  float acc[WPT];
  for (int w = 0; w < WPT; ++w) acc[w] = 0.0f;
  for (int t = 0; t < K; t += TS) {
    for (int w = 0; w < WPT; ++w) {
      const int r = lr + w * RTS;
      As[r][lc] = A[(tile_row + r) * K + t + lc];
      Bs[r][lc] = B[(t + r) * N + col];
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int k = 0; k < TS; ++k) {
      const float b = Bs[k][lc];
      for (int w = 0; w < WPT; ++w) acc[w] += As[lr + w * RTS][k] * b;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  for (int w = 0; w < WPT; ++w) C[(tile_row + lr + w * RTS) * N + col] = acc[w];
}

// The reference: one dot product per element, in grid-stride loops so any
// launch geometry covers the whole of C.
__kernel void matmul_naive(__global const float* A, __global const float* B, __global float* C, int M, int N,
                           int K) {
  for (int row = get_global_id(1); row < M; row += get_global_size(1))
    for (int col = get_global_id(0); col < N; col += get_global_size(0)) {
      float acc = 0.0f;
      for (int k = 0; k < K; ++k) acc += A[row * K + k] * B[k * N + col];
      C[row * N + col] = acc;
    }
}
