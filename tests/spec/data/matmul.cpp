// A plain kernel for the spec-loading tests (never compiled by them).
#include <cstdint>

extern "C" void matmul(const float* A, const double* B, float* C, int32_t* D, uint8_t* E, int M) {
  (void)A; (void)B; (void)C; (void)D; (void)E; (void)M;
}
