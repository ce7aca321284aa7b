// msKPP "// tunable" lines and CCCL "%RANGE%" annotations.
#include "tunekit/annotation.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <map>
#include <optional>
#include <string_view>
#include <utility>

#include <fmt/format.h>

#include "core/detail/text.hpp"
#include "spec/detail/text.hpp"
#include "tunekit/error.hpp"

namespace tunekit {
namespace {

using spec_detail::is_identifier;
using spec_detail::trim;

// The lines of a source, without their terminators ("\n" or "\r\n").
struct Line {
  std::string_view text;    // without "\r"
  std::string_view ending;  // "\n", "\r\n" or "" (the last line)
};

std::vector<Line> split_lines(std::string_view source) {
  // A UTF-8 byte order mark, which editors do not show and compilers skip,
  // is not code before a first line's annotation, and takes no columns.
  if (source.starts_with("\xEF\xBB\xBF")) source.remove_prefix(3);
  std::vector<Line> lines;
  std::size_t begin = 0;
  while (begin <= source.size()) {
    std::size_t nl = source.find('\n', begin);
    if (nl == std::string_view::npos) {
      if (begin < source.size()) lines.push_back({source.substr(begin), {}});
      break;
    }
    std::string_view text = source.substr(begin, nl - begin);
    std::string_view ending = source.substr(nl, 1);
    if (!text.empty() && text.back() == '\r') {
      text.remove_suffix(1);
      ending = source.substr(nl - 1, 2);
    }
    lines.push_back({text, ending});
    begin = nl + 1;
  }
  return lines;
}

bool is_blank(char c) { return c == ' ' || c == '\t' || c == '\f' || c == '\v'; }

// A line whose trailing "//" comment is a tunable annotation.
struct Tunable {
  enum class Kind { value, alias } kind;
  std::string name;
  std::size_t eq = 0;           // value: position of the first '=' in the line
  std::size_t name_column = 0;  // 0-based, for messages
  std::size_t comment = 0;      // position of the "//"
};

// Scans a line of C/C++ for its trailing "//" comment, skipping string and
// character literals and block comments (whose state carries over lines).
// Returns the comment's position (npos if none) and whether any code lies
// before it.
struct LineScan {
  std::size_t comment = std::string_view::npos;
  bool has_code = false;
};

LineScan scan_line(std::string_view line, bool& in_block) {
  LineScan out;
  char quote = 0;
  for (std::size_t i = 0; i < line.size(); ++i) {
    char c = line[i];
    if (in_block) {
      if (c == '*' && i + 1 < line.size() && line[i + 1] == '/') {
        in_block = false;
        ++i;
      }
      continue;
    }
    if (quote) {
      if (c == '\\') ++i;
      else if (c == quote) quote = 0;
      continue;
    }
    if (c == '/' && i + 1 < line.size() && line[i + 1] == '/') {
      out.comment = i;
      return out;
    }
    if (c == '/' && i + 1 < line.size() && line[i + 1] == '*') {
      in_block = true;
      ++i;
      continue;
    }
    if (c == '"') quote = c;
    // A quote after a digit is a C++14 digit separator (1'024), not a char.
    else if (c == '\'' && !(i > 0 && std::isxdigit(static_cast<unsigned char>(line[i - 1])))) quote = c;
    if (!is_blank(c)) out.has_code = true;
  }
  return out;  // an unterminated literal ends with the line
}

// "// tunable" -> "", "// tunable: ALIAS" -> "ALIAS"; nullopt if the comment
// is something else. `alias_offset` receives ALIAS's position in `comment`.
std::optional<std::string> match_tunable_comment(std::string_view comment, std::size_t& alias_offset) {
  std::size_t i = 2;  // past "//"
  while (i < comment.size() && is_blank(comment[i])) ++i;
  constexpr std::string_view word = "tunable";
  if (comment.substr(i, word.size()) != word) return std::nullopt;
  i += word.size();
  std::size_t j = i;
  while (j < comment.size() && is_blank(comment[j])) ++j;
  if (j == comment.size()) return std::string();
  if (comment[j] != ':') return std::nullopt;
  ++j;
  while (j < comment.size() && is_blank(comment[j])) ++j;
  std::string_view rest = trim(comment.substr(j));
  if (!is_identifier(rest)) return std::nullopt;
  alias_offset = j;
  return std::string(rest);
}

// "// tunable:" and nothing after: an alias left out, not prose. Taken for a
// plain comment, its line silently stayed as written.
bool alias_left_out(std::string_view comment) {
  const std::string_view text = trim(comment.substr(2));
  return text.substr(0, 7) == "tunable" && trim(text.substr(7)) == ":";
}

// Why a comment that is no "// tunable" annotation reads like one, or
// nullopt: "// Tunable" (the word in another case), "// tunable: ACC T" (an
// alias that is no name). Prose after the word ("// tunable later") is left
// alone, as msKPP leaves it.
std::optional<std::string> tunable_near_miss(std::string_view comment) {
  const std::string_view text = trim(comment.substr(2));
  std::string first;
  for (char c : text.substr(0, 7)) first += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (first != "tunable") {
    // The word misspelt by one letter ('tuneable', 'tunabel'), alone or with
    // an alias: the line would stay as written, and under injection: auto a
    // source of such lines gets -D defines that replace its names.
    std::size_t end = 0;
    while (end < text.size() && std::isalpha(static_cast<unsigned char>(text[end]))) ++end;
    const std::string_view word = text.substr(0, end), after = trim(text.substr(end));
    // Words of their own one letter away, which a comment after code may be.
    std::string lower;
    for (char c : word) lower += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    constexpr std::array<std::string_view, 4> kWords{"unable", "tenable", "runable", "tunables"};
    if (std::find(kWords.begin(), kWords.end(), lower) != kWords.end()) return std::nullopt;
    if (end > 0 && (after.empty() || after[0] == ':') && detail::edit_distance(word, "tunable") == 1)
      return "'" + std::string(word) + "' reads like a misspelt tunable annotation; write it '// tunable'";
    return std::nullopt;
  }
  const std::string_view rest = trim(text.substr(7));
  if (text.substr(0, 7) != "tunable" && (rest.empty() || rest[0] == ':'))
    return "'" + std::string(text.substr(0, 7)) +
           "' reads like a tunable annotation; write it '// tunable' (lower case)";
  if (!rest.empty() && rest[0] == ':')
    return "the alias of '// tunable: ALIAS' is one name (letters, digits and '_'), not '" +
           std::string(trim(rest.substr(1))) + "'";
  return std::nullopt;
}

// The tunable annotation of one line, if it has one. Throws for a "// tunable"
// line whose code has no "NAME =".
std::optional<Tunable> tunable_of(std::string_view line, bool& in_block, int line_no, const std::string& file) {
  LineScan scan = scan_line(line, in_block);
  if (scan.comment == std::string_view::npos || !scan.has_code) return std::nullopt;
  std::string_view head = trim(line);
  if (!head.empty() && head[0] == '*') return std::nullopt;  // inside a block comment
  std::size_t alias_offset = 0;
  auto alias = match_tunable_comment(line.substr(scan.comment), alias_offset);
  if (!alias) {
    if (alias_left_out(line.substr(scan.comment)))
      throw InputError(SourceLocation{file, line_no, static_cast<int>(line.find(':', scan.comment) + 1)},
                       "'// tunable:' needs the line's alias after the colon ('// tunable: ALIAS'); or, without "
                       "the colon, the line assigns the name ('NAME = value; // tunable')");
    if (auto why = tunable_near_miss(line.substr(scan.comment)))
      throw InputError(SourceLocation{file, line_no, static_cast<int>(scan.comment + 1)}, *why);
    return std::nullopt;
  }
  Tunable t;
  t.comment = scan.comment;
  if (!alias->empty()) {
    t.kind = Tunable::Kind::alias;
    t.name = *alias;
    t.name_column = scan.comment + alias_offset;
    return t;
  }
  t.kind = Tunable::Kind::value;
  std::size_t eq = line.substr(0, scan.comment).find('=');
  std::size_t end = eq;
  if (eq != std::string_view::npos)
    while (end > 0 && is_blank(line[end - 1])) --end;
  std::size_t begin = end;
  if (eq != std::string_view::npos)
    while (begin > 0 && (std::isalnum(static_cast<unsigned char>(line[begin - 1])) || line[begin - 1] == '_')) --begin;
  if (eq == std::string_view::npos || begin == end || !is_identifier(line.substr(begin, end - begin))) {
    std::size_t first = line.find_first_not_of(" \t");
    throw InputError(SourceLocation{file, line_no, static_cast<int>((eq == std::string_view::npos ? first : eq) + 1)},
                     "a '// tunable' line must assign a name ('NAME = value; // tunable'); "
                     "to replace a whole line use '// tunable: ALIAS'");
  }
  // The value replaces everything after the `=`: a second declarator
  // (`int A = 1, B = 2;`) would be lost.
  int depth = 0;
  for (std::size_t k = eq + 1; k < scan.comment; ++k) {
    const char c = line[k];
    if (c == '(' || c == '[' || c == '{') ++depth;
    if ((c == ')' || c == ']' || c == '}') && depth > 0) --depth;
    if (c != ',' || depth != 0) continue;
    std::size_t n = line.find_first_not_of(" \t", k + 1), m = n;
    while (m < scan.comment && detail::identifier_char(line[m])) ++m;
    const std::size_t after = line.find_first_not_of(" \t", m);
    if (m > n && after < scan.comment && line[after] == '=' && line.substr(after, 2) != "==")
      throw InputError(SourceLocation{file, line_no, static_cast<int>(n + 1)},
                       fmt::format("a '// tunable' line gets its value in place of all after its first '=', so "
                                   "'{}' declared here too would be lost; declare it on a line of its own",
                                   line.substr(n, m - n)));
  }
  t.eq = eq;
  t.name = std::string(line.substr(begin, end - begin));
  t.name_column = begin;
  return t;
}

}  // namespace

bool has_tunable_lines(std::string_view source) {
  bool in_block = false;
  for (const Line& l : split_lines(source)) {
    LineScan scan = scan_line(l.text, in_block);
    if (scan.comment == std::string_view::npos || !scan.has_code) continue;
    std::string_view head = trim(l.text);
    if (!head.empty() && head[0] == '*') continue;
    std::size_t alias_offset = 0;
    const std::string_view comment = l.text.substr(scan.comment);
    if (match_tunable_comment(comment, alias_offset) || alias_left_out(comment)) return true;
  }
  return false;
}

namespace {

// The first annotated line of each name (what it assigns, or its alias).
struct Target {
  std::size_t line;
  Tunable tunable;
};
std::map<std::string, Target, std::less<>> first_tunables(const std::vector<Line>& lines, const std::string& file) {
  std::map<std::string, Target, std::less<>> first;
  bool in_block = false;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    std::optional<Tunable> t;
    try {
      t = tunable_of(lines[i].text, in_block, static_cast<int>(i + 1), file);
    } catch (const InputError&) {
      // msKPP replaces only a name's first annotated line and never reads
      // the later ones (a template argument list's `LayoutA, // tunable`
      // after `using LayoutA = ...; // tunable`): a line that assigns
      // nothing and names a name already annotated is left as written, not
      // refused. A line that assigns is a name's own, and its error stands.
      std::string_view code = lines[i].text.substr(0, lines[i].text.find("//"));
      bool later = code.find('=') == std::string_view::npos;
      bool named = false;
      for (const auto& [name, target] : first) named = named || detail::has_word(code, name);
      if (!later || !named) throw;
    }
    if (t) {
      std::string name = t->name;
      first.try_emplace(std::move(name), Target{i, std::move(*t)});
    }
  }
  return first;
}

}  // namespace

