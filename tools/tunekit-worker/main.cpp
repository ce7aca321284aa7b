// tunekit-worker BACKEND [DEVICE]: runs variants for one device in a process
// of its own, so a kernel that crashes, hangs or corrupts its context takes
// down this process, not the tuner. Requests arrive on stdin; answers go to
// fd 3 (stdout and stderr are the kernel's, and go to a log).
#include <cstdio>
#include <cstdlib>
#include <string>

#include "backend/detail/registry.hpp"

int main(int argc, char** argv) {
  const std::string backend = argc > 1 ? argv[1] : "cpu";
  const int device = argc > 2 ? std::atoi(argv[2]) : 0;
  if (backend == "cpu") return tunekit::cpu::run_worker(0, 3, device);
  if (backend == "cuda") return tunekit::cuda::run_worker(0, 3, device);
  if (backend == "opencl") return tunekit::opencl::run_worker(0, 3, device);
  std::fprintf(stderr, "tunekit-worker: unknown backend '%s'\n", backend.c_str());
  return 2;
}
