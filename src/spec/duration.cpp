#include <cctype>
#include <cmath>
#include <stdexcept>
#include <string>

#include "spec/detail/text.hpp"
#include "tunekit/measure.hpp"

namespace tunekit {

Seconds parse_duration(std::string_view text) {
  const std::string original(text);
  auto bad = [&](const std::string& why) -> std::invalid_argument {
    return std::invalid_argument("bad duration '" + original + "': " + why +
                                 "; expected a number of seconds or a number with a unit (ns, us, ms, s, m, h), "
                                 "e.g. 50ms or 2s");
  };
  std::string_view s = spec_detail::trim(text);
  if (s.empty()) throw bad("it is empty");
  // Split at the first character that cannot belong to a decimal number.
  std::size_t i = 0;
  auto numeric = [&](std::size_t k) {
    char c = s[k];
    if (std::isdigit(static_cast<unsigned char>(c)) || c == '.' || c == '+' || c == '-') return true;
    // An exponent 'e' only when a digit or sign follows (so "1e3" is a number).
    if ((c == 'e' || c == 'E') && k > 0 && k + 1 < s.size()) {
      char n = s[k + 1];
      return std::isdigit(static_cast<unsigned char>(n)) || n == '+' || n == '-';
    }
    return false;
  };
  while (i < s.size() && numeric(i)) ++i;
  std::string_view number = s.substr(0, i);
  std::string_view unit = spec_detail::trim(s.substr(i));
  auto value = spec_detail::parse_float(number);
  if (!value)
    throw bad(number.empty() ? "it does not start with a number" : "'" + std::string(number) + "' is not a number");
  if (!std::isfinite(*value)) throw bad("it is not finite");
  if (*value < 0) throw bad("it is negative");
  double scale = 0;
  if (unit.empty() || unit == "s" || unit == "sec" || unit == "secs" || unit == "second" || unit == "seconds")
    scale = 1;
  else if (unit == "ms") scale = 1e-3;
  else if (unit == "us" || unit == "\xC2\xB5s" || unit == "\xCE\xBCs") scale = 1e-6;
  else if (unit == "ns") scale = 1e-9;
  else if (unit == "m" || unit == "min" || unit == "mins" || unit == "minute" || unit == "minutes") scale = 60;
  else if (unit == "h" || unit == "hour" || unit == "hours") scale = 3600;
  else throw bad("unknown unit '" + std::string(unit) + "'");
  return Seconds(*value * scale);
}

}  // namespace tunekit
