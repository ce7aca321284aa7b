#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <limits>

#include "spec/detail/text.hpp"

namespace tunekit::spec_detail {

bool is_identifier(std::string_view s) {
  if (s.empty()) return false;
  auto alpha = [](char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; };
  if (!alpha(s[0])) return false;
  return std::all_of(s.begin() + 1, s.end(),
                     [&](char c) { return alpha(c) || std::isdigit(static_cast<unsigned char>(c)); });
}

namespace {

// Words the constraint and metric expressions read as their own (Python's
// keywords): a parameter so named could never be written in one.
bool is_expression_word(std::string_view name) {
  static constexpr std::string_view kWords =
      " False None True and as assert async await break class continue def del elif else except finally for from "
      "global if import in is lambda nonlocal not or pass raise return try while with yield ";
  return !name.empty() && kWords.find(" " + std::string(name) + " ") != std::string_view::npos;
}

// C and C++ keywords: as a macro, such a parameter would replace the keyword
// everywhere in the source.
bool is_c_keyword(std::string_view name) {
  static constexpr std::string_view kKeywords =
      " alignas alignof and and_eq asm auto bitand bitor bool break case catch char char8_t "
      "char16_t char32_t class compl concept const consteval constexpr constinit const_cast "
      "continue co_await co_return co_yield decltype default delete do double dynamic_cast else "
      "enum explicit export extern false float for friend goto if inline int long mutable "
      "namespace new noexcept not not_eq nullptr operator or or_eq private protected public "
      "register reinterpret_cast requires restrict return short signed sizeof static "
      "static_assert static_cast struct switch template this thread_local throw true try typedef "
      "typeid typename union unsigned using virtual void volatile wchar_t while xor xor_eq ";
  return !name.empty() && kKeywords.find(" " + std::string(name) + " ") != std::string_view::npos;
}

}  // namespace

std::optional<std::string> reserved_name_problem(std::string_view name) {
  if (is_expression_word(name))
    return "parameter name '" + std::string(name) +
           "' is a keyword of the expressions (constraints, metrics) that name parameters: none could name it; "
           "rename it";
  if (is_c_keyword(name))
    return "parameter name '" + std::string(name) +
           "' is a C or C++ keyword: as a macro it would replace the keyword everywhere in the source; rename it";
  if (!name.starts_with("__") &&
      !(name.size() > 1 && name[0] == '_' && std::isupper(static_cast<unsigned char>(name[1]))))
    return std::nullopt;
  return "parameter name '" + std::string(name) +
         "' is reserved for the compiler and the C library (names starting with '__' or '_' and a capital letter); "
         "rename it";
}

std::string_view trim(std::string_view s) {
  auto space = [](char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\f' || c == '\v'; };
  while (!s.empty() && space(s.front())) s.remove_prefix(1);
  while (!s.empty() && space(s.back())) s.remove_suffix(1);
  return s;
}

Value flag_value(std::string_view text, const SourceLocation& where) {
  const std::string expected = "expected an integer (4096, 0x1000, 0o10000), a finite float (0.5, 1e3) or a name";
  bool beyond_int64 = false;
  if (auto i = parse_yaml_int(text, &beyond_int64)) return Value(*i);
  if (beyond_int64) throw InputError(where, "'" + std::string(text) + "' is beyond a 64-bit integer; " + expected);
  bool out_of_range = false;
  if (auto d = parse_yaml_float(text, &out_of_range)) {
    // No size or config means an infinity or a NaN, as a spec's own refuse.
    if (!std::isfinite(*d)) throw InputError(where, "'" + std::string(text) + "' is not a finite number; " + expected);
    return Value(*d);
  }
  // A number all the same, as YAML reads it: no name.
  if (out_of_range)
    throw InputError(
        where, "'" + std::string(text) + "' is out of the range of a float (" + float_range_text() + "); " + expected);
  return Value(std::string(text));
}

static std::uint64_t range_count(const IntRange& r) {
  // Unsigned arithmetic: end - start may overflow int64.
  std::uint64_t span = r.step > 0 ? static_cast<std::uint64_t>(r.end) - static_cast<std::uint64_t>(r.start)
                                  : static_cast<std::uint64_t>(r.start) - static_cast<std::uint64_t>(r.end);
  std::uint64_t stride = r.step > 0 ? static_cast<std::uint64_t>(r.step) : 0 - static_cast<std::uint64_t>(r.step);
  // The whole int64 range by 1 has 2^64 values, one more than a uint64 holds.
  const std::uint64_t steps = span / stride;
  return steps == UINT64_MAX ? steps : steps + 1;
}

std::optional<std::string> check_range(const IntRange& r) {
  if (r.step == 0) return "the step must not be 0";
  if ((r.step > 0 && r.start > r.end) || (r.step < 0 && r.start < r.end))
    return "the range is empty (start " + std::to_string(r.start) + ", end " + std::to_string(r.end) + ", step " +
           std::to_string(r.step) + "; both ends are inclusive)";
  std::uint64_t count = range_count(r);
  if (count > kMaxRangeValues)
    return "the range has " + (count == UINT64_MAX ? std::string("2^64") : std::to_string(count)) +
           " values; at most " + std::to_string(kMaxRangeValues) + " are allowed";
  return std::nullopt;
}

void append_range(const IntRange& r, std::vector<Value>& out) {
  std::uint64_t count = range_count(r);
  out.reserve(out.size() + count);
  std::int64_t v = r.start;
  for (std::uint64_t i = 0; i < count; ++i) {
    out.emplace_back(v);
    if (i + 1 < count) v += r.step;  // never steps past `end`, so no overflow
  }
}

IntRange parse_int_range(std::string_view text, const SourceLocation& where, bool require_step) {
  const std::string expected =
      require_step ? "expected start:end:step with integers, e.g. 32:256:32"
                   : "expected start:end or start:end:step with integers (both ends inclusive), e.g. 64:256:64";
  struct Field {
    std::string_view text;
    int offset;  // of its first non-blank character in `text`
  };
  std::vector<Field> fields;
  std::size_t begin = 0;
  for (;;) {
    std::size_t colon = text.find(':', begin);
    std::string_view raw = text.substr(begin, colon == std::string_view::npos ? std::string_view::npos : colon - begin);
    std::size_t lead = 0;
    while (lead < raw.size() && (raw[lead] == ' ' || raw[lead] == '\t')) ++lead;
    fields.push_back({trim(raw), static_cast<int>(begin + lead)});
    if (colon == std::string_view::npos) break;
    begin = colon + 1;
  }
  const std::string quoted = "'" + std::string(text) + "'";
  if (fields.size() < 2) throw InputError(where, "bad range " + quoted + ": " + expected);
  if (fields.size() > 3) {
    int at = static_cast<int>(text.find(':', text.find(':', text.find(':') + 1) + 1));  // the third colon
    throw InputError(where.shifted(at), "bad range " + quoted + ": too many ':' fields; " + expected);
  }
  if (fields.size() == 2 && require_step)
    throw InputError(where.shifted(static_cast<int>(text.find_last_not_of(" \t") + 1)),
                     "bad range " + quoted + ": missing the step; " + expected);
  static const char* names[] = {"start", "end", "step"};
  std::int64_t v[3] = {0, 0, 1};
  for (std::size_t i = 0; i < fields.size(); ++i) {
    auto parsed = parse_int(fields[i].text);
    if (!parsed) {
      const std::string_view t = fields[i].text;
      const bool digits = !t.empty() &&
                          t.find_first_not_of("0123456789", t.front() == '-' ? 1 : 0) == std::string_view::npos &&
                          t != "-";
      std::string what = t.empty() ? std::string("is missing")
                         : digits  ? "'" + std::string(t) + "' is out of range (a 64-bit integer)"
                                   : "'" + std::string(t) + "' is not an integer";
      throw InputError(where.shifted(fields[i].offset),
                       "bad range " + quoted + ": the " + names[i] + " " + what + "; " + expected);
    }
    v[i] = *parsed;
  }
  IntRange r{v[0], v[1], v[2]};
  if (auto err = check_range(r)) {
    int at = r.step == 0 ? fields[2].offset : 0;
    throw InputError(where.shifted(at), "bad range " + quoted + ": " + *err);
  }
  return r;
}

}  // namespace tunekit::spec_detail