bool uses_tunable_lines(Injection requested, std::string_view source) {
  return requested == Injection::tunable_lines || (requested == Injection::automatic && has_tunable_lines(source));
}

std::vector<std::string> tunable_names(std::string_view source, const std::string& file) {
  std::vector<std::string> names;
  for (const auto& [name, target] : first_tunables(split_lines(source), file)) names.push_back(name);
  return names;
}

std::vector<TunableLine> tunable_lines(std::string_view source, const std::string& file) {
  const std::vector<Line> lines = split_lines(source);
  std::vector<TunableLine> out;
  for (const auto& [name, target] : first_tunables(lines, file)) {
    const std::string_view text = lines[target.line].text;
    const Tunable& t = target.tunable;
    TunableLine l{name, SourceLocation{file, static_cast<int>(target.line + 1), static_cast<int>(t.name_column + 1)},
                  "", t.kind == Tunable::Kind::alias};
    std::string_view kept = l.alias ? text.substr(0, t.comment) : text.substr(t.eq + 1, t.comment - t.eq - 1);
    kept = trim(kept);
    if (!l.alias && kept.ends_with(';')) kept = trim(kept.substr(0, kept.size() - 1));
    l.as_written = std::string(kept);
    out.push_back(std::move(l));
  }
  std::sort(out.begin(), out.end(),
            [](const TunableLine& a, const TunableLine& b) { return a.where.line < b.where.line; });
  return out;
}

