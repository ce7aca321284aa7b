#pragma once
// Each backend's entry points. A backend is a folder under src/backend/
// providing these three functions.
#include "tunekit/backend.hpp"

namespace tunekit {

#define TUNEKIT_DECLARE_BACKEND(ns)                                      \
  namespace ns {                                                         \
  std::unique_ptr<Backend> make_backend(const BackendOptions& options); \
  DeviceListing list_devices();                                          \
  /* The worker process's loop for `device`. */                          \
  int run_worker(int in_fd, int out_fd, int device);                     \
  }

TUNEKIT_DECLARE_BACKEND(cpu)
TUNEKIT_DECLARE_BACKEND(cuda)
TUNEKIT_DECLARE_BACKEND(opencl)
TUNEKIT_DECLARE_BACKEND(command)

#undef TUNEKIT_DECLARE_BACKEND

}  // namespace tunekit
