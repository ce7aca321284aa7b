#include "core/detail/number_text.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <limits>
#include <string>

#include <fmt/format.h>

namespace tunekit::detail {

std::optional<std::int64_t> parse_int(std::string_view s) {
  if (s.empty()) return std::nullopt;
  bool negative = false;
  if (s[0] == '+' || s[0] == '-') {
    negative = s[0] == '-';
    s.remove_prefix(1);
  }
  if (s.empty() || !std::isdigit(static_cast<unsigned char>(s[0]))) return std::nullopt;
  std::uint64_t magnitude = 0;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), magnitude);
  if (ec != std::errc{} || ptr != s.data() + s.size()) return std::nullopt;
  constexpr auto max = static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max());
  if (!negative && magnitude > max) return std::nullopt;
  if (negative && magnitude > max + 1) return std::nullopt;
  if (negative)
    return magnitude == max + 1 ? std::numeric_limits<std::int64_t>::min() : -static_cast<std::int64_t>(magnitude);
  return static_cast<std::int64_t>(magnitude);
}

std::optional<double> parse_float(std::string_view s, bool* out_of_range) {
  if (s.empty()) return std::nullopt;
  if (s[0] == '+') s.remove_prefix(1);
  if (std::none_of(s.begin(), s.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); }))
    return std::nullopt;
  for (char c : s)  // only decimal notation: digits, sign, point, exponent
    if (!(std::isdigit(static_cast<unsigned char>(c)) || c == '.' || c == 'e' || c == 'E' || c == '+' || c == '-'))
      return std::nullopt;
  double d = 0;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), d, std::chars_format::general);
  if (ptr != s.data() + s.size()) return std::nullopt;
  if (ec == std::errc::result_out_of_range && out_of_range) *out_of_range = true;
  if (ec != std::errc{}) return std::nullopt;
  return d;
}

std::string float_range_text() {
  return fmt::format("a float's magnitude is at most {:.2g}, and above 0 at least {:.2g}",
                     std::numeric_limits<double>::max(), std::numeric_limits<double>::denorm_min());
}

std::optional<std::int64_t> parse_yaml_int(std::string_view s, bool* beyond_int64) {
  if (auto i = parse_int(s)) return i;
  const int base = s.starts_with("0x") ? 16 : s.starts_with("0o") ? 8 : 0;
  if (base == 0 || s.size() == 2) return std::nullopt;
  std::uint64_t magnitude = 0;
  const char* const end = s.data() + s.size();
  // Unsigned: from_chars takes no sign, as the schema's 0x and 0o forms have none.
  auto [ptr, ec] = std::from_chars(s.data() + 2, end, magnitude, base);
  if (ptr != end || (ec != std::errc{} && ec != std::errc::result_out_of_range)) return std::nullopt;
  if (ec == std::errc::result_out_of_range ||
      magnitude > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) {
    if (beyond_int64) *beyond_int64 = true;
    return std::nullopt;
  }
  return static_cast<std::int64_t>(magnitude);
}

std::optional<double> parse_yaml_float(std::string_view s, bool* out_of_range) {
  if (auto d = parse_float(s, out_of_range)) return d;
  if (s == ".nan" || s == ".NaN" || s == ".NAN") return std::numeric_limits<double>::quiet_NaN();
  const bool negative = s.starts_with('-');
  if (negative || s.starts_with('+')) s.remove_prefix(1);
  if (s == ".inf" || s == ".Inf" || s == ".INF")
    return negative ? -std::numeric_limits<double>::infinity() : std::numeric_limits<double>::infinity();
  return std::nullopt;
}

bool yaml_reads_as_non_string(std::string_view s) {
  bool beyond_int64 = false, out_of_range = false;
  if (parse_yaml_int(s, &beyond_int64) || beyond_int64 || parse_yaml_float(s, &out_of_range) || out_of_range)
    return true;
  for (const std::string_view word : {"true", "True", "TRUE", "false", "False", "FALSE", "null", "Null", "NULL", "~"})
    if (s == word) return true;
  return false;
}

}  // namespace tunekit::detail
