// The T4 results file (the auto-tuning community's results schema 1.0.0, as
// Kernel Tuner's store_output_file writes it), so that tools built on it
// (the benchmark hub, autotuning_methodology, Kernel Tuner's own reader)
// take a tunekit run as they take Kernel Tuner's.
#include <algorithm>

#include <nlohmann/json.hpp>

#include "store/detail/json_value.hpp"
#include "tunekit/report.hpp"

namespace tunekit {

namespace {

using ojson = nlohmann::ordered_json;

double ms(Seconds s) { return s.count() * 1e3; }
double ms(Microseconds us) { return us.count() / 1e3; }

// T4's invalidity names; a cut-short trial ran correctly.
const char* invalidity(Status s) {
  switch (s) {
    case Status::ok:
    case Status::slower:
      return "correct";
    case Status::invalid:
      return "constraints";
    case Status::compile_error:
      return "compile";
    case Status::timeout:
      return "timeout";
    case Status::wrong_result:
      return "correctness";
    case Status::resource_limit:
    case Status::launch_error:
    case Status::crash:
      return "runtime";
  }
  return "runtime";
}

ojson result_json(const TrialRecord& t, const TuneReport& report) {
  ojson r = ojson::object();
  r["timestamp"] = t.created_at;
  r["configuration"] = detail::config_to_json(t.config);
  ojson times = ojson::object();
  // The trial's evaluation without the comparison with the reference, and
  // that comparison: together the evaluation, as Kernel Tuner's
  // benchmark_time and verification_time are.
  times["compilation"] = ms(t.build_time);
  times["benchmark"] = ms(std::max(t.eval_time - t.verify_time, Seconds{0}));
  times["validation"] = ms(t.verify_time);
  ojson runtimes = ojson::array();
  for (auto s : t.samples) runtimes.push_back(ms(s));
  times["runtimes"] = std::move(runtimes);
  r["times"] = std::move(times);
  r["invalidity"] = invalidity(t.status);
  r["correctness"] = t.status == Status::wrong_result ? 0 : 1;
  ojson measurements = ojson::array();
  // A cut-short trial's time is the median of its few samples: a real time,
  // and a bad one; tunekit_status says it is partial.
  if (t.status == Status::ok || t.status == Status::slower) {
    measurements.push_back({{"name", "time"}, {"value", ms(t.stats.median)}, {"unit", "ms"}});
    TrialRecord as_timed = t;
    as_timed.status = Status::ok;
    for (const auto& [name, value] : metric_values(report.metrics, as_timed))
      if (value) measurements.push_back({{"name", name}, {"value", *value}, {"unit", ""}});
  }
  r["measurements"] = std::move(measurements);
  r["objectives"] = ojson::array({report.objective.name});
  // Beyond the schema (which allows more properties): the problem size,
  // which a T4 file has no place for and a tune of several sizes needs, and
  // tunekit's own status.
  ojson size = ojson::object();
  for (const auto& [name, value] : t.size) size[name] = detail::value_to_json(value);
  r["problem_size"] = std::move(size);
  r["tunekit_status"] = std::string(to_string(t.status));
  return r;
}

// The machine of the tune's trials (one device's), as the store keeps it.
std::string machine_of(const TuneReport& report) {
  for (const auto& size : report.sizes)
    for (const auto& t : size.trials)
      if (!t.machine.empty()) return t.machine;
  return "";
}

}  // namespace

std::string format_t4(const TuneReport& report) {
  ojson results = ojson::array();
  for (const auto& size : report.sizes)
    for (const auto& t : size.trials)
      // A failure that was not the config's says nothing about it; CCCL's
      // base variant is no config of the space a replay of the file searches.
      if (t.fault != Fault::environment && !is_base_trial(t)) results.push_back(result_json(t, report));
  ojson doc = ojson::object();
  doc["schema_version"] = "1.0.0";
  doc["results"] = std::move(results);
  // The machine the spec's constraints read, as a store keeps it, so that a
  // replay of the file needs no --properties (T4 keeps hardware in a
  // separate metadata file, in another form).
  if (auto machine = ojson::parse(machine_of(report), nullptr, false); machine.is_object())
    doc["tunekit_machine"] = std::move(machine);
  return doc.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";  // errors may be any bytes
}

}  // namespace tunekit
