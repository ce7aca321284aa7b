// Reference for the spec-loading tests.
extern "C" void matmul_naive() {}
