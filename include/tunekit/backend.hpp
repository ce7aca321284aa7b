#pragma once
// A backend plugs a device kind into the tuner: it describes the machine
// (properties usable in constraints), builds variants, and evaluates them.
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "tunekit/builder.hpp"
#include "tunekit/machine.hpp"
#include "tunekit/evaluator.hpp"
#include "tunekit/registry.hpp"

namespace tunekit {

struct BackendOptions {
  std::filesystem::path work_dir;              // build cache and scratch files
  bool rebuild = false;                        // ignore cached builds (each is rebuilt once)
  int device = 0;                              // which device of the backend's kind
  std::optional<ApplicationSpec> application;  // the command backend: what to build and run
  // The spec being tuned, for backends whose builds read more of it than a
  // BuildInput holds (Triton: constexprs fixed by the size); outlives the backend.
  const Spec* spec = nullptr;
  unsigned jobs = 0;                    // build jobs (0: one per core)
  std::filesystem::path recording;      // the replay backend: the recorded results it serves
  std::string recording_kernel;         // the replay backend: the spec's name, to pick a store's kernel
  std::vector<std::string> parameters;  // the replay backend: the spec's parameters, checked against the recording
  // The build cache, where it is not under work_dir: the ranks of an MPI job
  // share the job's. Builds are content-addressed and put in place by a
  // rename, so tuners may share them; scratch files (worker logs, reference
  // outputs) stay each one's own.
  std::filesystem::path build_dir;
  // Where `backend` caches its builds (a backend whose builds are not shared
  // keeps them under work_dir).
  std::filesystem::path builds(std::string_view backend) const {
    return (build_dir.empty() ? work_dir : build_dir) / backend / "build";
  }
};

// A size a tune is about to run, and every config it may run there: the
// valid configs of its space, or of its list (a spec's `configs`).
struct SizeToServe {
  Bindings size;
  // Calls `visit` with each config, until it returns false.
  std::function<void(const std::function<bool(const Config&)>& visit)> for_each_config;
};

class Backend {
 public:
  virtual ~Backend() = default;
  virtual std::string_view name() const = 0;
  virtual const MachineInfo& machine() const = 0;
  virtual std::unique_ptr<Builder> make_builder() = 0;
  virtual std::unique_ptr<Evaluator> make_evaluator() = 0;
  // False when building would disturb measurement (both use host cores), so
  // the tuner builds a batch, then measures it.
  virtual bool measures_while_building() const = 0;
  // The command a trial of `input` runs with `values` (its size, config and
  // machine properties), as executed, for reports. Empty for backends that
  // call kernels inside a worker process.
  virtual std::vector<std::string> command_line(const BuildInput& /*input*/, const Bindings& /*values*/) const {
    return {};
  }
  // A backend that simulates its trials (replay) keeps its own clock: the
  // recorded compile and run time of the trials it served. The tuner's time
  // budget (search.max_time) counts it instead of the wall clock.
  virtual std::optional<Seconds> clock() const { return std::nullopt; }
  // What the user should know about what the backend serves, said once
  // (a replay's recording with times of 0 or below, which count as failed):
  // the tuner adds it to the report's warnings.
  virtual std::vector<std::string> warnings() const { return {}; }
  // Before the first size is tuned: throws InputError where the backend
  // cannot serve one of `sizes` (those with a valid config), so that a run
  // does not stop at it midway, after some of its trials, at a point that
  // depends on the seed (a replay's recording that lacks a size or a config).
  virtual void check_sizes(const std::vector<SizeToServe>& /*sizes*/) const {}
};

// What a backend's kernels take in a spec's `kernel` section: the spec
// loader checks each kernel against its backend's traits, so no backend is
// named in the loader.
struct KernelTraits {
  bool entry = true;         // names a function to call (`entry` required)
  bool launch = false;       // a device launch: `grid` (and `block` where `threads`) required
  bool threads = true;       // launch: threads per block come from `block` (Triton: from num_warps instead)
  bool shared_memory = false;  // dynamic shared memory per block (`shared_memory`; OpenCL: __local arrays instead)
  bool cluster = false;        // thread-block clusters (`cluster`)
  bool arch = false;           // a target architecture its compiler takes (`arch`, e.g. sm_90a)
  bool tensor_maps = false;  // TMA tensor-map arguments
  bool constant_memory = false;  // input buffers copied into a __constant__ symbol (`memory: constant`)
  bool application = false;  // built and run by the user's own commands (the spec's `application`)
  bool defines = true;       // its build takes -D defines (else `injection: none` says so)
  bool tensors = false;      // Python kernels (Triton): argument shapes, setup functions, constexprs, Python references
  bool spills = false;       // its builds report spilled registers: `max_spills` applies
  // Its load-time check refuses a parameter the kernel does not take (a
  // Triton parameter is a tl.constexpr of the entry or a launch option,
  // which no kernel file names): the tuner's warning about a parameter
  // nothing reads is not for it.
  bool parameters_checked = false;
  // Its builds run a compiler program that the backend stops after the
  // spec's kernel.build_timeout (the builder reads BuildInput::timeout).
  bool build_timeout = false;
  // kernel.build_timeout where the spec gives none (load_spec sets it;
  // Triton's compiles, slower than a C++ build, get 10 minutes). A limit
  // other than this is part of settings_key().
  Seconds default_build_timeout = kDefaultBuildTimeout;
  std::vector<std::string> compilers;      // the values `compiler` may take; empty: any command
  std::vector<std::string> default_flags;  // `flags` when the spec gives none
  // The compiler when the spec names none, for a kernel language.
  std::function<std::string(std::string_view language)> default_compiler;
  // The environment variable that default_compiler reads first for a
  // language ("CXX"), where it reads one. A compiler it names is part of the
  // kernel, as the spec's or --compiler's is: trials of another are not
  // resumed as this one's.
  std::function<std::string(std::string_view language)> compiler_variable;
  // What a `compiler` value builds with in the kernel's identity (spec_hash):
  // a release, not an install, as a store is read on other machines (the host
  // compiler by its --version and -dumpmachine; NVRTC, a library, by its
  // version; nvcc, $CUDA_HOME's first, by its release and that of the host
  // compiler its -ccbin in `flags` names; OpenCL by the platform and driver
  // of `device`, the backend's device the run uses, whose driver compiles).
  // Trials of another release are not resumed as this one's. Empty: the
  // file the name runs.
  std::function<std::string(std::string_view compiler, const std::vector<std::string>& flags, int device)>
      toolchain_identity;
  // toolchain_identity differs from one device to another (OpenCL's: each
  // device's driver compiles). select, emit and report then list the
  // backend's devices to find the toolchain of each device they read, as a
  // tune on device 1 stored its trials under device 1's; listing costs a
  // Python start for Triton, whose toolchain is every device's.
  bool toolchain_per_device = false;
};

// Why `name` cannot be the `compiler` of a kernel with these traits
// ("expected one of nvrtc, nvcc; did you mean 'nvrtc'?"); nullopt when it
// can (always, where `compilers` is empty: any command).
std::optional<std::string> compiler_problem(const KernelTraits& traits, std::string_view name);

struct DeviceListing;

// A backend as a plugin: the kernel languages it serves, what its kernels
// take in a spec, its factory, its devices, and its worker's loop.
struct BackendInfo {
  std::string name;                    // "cpu", "cuda", ...: `tunekit devices` and tunekit-worker's argument
  std::vector<std::string> languages;  // the `kernel.language` values it serves
  std::string summary;                 // one line, for `tunekit plugins` and the docs
  KernelTraits kernel;
  // Throws std::runtime_error when its runtime or device is missing here.
  std::function<std::unique_ptr<Backend>(const BackendOptions&)> make;
  std::function<DeviceListing()> list_devices;
  // The worker process's loop for `device` (requests on in_fd, answers on
  // out_fd); empty for a backend that runs no worker.
  std::function<int(int in_fd, int out_fd, int device)> run_worker;
  // One build in a process of its own, `tunekit-worker NAME DEVICE build
  // ARGS...`, for a backend whose compiler runs inside its driver: what the
  // compiler prints is that process's output, the build's log, not the
  // user's terminal, and a compiler that crashes costs one variant. Returns
  // the process's exit status; empty for a backend that builds otherwise.
  std::function<int(int device, const std::vector<std::string>& args)> run_build;
  // Checks only this backend can make, after the spec is loaded; throws
  // InputError located in the spec, and returns what it could not check,
  // as warnings (Spec::warnings). May be empty.
  std::function<std::vector<std::string>(const Spec&)> check_spec;
  // The file name endings of kernel sources in its languages, each with its
  // language ({".cu", "cuda"}): a bare source, tuned without a spec, is of
  // the language its name says.
  std::vector<std::pair<std::string, std::string>> source_endings;

