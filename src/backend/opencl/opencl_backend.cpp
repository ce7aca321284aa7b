#include "backend/opencl/detail/traits.hpp"
#include "backend/opencl/detail/opencl.hpp"
#include "evaluator/detail/worker_evaluator.hpp"

namespace tunekit::opencl {

namespace {

class OpenClBackend final : public Backend {
 public:
  explicit OpenClBackend(BackendOptions options)
      : options_(std::move(options)),
        ctx_(std::make_shared<DeviceContext>(find_device(options_.device))),
        machine_(describe(*ctx_)) {}

  std::string_view name() const override { return "opencl"; }
  const MachineInfo& machine() const override { return machine_; }

  std::unique_ptr<Builder> make_builder() override {
    return std::make_unique<OpenClBuilder>(ctx_, options_.device, options_.builds("opencl"),
                                           options_.rebuild);
  }

  std::unique_ptr<Evaluator> make_evaluator() override {
    // Twice the device's cache, and at least 8 MiB, evicts what a kernel used.
    const auto l2 = static_cast<std::uint64_t>(machine_.properties.at("l2_bytes").as_int());
    return std::make_unique<detail::WorkerEvaluator>(
        options_.work_dir / "opencl", std::vector<std::string>{"opencl", std::to_string(options_.device)},
        std::max<std::uint64_t>(2 * l2, 8u << 20), options_.rebuild);
  }

  // A CPU device (PoCL) runs kernels on the cores a build would use; a GPU
  // measures while the host compiles the next batch.
  bool measures_while_building() const override { return !is_cpu(ctx_->ref()); }

 private:
  BackendOptions options_;
  std::shared_ptr<DeviceContext> ctx_;
  MachineInfo machine_;
};

DeviceListing list_opencl_devices() {
  DeviceListing listing{"opencl", {}, {}};
  std::vector<DeviceRef> devices;
  try {
    devices = enumerate_devices(listing.unavailable);
    for (auto& d : devices) listing.devices.push_back(describe(DeviceContext(d)));
  } catch (const std::exception& e) {
    listing.unavailable = e.what();
  }
  if (listing.devices.empty() && listing.unavailable.empty()) listing.unavailable = "no OpenCL device";
  return listing;
}

}  // namespace

BackendInfo backend_info() {
  BackendInfo b = describe_backend();
  b.make = [](const BackendOptions& o) -> std::unique_ptr<Backend> { return std::make_unique<OpenClBackend>(o); };
  b.list_devices = list_opencl_devices;
  b.run_worker = run_worker;
  b.run_build = run_build;
  b.kernel.toolchain_identity = [](std::string_view, const std::vector<std::string>&, int device) {
    return toolchain_identity(device);
  };
  b.kernel.toolchain_per_device = true;
  return b;
}

}  // namespace tunekit::opencl
