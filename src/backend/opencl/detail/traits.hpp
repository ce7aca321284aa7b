#pragma once
// What the opencl backend is, shared by the backend and its stand-in (a build
// without it still loads and counts opencl specs).
#include "backend/detail/registry.hpp"

namespace tunekit::opencl {

inline BackendInfo describe_backend() {
  KernelTraits k;
  k.launch = true;
  // The driver builds the program: the only compiler there is.
  k.compilers = {"opencl"};
  k.build_timeout = true;
  k.default_compiler = [](std::string_view) { return std::string("opencl"); };
  BackendInfo b;
  b.name = "opencl";
  b.languages = {"opencl"};
  b.source_endings = {{".cl", "opencl"}};
  b.summary = "OpenCL C kernels built by the driver's compiler in a process per build, run in one worker per device";
  b.kernel = std::move(k);
  return b;
}

// The worker process's loop (worker.cpp).
int run_worker(int in_fd, int out_fd, int device);

}  // namespace tunekit::opencl