  // A kernel language or a source ending it claims that `other` claims too
  // ("" when none): see Registry::add.
  std::string clash(const BackendInfo& other) const {
    for (const auto& l : languages)
      for (const auto& o : other.languages)
        if (l == o) return "serves kernel language '" + l + "'";
    for (const auto& [ending, language] : source_endings)
      for (const auto& o : other.source_endings)
        if (ending == o.first) return "claims sources ending in '" + ending + "'";
    return "";
  }
  // The required parts it lacks ("" when none): see Registry::add.
  std::string missing() const {
    if (!make) return "make (the function that makes it)";
    if (!list_devices) return "list_devices";
    return "";
  }
};

// The process-wide registry, with the built-in backends (a backend left out
// of the build is a stand-in whose make() says so).
Registry<BackendInfo>& backends();

// Every `kernel.language` some backend serves, in registration order.
std::vector<std::string> kernel_languages();

// The backend that serves `language`. Throws InputError at `where` for a
// language no backend serves.
const BackendInfo& backend_for_language(std::string_view language, const SourceLocation& where = {});

// The kernel language of a source file by its name's ending (a backend's
// source_endings); nullopt when no backend claims the ending.
std::optional<std::string> language_of_source(const std::filesystem::path& source);

// The backend for a kernel language ("c++", "c" -> cpu, "cuda", "opencl",
// "command" -> the user's own build and run commands).
// Throws InputError for an unknown language, and std::runtime_error when
// the backend's runtime or device is missing here.
std::unique_ptr<Backend> make_backend(std::string_view language, const BackendOptions& options);

// What each backend finds on this machine.
struct DeviceListing {
  std::string backend;               // a BackendInfo's name
  std::vector<MachineInfo> devices;  // empty when unavailable
  std::string unavailable;           // why, when there are none
};
std::vector<DeviceListing> list_devices();

}  // namespace tunekit
