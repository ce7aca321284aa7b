#pragma once
// A backend plugs a device kind into the tuner: it describes the machine
// (properties usable in constraints), builds variants, and evaluates them.
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tunekit/builder.hpp"
#include "tunekit/evaluator.hpp"

namespace tunekit {

struct MachineInfo {
  std::string device;     // e.g. "cpu: AMD EPYC (2 cores)"
  Bindings properties;    // l1d_bytes, l2_bytes, l3_bytes, cores, ...
};

// A machine as one JSON object, {"device": name, property: value, ...}: the
// form trials record, `tunekit devices --json` prints and `tunekit space
// --properties` reads. machine_from_json throws std::invalid_argument for
// anything else (a value that is neither a number nor a string, say).
std::string machine_to_json(const MachineInfo& m);
MachineInfo machine_from_json(std::string_view json);

struct BackendOptions {
  std::filesystem::path work_dir;  // build cache and scratch files
  bool rebuild = false;            // ignore cached builds (each is rebuilt once)
  int device = 0;                  // which device of the backend's kind
  std::optional<ApplicationSpec> application;  // the command backend: what to build and run
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
};

// The backend for a kernel language ("c++", "c" -> cpu, "cuda", "opencl",
// "command" -> the user's own build and run commands).
// Throws InputError for an unknown language, and std::runtime_error when
// the backend's runtime or device is missing here.
std::unique_ptr<Backend> make_backend(std::string_view language, const BackendOptions& options);

// What each backend finds on this machine.
struct DeviceListing {
  std::string backend;               // "cpu", "cuda", "opencl", "command"
  std::vector<MachineInfo> devices;  // empty when unavailable
  std::string unavailable;           // why, when there are none
};
std::vector<DeviceListing> list_devices();

}  // namespace tunekit
