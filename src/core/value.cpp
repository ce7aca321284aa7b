#include "tunekit/value.hpp"

#include <cmath>
#include <cstdint>
#include <stdexcept>

#include <fmt/format.h>

#include "core/detail/numbers.hpp"

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
    // The shortest round-trip form, which is Python's repr but for the
    // ".0" of a large integral float (9007199254740992.0): without it the
    // text is an int (in a -D macro, say).
    std::string out = fmt::format("{}", d);
    if (std::isfinite(d) && out.find_first_of(".e") == std::string::npos) out += ".0";
    return out;
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

namespace {

// -1, 0, 1, or 2 for a NaN, of two numbers.
int compare_numbers(const Value& a, const Value& b) {
  if (a.is_int() && b.is_int()) return a.as_int() < b.as_int() ? -1 : a.as_int() > b.as_int() ? 1 : 0;
  if (a.is_int()) return detail::compare_int_double(a.as_int(), b.as_float());
  if (b.is_int()) {
    const int c = detail::compare_int_double(b.as_int(), a.as_float());
    return c == 2 ? 2 : -c;
  }
  const double x = a.as_float(), y = b.as_float();
  return x < y ? -1 : x > y ? 1 : x == y ? 0 : 2;
}

}  // namespace

// Python equality: 1 == 1.0, strings never equal numbers.
bool operator==(const Value& a, const Value& b) {
  if (a.is_string() || b.is_string()) return a.is_string() && b.is_string() && a.as_string() == b.as_string();
  return compare_numbers(a, b) == 0;
}

// A total order for containers: numbers (by value) before strings.
bool operator<(const Value& a, const Value& b) {
  if (a.is_string() != b.is_string()) return !a.is_string();
  if (a.is_string()) return a.as_string() < b.as_string();
  return compare_numbers(a, b) == -1;
}

}  // namespace tunekit
