#pragma once
#include <filesystem>
#include <istream>
#include <string>
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

// The build cache's folder for a kind of processor, from its /proc/cpuinfo
// text ("isa-" and a hash of its model and instruction-set flags). Kernels
// build with -march=native by default, so one built on another processor
// (an output folder shared over the network) may use instructions this one
// lacks, and would crash as the config's own fault.
std::string processor_build_folder(std::istream& cpuinfo);

// The worker process's loop (worker.cpp).
int run_worker(int in_fd, int out_fd, int device);

}  // namespace tunekit::cpu
