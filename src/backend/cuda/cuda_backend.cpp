// Placeholder until the cuda backend lands (issue #4): it reports itself
// unavailable instead of failing the build.
#include "backend/detail/registry.hpp"

namespace tunekit::cuda {

std::unique_ptr<Backend> make_backend(const BackendOptions&) {
  throw std::runtime_error("the cuda backend is not built into this tunekit");
}

DeviceListing list_devices() { return {"cuda", {}, "not built into this tunekit"}; }

int run_worker(int, int, int) { return 2; }

}  // namespace tunekit::cuda