std::string tunable_names_text(const std::vector<std::string>& names) {
  return names.empty() ? " (it has none)" : " (its tunable names: " + spec_detail::join(names) + ")";
}

std::string apply_tunable_lines(std::string_view source, const Config& config, const std::string& file) {
  std::vector<Line> lines = split_lines(source);
  const auto first = first_tunables(lines, file);
  std::vector<std::optional<std::string>> replacement(lines.size());
  for (const auto& [key, value] : config) {
    auto it = first.find(key);
    if (it == first.end()) {
      std::vector<std::string> names;
      for (const auto& [n, target] : first) names.push_back(n);
      throw InputError(SourceLocation{file, 0, 0}, "config key '" + key + "' matches no '// tunable' line in " + file +
                                                       did_you_mean(key, names) + tunable_names_text(names));
    }
    const Target& target = it->second;
    std::string_view text = lines[target.line].text;
    if (target.tunable.kind == Tunable::Kind::value) {
      replacement[target.line] = std::string(text.substr(0, target.tunable.eq + 1)) + " " + value.str() + ";";
    } else {
      std::size_t indent = 0;
      while (indent < text.size() && is_blank(text[indent])) ++indent;
      replacement[target.line] = std::string(text.substr(0, indent)) + value.str();
    }
  }
  std::string out;
  out.reserve(source.size() + 64);
  for (std::size_t i = 0; i < lines.size(); ++i) {
    if (replacement[i]) out += *replacement[i];
    else out += lines[i].text;
    out += lines[i].ending;
  }
  return out;
}

