#pragma once
// Values, configs and bindings to and from JSON, keeping each value's type
// (an integral float stays a float) and a config's entry order. Shared by the
// store and the report writers.
#include <cmath>
#include <stdexcept>
#include <string>

#include <nlohmann/json.hpp>

#include "tunekit/space.hpp"
#include "tunekit/value.hpp"

namespace tunekit::detail {

using ojson = nlohmann::ordered_json;

inline ojson value_to_json(const Value& v) {
  if (v.is_int()) return ojson(v.as_int());
  if (v.is_float()) {
    double d = v.as_float();
    if (!std::isfinite(d)) return ojson(nullptr);  // JSON has no NaN/inf
    return ojson(d);
  }
  return ojson(v.as_string());
}

inline Value value_from_json(const ojson& j) {
  switch (j.type()) {
    case ojson::value_t::number_integer:
      return Value(j.get<std::int64_t>());
    case ojson::value_t::number_unsigned:
      return Value(static_cast<std::int64_t>(j.get<std::uint64_t>()));
    case ojson::value_t::number_float:
      return Value(j.get<double>());
    case ojson::value_t::string:
      return Value(j.get<std::string>());
    case ojson::value_t::boolean:
      return Value(std::int64_t{j.get<bool>() ? 1 : 0});
    case ojson::value_t::null:
      return Value(std::nan(""));
    default:
      throw std::runtime_error("unexpected JSON value " + j.dump() + " (expected a number or a string)");
  }
}

inline ojson config_to_json(const Config& c) {
  ojson out = ojson::object();
  for (const auto& [name, value] : c) out[name] = value_to_json(value);
  return out;
}

inline Config config_from_json(const ojson& j) {
  Config c;
  if (j.is_null()) return c;
  if (!j.is_object()) throw std::runtime_error("config is not a JSON object: " + j.dump());
  for (const auto& [name, value] : j.items()) c.set(name, value_from_json(value));
  return c;
}

inline ojson bindings_to_json(const Bindings& b) {
  ojson out = ojson::object();
  for (const auto& [name, value] : b) out[name] = value_to_json(value);
  return out;
}

inline Bindings bindings_from_json(const ojson& j) {
  Bindings b;
  if (j.is_null()) return b;
  if (!j.is_object()) throw std::runtime_error("size is not a JSON object: " + j.dump());
  for (const auto& [name, value] : j.items()) b.insert_or_assign(name, value_from_json(value));
  return b;
}

}  // namespace tunekit::detail
