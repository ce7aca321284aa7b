#include "tunekit/options.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include <fmt/format.h>

#include "core/detail/text.hpp"
#include "tunekit/registry.hpp"

namespace tunekit {

std::string_view to_string(OptionSpec::Type t) {
  switch (t) {
    case OptionSpec::Type::integer:
      return "integer";
    case OptionSpec::Type::real:
      return "number";
    case OptionSpec::Type::boolean:
      return "true or false";
    case OptionSpec::Type::text:
      return "text";
  }
  return "?";
}

namespace {

std::string bounds(const OptionSpec& s) {
  const bool lo = std::isfinite(s.min), hi = std::isfinite(s.max);
  if (lo && hi) return fmt::format(" in [{}, {}]", s.min, s.max);
  if (lo) return fmt::format(" >= {}", s.min);
  if (hi) return fmt::format(" <= {}", s.max);
  return "";
}

std::string expected(const OptionSpec& s) {
  if (s.type == OptionSpec::Type::text && !s.choices.empty()) return "one of " + detail::join(s.choices);
  return std::string(to_string(s.type)) + bounds(s);
}

// Whether `v` is a value of `s` (an int is one of a real option).
bool fits(const OptionSpec& s, const Value& v) {
  switch (s.type) {
    case OptionSpec::Type::integer:
      if (!v.is_int()) return false;
      break;
    case OptionSpec::Type::real:
      if (!v.is_number()) return false;
      break;
    case OptionSpec::Type::boolean:
      return v.is_int() && (v.as_int() == 0 || v.as_int() == 1);
    case OptionSpec::Type::text:
      return v.is_string() &&
             (s.choices.empty() || std::find(s.choices.begin(), s.choices.end(), v.as_string()) != s.choices.end());
  }
  return v.to_double() >= s.min && v.to_double() <= s.max;
}

}  // namespace

std::string declaration_problem(const std::vector<OptionSpec>& specs) {
  for (auto it = specs.begin(); it != specs.end(); ++it) {
    if (it->name.empty()) return "an option has no name";
    // `=` ends the name in NAME=VALUE, `:` names a strategy (genetic:population),
    // and the rest cannot be typed as one word.
    if (it->name.find_first_of("=:, \t\n") != std::string::npos)
      return "option '" + it->name + "': a name cannot hold '=', ':', ',' or white space (--option NAME=VALUE)";
    if (std::any_of(specs.begin(), it, [&](const OptionSpec& before) { return before.name == it->name; }))
      return "option '" + it->name + "' is declared twice";
    const bool number = it->type == OptionSpec::Type::integer || it->type == OptionSpec::Type::real;
    if (std::isnan(it->min) || std::isnan(it->max)) return "option '" + it->name + "': a bound is not a number";
    if (!number && (std::isfinite(it->min) || std::isfinite(it->max)))
      return fmt::format("option '{}': bounds on an option of type {}, which only numbers have", it->name,
                         to_string(it->type));
    if (it->type != OptionSpec::Type::text && !it->choices.empty())
      return fmt::format("option '{}': choices on an option of type {}, which only text has", it->name,
                         to_string(it->type));
    if (number && it->default_value.is_number() && !std::isfinite(it->default_value.to_double()))
      return fmt::format("option '{}': its default {} is not finite", it->name, it->default_value.repr());
    if (!fits(*it, it->default_value))
      return fmt::format("option '{}': its default {} is not {}", it->name, it->default_value.repr(), expected(*it));
  }
  return "";
}

std::string describe(const OptionSpec& s) {
  const std::string value =
      s.type == OptionSpec::Type::boolean ? (s.default_value.truthy() ? "true" : "false") : s.default_value.str();
  return fmt::format("{} ({}, default {}): {}", s.name, expected(s), value, s.help);
}

OptionValue parse_option_assignment(std::string_view text, const SourceLocation& where) {
  const auto eq = text.find('=');
  if (eq == std::string_view::npos || eq == 0)
    throw InputError(where, "expected NAME=VALUE, got '" + std::string(text) + "'");
  OptionValue o;
  o.name = std::string(text.substr(0, eq));
  const std::string v(text.substr(eq + 1));
  o.where = where;
  o.written = v;
  o.written_as_boolean = v == "true" || v == "True" || v == "false" || v == "False";
  if (o.written_as_boolean) o.value = Value(v[0] == 't' || v[0] == 'T' ? 1 : 0);
  else {
    try {
      std::size_t used = 0;
      const long long i = std::stoll(v, &used);
      if (used == v.size()) {
        o.value = Value(static_cast<std::int64_t>(i));
        return o;
      }
      const double d = std::stod(v, &used);
      o.value = used == v.size() ? Value(d) : Value(v);
    } catch (const std::exception&) {
      o.value = Value(v);
    }
  }
  return o;
}

std::vector<OptionValue> parse_option_assignments(const std::vector<std::string>& texts, std::string_view flag) {
  std::vector<OptionValue> out;
  for (const auto& t : texts) {
    OptionValue o = parse_option_assignment(t, {std::string(flag) + " " + t});
    for (const auto& before : out)
      if (before.name == o.name)
        throw InputError(o.where, fmt::format("'{}' is given twice ({} and {}); give it once", o.name,
                                              before.where.file, o.where.file));
    out.push_back(std::move(o));
  }
  return out;
}

Options Options::resolve(std::string_view owner, const std::vector<OptionSpec>& specs,
                         const std::vector<OptionValue>& given,
                         const std::function<std::string(const std::string& name)>& elsewhere) {
  Options out;
  for (const OptionSpec& s : specs) out.values_[s.name] = s.default_value;
  std::vector<std::string> names;
  for (const OptionSpec& s : specs) names.push_back(s.name);
  for (const OptionValue& g : given) {
    auto spec = std::find_if(specs.begin(), specs.end(), [&](const OptionSpec& s) { return s.name == g.name; });
    if (spec == specs.end()) {
      // "genetic:population=40" (bench/search's form, which names the
      // strategy too) is judged by the name after the colon, and a known
      // one is answered with the form that works here.
      const auto colon = g.name.find(':');
      const std::string bare = colon == std::string::npos ? g.name : g.name.substr(colon + 1);
      const std::string hint = elsewhere ? elsewhere(bare) : std::string();
      if (names.empty())
        throw InputError(g.where, "option '" + g.name + "': " + std::string(owner) + " takes no options" + hint);
      if (bare != g.name && std::find(names.begin(), names.end(), bare) != names.end())
        throw InputError(g.where, fmt::format("option '{}' of {}: write it as {}=VALUE (the option's name alone)",
                                              g.name, owner, bare));
      const std::string typed = bare == g.name ? std::string() : "option '" + g.name + "': ";
      throw InputError(g.where, typed + unknown_name_message("option", bare, names, owner) + hint);
    }
    auto bad = [&]() -> InputError {
      const std::string got = g.written_as_boolean ? (g.value.truthy() ? "true" : "false") : g.value.repr();
      return InputError(g.where,
                        fmt::format("option '{}' of {} must be {}, got {}", g.name, owner, expected(*spec), got));
    };
    Value v = g.value;
    if (spec->type == OptionSpec::Type::real && v.is_number()) v = Value(v.to_double());
    if (spec->type == OptionSpec::Type::text) {
      if (!v.is_string()) v = Value(g.written.empty() ? v.str() : g.written);
      if (!spec->choices.empty() &&
          std::find(spec->choices.begin(), spec->choices.end(), v.as_string()) == spec->choices.end())
        throw InputError(g.where, fmt::format("option '{}' of {} must be one of {}, got '{}'{}", g.name, owner,
                                              detail::join(spec->choices), v.as_string(),
                                              did_you_mean(v.as_string(), spec->choices)));
    }
    const bool number = spec->type == OptionSpec::Type::integer || spec->type == OptionSpec::Type::real;
    if ((number && g.written_as_boolean) || !fits(*spec, v)) throw bad();
    out.values_[spec->name] = v;
  }
  return out;
}

const Value& Options::at(std::string_view name) const {
  auto it = values_.find(name);
  if (it == values_.end()) throw std::out_of_range("no option named '" + std::string(name) + "'");
  return it->second;
}

std::int64_t Options::integer(std::string_view name) const { return at(name).as_int(); }
double Options::real(std::string_view name) const { return at(name).to_double(); }
bool Options::boolean(std::string_view name) const { return at(name).truthy(); }
const std::string& Options::text(std::string_view name) const { return at(name).as_string(); }

}  // namespace tunekit
