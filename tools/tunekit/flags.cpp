#include "flags.hpp"

#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <stdexcept>

#include <fmt/format.h>

#include "tunekit/error.hpp"
#include "tunekit/measure.hpp"

namespace tunekit::cli {

// A duration flag: bad text is bad input (exit 1) at the flag.
Seconds duration_flag(const std::string& flag, const std::string& text, bool positive) {
  Seconds d;
  try {
    d = parse_duration(text);
  } catch (const std::invalid_argument& e) {
    throw InputError({flag}, e.what());
  }
  if (positive && d.count() <= 0)
    throw InputError({flag}, "'" + text + "' is not a positive duration; give a limit such as 10s or 5m");
  return d;
}

CLI::Validator at_least(std::uint64_t min) {
  return CLI::Validator(
      [min](std::string& v) -> std::string {
        std::uint64_t x = 0;
        const auto r = std::from_chars(v.data(), v.data() + v.size(), x);
        if (r.ec == std::errc() && r.ptr == v.data() + v.size() && x >= min) return {};
        return fmt::format("expected a whole number >= {}, not '{}'", min, v);
      },
      "");
}

// CLI11 2.1 reads "-1" into an unsigned flag as 2^64 - 1, clamps a whole
// number too large for its type, and says only "Could not convert" for
// "abc": every number flag of every subcommand gets this check instead,
// which runs before the conversion and says what was expected.
void check_numbers(CLI::App& app) {
  for (CLI::App* sub : app.get_subcommands({}))
    for (CLI::Option* o : sub->get_options()) {
      const std::string type = o->get_type_name();
      if (type == "INT" || type == "UINT") {
        const bool non_negative = type == "UINT";
        o->check([non_negative](const std::string& v) -> std::string {
          const char* end = v.data() + v.size();
          std::int64_t i = 0;
          std::uint64_t u = 0;
          const auto r = non_negative ? std::from_chars(v.data(), end, u) : std::from_chars(v.data(), end, i);
          if (r.ec == std::errc() && r.ptr == end) return {};
          const char* what = non_negative ? "a whole number >= 0" : "a whole number";
          if (r.ec == std::errc::result_out_of_range) return fmt::format("'{}' is too large; expected {}", v, what);
          return fmt::format("expected {}, not '{}'", what, v);
        });
      } else if (type == "FLOAT") {
        o->check([](const std::string& v) -> std::string {
          char* end = nullptr;
          const double x = std::strtod(v.c_str(), &end);
          if (!v.empty() && end == v.c_str() + v.size() && std::isfinite(x)) return {};
          return fmt::format("expected a finite number, not '{}'", v);
        });
      }
    }
}

}  // namespace tunekit::cli
