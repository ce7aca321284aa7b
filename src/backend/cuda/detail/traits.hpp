#pragma once
// What the cuda backend is, shared by the backend and its stand-in (a build
// without it still loads and counts cuda specs).
#include "backend/detail/registry.hpp"

namespace tunekit::cuda {

inline BackendInfo describe_backend() {
  KernelTraits k;
  k.launch = true;
  k.shared_memory = true;
  k.cluster = true;
  k.arch = true;
  k.tensor_maps = true;
  k.constant_memory = true;
  k.spills = true;         // ptxas's report, for either compiler
  k.build_timeout = true;  // nvcc's; NVRTC compiles in process, unbounded
  k.compilers = {"nvrtc", "nvcc"};
  k.default_compiler = [](std::string_view) { return std::string("nvrtc"); };
  BackendInfo b;
  b.name = "cuda";
  b.languages = {"cuda"};
  b.source_endings = {{".cu", "cuda"}};
  b.summary = "CUDA C++ kernels built by NVRTC or nvcc, launched through the driver API in one worker per GPU";
  b.kernel = std::move(k);
  return b;
}

// The worker process's loop (worker.cpp).
int run_worker(int in_fd, int out_fd, int device);

}  // namespace tunekit::cuda