namespace {

// The macro a preprocessor line `# define NAME ...` defines, or "".
std::string_view defined_macro(std::string_view line) {
  std::size_t p = line.find_first_not_of(" \t");
  if (p == std::string_view::npos || line[p] != '#') return {};
  p = line.find_first_not_of(" \t", p + 1);
  if (p == std::string_view::npos || line.substr(p, 6) != "define" || p + 6 >= line.size() ||
      (line[p + 6] != ' ' && line[p + 6] != '\t'))
    return {};
  p = line.find_first_not_of(" \t", p + 6);
  if (p == std::string_view::npos) return {};
  std::size_t q = p;
  while (q < line.size() && detail::identifier_char(line[q])) ++q;
  return line.substr(p, q - p);
}

// A preprocessor line's directive ("if", "ifndef", ...) and the rest of
// the line; an empty directive for any other line.
std::pair<std::string_view, std::string_view> directive(std::string_view line) {
  std::size_t p = line.find_first_not_of(" \t");
  if (p == std::string_view::npos || line[p] != '#') return {};
  p = line.find_first_not_of(" \t", p + 1);
  if (p == std::string_view::npos) return {};
  std::size_t q = p;
  while (q < line.size() && std::isalpha(static_cast<unsigned char>(line[q]))) ++q;
  std::string_view rest = line.substr(q);
  rest = rest.substr(0, std::min(rest.find("//"), rest.find("/*")));
  return {line.substr(p, q - p), rest};
}

// An open #if chain: the condition of the branch the lines below it are
// in (empty for an #else), and those of the branches before it, which were
// false for these lines to compile. #ifdef X reads as defined(X), #ifndef X
// as !defined(X); blanks are left out.
struct Conditional {
  std::string condition;
  std::vector<std::string> earlier;
};

// Whether the lines inside `c` are compiled only when the config has not
// defined `name` (`#ifndef NAME`, `#if !defined(NAME)`, past a branch of
// `defined(NAME)`), or only for CCCL's baseline (TUNE_BASE true), which is
// built without the config's values.
bool keeps_out_a_config(const Conditional& c, const std::string& name) {
  // `defined NAME` loses its blank with the others: the name must end
  // there (`defined TUNE_XY` tests no TUNE_X).
  auto has = [&](const std::string& e, const std::string& form) {
    for (std::size_t at = e.find(form); at != std::string::npos; at = e.find(form, at + 1))
      if (at + form.size() == e.size() || !detail::identifier_char(e[at + form.size()])) return true;
    return false;
  };
  auto negated = [&](const std::string& e) { return has(e, "!defined(" + name + ")") || has(e, "!defined" + name); };
  auto tested = [&](const std::string& e) { return has(e, "defined(" + name + ")") || has(e, "defined" + name); };
  auto base = [](const std::string& e) { return e == "TUNE_BASE" || e == "TUNE_BASE==1" || e == "TUNE_BASE!=0"; };
  auto not_base = [](const std::string& e) { return e == "!TUNE_BASE" || e == "TUNE_BASE==0"; };
  if (negated(c.condition) || base(c.condition)) return true;
  return std::any_of(c.earlier.begin(), c.earlier.end(),
                     [&](const std::string& e) { return (tested(e) && !negated(e)) || not_base(e); });
}

// A preprocessor line outside block comments: its directive, and its
// condition without blanks (#ifdef X as defined(X), #ifndef X as
// !defined(X)).
struct Directive {
  std::size_t line;  // 0-based
  std::string_view name;
  std::string condition;
};

std::vector<Directive> directives(const std::vector<Line>& lines) {
  std::vector<Directive> out;
  bool in_block = false;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    const std::string_view t = lines[i].text;
    const bool commented = in_block;
    (void)scan_line(t, in_block);
    if (commented) continue;
    const auto [name, rest] = directive(t);
    if (name.empty()) continue;
    std::string condition;
    for (char c : rest)
      if (!is_blank(c)) condition += c;
    if (name == "ifdef") condition = "defined(" + condition + ")";
    if (name == "ifndef") condition = "!defined(" + condition + ")";
    out.push_back({i, name, std::move(condition)});
  }
  return out;
}

