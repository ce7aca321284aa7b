#pragma once
// Numbers read from text as a spec reads them: one reader for the spec's
// YAML and JSON, the command line's NAME=VALUE flags, and the console's
// printing of a string that would read as a number.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace tunekit::detail {

// Whole-string integer / float parses ("+5", "-3", "1e-3", ".5"). A float
// must contain a digit (so "inf" / "nan" stay strings). `out_of_range` is
// set for a float written well but beyond a double (1e400, or 1e-400 too
// close to 0), which is no string either.
std::optional<std::int64_t> parse_int(std::string_view s);
std::optional<double> parse_float(std::string_view s, bool* out_of_range = nullptr);

// A plain (unquoted) YAML scalar's number as YAML 1.2's core schema reads
// it, which yaml-cpp leaves to its caller: an int is decimal, 0x hex or 0o
// octal (the two unsigned); a float is decimal or .inf, -.inf, .nan (in
// lower, capitalised or upper case). `beyond_int64` is set for a hex or
// octal int too large for an int64, which is no float either;
// `out_of_range` as parse_float() says.
std::optional<std::int64_t> parse_yaml_int(std::string_view s, bool* beyond_int64 = nullptr);
std::optional<double> parse_yaml_float(std::string_view s, bool* out_of_range = nullptr);

// What a double holds, for a message about a float beyond it: "a float's
// magnitude is at most 1.8e+308, and above 0 at least 4.9e-324".
std::string float_range_text();

// Whether `s`, written unquoted in a spec, would be read as something other
// than the string itself: a number (0x40, 1e3, .inf, a hex int too large),
// a bool (true, False) or a null (null, ~).
bool yaml_reads_as_non_string(std::string_view s);

}  // namespace tunekit::detail
