// Kernel Tuner's way: each work-item adds tile_size_x elements,
// block_size_x apart, and the launch's sizes arrive as the macros Kernel
// Tuner defines (a kernel that finds them other than it would fails: the
// build for the block's other dimensions, the check of the results for
// grid_size_x, which must be the number of work-groups).
#if !defined(kernel_tuner) || block_size_y != 1 || block_size_z != 1 || grid_size_y != 1
#error "not Kernel Tuner's macros"
#endif
__kernel void vector_add(__global float* c, __global const float* a, __global const float* b, int n) {
  const int first = get_group_id(0) * block_size_x * tile_size_x + get_local_id(0);
  for (int t = 0; t < tile_size_x; t++) {
    const int i = first + t * block_size_x;
    if (i < n) c[i] = a[i] + b[i];
  }
  if (get_global_id(0) == 0 && get_num_groups(0) != grid_size_x) c[0] = NAN;
}
