#pragma once
// What became of one trial. A failing config is a value, never an exception.
#include <optional>
#include <string>
#include <string_view>

#include "tunekit/names.hpp"

namespace tunekit {

enum class Status {
  ok,              // built, ran, verified, measured
  invalid,         // violates a constraint (only explicit config lists get here)
  compile_error,   // the variant did not build
  resource_limit,  // built, but uses more than the device allows
  launch_error,    // the runtime refused to run it
  crash,           // the worker died (signal, abort, sticky device error)
  timeout,         // exceeded the per-config time limit; worker killed
  wrong_result,    // ran, but outputs differ from the reference
};

NameTable<Status> status_names();
std::string_view to_string(Status s);
std::optional<Status> status_from_string(std::string_view s);

}  // namespace tunekit