// A %RANGE% parameter reaches the code as a define. An unguarded #define of
// it in the source replaces every config's value with its own (the compiler
// only warns, and a build that succeeds shows no warning), so every variant
// is the same code. A comment that mentions the guard does not guard it:
// the #define must sit in a branch a config's build never compiles.
void check_ranges_not_defined_in_source(const std::vector<Line>& lines, const std::vector<RangeAnnotation>& ranges,
                                        const std::string& file) {
  const std::vector<Directive> all = directives(lines);
  for (const RangeAnnotation& r : ranges) {
    std::vector<Conditional> open;
    for (const auto& [i, name, condition] : all) {
      const std::string_view t = lines[i].text;
      if (name == "if" || name == "ifdef" || name == "ifndef") {
        open.push_back({condition, {}});
      } else if ((name == "elif" || name == "else") && !open.empty()) {
        open.back().earlier.push_back(std::exchange(open.back().condition, name == "elif" ? condition : ""));
      } else if (name == "endif" && !open.empty()) {
        open.pop_back();
      } else if (name == "define" && defined_macro(t) == r.name &&
                 std::none_of(open.begin(), open.end(),
                              [&](const Conditional& c) { return keeps_out_a_config(c, r.name); })) {
        throw InputError(SourceLocation{file, static_cast<int>(i + 1), static_cast<int>(t.find(r.name) + 1)},
                         fmt::format("the source defines {}, a %RANGE% parameter (line {}): this #define would "
                                     "replace every config's value; remove it, or guard it with #ifndef {}",
                                     r.name, r.line, r.name));
      }
    }
  }
}

