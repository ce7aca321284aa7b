#pragma once
// The parent <-> worker protocol of the CPU backend: one JSON object per
// line. Requests go to the worker's stdin, answers come back on its fd 3, so
// whatever a kernel prints cannot corrupt the stream.
#include <cmath>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tunekit/evaluator.hpp"

namespace tunekit::cpu {

// The exported symbol of the call shim the builder appends to every variant.
inline constexpr const char* kLaunchSymbol = "tunekit_launch";

inline nlohmann::json to_json(const ResolvedArgument& a) {
  nlohmann::json j{{"name", a.name}, {"type", std::string(to_string(a.type))}, {"role", std::string(to_string(a.role))},
                   {"count", a.count}, {"fill", std::string(to_string(a.fill))}, {"fill_value", a.fill_value}};
  if (a.role == Role::scalar) {
    if (a.scalar.is_int()) j["scalar"] = a.scalar.as_int();
    else j["scalar"] = a.scalar.to_double();
  }
  return j;
}

inline ResolvedArgument argument_from_json(const nlohmann::json& j) {
  ResolvedArgument a;
  a.name = j.at("name").get<std::string>();
  a.type = *element_type_from_string(j.at("type").get<std::string>());
  const auto role = j.at("role").get<std::string>();
  for (Role r : {Role::in, Role::out, Role::inout, Role::scalar})
    if (to_string(r) == role) a.role = r;
  const auto fill = j.at("fill").get<std::string>();
  for (Fill f : {Fill::random, Fill::constant, Fill::sequence, Fill::zeros})
    if (to_string(f) == fill) a.fill = f;
  a.count = j.at("count").get<std::uint64_t>();
  a.fill_value = j.at("fill_value").get<double>();
  if (j.contains("scalar")) {
    const auto& s = j["scalar"];
    a.scalar = s.is_number_integer() ? Value(s.get<std::int64_t>()) : Value(s.get<double>());
  }
  return a;
}

inline nlohmann::json to_json(const MeasureSettings& m) {
  return {{"warmup_us", m.warmup.count()},          {"min_samples", m.min_samples},
          {"max_samples", m.max_samples},          {"max_time_s", m.max_time.count()},
          {"target_noise", m.target_noise},        {"cold", m.cache == CacheMode::cold}};
}

inline MeasureSettings measure_from_json(const nlohmann::json& j) {
  MeasureSettings m;
  m.warmup = Microseconds(j.at("warmup_us").get<double>());
  m.min_samples = j.at("min_samples").get<std::size_t>();
  m.max_samples = j.at("max_samples").get<std::size_t>();
  m.max_time = Seconds(j.at("max_time_s").get<double>());
  m.target_noise = j.at("target_noise").get<double>();
  m.cache = j.at("cold").get<bool>() ? CacheMode::cold : CacheMode::hot;
  return m;
}

}  // namespace tunekit::cpu

namespace tunekit::cpu {
// JSON has no infinity: it travels as null.
inline nlohmann::json finite_or_null(double v) { return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(nullptr); }
inline double number_or_inf(const nlohmann::json& j) { return j.is_null() ? INFINITY : j.get<double>(); }
}  // namespace tunekit::cpu
