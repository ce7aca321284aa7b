#include "tunekit/policy.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <regex>
#include <set>
#include <stdexcept>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "policy/detail/layout.hpp"
#include "tunekit/machine.hpp"

namespace tunekit {

namespace {

constexpr std::array<std::string_view, 97> kKeywords = {
    "alignas",     "alignof",   "and",        "and_eq",    "asm",      "auto",         "bitand",
    "bitor",       "bool",      "break",      "case",      "catch",    "char",         "char8_t",
    "char16_t",    "char32_t",  "class",      "compl",     "concept",  "const",        "consteval",
    "constexpr",   "constinit", "const_cast", "continue",  "co_await", "co_return",    "co_yield",
    "decltype",    "default",   "delete",     "do",        "double",   "dynamic_cast", "else",
    "enum",        "explicit",  "export",     "extern",    "false",    "float",        "for",
    "friend",      "goto",      "if",         "inline",    "int",      "long",         "mutable",
    "namespace",   "new",       "noexcept",   "not",       "not_eq",   "nullptr",      "operator",
    "or",          "or_eq",     "private",    "protected", "public",   "register",     "reinterpret_cast",
    "requires",    "return",    "short",      "signed",    "sizeof",   "static",       "static_assert",
    "static_cast", "struct",    "switch",     "template",  "this",     "thread_local", "throw",
    "true",        "try",       "typedef",    "typeid",    "typename", "union",        "unsigned",
    "using",       "virtual",   "void",       "volatile",  "wchar_t",  "while",        "xor",
    "xor_eq",      "main",      "size_t",     "int64_t",   "std"};

// The names <cstdint> and <cstddef>, which the header includes, declare or
// define as macros, and those the compiler predefines in its GNU modes: as
// an identifier, INT64_MAX, uint8_t or unix breaks the header.
bool library_name(std::string_view id) {
  static const std::regex kNames(
      "u?int(_least|_fast)?(8|16|32|64)_t|u?int(max|ptr)_t|size_t|ptrdiff_t|max_align_t|nullptr_t|byte|NULL|"
      "offsetof|U?INT(_LEAST|_FAST)?(8|16|32|64)_(MIN|MAX|C)|U?INT(MAX|PTR)_(MIN|MAX|C)|SIZE_MAX|PTRDIFF_(MIN|MAX)|"
      "SIG_ATOMIC_(MIN|MAX)|WCHAR_(MIN|MAX)|WINT_(MIN|MAX)|"
      // GNU modes (gcc's and clang's default -std=gnu++NN) define these.
      "unix|linux|i386");
  return std::regex_match(id.begin(), id.end(), kNames);
}

// The prefix of the header's names (K_config, detail_K, ...): with no
// underscore at either end, which would make a reserved double one.
std::string header_prefix(const std::string& kernel) {
  std::string id = cpp_identifier(kernel);
  id.erase(0, id.find_first_not_of('_'));
  id.erase(id.find_last_not_of('_') + 1);
  if (id.empty()) return "k";
  return std::isdigit(static_cast<unsigned char>(id[0])) ? "k_" + id : id;
}

using detail::Kind;
using detail::Layout;
using detail::Ref;

Kind kind_of(const std::vector<const Value*>& values) {
  Kind k = Kind::integer;
  for (const Value* v : values) {
    if (v->is_string()) return Kind::string;
    if (v->is_float()) k = Kind::floating;
  }
  return k;
}

const char* c_type(Kind k) {
  switch (k) {
    case Kind::integer:
      return "std::int64_t";
    case Kind::floating:
      return "double";
    case Kind::string:
      return "const char*";
  }
  return "";
}

std::string literal(const Value& v, Kind k) {
  if (k == Kind::string) return cpp_string_literal(v.str());
  if (k == Kind::floating) {
    std::string s = fmt::format("{}", v.to_double());
    if (s.find_first_of(".e") == std::string::npos) s += ".0";
    return s;
  }
  return v.as_int() == INT64_MIN ? "INT64_MIN" : std::to_string(v.as_int());
}

nlohmann::ordered_json value_json(const Value& v) {
  if (v.is_int()) return v.as_int();
  if (v.is_float()) return v.as_float();
  return v.as_string();
}

// Names in the order they first appear, and each name's column of values.
std::vector<std::string> names_of(const std::vector<PolicyEntry>& entries, bool sizes) {
  std::vector<std::string> names;
  for (const auto& e : entries) {
    if (sizes)
      for (const auto& [k, v] : e.size) {
        if (std::find(names.begin(), names.end(), k) == names.end()) names.push_back(k);
      }
    else
      for (const auto& [k, v] : e.config)
        if (std::find(names.begin(), names.end(), k) == names.end()) names.push_back(k);
  }
  return names;
}

// Whether every entry has an integer size (or parameter) `name`.
bool integer_column(const std::vector<PolicyEntry>& entries, const std::string& name, bool size) {
  for (const auto& e : entries) {
    const Value* v = size ? (e.size.count(name) ? &e.size.at(name) : nullptr) : e.config.find(name);
    if (!v || !v->is_int()) return false;
  }
  return !entries.empty();
}

}  // namespace

std::optional<std::string> table_problem(const Policy& policy) {
  for (const auto& e : policy.entries)
    for (const auto& [name, value] : e.size)
      if (value.is_string())
        return fmt::format(
            "size '{}' has string values ('{}' ...), and a policy finds an untuned size's config by "
            "its numeric distance to the tuned sizes: give '{}' numbers (0, 1 ...) and map them in "
            "the calling code",
            name, value.str(), name);
  return std::nullopt;
}

std::optional<std::string> namespace_problem(std::string_view name) {
  const std::string expected = "expected C++ identifiers joined by '::', such as myproject::tuned";
  if (name.empty()) return "an empty namespace; " + expected;
  std::size_t start = 0;
  while (true) {
    const std::size_t end = std::min(name.find("::", start), name.size());
    const std::string_view part = name.substr(start, end - start);
    if (part.empty()) return fmt::format("'{}' has an empty part; {}", name, expected);
    const bool identifier = !std::isdigit(static_cast<unsigned char>(part.front())) &&
                            std::all_of(part.begin(), part.end(),
                                        [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; });
    if (!identifier) return fmt::format("'{}' is not an identifier; {}", part, expected);
    if (part.find("__") != std::string_view::npos ||
        (part.size() > 1 && part[0] == '_' && std::isupper(static_cast<unsigned char>(part[1]))))
      return fmt::format(
          "'{}' is reserved for the implementation (a double underscore, or an underscore and a "
          "capital); {}",
          part, expected);
    if (std::find(kKeywords.begin(), kKeywords.end(), part) != kKeywords.end() || library_name(part))
      return fmt::format("'{}' is a C++ keyword or a name the header uses; {}", part, expected);
    if (end == name.size()) return std::nullopt;
    start = end + 2;
  }
}

std::string cpp_identifier(std::string_view text) {
  std::string out;
  for (char c : text) out += (std::isalnum(static_cast<unsigned char>(c)) || c == '_') ? c : '_';
  if (out.empty() || std::isdigit(static_cast<unsigned char>(out[0]))) out = "_" + out;
  // Names with a double underscore or _Capital are reserved for the implementation.
  while (out.find("__") != std::string::npos) out.replace(out.find("__"), 2, "_u_");
  if (out.size() > 1 && out[0] == '_' && std::isupper(static_cast<unsigned char>(out[1]))) out = "u" + out;
  if (std::find(kKeywords.begin(), kKeywords.end(), out) != kKeywords.end() || library_name(out)) out += "_";
  return out;
}

std::string cpp_string_literal(std::string_view text) {
  std::string out = "\"";
  for (unsigned char c : text) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\t':
        out += "\\t";
        break;
      case '?':
        out += "\\?";
        break;  // no trigraphs
      default:
        if (c < 0x20 || c >= 0x7f) out += fmt::format("\\{:03o}", c);  // octal: never swallows a following digit
        else out += static_cast<char>(c);
    }
  }
  return out + "\"";
}

