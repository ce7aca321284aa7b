#include "backend/cuda/detail/traits.hpp"
#include "backend/detail/unavailable.hpp"

namespace tunekit::cuda {
BackendInfo backend_info() { return detail::unavailable(describe_backend(), "-DTUNEKIT_ENABLE_CUDA=ON"); }
}  // namespace tunekit::cuda
