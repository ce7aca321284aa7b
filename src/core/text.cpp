#include "core/detail/text.hpp"
#include "core/detail/number_text.hpp"
#include "tunekit/error.hpp"
#include "tunekit/names.hpp"

#include <algorithm>

#include <fmt/format.h>
#include <cctype>
#include <limits>
#include <set>

namespace tunekit::detail {

std::string lowercase_extension(const std::filesystem::path& file) {
  std::string ext = file.extension().string();
  std::transform(ext.begin(), ext.end(), ext.begin(), [](unsigned char c) { return std::tolower(c); });
  return ext;
}

std::string shown_bindings(const Bindings& b) {
  std::string out = "{";
  for (const auto& [name, value] : b) out += (out.size() > 1 ? ", " : "") + name + ": " + shown_value(value);
  return out + "}";
}

std::string shown_value(const Value& v) {
  if (!v.is_string()) return v.str();
  const std::string& s = v.as_string();
  const auto plain = [](unsigned char c) {
    return c > ' ' && c != 0x7F && std::string_view("'\"\\,:{}").find(static_cast<char>(c)) == std::string_view::npos;
  };
  // A string that reads as a number, a bool or a null ("64", "0x40",
  // "true") is quoted too: unquoted, it would look like the number 64 or
  // the bool a spec reads it as.
  if (!s.empty() && std::all_of(s.begin(), s.end(), plain) && !yaml_reads_as_non_string(s)) return s;
  std::string out = "'";
  for (const char c : s) {
    if (c == '\n') out += "\\n";
    else if (c == '\r') out += "\\r";
    else if (c == '\t') out += "\\t";
    else if (c == '\\' || c == '\'') out += std::string("\\") + c;
    else if (static_cast<unsigned char>(c) < ' ' || c == 0x7F)
      out += fmt::format("\\x{:02x}", static_cast<unsigned char>(c));
    else out += c;
  }
  return out + "'";
}

// Optimal string alignment distance, case-blind: Levenshtein's, with the
// swap of two adjacent letters (cvs for csv) one edit, as typos make it.
std::size_t edit_distance(std::string_view a, std::string_view b) {
  const auto same = [](char x, char y) {
    return std::tolower(static_cast<unsigned char>(x)) == std::tolower(static_cast<unsigned char>(y));
  };
  std::vector<std::size_t> before(b.size() + 1), prev(b.size() + 1), cur(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (same(a[i - 1], b[j - 1]) ? 0 : 1)});
      if (i > 1 && j > 1 && same(a[i - 1], b[j - 2]) && same(a[i - 2], b[j - 1]))
        cur[j] = std::min(cur[j], before[j - 2] + 1);
    }
    std::swap(before, prev);
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

std::optional<std::string> closest_match(std::string_view word, const std::vector<std::string>& candidates) {
  std::optional<std::string> best;
  std::size_t best_d = std::numeric_limits<std::size_t>::max();
  for (const auto& c : candidates) {
    std::size_t d = edit_distance(word, c);
    if (d < best_d) {
      best_d = d;
      best = c;
    }
  }
  std::size_t limit = std::max<std::size_t>(1, std::min<std::size_t>(3, std::max(word.size(), std::size_t{1}) / 3));
  if (word.size() >= 4) limit = std::max<std::size_t>(limit, 2);
  if (!best || best_d > limit) return std::nullopt;
  return best;
}

std::string join(const std::vector<std::string>& items, std::string_view sep) {
  std::string out;
  for (std::size_t i = 0; i < items.size(); ++i) {
    if (i) out += sep;
    out += items[i];
  }
  return out;
}

JsonErrorPlace json_error_place(std::string_view text, std::size_t byte, std::string_view what) {
  JsonErrorPlace p;
  for (std::size_t i = 0; i + 1 < byte && i < text.size(); ++i) {
    if (text[i] == '\n') {
      ++p.line;
      p.column = 1;
    } else {
      ++p.column;
    }
  }
  p.message = std::string(what);
  if (auto at = p.message.find(": ", p.message.find("parse error")); at != std::string::npos)
    p.message = p.message.substr(at + 2);
  return p;
}