namespace {
constexpr Named<Selection> kSelections[] = {
    {Selection::per_size, "per-size"}, {Selection::all_sizes, "all-sizes"}, {Selection::cover, "cover"}};
}  // namespace

NameTable<Selection> selection_names() { return kSelections; }

Policy make_policy(const std::string& kernel, const std::vector<TrialRecord>& trials, Selection selection,
                   const std::optional<Config>& baseline, double tolerance, const Goal& goal) {
  Policy p;
  p.kernel = kernel;
  if (!trials.empty()) p.device = trials.front().device;
  switch (selection) {
    case Selection::per_size: {
      p.selection = name_of(selection_names(), selection);
      for (auto& b : best_per_size(trials, goal)) p.entries.push_back({b.size, b.config, b.time, std::nullopt});
      break;
    }
    case Selection::all_sizes: {
      p.selection = name_of(selection_names(), selection);
      std::optional<UniversalChoice> choice;
      if (baseline) choice = best_for_all_sizes(trials, *baseline, goal);
      if (!choice) {
        // No default to compare with everywhere: the config closest to each
        // size's best, among those valid at every size.
        choice = best_valid_everywhere(trials, goal);
        if (choice) p.selection += " (against each size's best: " + why_no_universal(trials, baseline) + ")";
      }
      if (!choice) throw NoPolicyError("no config for all sizes: " + why_no_universal(trials, baseline));
      for (auto& s : choice->per_size) p.entries.push_back({s.size, choice->config, s.time, std::nullopt});
      break;
    }
    case Selection::cover: {
      p.selection = fmt::format("{} (within {:g}%)", name_of(selection_names(), selection), tolerance * 100);
      Cover c = covering_set(trials, tolerance, goal);
      for (std::size_t i = 0; i < c.per_size.size(); ++i) {
        const Config& cfg = c.configs[c.config_of_size[i]];
        std::optional<Microseconds> time;
        for (const auto& t : trials)
          if (t.status == Status::ok && t.size == c.per_size[i].size && t.config == cfg) time = t.stats.median;
        p.entries.push_back({c.per_size[i].size, cfg, time, std::nullopt});
      }
      break;
    }
  }
  if (p.entries.empty())
    throw NoPolicyError("no trial of '" + kernel + "' ran correctly: there is no config to choose");
  // In size order, not in the order the sizes were tuned: the files emitted
  // then follow from the results alone, and a lookup halfway between two
  // sizes breaks its tie the same way whichever was tuned first.
  std::stable_sort(p.entries.begin(), p.entries.end(),
                   [](const PolicyEntry& a, const PolicyEntry& b) { return a.size < b.size; });
  return p;
}

