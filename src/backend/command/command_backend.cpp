#include "backend/command/detail/command_backend.hpp"
#include "backend/cpu/detail/machine.hpp"
#include "backend/detail/registry.hpp"
#include "core/detail/text.hpp"

namespace tunekit::command {

namespace {

// The host the program runs on: the CPU's properties, for constraints.
MachineInfo host_machine() {
  MachineInfo m = cpu::probe_machine();
  if (m.device.rfind("cpu: ", 0) == 0) m.device = "host: " + m.device.substr(5);
  return m;
}

class CommandBackend final : public Backend {
 public:
  explicit CommandBackend(BackendOptions options)
      : options_(std::move(options)),
        // Absolute: builds and runs happen in application.workdir.
        root_(std::filesystem::absolute(options_.work_dir / "command").lexically_normal()),
        machine_(host_machine()) {}
  std::string_view name() const override { return "command"; }
  const MachineInfo& machine() const override { return machine_; }
  std::unique_ptr<Builder> make_builder() override {
    return std::make_unique<CommandBuilder>(root_, application(), options_.rebuild);
  }
  std::unique_ptr<Evaluator> make_evaluator() override { return std::make_unique<CommandEvaluator>(application()); }
  // The build and the program share the host's cores.
  bool measures_while_building() const override { return false; }
  std::vector<std::string> warnings() const override { return cpu::core_warnings(); }

  // A placeholder of the run command that names nothing is found before a
  // variant is built, not by every trial after its build (the sizes are
  // known only now: --size may add some).
  void check_sizes(const std::vector<SizeToServe>& sizes) const override {
    if (!options_.application) return;
    for (const SizeToServe& s : sizes) {
      Bindings values = machine_.properties;
      for (const auto& [k, v] : s.size) values[k] = v;
      s.for_each_config([&](const Config& c) {
        for (const auto& [k, v] : c) values[k] = v;
        return false;  // one config names every parameter
      });
      for (const std::string_view name : kVariantPlaceholders) values[std::string(name)] = Value(std::string());
      std::vector<std::string> known;
      for (const auto& [k, v] : values) known.push_back(k);
      for (const std::string& arg : options_.application->run)
        for (const std::string& name : placeholder_names(arg))
          if (!values.count(name)) {
            std::string msg = "placeholder {" + name +
                              "} in application.run names no parameter, size, machine property or variant path";
            if (auto near = detail::closest_match(name, known)) msg += "; did you mean {" + *near + "}?";
            throw InputError(options_.application->run_where, msg + " (known here: " + detail::join(known) + ")");
          }
    }
  }

  std::vector<std::string> command_line(const BuildInput& input, const Bindings& values) const override {
    if (!options_.application) return {};
    const Variant v = variant_of(root_, *options_.application, input);
    return expand_argv(options_.application->run, placeholder_values(v, values));
  }

 private:
  // Only building and running need it: the machine's properties (for
  // `tunekit space`) do not.
  const ApplicationSpec& application() const {
    if (!options_.application)
      throw InputError({},
                       "a command kernel (kernel.language: command) needs an 'application' section with its "
                       "'run' command");
    return *options_.application;
  }

  BackendOptions options_;
  std::filesystem::path root_;
  MachineInfo machine_;
};

}  // namespace

BackendInfo backend_info() {
  KernelTraits k;
  k.entry = false;  // the program is run whole
  k.application = true;
  k.defines = false;
  BackendInfo b{"command",
                {"command"},
                "a whole application built by the user's build command and timed by running it (msKPP autotune_v2)",
                k,
                [](const BackendOptions& o) -> std::unique_ptr<Backend> { return std::make_unique<CommandBackend>(o); },
                [] {
                  return DeviceListing{"command", {host_machine()}, {}};
                },
                {},  // programs run as child processes of the tuner, each one isolated already
                {},  // and so do the user's build commands
                {},
                {}};  // no source is a bare kernel: the spec names the application's files
  return b;
}

}  // namespace tunekit::command
