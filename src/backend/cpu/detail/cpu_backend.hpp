#pragma once
#include <filesystem>
#include <memory>
#include <mutex>
#include <set>

#include "core/detail/process.hpp"
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
  bool rebuild_;
  std::mutex mutex_;
  std::set<std::string> built_;  // with rebuild: hashes already rebuilt in this run
};

// The generated `tunekit_launch(void**)` that calls the entry with typed
// arguments.
std::string call_shim(const BuildInput& input);

// Runs trials in a `tunekit-worker` process, restarted after a crash or a
// timeout, so a bad variant costs one trial.
class CpuEvaluator final : public Evaluator {
 public:
  CpuEvaluator(std::filesystem::path work_dir, std::uint64_t flush_bytes);
  TrialResult evaluate(const TrialRequest& request) override;

 private:
  void ensure_worker();
  // Computes (once, cached on disk) the reference outputs for `request`.
  std::filesystem::path prepare_reference(const TrialRequest& request);
  std::string log_since(std::uintmax_t offset) const;

  std::filesystem::path work_dir_;
  std::filesystem::path log_;
  std::uint64_t flush_bytes_;
  detail::Child worker_;
};

// Where the worker binary is: $TUNEKIT_WORKER, next to the running
// executable, the build tree, or the install prefix.
std::filesystem::path find_worker();

}  // namespace tunekit::cpu