std::vector<Expression> pinned_value_checks(const std::vector<Parameter>& parameters,
                                            const std::vector<PinnedParameter>& pinned) {
  std::vector<Expression> out;
  for (const auto& pin : pinned) {
    auto param =
        std::find_if(parameters.begin(), parameters.end(), [&](const Parameter& q) { return q.name == pin.name; });
    if (param == parameters.end() || param->values.empty()) continue;
    const auto& v = param->values;
    std::string text;
    if (v.size() >= 3 && std::all_of(v.begin(), v.end(), [](const Value& x) { return x.is_int(); })) {
      const std::int64_t first = v[0].as_int(), step = v[1].as_int() - first;
      bool even = step > 0;
      for (std::size_t i = 1; i < v.size() && even; ++i) even = v[i].as_int() - v[i - 1].as_int() == step;
      if (even)
        text = fmt::format("{0} >= {1} and {0} <= {2} and ({0} - {1}) % {3} == 0", pin.name, first, v.back().as_int(),
                           step);
    }
    if (text.empty()) {
      std::vector<std::string> values;
      for (const auto& x : v) values.push_back(x.repr());
      text = fmt::format("{} in [{}]", pin.name, fmt::join(values, ", "));
    }
    out.push_back(Expression::parse(text, param->where));
  }
  return out;
}

std::vector<PinnedParameter> pinned_parameters(const std::vector<Expression>& constraints, const Policy& policy) {
  std::vector<PinnedParameter> out;
  // A rule over a float axis is no integer C++: such a parameter is copied
  // from the nearest tuned size, as an unpinned one is.
  for (const auto& c : constraints)
    for (auto& [name, rule] :
         c.equalities([&](const std::string& n) { return integer_column(policy.entries, n, false); },
                      [&](const std::string& n) { return integer_column(policy.entries, n, true); })) {
      const std::string& key = name;  // clang 14 cannot capture a structured binding
      const bool seen = std::any_of(out.begin(), out.end(), [&](const auto& p) { return p.name == key; });
      if (!seen && rule.to_cpp([](const std::string& n) { return std::optional<std::string>(n); }, ""))
        out.push_back({name, std::move(rule)});
    }
  return out;
}

Bindings machine_properties(const std::vector<TrialRecord>& trials) {
  for (const auto& t : trials) {
    try {
      return machine_from_json(t.machine).properties;
    } catch (const std::invalid_argument&) {
      continue;  // no description recorded (older stores)
    }
  }
  return {};
}

PolicyChecks policy_checks(const std::vector<Expression>& spec_constraints, const std::vector<Parameter>& parameters,
                           const Policy& policy, const Bindings& machine) {
  std::vector<Expression> constraints = spec_constraints;
  for (auto& c : pinned_value_checks(parameters, policy.pinned)) constraints.push_back(std::move(c));
  PolicyChecks out;
  for (const auto& c : constraints) {
    Bindings read;
    bool ok = true;
    for (const auto& n : c.variables()) {
      if (integer_column(policy.entries, n, true) || integer_column(policy.entries, n, false)) continue;
      auto m = machine.find(n);
      if (m != machine.end() && m->second.is_int()) read[n] = m->second;
      else ok = false;
    }
    if (ok && c.to_cpp([](const std::string& n) { return std::optional<std::string>(n); }, "")) {
      out.constraints.push_back(c);
      out.machine.insert(read.begin(), read.end());
    } else {
      out.unchecked.push_back(c.text());
    }
  }
  return out;
}

