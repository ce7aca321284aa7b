#include "tunekit/value.hpp"

#include <cmath>
#include <stdexcept>

#include <fmt/format.h>

namespace tunekit {

double Value::to_double() const {
  if (is_int()) return static_cast<double>(as_int());
  if (is_float()) return as_float();
  throw std::invalid_argument("string value '" + as_string() + "' used as a number");
}

bool Value::truthy() const {
  if (is_int()) return as_int() != 0;
  if (is_float()) return as_float() != 0.0;
  return !as_string().empty();
}

std::string Value::str() const {
  if (is_int()) return std::to_string(as_int());
  if (is_float()) {
    double d = as_float();
    if (std::isfinite(d) && d == std::floor(d) && std::fabs(d) < 1e15) return fmt::format("{:.1f}", d);
    return fmt::format("{}", d);  // shortest round-trip form
  }
  return as_string();
}

std::string Value::repr() const {
  if (!is_string()) return str();
  std::string out = "'";
  for (char c : as_string()) {
    if (c == '\'' || c == '\\') out += '\\';
    out += c;
  }
  return out + "'";
}

// Python equality: 1 == 1.0, strings never equal numbers.
bool operator==(const Value& a, const Value& b) {
  if (a.is_string() || b.is_string()) return a.is_string() && b.is_string() && a.as_string() == b.as_string();
  if (a.is_int() && b.is_int()) return a.as_int() == b.as_int();
  return a.to_double() == b.to_double();
}

// A total order for containers: numbers (by value) before strings.
bool operator<(const Value& a, const Value& b) {
  if (a.is_string() != b.is_string()) return !a.is_string();
  if (a.is_string()) return a.as_string() < b.as_string();
  if (a.is_int() && b.is_int()) return a.as_int() < b.as_int();
  return a.to_double() < b.to_double();
}

}  // namespace tunekit
