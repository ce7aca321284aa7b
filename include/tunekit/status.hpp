#pragma once
// What became of one trial. A failing config is a value, never an exception.
#include <optional>
#include <string>
#include <string_view>

#include "tunekit/names.hpp"

namespace tunekit {

enum class Status {
  ok,  // built, ran, verified, measured
  // Built, ran, verified, and cut short by the early stop: its first samples
  // were all slower than measure.early_stop x the best median so far at its
  // size. Its statistics are partial (a few samples), never a full
  // measurement, so nothing chooses it; a strategy still learns its cost.
  slower,
  invalid,         // violates a constraint (only explicit config lists get here)
  compile_error,   // the variant did not build
  resource_limit,  // built, but uses more than the device allows
  launch_error,    // the runtime refused to run it
  crash,           // the worker died (signal, abort, sticky device error)
  timeout,         // exceeded the per-config time limit; worker killed
  wrong_result,    // ran, but outputs differ from the reference
};

// Whose fault a failure is. A config's fault is a property of the config
// under the settings it ran with (a resume may reuse it while they hold); an
// environment's fault (the disk filled, the worker was killed from outside,
// the reference failed, the harness misbehaved) says nothing about the
// config, so a resume always measures it again.
enum class Fault {
  none,         // the trial is ok
  config,       // the config failed on its own
  environment,  // something outside the config failed
};

NameTable<Status> status_names();
std::string_view to_string(Status s);
std::optional<Status> status_from_string(std::string_view s);

NameTable<Fault> fault_names();
std::string_view to_string(Fault f);
std::optional<Fault> fault_from_string(std::string_view s);

}  // namespace tunekit