std::string shown_controls(std::string_view text, bool keep_lines) {
  const auto c1 = [&](std::size_t i) {  // U+0080..U+009F, as UTF-8
    return static_cast<unsigned char>(text[i]) == 0xC2 && i + 1 < text.size() &&
           (static_cast<unsigned char>(text[i + 1]) & 0xE0) == 0x80;
  };
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size(); ++i) {
    const auto u = static_cast<unsigned char>(text[i]);
    if (keep_lines && (text[i] == '\n' || text[i] == '\t')) out += text[i];
    else if (text[i] == '\t') out += ' ';
    else if (u < 0x20 || u == 0x7F) out += {'^', static_cast<char>(u ^ 0x40)};
    else if (c1(i)) out += fmt::format("<U+{:04X}>", static_cast<unsigned char>(text[++i]));
    else out += text[i];
  }
  return out;
}

std::size_t utf8_floor(std::string_view text, std::size_t at) {
  if (at >= text.size()) return text.size();
  // Back over continuation bytes (10xxxxxx), at most three: a longer run is
  // not UTF-8, and is cut where asked.
  for (std::size_t back = 0; back < 3 && at > 0 && (static_cast<unsigned char>(text[at]) & 0xC0) == 0x80; ++back) --at;
  return at;
}

std::optional<std::size_t> first_invalid_utf8(std::string_view text) {
  const auto byte = [&](std::size_t i) { return static_cast<unsigned char>(text[i]); };
  for (std::size_t i = 0; i < text.size();) {
    const unsigned char b = byte(i);
    if (b < 0x80) {
      ++i;
      continue;
    }
    // The sequence's length and its first continuation byte's range, which
    // rule out overlong forms, surrogates and code points past U+10FFFF.
    std::size_t length = 0;
    unsigned char low = 0x80, high = 0xBF;
    if (b >= 0xC2 && b <= 0xDF) length = 2;
    else if (b == 0xE0) length = 3, low = 0xA0;
    else if (b == 0xED) length = 3, high = 0x9F;
    else if (b >= 0xE1 && b <= 0xEF) length = 3;
    else if (b == 0xF0) length = 4, low = 0x90;
    else if (b == 0xF4) length = 4, high = 0x8F;
    else if (b >= 0xF1 && b <= 0xF3) length = 4;
    else return i;
    if (i + length > text.size()) return i;
    if (byte(i + 1) < low || byte(i + 1) > high) return i;
    for (std::size_t k = 2; k < length; ++k)
      if (byte(i + k) < 0x80 || byte(i + k) > 0xBF) return i;
    i += length;
  }
  return std::nullopt;
}

bool identifier_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

bool has_word(std::string_view text, std::string_view word) {
  if (word.empty()) return false;
  for (auto at = text.find(word); at != std::string_view::npos; at = text.find(word, at + 1)) {
    const bool starts = at == 0 || !identifier_char(text[at - 1]);
    const bool ends = at + word.size() == text.size() || !identifier_char(text[at + word.size()]);
    if (starts && ends) return true;
  }
  return false;
}

std::vector<std::string> identifiers_in(std::string_view text) {
  std::set<std::string> words;
  for (std::size_t i = 0; i < text.size();) {
    if (!identifier_char(text[i])) {
      ++i;
      continue;
    }
    std::size_t j = i;
    while (j < text.size() && identifier_char(text[j])) ++j;
    if (!std::isdigit(static_cast<unsigned char>(text[i]))) words.emplace(text.substr(i, j - i));
    i = j;
  }
  return {words.begin(), words.end()};
}

}  // namespace tunekit::detail

namespace tunekit {

std::string either(const std::vector<std::string>& names) {
  if (names.size() <= 1) return detail::join(names);
  std::vector<std::string> head(names.begin(), names.end() - 1);
  return detail::join(head) + " or " + names.back();
}

std::string did_you_mean(std::string_view word, const std::vector<std::string>& candidates) {
  if (auto near = detail::closest_match(word, candidates)) return "; did you mean '" + *near + "'?";
  return {};
}

}  // namespace tunekit