// A comment's first word (upper-cased) that is the marker misspelt
// ('%RANEG%', '%RAGNE%', '%RANG%') on a line of an annotation's shape:
// a name, a label and a range (start:end:step), nothing after. Ignored, its line would drop the parameter without a
// word and leave the name undefined in every build; the shape keeps prose such as
// '%RANK% 0:3 of the job' or '%RATE% 1:2' out.
bool misspelt_range_marker(std::string_view first, std::string_view rest) {
  if (first.size() < 3 || first.front() != '%' || first.back() != '%') return false;
  const std::string_view letters = first.substr(1, first.size() - 2);
  if (letters.empty() || letters == "RANGE" ||
      !std::all_of(letters.begin(), letters.end(), [](char c) { return std::isalpha(static_cast<unsigned char>(c)); }))
    return false;
  std::vector<std::string_view> words;
  for (std::size_t at = rest.find_first_not_of(" \t"); at != std::string_view::npos;
       at = rest.find_first_not_of(" \t", at)) {
    const std::size_t end = std::min(rest.find_first_of(" \t", at), rest.size());
    words.push_back(rest.substr(at, end - at));
    at = end;
  }
  if (words.size() != 3 || !is_identifier(words[0])) return false;
  // start:end:step, each an integer.
  std::size_t numbers = 0;
  for (std::string_view range = words[2]; numbers < 4;) {
    const std::size_t colon = range.find(':');
    std::string_view number = range.substr(0, colon);
    if (!number.empty() && number.front() == '-') number.remove_prefix(1);
    if (number.empty() ||
        !std::all_of(number.begin(), number.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); }))
      return false;
    ++numbers;
    if (colon == std::string_view::npos) break;
    range.remove_prefix(colon + 1);
  }
  return numbers == 3 && detail::edit_distance(letters, "RANGE") <= 2;
}

}  // namespace

bool has_tune_base_branch(std::string_view source) {
  const std::vector<Directive> all = directives(split_lines(source));
  return std::any_of(all.begin(), all.end(), [](const Directive& d) {
    return (d.name == "if" || d.name == "elif" || d.name == "ifdef" || d.name == "ifndef") &&
           detail::has_word(d.condition, kTuneBase);
  });
}

std::vector<std::string> unnamed_range_parameters(std::string_view source, const std::string& file) {
  const std::vector<Line> lines = split_lines(source);
  for (const Line& l : lines) {
    const std::string_view t = l.text;
    const std::size_t hash = t.find_first_not_of(" \t");
    if (hash != std::string_view::npos && t[hash] == '#' && t.find("include") != std::string_view::npos &&
        t.find('"') != std::string_view::npos)
      return {};  // a header of its own may name them
  }
  std::vector<std::string> out;
  for (const RangeAnnotation& r : parse_range_annotations(source, file)) {
    bool named = false;
    for (std::size_t i = 0; i < lines.size() && !named; ++i)
      named = static_cast<int>(i + 1) != r.line && detail::has_word(lines[i].text, r.name);
    if (!named) out.push_back(r.name);
  }
  return out;
}

