#pragma once
// Whether this machine has a CUDA GPU: the GPU tests skip themselves
// without one (CI has none; scripts/gpu.sh runs them on a GPU machine).
#include "tunekit/backend.hpp"

namespace tunekit::testing {

inline bool have_gpu() {
  for (const auto& l : list_devices())
    if (l.backend == "cuda" && !l.devices.empty()) return true;
  return false;
}

}  // namespace tunekit::testing
