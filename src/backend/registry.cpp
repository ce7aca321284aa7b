#include "backend/detail/registry.hpp"

namespace tunekit {

std::unique_ptr<Backend> make_backend(std::string_view language, const BackendOptions& options) {
  if (language == "c++" || language == "cpp" || language == "c") return cpu::make_backend(options);
  if (language == "cuda") return cuda::make_backend(options);
  if (language == "opencl") return opencl::make_backend(options);
  if (language == "command") return command::make_backend(options);
  throw InputError({}, "no backend for kernel language '" + std::string(language) +
                           "'; known: c++, c, cuda, opencl, command");
}

std::vector<DeviceListing> list_devices() {
  return {cpu::list_devices(), cuda::list_devices(), opencl::list_devices(), command::list_devices()};
}

}  // namespace tunekit