std::vector<RangeAnnotation> parse_range_annotations(std::string_view source, const std::string& file) {
  constexpr std::string_view marker = "%RANGE%";
  const std::string expected = "expected '%RANGE% NAME label start:end:step'";
  std::vector<RangeAnnotation> out;
  std::map<std::string, int, std::less<>> seen;
  std::vector<Line> lines = split_lines(source);
  bool in_block = false;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    std::string_view text = lines[i].text;
    // The line's // comment, outside string literals and block comments: a
    // "%RANGE%" in a string is data, not an annotation.
    const LineScan scan = scan_line(text, in_block);
    // A comment that starts almost with the marker (%range%, %RANGE without
    // its second %, a /* */ comment) was meant as one: ignored, it would
    // drop a parameter from the space without a word.
    if (const std::size_t lead = text.find_first_not_of(" \t");
        lead != std::string_view::npos && (text.substr(lead, 2) == "//" || text.substr(lead, 2) == "/*")) {
      const std::size_t word = text.find_first_not_of(" \t/*", lead);
      std::string first;
      for (std::size_t k = word;
           k != std::string_view::npos && k < text.size() && !std::isspace(static_cast<unsigned char>(text[k])); ++k)
        first += static_cast<char>(std::toupper(static_cast<unsigned char>(text[k])));
      const SourceLocation here{file, static_cast<int>(i + 1), static_cast<int>(word + 1)};
      if (first.rfind("%RANGE", 0) == 0 && text.substr(word, marker.size()) != marker)
        throw InputError(here,
                         "'" + std::string(text.substr(word, first.size())) +
                             "' reads like a %RANGE% annotation; write it '%RANGE%' (upper case, a % at each end)");
      if (!first.empty() && misspelt_range_marker(first, text.substr(word + first.size())))
        throw InputError(here, "'" + std::string(text.substr(word, first.size())) +
                                   "' reads like a misspelt %RANGE% annotation (a name, a label and a range after "
                                   "it); did you mean '%RANGE%'? (If the comment is prose, reword it.)");
      if (first == "%RANGE%" && text.substr(lead, 2) == "/*")
        throw InputError(here, "a %RANGE% annotation is a // comment, not a /* */ one");
    }
    // Only a comment that starts with the marker declares a range, after
    // code too (CCCL's scripts match "// %RANGE%" anywhere in the file);
    // prose that mentions %RANGE% is left alone.
    const std::size_t slashes = scan.comment;
    if (slashes == std::string_view::npos) continue;
    const std::size_t at = text.find(marker, slashes);
    if (at == std::string_view::npos || text.find_first_not_of(" \t/!", slashes) != at) continue;
    // A doc comment (//! with the marker after it) was meant as one too.
    if (text.find_first_not_of(" \t/", slashes) != at)
      throw InputError(SourceLocation{file, static_cast<int>(i + 1), static_cast<int>(slashes + 1)},
                       "a %RANGE% annotation is a plain // comment, not a doc comment: write it '// %RANGE% ...'");
    const int line_no = static_cast<int>(i + 1);
    auto where = [&](std::size_t column0) { return SourceLocation{file, line_no, static_cast<int>(column0 + 1)}; };
    // Whitespace-separated fields after the marker, with their positions.
    std::vector<std::pair<std::string_view, std::size_t>> fields;
    std::size_t p = at + marker.size();
    while (p < text.size()) {
      while (p < text.size() && std::isspace(static_cast<unsigned char>(text[p]))) ++p;
      if (p >= text.size()) break;
      std::size_t q = p;
      while (q < text.size() && !std::isspace(static_cast<unsigned char>(text[q]))) ++q;
      fields.emplace_back(text.substr(p, q - p), p);
      p = q;
    }
    std::size_t end_column = text.find_last_not_of(" \t") + 1;  // just past the last character
    static const char* names[] = {"a parameter name", "a label", "a range start:end:step"};
    // "NAME 1:4:1": the range is there and the label is what is missing,
    // which "missing a range" would misname.
    if (fields.size() == 2 && fields[1].first.find(':') != std::string_view::npos &&
        fields[1].first.find_first_not_of("0123456789-:") == std::string_view::npos)
      throw InputError(where(fields[1].second),
                       "malformed %RANGE% line: missing the label between the name and the range (CCCL's "
                       "scripts read the range as the third word); " +
                           expected);
    if (fields.size() < 3)
      throw InputError(where(end_column),
                       std::string("malformed %RANGE% line: missing ") + names[fields.size()] + "; " + expected);
    if (fields.size() > 3) {
      // "1 : 4 : 1": a range written with spaces reads as several fields.
      const bool spaced = std::count(fields[2].first.begin(), fields[2].first.end(), ':') < 2 &&
                          std::all_of(fields.begin() + 2, fields.end(),
                                      [](const auto& f) {
                                        return f.first.find_first_not_of("0123456789-:") == std::string_view::npos;
                                      }) &&
                          std::any_of(fields.begin() + 2, fields.end(),
                                      [](const auto& f) { return f.first.find(':') != std::string_view::npos; });
      if (spaced)
        throw InputError(where(fields[2].second),
                         "malformed %RANGE% line: a range is written without spaces (start:end:step); " + expected);
      throw InputError(where(fields[3].second), "malformed %RANGE% line: unexpected '" + std::string(fields[3].first) +
                                                    "' after the range; " + expected);
    }
    auto [name, name_pos] = fields[0];
    if (!is_identifier(name))
      throw InputError(where(name_pos),
                       "malformed %RANGE% line: '" + std::string(name) + "' is not a valid macro name; " + expected);
    if (auto reserved = spec_detail::reserved_name_problem(name)) throw InputError(where(name_pos), *reserved);
    if (auto prev = seen.find(name); prev != seen.end())
      throw InputError(where(name_pos), "duplicate %RANGE% parameter '" + std::string(name) +
                                            "' (first declared on line " + std::to_string(prev->second) + ")");
    spec_detail::IntRange r;
    try {
      r = spec_detail::parse_int_range(fields[2].first, where(fields[2].second), /*require_step=*/true);
    } catch (const InputError& e) {
      throw InputError(e.where(), "malformed %RANGE% line for " + std::string(name) + ": " + e.message());
    }
    seen.emplace(std::string(name), line_no);
    RangeAnnotation a;
    a.name = std::string(name);
    a.label = std::string(fields[1].first);
    a.start = r.start;
    a.end = r.end;
    a.step = r.step;
    a.line = line_no;
    a.column = static_cast<int>(name_pos + 1);
    out.push_back(std::move(a));
  }
  check_ranges_not_defined_in_source(lines, out, file);
  return out;
}

