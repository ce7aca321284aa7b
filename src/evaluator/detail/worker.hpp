#pragma once
// The worker side, shared by every backend: the request loop and the order
// of a trial (prepare arguments, run once and verify, then time). A backend
// supplies a KernelRunner that knows how to load, run and time its kernels.
#include <optional>
#include <string>
#include <string_view>

#include "evaluator/detail/host_arguments.hpp"
#include "evaluator/detail/protocol.hpp"

namespace tunekit::detail {

class KernelRunner {
 public:
  virtual ~KernelRunner() = default;
  // Loads the artifact and finds the entry. A failure is returned as a
  // result (launch_error, resource_limit, ...).
  virtual std::optional<TrialResult> load(const WorkerRequest& request) = 0;
  // Runs the kernel once, synchronously, reading and writing `args` (a
  // device backend copies them in, with its outputs poisoned as `args`'
  // are, and back). `inputs_changed` says the host inputs were regenerated
  // since the last call.
  virtual std::optional<TrialResult> run_once(const WorkerRequest& request, HostArguments& args,
                                              bool inputs_changed) = 0;
  // The call after the timed ones, which checks that the kernel's result
  // does not change from call to call: the kernel once more, as run_once,
  // into outputs poisoned again. A backend that can tell on its own side
  // that the outputs are bitwise those of the request's first, verified,
  // call says `same`, and they are not read back; otherwise they are in
  // `args`, to verify.
  struct Again {
    std::optional<TrialResult> failed;
    bool same = false;
  };
  virtual Again run_again(const WorkerRequest& request, HostArguments& args) {
    return {run_once(request, args, false), false};
  }
  // Times the kernel as request.measure says: samples and device_busy, or a
  // failure.
  virtual TrialResult time(const WorkerRequest& request, HostArguments& args) = 0;
  // The device's time in the calls outside time() since the last take (the
  // verified call, the call after the timed ones), which handle_request adds
  // to the trial they belong to; 0 where the backend does not time them.
  virtual Seconds take_busy() { return Seconds(0); }
  // True after an error that leaves the process unusable (a sticky CUDA
  // error): the tuner then replaces the worker.
  virtual bool poisoned() const { return false; }
  // True when the kernel reads and writes `args`' own memory (the CPU), so
  // an input it wrote into must be found and restored there; a device
  // backend copies the inputs in again instead.
  virtual bool kernel_writes_host_arguments() const { return false; }
};

// Why a backend other than CUDA cannot run `request`: a tensor-map argument
// or a thread-block cluster (Hopper features); nullopt when it has neither.
std::optional<std::string> cuda_only_feature(const WorkerRequest& request, std::string_view backend);

// A sampling's outcome in its trial's result, as every backend reports it:
// the samples, `slower` when the early stop cut them short, and the note of
// one that the trial's deadline stopped.
void take_sampling(TrialResult& result, Sampling sampled, const MeasureSettings& settings);

WorkerAnswer handle_request(KernelRunner& runner, HostArguments& args, const WorkerRequest& request);

// Serves requests from `in_fd` until EOF, answering on `out_fd`.
int serve(int in_fd, int out_fd, KernelRunner& runner);

}  // namespace tunekit::detail