namespace detail {

std::optional<Ref> Layout::resolve(const std::string& n, bool sizes_only, const Bindings& machine) const {
  if (auto s = std::find(size_names.begin(), size_names.end(), n); s != size_names.end()) {
    const auto i = static_cast<std::size_t>(s - size_names.begin());
    // A float axis (a sparsity of 0.5) is a double in the header: no
    // integer C++ reads it.
    if (size_kinds[i] != Kind::integer) return std::nullopt;
    return Ref{Ref::What::size, i};
  }
  if (sizes_only) return std::nullopt;
  if (auto q = std::find(param_names.begin(), param_names.end(), n); q != param_names.end()) {
    const auto i = static_cast<std::size_t>(q - param_names.begin());
    if (param_kinds[i] != Kind::integer) return std::nullopt;
    return Ref{Ref::What::param, i};
  }
  if (auto m = machine.find(n); m != machine.end() && m->second.is_int()) return Ref{Ref::What::machine, 0, &m->second};
  return std::nullopt;
}

Namer namer(const Layout& l, const Policy& policy, bool sizes_only, std::function<std::string(const Ref&)> spell) {
  return [&l, &policy, sizes_only, spell = std::move(spell)](const std::string& n) -> std::optional<std::string> {
    auto r = l.resolve(n, sizes_only, policy.checks.machine);
    if (!r) return std::nullopt;
    return spell(*r);
  };
}

Layout layout_of(const Policy& policy) {
  Layout l;
  // The spec's order: a call in the order the spec declares the sizes must
  // not get another size's config (names_of() is alphabetical for sizes).
  const auto found = names_of(policy.entries, true);
  for (const auto& n : policy.size_order)
    if (std::find(found.begin(), found.end(), n) != found.end()) l.size_names.push_back(n);
  for (const auto& n : found)
    if (std::find(l.size_names.begin(), l.size_names.end(), n) == l.size_names.end()) l.size_names.push_back(n);
  l.param_names = names_of(policy.entries, false);
  auto column = [&](const std::string& name, bool size) {
    std::vector<const Value*> values;
    for (const auto& e : policy.entries) {
      const Value* v = size ? (e.size.count(name) ? &e.size.at(name) : nullptr) : e.config.find(name);
      if (!v) throw std::runtime_error("'" + name + "' is missing from some entries; cannot emit a table");
      values.push_back(v);
    }
    return values;
  };
  if (auto why = table_problem(policy)) throw std::invalid_argument(*why);
  for (const auto& n : l.size_names) l.size_kinds.push_back(kind_of(column(n, true)));
  for (const auto& n : l.param_names) {
    std::vector<const Value*> values = column(n, false);
    if (const auto d = policy.declared.find(n); d != policy.declared.end())
      for (const Value& v : d->second) values.push_back(&v);
    l.param_kinds.push_back(kind_of(values));
  }
  // Whether the header can write an expression (the spelling does not matter here).
  auto writable = [&](const Expression& e, bool sizes_only) {
    return e.to_cpp(namer(l, policy, sizes_only, [](const Ref&) { return std::string("x"); }), "").has_value();
  };
  for (const auto& pin : policy.pinned) {
    auto at = std::find(l.param_names.begin(), l.param_names.end(), pin.name);
    if (at == l.param_names.end() || l.param_kinds[at - l.param_names.begin()] != Kind::integer) continue;
    if (writable(pin.rule, true)) l.pins.push_back(&pin);
  }
  for (const auto& check : policy.checks.constraints) {
    if (writable(check, false)) l.checks.push_back(&check);
    else l.unchecked.push_back(check.text());
  }
  l.unchecked.insert(l.unchecked.begin(), policy.checks.unchecked.begin(), policy.checks.unchecked.end());
  return l;
}

std::string tuned_in_part_note(const PolicyEntry& e, std::string_view comment) {
  if (!e.tuned_in_part) return "";
  return fmt::format("{}tuned in part: {} of {} valid configs measured", comment, e.tuned_in_part->measured,
                     e.tuned_in_part->valid);
}

std::string tuned_in_part_summary(const Policy& policy, std::string_view comment) {
  const auto count = std::count_if(policy.entries.begin(), policy.entries.end(),
                                   [](const PolicyEntry& e) { return e.tuned_in_part.has_value(); });
  if (count == 0) return "";
  return fmt::format(
      "{0}{1} of the {2} tuned sizes were tuned in part (a budget, a --where, or a tune stopped\n"
      "{0}before its end), each marked at its entry: its config is the best of those measured there.\n",
      comment, count, policy.entries.size());
}

std::string one_line(std::string text) {
  std::replace_if(
      text.begin(), text.end(), [](char c) { return c == '\n' || c == '\r'; }, ' ');
  return text;
}

std::string untuned_size_rule(const Layout& l, std::string_view allowed, std::string_view no_config) {
  std::string rule = kUntunedSizeRule;
  if (std::find(l.size_kinds.begin(), l.size_kinds.end(), Kind::floating) != l.size_kinds.end()) rule += kFloatAxisRule;
  if (!l.checks.empty()) {
    std::string extra = kCheckedSizeRule;
    extra.replace(extra.find("<kernel>_allowed"), 16, allowed);
    rule += extra;
    rule += no_config;
  }
  return rule;
}

}  // namespace detail

