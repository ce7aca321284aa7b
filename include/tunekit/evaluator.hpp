#pragma once
// Running a built variant in isolation, verifying it, and timing it.
#include <array>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "tunekit/builder.hpp"
#include "tunekit/measure.hpp"
#include "tunekit/spec.hpp"
#include "tunekit/status.hpp"
#include "tunekit/trial.hpp"

namespace tunekit {

// A tensor map's extents worked out for one config and size (checked by the
// CUDA worker, where a bad one becomes the trial's status).
struct ResolvedTensorMap {
  std::string of;                  // the buffer argument
  std::vector<std::int64_t> dims;  // innermost first, elements
  std::vector<std::int64_t> box;
  int swizzle = 0;  // bytes: 0, 32, 64, 128
  bool oob_nan = false;
  int l2_promotion = 128;  // bytes: 0, 64, 128, 256
  bool operator==(const ResolvedTensorMap&) const = default;
};

// An argument with its size and value worked out for one config and size.
struct ResolvedArgument {
  std::string name;
  ElementType type = ElementType::f32;
  Role role = Role::in;
  std::uint64_t count = 0;  // elements (buffers)
  Fill fill = Fill::random;
  double fill_value = 0;
  Value scalar;                                 // scalars
  std::optional<ResolvedTensorMap> tensor_map;  // role == tensor_map; `type` is its buffer's
  std::vector<std::int64_t> shape;              // Triton: the tensor's shape (count is its product); empty: flat
  std::string setup;                            // Triton: "path.py:fn" that gives its value
  bool passed = true;                           // false for an input the kernel does not take
  bool constant_memory = false;                 // CUDA: copied into the __constant__ symbol of its name
  // Its count reads a parameter: a device too full for it may be short for
  // this config alone (its own failure), not only held by another process.
  bool sized_by_config = false;
  // Fill::file: the file, where its data starts, and its size and time of
  // change (so that data edited in place is new data to the reference cache).
  std::string fill_file;
  std::uint64_t fill_offset = 0;
  std::string fill_stamp;
};

// Evaluates each argument's size and scalar value, and each tensor map's
// dims and box (their limits are checked by the CUDA worker, so that a config
// over them becomes a trial status). Throws InputError when an expression
// fails (unbound name, negative size ...) or a tensor map's `of` names no
// buffer argument.
// `config` names the parameters among env's names (sized_by_config).
std::vector<ResolvedArgument> resolve_arguments(const std::vector<ArgumentSpec>& args, const Bindings& env,
                                                const Config& config = {});

// A device launch worked out for one config and size.
struct LaunchGeometry {
  std::array<std::uint64_t, 3> grid{1, 1, 1};
  std::array<std::uint64_t, 3> block{1, 1, 1};
  std::uint64_t shared_memory = 0;                // dynamic, bytes
  std::array<std::uint64_t, 3> cluster{1, 1, 1};  // CUDA: blocks per thread-block cluster
  bool clustered() const { return cluster[0] * cluster[1] * cluster[2] > 1; }
};

// Throws InputError for an expression that fails or is not positive.
// Whether a cluster fits the grid and the device is the backend's to check.
LaunchGeometry resolve_launch(const LaunchSpec& launch, const Bindings& env);

// What produces the reference outputs: a build, its entry and its launch
// (the default config's, or a reference function's).
struct ReferenceRun {
  ReferenceRun() = default;
  // A build run like the trial itself: same entry, same launch.
  ReferenceRun(Artifact a) : artifact(std::move(a)) {}  // NOLINT(google-explicit-constructor)
  ReferenceRun(Artifact a, std::string e, LaunchGeometry l) : artifact(std::move(a)), entry(std::move(e)), launch(l) {}

  Artifact artifact;
  std::string entry;                     // empty: the trial's
  std::optional<LaunchGeometry> launch;  // none: the trial's
  // Tensor-map arguments resolved with the reference's own config (its box
  // may differ from the trial's): each replaces the trial's argument of the
  // same name in the reference run. Empty: the trial's arguments.
  std::vector<ResolvedArgument> tensor_maps;
};

struct TrialRequest {
  Artifact artifact;
  std::string entry;      // the resolved kernel name (device backends)
  LaunchGeometry launch;  // device backends
  std::vector<ResolvedArgument> arguments;
  std::optional<ReferenceRun> reference;  // none: outputs are not verified
  Tolerance tolerance;
  MeasureSettings measure;
  std::uint64_t seed = 1;  // input fill
  Bindings values;         // the trial's size, config and machine properties (command backend)
};

struct TrialResult {
  Status status = Status::ok;
  // Whose fault a failure is (Fault::none means the config's, when the
  // status is a failure): Fault::environment for a worker killed from
  // outside, a failed reference, a machine out of memory.
  Fault fault = Fault::none;
  // The run was asked to stop (stop.hpp) while this trial was in flight:
  // the trial says nothing and is not stored.
  bool interrupted = false;
  std::string error;
  std::vector<Microseconds> samples;
  Statistics stats;
  Verification verification;
  Seconds device_busy{0};  // time the device spent running this trial's kernels
  Seconds flush{0};        // time spent evicting the caches before samples (cold modes; never timed)
  Seconds verify{0};       // time spent comparing the outputs with the reference, on the host
  // The share of the worker's CPU time in this trial that its threads spent
  // waiting for a CPU while they could run (other processes held the
  // cores): well under 1% on a quiet machine, a third and more on a busy
  // one, whose times it inflates. 0 where it is not known.
  double cpu_wait_share = 0;
  // The signal from outside (SIGKILL, SIGTERM) that ended the trial's first
  // worker or program, after which it was measured on a fresh one; 0 where
  // nothing killed it. Reports count such trials: otherwise a kill that the
  // second attempt absorbed leaves no trace.
  int killed_from_outside_by = 0;
  // A simulating backend's (replay) recorded costs of the config: the
  // trial's build and evaluation times, instead of the tuner's clock, so
  // that a T4 file written from a replay is a recording in its turn.
  struct Recorded {
    Seconds compile{0};
    Seconds run{0};
  };
  std::optional<Recorded> recorded;
};

// The reference run failed (crashed, hung, produced NaN): nothing can be
// verified against it, and the tuner ends the size. Not the trial's fault;
// when the reference is the default config, that config's trial records it
// (`fault` says whether the run or its surroundings failed).
struct ReferenceError : std::runtime_error {
  ReferenceError(Status s, const std::string& what, Fault f = Fault::config)
      : std::runtime_error(what), status(s), fault(f) {}
  Status status;
  Fault fault;
};

class Evaluator {
 public:
  virtual ~Evaluator() = default;
  // Never throws for a misbehaving kernel: that becomes the result's status.
  // Throws ReferenceError when the request's reference cannot be computed.
  virtual TrialResult evaluate(const TrialRequest& request) = 0;
};

// Compares `got` with `expected` as numpy.allclose does (|g-e| <= atol +
// rtol*|e|); a NaN in `got` where `expected` has a number fails.
Verification compare_outputs(ElementType type, const void* got, const void* expected, std::uint64_t count,
                             const Tolerance& tol, std::string_view name);

}  // namespace tunekit
