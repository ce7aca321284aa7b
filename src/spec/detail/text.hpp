#pragma once
// Small text helpers shared by the spec loader and the annotation parser.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/detail/number_text.hpp"
#include "core/detail/text.hpp"
#include "tunekit/error.hpp"
#include "tunekit/value.hpp"

namespace tunekit::spec_detail {

// Most values a single range (or pow2 set) may expand to; beyond it the spec
// is almost certainly wrong and expanding it would exhaust memory.
inline constexpr std::size_t kMaxRangeValues = std::size_t{1} << 24;

bool is_identifier(std::string_view s);

// Why a parameter may not have this name, or nullopt: a keyword of the
// expressions that name parameters (and, if, True) could not be named in
// one; and it becomes a macro (-D NAME=...), where a C or C++ keyword would
// replace the keyword, and a reserved name (starting with '__', or '_' and
// a capital letter) would redefine the compiler's own (__cplusplus,
// _GNU_SOURCE).
std::optional<std::string> reserved_name_problem(std::string_view name);

std::string_view trim(std::string_view s);

// A NAME=VALUE flag's value, read as a spec reads an unquoted one: an int,
// then a float, as YAML 1.2's core schema reads them (0x40 is 64, 1e3 a
// float), else the string itself. An infinity, a NaN or an int beyond 64
// bits is an error at `where` (the flag).
Value flag_value(std::string_view text, const SourceLocation& where);

struct IntRange {
  std::int64_t start = 0, end = 0, step = 1;
};

// An error message when the range start:end:step (inclusive; negative steps
// count down) has a zero step, is empty, or has too many values.
std::optional<std::string> check_range(const IntRange& r);
// Its values; `r` must have passed check_range.
void append_range(const IntRange& r, std::vector<Value>& out);

// "a:b[:s]" (inclusive; the step defaults to 1 unless `require_step`).
// Throws InputError at `where` shifted to the offending field.
IntRange parse_int_range(std::string_view text, const SourceLocation& where, bool require_step);

using detail::float_range_text;
using detail::parse_float;
using detail::parse_int;
using detail::parse_yaml_float;
using detail::parse_yaml_int;

using detail::closest_match;
using detail::edit_distance;
using detail::join;

}  // namespace tunekit::spec_detail
