#include "backend/detail/unavailable.hpp"
#include "backend/opencl/detail/traits.hpp"

namespace tunekit::opencl {
BackendInfo backend_info() {
  return detail::unavailable(describe_backend(), "-DTUNEKIT_ENABLE_OPENCL=ON and the CL headers");
}
}  // namespace tunekit::opencl
