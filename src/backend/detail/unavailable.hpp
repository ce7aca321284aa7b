#pragma once
// The stand-in for a backend left out of the build (TUNEKIT_ENABLE_<X>=OFF):
// its specs still load, and using it says how to build it in.
#include <stdexcept>
#include <string>

#include "tunekit/backend.hpp"

namespace tunekit::detail {

inline BackendInfo unavailable(BackendInfo b, const std::string& option) {
  const std::string why = "not in this build (configure with " + option + ")";
  b.make = [name = b.name, why](const BackendOptions&) -> std::unique_ptr<Backend> {
    throw std::runtime_error("the " + name + " backend is " + why);
  };
  b.list_devices = [name = b.name, why] { return DeviceListing{name, {}, why}; };
  b.run_worker = {};
  return b;
}

}  // namespace tunekit::detail
