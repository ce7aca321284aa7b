// Kernel Tuner's way, with its constant memory (cmem_args): a 1D
// convolution whose filter is a __constant__ array, filled by the tuner
// before each run, and whose launch arrives as Kernel Tuner's macros.
__constant__ float filter[filter_width];

// `filter_passed` is the same data in global memory: a T1 file's
// constant-memory argument is passed too, as Kernel Tuner passes it.
__global__ void convolution(float* out, const float* in, const float* filter_passed, int n) {
  const int first = blockIdx.x * block_size_x * tile_size_x + threadIdx.x;
  for (int t = 0; t < tile_size_x; t++) {
    const int i = first + t * block_size_x;
    if (i < n) {
      float sum = 0;
      for (int k = 0; k < filter_width; k++) sum += filter[k] * in[i + k];
      out[i] = sum;
    }
  }
  // convolution.json fills the filter with 0.5: a symbol left unfilled
  // reads 0, and a grid other than Kernel Tuner's fails the check.
  if (blockIdx.x == 0 && threadIdx.x == 0 &&
      (filter[0] != 0.5f || filter_passed[filter_width - 1] != 0.5f || gridDim.x != grid_size_x))
    out[0] = __int_as_float(0x7fc00000);
}