std::vector<Parameter> parameters_from_ranges(const std::vector<RangeAnnotation>& ranges, const std::string& file) {
  std::vector<Parameter> out;
  out.reserve(ranges.size());
  for (const auto& r : ranges) {
    SourceLocation where{file, r.line, r.column};
    spec_detail::IntRange range{r.start, r.end, r.step};
    if (auto err = spec_detail::check_range(range)) throw InputError(where, "bad %RANGE% for " + r.name + ": " + *err);
    for (const auto& p : out)
      if (p.name == r.name) throw InputError(where, "duplicate %RANGE% parameter '" + r.name + "'");
    Parameter p;
    p.name = r.name;
    p.where = where;
    spec_detail::append_range(range, p.values);
    out.push_back(std::move(p));
  }
  return out;
}

std::string prepend_defines(std::string_view source, const Config& config, const std::string& file) {
  std::string quoted = "\"";
  for (char c : file) {
    if (c == '\\' || c == '"') quoted += '\\';
    quoted += c;
  }
  quoted += '"';
  // Each define is placed on its %RANGE% line: a value the code cannot take
  // is then reported there, not at whatever the source's first lines hold.
  std::map<std::string, int, std::less<>> declared;
  for (const RangeAnnotation& r : parse_range_annotations(source, file)) declared.emplace(r.name, r.line);
  std::string out;
  for (const auto& [name, value] : config) {
    if (auto at = declared.find(name); at != declared.end())
      out += "#line " + std::to_string(at->second) + " " + quoted + "\n";
    out += "#define " + name + " " + value.str() + "\n";
  }
  out += "#line 1 " + quoted + "\n";
  // A byte order mark after the defines would be code on line 1.
  if (source.starts_with("\xEF\xBB\xBF")) source.remove_prefix(3);
  out += source;
  return out;
}

}  // namespace tunekit