std::string emit_header(const Policy& policy, const HeaderOptions& options) {
  using detail::namer;
  const std::string k = header_prefix(policy.kernel);
  const Layout l = detail::layout_of(policy);
  const auto& size_names = l.size_names;
  const auto& param_names = l.param_names;
  const auto& size_kinds = l.size_kinds;
  const auto& param_kinds = l.param_kinds;
  // `name`, or, where `taken` has it, the first of name_, name_2, name_3 ...
  // that it lacks (no double underscore: those names are reserved).
  auto fresh = [](const std::string& name, const std::set<std::string>& taken) {
    if (!taken.count(name)) return name;
    std::string stem = name;
    while (stem.size() > 1 && stem.back() == '_') stem.pop_back();
    for (int n = 1;; ++n) {
      const std::string candidate = stem + "_" + (n == 1 ? "" : std::to_string(n));
      if (!taken.count(candidate) && candidate != name) return candidate;
    }
  };
  // Identifiers must stay distinct after sanitising, and apart from the
  // header's own names, which a size (a function's parameter) would shadow
  // and a parameter (a struct's member) could not be named.
  std::set<std::string> used{k + "_config",      k + "_size",          k + "_tuned_count",
                             k + "_tuned_sizes", k + "_tuned_configs", k + "_allowed",
                             k + "_select",      k + "_has_config",    "detail_" + k};
  auto ident = [&](const std::string& name) {
    const std::string id = fresh(cpp_identifier(name), used);
    used.insert(id);
    return id;
  };
  std::vector<std::string> size_ids, param_ids;
  for (const auto& n : size_names) size_ids.push_back(ident(n));
  for (const auto& n : param_names) param_ids.push_back(ident(n));
  // The names the functions below declare: the sizes are those functions'
  // parameters, so a local takes underscores until no size has its name (a
  // size named `d` once read the distance in its own place).
  std::set<std::string> taken(size_ids.begin(), size_ids.end());
  auto local = [&](const std::string& name) {
    const std::string id = fresh(name, taken);
    taken.insert(id);
    return id;
  };
  const struct {
    std::string c, i, s, d, best, best_distance, allowed, allowed_distance;
  } v{local("c"),    local("i"),           local("s"),       local("d"),
      local("best"), local("best_distance"), local("allowed"), local("allowed_distance")};
  // A size is its argument; an integer parameter the candidate's (`c`); a
  // machine property the tuned device's value.
  auto spell = [&](const Ref& r) {
    switch (r.what) {
      case Ref::What::size:
        return size_ids[r.index];
      case Ref::What::param:
        return v.c + "." + param_ids[r.index];
      case Ref::What::machine:
        break;
    }
    return literal(*r.value, Kind::integer);
  };

  std::string h;
  // Pinned parameters, each with the C++ that recomputes it from the size.
  struct Pin {
    const PinnedParameter* source;
    std::string id, code;
  };
  std::vector<Pin> pins;
  for (const PinnedParameter* pin : l.pins) {
    const auto at = std::find(param_names.begin(), param_names.end(), pin->name) - param_names.begin();
    pins.push_back({pin, param_ids[at], *pin->rule.to_cpp(namer(l, policy, true, spell), "detail_" + k + "::")});
  }
  // The spec's constraints, as C++ over a candidate config `c`, the size and
  // the tuned device's properties (layout_of() chose the ones that can be).
  std::vector<std::string> checks;
  for (const Expression* check : l.checks)
    checks.push_back(*check->to_cpp(namer(l, policy, false, spell), "detail_" + k + "::"));

  const std::string rule = detail::untuned_size_rule(
      l, k + "_allowed",
      k + "_has_config() is false, and " + k +
          "_select returns the nearest tuned config as it was tuned, which they reject there (not one with its "
          "pinned parameters computed, which no build had)");
  h += std::string(detail::kHeaderOpening) + cpp_string_literal(policy.kernel) + ", chosen " + policy.selection + ".\n";
  if (!policy.device.empty()) h += "// Tuned on " + detail::one_line(policy.device) + ".\n";
  h += "// Tuned sizes return their config exactly; " + rule + ".\n";
  if (!checks.empty()) {
    std::vector<std::string> props;
    for (const auto& [n, v] : policy.checks.machine) props.push_back(n + " = " + v.str());
    h += fmt::format("// Constraints checked: {} of the spec's{}{}.\n", checks.size(),
                     props.empty() ? "" : ", with the tuned device's ", fmt::join(props, ", "));
  }
  for (const auto& text : l.unchecked) h += "// Not checked (not integer C++): " + detail::one_line(text) + "\n";
  h += detail::tuned_in_part_summary(policy, "// ");
  for (const auto& p : pins) {
    std::string rule = p.source->name + " == " + p.source->rule.text();
    std::replace_if(
        rule.begin(), rule.end(), [](char c) { return c == '\n' || c == '\r'; }, ' ');
    h += "// " + p.source->name + " is pinned to the size by the spec (" + rule +
         "):\n// an untuned size gets it computed from its own size.\n";
  }
  h += "#pragma once\n#include <cstddef>\n#include <cstdint>\n\n";
  if (auto why = namespace_problem(options.name_space)) throw std::invalid_argument("namespace " + *why);
  h += "namespace " + options.name_space + " {\n\n";
  h += "struct " + k + "_config {\n";
  for (std::size_t i = 0; i < param_ids.size(); ++i)
    h += fmt::format("  {} {};\n", c_type(param_kinds[i]), param_ids[i]);
  h += "};\n\nstruct " + k + "_size {\n";
  for (std::size_t i = 0; i < size_ids.size(); ++i) h += fmt::format("  {} {};\n", c_type(size_kinds[i]), size_ids[i]);
  h += "};\n\n";
  h += fmt::format("inline constexpr std::size_t {}_tuned_count = {};\n\n", k, policy.entries.size());
  h += fmt::format("inline constexpr {0}_size {0}_tuned_sizes[] = {{\n", k);
  for (const auto& e : policy.entries) {
    std::vector<std::string> v;
    for (std::size_t i = 0; i < size_names.size(); ++i) v.push_back(literal(e.size.at(size_names[i]), size_kinds[i]));
    h += "    {" + fmt::format("{}", fmt::join(v, ", ")) + "}," + detail::tuned_in_part_note(e, "  // ") + "\n";
  }
  h += "};\n\n";
  h += fmt::format("inline constexpr {0}_config {0}_tuned_configs[] = {{\n", k);
  for (const auto& e : policy.entries) {
    std::vector<std::string> v;
    for (std::size_t i = 0; i < param_names.size(); ++i)
      v.push_back(literal(e.config.at(param_names[i]), param_kinds[i]));
    h += "    {" + fmt::format("{}", fmt::join(v, ", ")) + "}," + detail::tuned_in_part_note(e, "  // ") + "\n";
  }
  h += "};\n\n";
  h += "namespace detail_" + k + " {\n";
  h += "constexpr double ratio(double a, double b) {\n"
       "  a = a < 1 ? 1 : a;\n  b = b < 1 ? 1 : b;\n  return a > b ? a / b : b / a;\n}\n";
  // A floor of 1 would make every sparsity one value; the smallest positive
  // double keeps 0 finite (and nearest the smallest tuned value).
  if (std::find(size_kinds.begin(), size_kinds.end(), Kind::floating) != size_kinds.end())
    h += "constexpr double float_ratio(double a, double b) {\n"
         "  constexpr double smallest = 2.2250738585072014e-308;\n"
         "  a = a < smallest ? smallest : a;\n  b = b < smallest ? smallest : b;\n  return a > b ? a / b : b / a;\n}\n";
  if (!pins.empty() || !checks.empty()) h += cpp_int_helpers();
  h += "}  // namespace detail_" + k + "\n\n";
  if (!checks.empty()) {
    std::vector<std::string> unused_ok;  // a check need not read every size
    for (std::size_t i = 0; i < size_ids.size(); ++i)
      unused_ok.push_back(fmt::format("[[maybe_unused]] {} {}", c_type(size_kinds[i]), size_ids[i]));
    h += "// Whether the spec's constraints allow config c at this size, on the tuned device.\n";
    h += fmt::format("constexpr bool {0}_allowed([[maybe_unused]] const {0}_config& {3}{1}{2}) noexcept {{\n", k,
                     unused_ok.empty() ? "" : ", ", fmt::join(unused_ok, ", "), v.c);
    std::vector<std::string> terms;
    for (const auto& c : checks) terms.push_back("static_cast<bool>(" + c + ")");
    h += fmt::format("  return {};\n}}\n\n", fmt::join(terms, " &&\n         "));
  }
  std::vector<std::string> params, exact, dist;
  for (std::size_t n = 0; n < size_ids.size(); ++n) {
    params.push_back(fmt::format("{} {}", c_type(size_kinds[n]), size_ids[n]));
    exact.push_back(fmt::format("{0}.{1} == {1}", v.s, size_ids[n]));
    dist.push_back(fmt::format("detail_{0}::{3}(static_cast<double>({2}.{1}), static_cast<double>({1}))", k,
                               size_ids[n], v.s, size_kinds[n] == Kind::floating ? "float_ratio" : "ratio"));
  }
  if (size_ids.empty()) {
    exact.push_back("true");
    dist.push_back("1.0");
  }
  h += fmt::format(
      "// The config for a problem size: exact for a tuned size, else the nearest\n// tuned size's (see the "
      "rule above). The sizes in the spec's order: {}.\n",
      size_names.empty() ? std::string("none") : fmt::format("{}", fmt::join(size_names, ", ")));
  h += fmt::format("constexpr {}_config {}_select({}) noexcept {{\n", k, k, fmt::join(params, ", "));
  // [[maybe_unused]]: a spec without sizes compares none of the tuned ones.
  const std::string loop = fmt::format(
      "  for (std::size_t {1} = 0; {1} < {0}_tuned_count; ++{1}) {{\n"
      "    [[maybe_unused]] const {0}_size& {2} = {0}_tuned_sizes[{1}];\n",
      k, v.i, v.s);
  h += loop;
  h += fmt::format("    if ({}) return {}_tuned_configs[{}];\n  }}\n", fmt::join(exact, " && "), k, v.i);
  h += fmt::format("  std::size_t {} = 0;\n  double {} = 0;\n", v.best, v.best_distance);
  if (!checks.empty())
    h += fmt::format("  std::size_t {} = {}_tuned_count;\n  double {} = 0;\n", v.allowed, k, v.allowed_distance);
  h += loop;
  h += fmt::format("    const double {} = {};\n", v.d, fmt::join(dist, " * "));
  h += fmt::format("    if ({0} == 0 || {1} < {3}) {{\n      {2} = {0};\n      {3} = {1};\n    }}\n", v.i, v.d,
                   v.best, v.best_distance);
  if (!checks.empty()) {
    h += fmt::format("    {0}_config {1} = {0}_tuned_configs[{2}];\n", k, v.c, v.i);
    for (const auto& p : pins) h += fmt::format("    {}.{} = {};\n", v.c, p.id, p.code);
    h += fmt::format("    if ({0}_allowed({1}{2}{3}) && ({4} == {0}_tuned_count || {5} < {6})) {{\n", k, v.c,
                     size_ids.empty() ? "" : ", ", fmt::join(size_ids, ", "), v.allowed, v.d, v.allowed_distance);
    h += fmt::format("      {} = {};\n      {} = {};\n    }}\n", v.allowed, v.i, v.allowed_distance, v.d);
    h += "  }\n";
    // The nearest with its pins computed for this size would be a config
    // no build had: the nearest as it was built, which k_has_config flags.
    h += fmt::format("  if ({0} == {1}_tuned_count) return {1}_tuned_configs[{2}];\n  {2} = {0};\n", v.allowed, k,
                     v.best);
  } else {
    h += "  }\n";
  }
  if (pins.empty()) {
    h += fmt::format("  return {}_tuned_configs[{}];\n}}\n\n", k, v.best);
  } else {
    h += fmt::format("  {0}_config {1} = {0}_tuned_configs[{2}];\n", k, v.c, v.best);
    for (const auto& p : pins) h += fmt::format("  {}.{} = {};\n", v.c, p.id, p.code);
    h += fmt::format("  return {};\n}}\n\n", v.c);
  }
  // Whether select has a config the checks allow: a caller tests it before
  // it launches what select returns (always true without checks, so that
  // the calling code need not change when a retune adds some).
  std::vector<std::string> maybe_unused_params;
  for (const auto& param : params) maybe_unused_params.push_back("[[maybe_unused]] " + param);
  h += fmt::format(
      "// Whether {0}_select has a config for this size: true for a tuned size, and for\n"
      "// an untuned one where the checks allow some tuned config; where false, what\n"
      "// {0}_select returns is not to be run at this size.\n",
      k);
  h += fmt::format("constexpr bool {}_has_config({}) noexcept {{\n", k, fmt::join(maybe_unused_params, ", "));
  if (checks.empty()) {
    h += "  return true;\n}\n\n";
  } else {
    h += loop;
    h += fmt::format("    if ({}) return true;\n  }}\n", fmt::join(exact, " && "));
    h += loop;
    h += fmt::format("    {0}_config {1} = {0}_tuned_configs[{2}];\n", k, v.c, v.i);
    for (const auto& p : pins) h += fmt::format("    {}.{} = {};\n", v.c, p.id, p.code);
    h += fmt::format("    if ({0}_allowed({1}{2}{3})) return true;\n  }}\n  return false;\n}}\n\n", k, v.c,
                     size_ids.empty() ? "" : ", ", fmt::join(size_ids, ", "));
  }
  if (!size_ids.empty()) {
    // The same by named fields: {k}_select({k}_size{{...}}) or a size whose
    // fields were set by name.
    std::vector<std::string> fields;
    for (const auto& id : size_ids) fields.push_back("size." + id);
    for (const auto& [function, type] :
         {std::pair{"_select", k + "_config"}, std::pair{"_has_config", std::string("bool")}})
      h += fmt::format(
          "// The same, with the sizes as named fields.\nconstexpr {1} {0}{2}(const {0}_size& size) noexcept {{\n"
          "  return {0}{2}({3});\n}}\n\n",
          k, type, function, fmt::join(fields, ", "));
  }
  h += "}  // namespace " + options.name_space + "\n";
  return h;
}

