#pragma once
#include <filesystem>
#include <memory>

#include "builder/detail/cache_claims.hpp"
#include "tunekit/backend.hpp"

namespace tunekit::cpu {

// Compiles each variant, with an appended call shim, into a shared object
// named by its content hash.
class CpuBuilder final : public Builder {
 public:
  CpuBuilder(std::filesystem::path cache_dir, bool rebuild);
  BuildResult build(const BuildInput& input) override;

 private:
  std::filesystem::path cache_dir_;
  tunekit::detail::CacheClaims claims_;  // which variants the cache may serve
};

// The exported symbol of the call shim the builder appends to every variant.
inline constexpr const char* kLaunchSymbol = "tunekit_launch";

// The generated `tunekit_launch(void**)` that calls the entry with typed
// arguments.
std::string call_shim(const BuildInput& input);

// The worker process's loop (worker.cpp).
int run_worker(int in_fd, int out_fd, int device);

}  // namespace tunekit::cpu
