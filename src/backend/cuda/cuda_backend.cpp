// The CUDA backend's entry points: the device (properties for constraints),
// the NVRTC/nvcc builder, and an evaluator talking to one worker process per
// GPU. Everything CUDA is loaded at run time, so this file builds anywhere.
#include <fmt/format.h>

#include "backend/cuda/detail/cuda_backend.hpp"
#include "backend/cuda/detail/driver.hpp"
#include "backend/cuda/detail/traits.hpp"
#include "evaluator/detail/worker_evaluator.hpp"

namespace tunekit::cuda {

namespace {

class CudaBackend final : public Backend {
 public:
  CudaBackend(BackendOptions options, DeviceLimits limits)
      : options_(std::move(options)), limits_(std::move(limits)), machine_(machine_info(limits_)) {}
  std::string_view name() const override { return "cuda"; }
  const MachineInfo& machine() const override { return machine_; }
  std::unique_ptr<Builder> make_builder() override {
    return std::make_unique<CudaBuilder>(options_.builds("cuda"), options_.rebuild,
                                         default_arch(limits_.cc_major, limits_.cc_minor));
  }
  std::unique_ptr<Evaluator> make_evaluator() override {
    return std::make_unique<tunekit::detail::WorkerEvaluator>(
        options_.work_dir / "cuda" / fmt::format("device{}", options_.device),
        std::vector<std::string>{"cuda", std::to_string(options_.device)}, flush_bytes_for(limits_), options_.rebuild);
  }
  // Compiling runs on the host cores while the GPU measures.
  bool measures_while_building() const override { return true; }

 private:
  BackendOptions options_;
  DeviceLimits limits_;
  MachineInfo machine_;
};

std::unique_ptr<Backend> make_cuda_backend(const BackendOptions& options) {
  const Driver* d = driver();
  if (!d) throw std::runtime_error("the cuda backend needs a GPU: " + driver_unavailable_reason());
  return std::make_unique<CudaBackend>(options, query_device(*d, options.device));
}

DeviceListing list_cuda_devices() {
  DeviceListing l{"cuda", {}, {}};
  const Driver* d = driver();
  if (!d) {
    l.unavailable = driver_unavailable_reason();
    return l;
  }
  int count = 0;
  if (CUresult r = d->cuDeviceGetCount(&count); r != CUDA_SUCCESS) {
    l.unavailable = "cuDeviceGetCount: " + describe(r);
    return l;
  }
  for (int i = 0; i < count; ++i) {
    try {
      l.devices.push_back(machine_info(query_device(*d, i)));
    } catch (const std::exception& e) {
      l.unavailable = e.what();
    }
  }
  if (l.devices.empty() && l.unavailable.empty()) l.unavailable = "the driver found no CUDA device";
  return l;
}

}  // namespace

BackendInfo backend_info() {
  BackendInfo b = describe_backend();
  b.make = make_cuda_backend;
  b.list_devices = list_cuda_devices;
  b.run_worker = run_worker;
  b.kernel.toolchain_identity = [](std::string_view compiler, const std::vector<std::string>& flags, int) {
    return toolchain_identity(compiler, flags);
  };
  return b;
}

}  // namespace tunekit::cuda
