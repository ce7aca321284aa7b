#pragma once
// The built-in backends. A backend is a folder under src/backend/ whose main
// file defines `BackendInfo <folder>::backend_info()`; adding one is that
// folder plus its name in this list. A backend switched off in CMake is
// replaced by its stand-in (src/backend/unavailable/<folder>.cpp).
#include "tunekit/backend.hpp"

#define TUNEKIT_BUILTIN_BACKENDS(X) X(cpu) X(cuda) X(opencl) X(triton) X(command) X(replay)

namespace tunekit {

#define TUNEKIT_DECLARE_BACKEND(ns) \
  namespace ns {                    \
  BackendInfo backend_info();       \
  }
TUNEKIT_BUILTIN_BACKENDS(TUNEKIT_DECLARE_BACKEND)
#undef TUNEKIT_DECLARE_BACKEND

}  // namespace tunekit
