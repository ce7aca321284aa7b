#include "tunekit/backend.hpp"

namespace tunekit {

namespace cpu {
std::unique_ptr<Backend> make_cpu_backend(const BackendOptions& options);
}

std::unique_ptr<Backend> make_backend(std::string_view language, const BackendOptions& options) {
  if (language == "c++" || language == "cpp" || language == "c") return cpu::make_cpu_backend(options);
  throw InputError({}, "no backend for kernel language '" + std::string(language) +
                           "' in this build; available: c++, c (CPU)");
}

}  // namespace tunekit