std::string emit_json(const Policy& policy) {
  using detail::namer;
  const Layout l = detail::layout_of(policy);
  // The trees online.hpp evaluates: ["size", NAME], ["param", NAME], and a
  // machine property as the tuned device's value, as in the header.
  auto spell = [&](const Ref& r) -> std::string {
    switch (r.what) {
      case Ref::What::size:
        return nlohmann::json::array({"size", l.size_names[r.index]}).dump();
      case Ref::What::param:
        return nlohmann::json::array({"param", l.param_names[r.index]}).dump();
      case Ref::What::machine:
        break;
    }
    return std::to_string(r.value->as_int());
  };
  nlohmann::ordered_json j;
  j["kernel"] = policy.kernel;
  j["selection"] = policy.selection;
  if (!policy.device.empty()) j["device"] = policy.device;
  // The header's argument order, which is also the order its distance
  // multiplies the axes' ratios in (online.hpp follows it to the last bit).
  if (!l.size_names.empty()) j["size_order"] = l.size_names;
  const std::string k = header_prefix(policy.kernel);
  j["untuned_size_rule"] = detail::untuned_size_rule(
      l, k + "_allowed",
      "online.hpp's nearest() returns none and its get() throws (the header's " + k + "_has_config() is false)");
  if (!l.checks.empty() || !l.unchecked.empty()) {
    nlohmann::ordered_json checks, machine;
    checks["constraints"] = nlohmann::ordered_json::array();
    checks["trees"] = nlohmann::ordered_json::array();  // the same, for online.hpp
    for (const Expression* c : l.checks) {
      checks["constraints"].push_back(c->text());
      checks["trees"].push_back(nlohmann::ordered_json::parse(*c->to_tree(namer(l, policy, false, spell))));
    }
    checks["unchecked"] = l.unchecked;
    for (const auto& [n, v] : policy.checks.machine) machine[n] = value_json(v);
    checks["machine"] = machine.is_null() ? nlohmann::ordered_json::object() : machine;
    j["checks"] = checks;  // as the header's <kernel>_allowed
  }
  if (!l.pins.empty()) {
    nlohmann::ordered_json pinned, trees;
    for (const PinnedParameter* p : l.pins) {
      pinned[p->name] = p->rule.text();
      trees[p->name] = nlohmann::ordered_json::parse(*p->rule.to_tree(namer(l, policy, true, spell)));
    }
    j["pinned"] = pinned;  // recomputed from an untuned size, as in the header
    j["pinned_trees"] = trees;
  }
  j["entries"] = nlohmann::ordered_json::array();
  for (const auto& e : policy.entries) {
    nlohmann::ordered_json entry, size, config;
    for (const auto& [n, v] : e.size) size[n] = value_json(v);
    for (const auto& [n, v] : e.config) config[n] = value_json(v);
    entry["size"] = size;
    entry["config"] = config;
    entry["time_us"] = e.time ? nlohmann::ordered_json(e.time->count()) : nlohmann::ordered_json(nullptr);
    if (e.tuned_in_part)
      entry["tuned_in_part"] = {{"measured", e.tuned_in_part->measured}, {"valid", e.tuned_in_part->valid}};
    j["entries"].push_back(entry);
  }
  return j.dump(2) + "\n";
}

