#include <cmath>
#include <stdexcept>
#include <string>

#include "spec/detail/text.hpp"
#include "tunekit/measure.hpp"

namespace tunekit {

double parse_early_stop(std::string_view text) {
  const std::string original(text);
  const std::string_view s = spec_detail::trim(text);
  if (s == "off" || s == "false" || s == "False" || s == "FALSE" || s == "no") return 0;
  const auto value = spec_detail::parse_float(s);
  auto bad = [&](const std::string& why) {
    return std::invalid_argument("bad early stop '" + original + "': " + why +
                                 "; expected a factor > 1 (a config slower than that many times the best so far is "
                                 "cut short, e.g. 3) or off");
  };
  if (!value) throw bad("it is not a number");
  if (*value == 0) return 0;
  if (!std::isfinite(*value)) throw bad("it is not finite");
  // At 1 or below, a config as fast as the best, give or take its noise,
  // could be cut.
  if (*value <= 1) throw bad("it is not above 1");
  return *value;
}

}  // namespace tunekit
