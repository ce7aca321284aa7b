#include "backend/cpu/detail/cpu_backend.hpp"

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <string>

#include "backend/cpu/detail/machine.hpp"
#include "backend/detail/registry.hpp"
#include "builder/detail/compiler.hpp"
#include "core/detail/hash.hpp"
#include "evaluator/detail/worker_evaluator.hpp"

namespace tunekit::cpu {

namespace {

std::string this_processors_folder() {
  std::ifstream cpuinfo("/proc/cpuinfo");
  return processor_build_folder(cpuinfo);
}

class CpuBackend final : public Backend {
 public:
  explicit CpuBackend(BackendOptions options) : options_(std::move(options)), machine_(probe_machine()) {}
  std::string_view name() const override { return "cpu"; }
  const MachineInfo& machine() const override { return machine_; }
  std::unique_ptr<Builder> make_builder() override {
    return std::make_unique<CpuBuilder>(options_.builds("cpu") / this_processors_folder(), options_.rebuild);
  }
  std::unique_ptr<Evaluator> make_evaluator() override {
    // The worker evicts a kernel's own buffers line by line (worker.cpp).
    // Only a processor without an eviction instruction overwrites a buffer
    // instead: twice the last-level cache, bounded, since a VM may report an
    // L3 of hundreds of MiB that every sample would then pay for.
    const auto l3 = static_cast<std::uint64_t>(machine_.properties.at("l3_bytes").as_int());
    const std::uint64_t flush = std::clamp<std::uint64_t>(2 * l3, 8u << 20, 128u << 20);
    return std::make_unique<detail::WorkerEvaluator>(options_.work_dir / "cpu", std::vector<std::string>{"cpu"}, flush,
                                                     options_.rebuild);
  }
  // Compiling on the cores being measured would disturb the timings.
  bool measures_while_building() const override { return false; }
  std::vector<std::string> warnings() const override { return core_warnings(); }

 private:
  BackendOptions options_;
  MachineInfo machine_;
};

KernelTraits kernel_traits() {
  KernelTraits k;
  k.default_flags = {"-O3", "-march=native"};
  k.build_timeout = true;
  k.compiler_variable = [](std::string_view language) -> std::string { return language == "c" ? "CC" : "CXX"; };
  k.default_compiler = [variable = k.compiler_variable](std::string_view language) -> std::string {
    if (const char* env = std::getenv(variable(language).c_str()); env && *env) return env;
    return language == "c" ? "cc" : "c++";
  };
  // The kernel's identity in a store read on other machines (select, emit,
  // MPI ranks) is the compiler's release, not its install.
  k.toolchain_identity = [](std::string_view compiler, const std::vector<std::string>&, int) {
    return ::tunekit::detail::compiler_release(std::string(compiler));
  };
  return k;
}

}  // namespace

std::string processor_build_folder(std::istream& cpuinfo) {
  std::string model, flags;
  for (std::string line; std::getline(cpuinfo, line) && (model.empty() || flags.empty());) {
    if (model.empty() && (line.starts_with("model name") || line.starts_with("CPU part"))) model = line;
    if (flags.empty() && (line.starts_with("flags") || line.starts_with("Features"))) flags = line;
  }
  ::tunekit::detail::Hasher h;
  h.add(model).add(flags);
  return "isa-" + h.hex().substr(0, 12);
}

BackendInfo backend_info() {
  return {"cpu",
          {"c++", "cpp", "c"},
          "C and C++ kernels compiled by the host compiler into shared objects, run in a worker process",
          kernel_traits(),
          [](const BackendOptions& o) -> std::unique_ptr<Backend> { return std::make_unique<CpuBackend>(o); },
          [] {
            return DeviceListing{"cpu", {probe_machine()}, {}};
          },
          run_worker,
          {},  // builds run the host compiler, a process of its own already
          {},
          {{".c", "c"}, {".cpp", "c++"}, {".cc", "c++"}, {".cxx", "c++"}, {".C", "c++"}}};
}

}  // namespace tunekit::cpu