Policy make_spec_policy(const Spec& spec, const std::vector<TrialRecord>& trials, Selection selection,
                        double tolerance) {
  Policy p = make_policy(spec.name.empty() ? spec.kernel.entry : spec.name, trials, selection, spec.default_config,
                         tolerance, Goal{spec.objective, spec.metrics});
  p.size_order = spec.size_names;
  for (const auto& param : spec.parameters) p.declared[param.name] = param.values;
  p.pinned = pinned_parameters(spec.constraints, p);
  p.checks = policy_checks(spec.constraints, spec.parameters, p, machine_properties(trials));
  return p;
}

std::string_view emitted_kind_name(EmittedKind kind) {
  switch (kind) {
    case EmittedKind::header:
      return "a policy header";
    case EmittedKind::json:
      return "a policy JSON";
    case EmittedKind::python:
      return "a Python policy module";
    case EmittedKind::triton_configs:
      return "a triton.Config module";
    case EmittedKind::vllm_moe:
      return "a vLLM fused-MoE config";
  }
  return "";
}

std::optional<EmittedKind> emitted_kind_of(std::string_view text) {
  if (text.starts_with(detail::kHeaderOpening)) return EmittedKind::header;
  // Before the triton.Config module's, whose opening the module's begins with.
  if (text.starts_with(detail::kPythonOpening)) return EmittedKind::python;
  if (text.starts_with(detail::kTritonOpening) &&
      text.substr(0, text.find('\n')).find(" distinct config") != std::string_view::npos)
    return EmittedKind::triton_configs;
  // Parsed only where it may be JSON: a tune's CSV or HTML report is not.
  std::string_view json = text;
  if (json.starts_with("\xEF\xBB\xBF")) json.remove_prefix(3);  // a byte order mark, which the parser skips
  const auto first = json.find_first_not_of(" \t\r\n");
  if (first == std::string_view::npos || json[first] != '{') return std::nullopt;
  const auto j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object()) return std::nullopt;
  // online.hpp saves the same format.
  if (j.contains("kernel") && j["kernel"].is_string() && j.contains("selection") && j["selection"].is_string() &&
      j.contains("entries") && j["entries"].is_array())
    return EmittedKind::json;
  // vLLM's: each key a batch size, each value a config with its tiles.
  for (const auto& [key, config] : j.items())
    if (key.empty() ||
        !std::all_of(key.begin(), key.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); }) ||
        !config.is_object() || !config.contains("BLOCK_SIZE_M"))
      return std::nullopt;
  if (j.empty()) return std::nullopt;
  return EmittedKind::vllm_moe;
}

bool is_emitted(std::string_view text, EmittedKind kind) { return emitted_kind_of(text) == kind; }

}  // namespace tunekit
