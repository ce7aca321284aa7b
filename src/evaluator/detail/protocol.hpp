#pragma once
// The tuner <-> worker protocol, the same for every backend: one JSON object
// per line. Requests go to the worker's stdin, answers come back on its fd 3,
// so whatever a kernel prints cannot corrupt the stream.
#include <cmath>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include <nlohmann/json.hpp>

#include "tunekit/evaluator.hpp"

namespace tunekit::detail {

struct WorkerRequest {
  enum class Op { reference, trial } op = Op::trial;
  Artifact artifact;
  std::string entry;
  LaunchGeometry launch;
  std::vector<ResolvedArgument> arguments;
  // reference: where to save the outputs; trial: the outputs to verify
  // against (empty: no verification).
  std::string reference_file;
  Tolerance tolerance;
  MeasureSettings measure;
  std::uint64_t seed = 1;
  std::uint64_t flush_bytes = 0;  // cold cache: how much to overwrite (cold-read: to read)
};

struct WorkerAnswer {
  TrialResult result;
  // The worker's state is suspect (a sticky device error): the tuner
  // replaces the worker before the next request.
  bool restart = false;
};

nlohmann::json to_json(const ResolvedArgument& a);
ResolvedArgument argument_from_json(const nlohmann::json& j);

nlohmann::json to_json(const WorkerRequest& r);
WorkerRequest request_from_json(const nlohmann::json& j);

nlohmann::json to_json(const WorkerAnswer& a);
WorkerAnswer answer_from_json(const nlohmann::json& j);

// One line from the reply channel: the answer, or why it is not one (no
// token, not JSON, a field of the wrong type). Never throws.
std::variant<WorkerAnswer, std::string> parse_answer(std::string_view line, std::string_view token);

// A worker's first line, once it has started (a Python worker: after its
// imports), before any request: {"ready": true}, with the token. The tuner
// waits for it apart from any trial, so a slow start is never a config's
// timeout.
std::string ready_line(std::string_view token);
// Why `line` is not the ready line; nullopt when it is. Never throws.
std::optional<std::string> not_ready(std::string_view line, std::string_view token);

}  // namespace tunekit::detail
