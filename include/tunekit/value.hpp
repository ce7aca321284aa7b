#pragma once
// A parameter or expression value: Python's int, float or str, as the T1
// constraint language sees them. Booleans are ints (Python's True == 1).
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <variant>

namespace tunekit {

class Value {
 public:
  Value() : v_(std::int64_t{0}) {}
  Value(std::int64_t i) : v_(i) {}              // NOLINT(google-explicit-constructor)
  Value(int i) : v_(std::int64_t{i}) {}         // NOLINT(google-explicit-constructor)
  Value(double d) : v_(d) {}                    // NOLINT(google-explicit-constructor)
  Value(std::string s) : v_(std::move(s)) {}    // NOLINT(google-explicit-constructor)
  Value(const char* s) : v_(std::string(s)) {}  // NOLINT(google-explicit-constructor)

  bool is_int() const { return std::holds_alternative<std::int64_t>(v_); }
  bool is_float() const { return std::holds_alternative<double>(v_); }
  bool is_number() const { return !is_string(); }
  bool is_string() const { return std::holds_alternative<std::string>(v_); }

  std::int64_t as_int() const { return std::get<std::int64_t>(v_); }
  double as_float() const { return std::get<double>(v_); }
  const std::string& as_string() const { return std::get<std::string>(v_); }
  // Numeric value as a double (ints converted); throws for strings.
  double to_double() const;
  // Python truthiness.
  bool truthy() const;

  // How the value is written into C/C++ source and into reports: ints in
  // decimal, floats with round-trip precision, strings verbatim.
  std::string str() const;
  // Python repr: strings quoted. Used for canonical config keys.
  std::string repr() const;

  friend bool operator==(const Value& a, const Value& b);
  friend bool operator<(const Value& a, const Value& b);

  const std::variant<std::int64_t, double, std::string>& raw() const { return v_; }

 private:
  std::variant<std::int64_t, double, std::string> v_;
};

// Names bound to values: problem sizes, machine properties, a config.
using Bindings = std::map<std::string, Value, std::less<>>;

}  // namespace tunekit
