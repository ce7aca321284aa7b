#pragma once
// The stand-in for a backend left out of the build (TUNEKIT_ENABLE_<X>=OFF).
#include <stdexcept>

#include "backend/detail/registry.hpp"

#define TUNEKIT_UNAVAILABLE_BACKEND(ns, option)                                                      \
  namespace tunekit::ns {                                                                           \
  std::unique_ptr<Backend> make_backend(const BackendOptions&) {                                    \
    throw std::runtime_error("the " #ns " backend is not in this build (configure with " option ")"); \
  }                                                                                                 \
  DeviceListing list_devices() { return {#ns, {}, "not in this build (configure with " option ")"}; } \
  int run_worker(int, int, int) { return 2; }                                                       \
  }
