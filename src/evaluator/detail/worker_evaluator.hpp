#pragma once
// The tuner side of a worker process: every backend evaluates through one,
// so a kernel that crashes or hangs takes down the worker, which is then
// replaced, and costs one trial.
#include <filesystem>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "core/detail/process.hpp"
#include "tunekit/evaluator.hpp"

namespace tunekit::detail {

class WorkerEvaluator final : public Evaluator {
 public:
  // `worker_args` follow the worker executable: the backend and device,
  // e.g. {"cuda", "0"}. `flush_bytes`: what a cold-cache flush overwrites (or reads).
  // `rebuild` (--fresh): reference outputs kept on disk by an earlier run
  // are computed again, once, since an edit the hashes cannot see (a header
  // included through a macro, another compiler) changes them as it changes
  // the kernels.
  WorkerEvaluator(std::filesystem::path work_dir, std::vector<std::string> worker_args, std::uint64_t flush_bytes,
                  bool rebuild = false);
  // A worker that is not tunekit-worker (the Triton backend's Python
  // worker): `command` is its whole argv.
  static std::unique_ptr<WorkerEvaluator> with_command(std::filesystem::path work_dir, std::vector<std::string> command,
                                                       std::uint64_t flush_bytes, bool rebuild = false);
  TrialResult evaluate(const TrialRequest& request) override;

 private:
  // Starts a worker when none runs and waits up to kStartLimit for its
  // ready line: a worker that cannot start is the environment's failure,
  // which it returns.
  std::optional<TrialResult> ensure_worker();
  static constexpr Seconds kStartLimit{120.0};
  // Computes (once, kept on disk) the reference outputs for `request`.
  std::filesystem::path prepare_reference(const TrialRequest& request);
  // Sends one request and waits up to `limit` for its answer; a worker that
  // dies, hangs or answers garbage becomes the result's status. `limit_is`
  // names the setting behind the limit, for the timeout's message.
  TrialResult exchange(const std::string& request, Seconds limit, std::string_view limit_is);

  std::filesystem::path work_dir_;
  std::filesystem::path log_;
  std::vector<std::string> worker_args_;
  std::uint64_t flush_bytes_;
  bool own_command_ = false;  // worker_args_ is the whole argv
  bool rebuild_ = false;
  std::set<std::filesystem::path> computed_;  // reference files this evaluator computed
  Child worker_;
  int killed_by_ = 0;  // the signal from outside that ended the last exchange's worker (0: none)
};

// Where the worker binary is: $TUNEKIT_WORKER, next to the running
// executable, the build tree, or the install prefix.
std::filesystem::path find_worker();
// The installed package's worker that a program built against it noted
// (tunekit/package_worker.hpp); empty in the tunekit command line itself.
const std::string& noted_package_worker();
// Whether this program runs from the build tree it was built in (the build
// tree's worker and the source tree's Python package are for it only).
bool runs_from_build_tree();

}  // namespace tunekit::detail
