// The space: `parameters`, `constraints`, `configs` and `default`.
#include "spec/detail/loader.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <unordered_map>

#include "core/detail/distinct_values.hpp"
#include "tunekit/annotation.hpp"
#include "tunekit/builder.hpp"
#include "tunekit/t1.hpp"

namespace tunekit::spec_detail {

namespace {

// A parameter's string that is a Python list expression, as Kernel Tuner's
// tune_params and a T1 file's Values write them: "[2**i for i in range(6)]",
// "list(range(32, 1025, 32))", "[1, 2] + [4]".
bool is_list_expression(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  if (s.starts_with('[')) return true;
  for (std::string_view call : {"range(", "list(", "tuple(", "sorted("})
    if (s.starts_with(call)) return true;
  return false;
}

// An element of a YAML list that reads as a Python comprehension: the
// unquoted `[2**i for i in range(6)]` is a YAML list of one string.
bool reads_as_comprehension(const std::string& s) {
  return s.find(" for ") != std::string::npos && s.find(" in ") != std::string::npos;
}

// A spec that declares parameters for a source with %RANGE% lines (CCCL)
// narrows them: each parameter is one of the lines', with values on its
// line, and no line is left without values (its macro would be undefined in
// every build, which blamed the reference rather than the spec).
void check_against_ranges(const std::vector<Parameter>& declared, const std::string& source, const std::string& file) {
  const std::vector<Parameter> ranges = parameters_from_ranges(parse_range_annotations(source, file), file);
  std::vector<std::string> names;
  for (const auto& r : ranges) names.push_back(r.name);
  for (const auto& p : declared) {
    auto r = std::find_if(ranges.begin(), ranges.end(), [&](const Parameter& q) { return q.name == p.name; });
    if (r == ranges.end())
      throw InputError(
          p.where, fmt::format("'{}' matches no %RANGE% line in {}{} ({})", p.name, file, did_you_mean(p.name, names),
                               names.empty() ? "it has no %RANGE% line ('// %RANGE% NAME label "
                                               "start:end:step')"
                                             : "its %RANGE% parameters: " + join(names)));
    for (const auto& v : p.values)
      if (!v.is_int()) {
        // 2.0 equals 2 on the %RANGE% line, but would reach the code as
        // "#define NAME 2.0".
        throw InputError(p.where, fmt::format("'{}' = {} is not an integer; a %RANGE% line's values are integers "
                                              "({}:{})",
                                              p.name, v.repr(), file, r->where.line));
      } else if (!r->listed(v)) {
        const auto& vs = r->values;
        throw InputError(
            p.where, fmt::format("'{}' = {} is not on its %RANGE% line ({}:{}: {} to {}, {} values)", p.name, v.repr(),
                                 file, r->where.line, vs.front().repr(), vs.back().repr(), vs.size()));
      }
  }
  for (const auto& r : ranges)
    if (std::none_of(declared.begin(), declared.end(), [&](const Parameter& p) { return p.name == r.name; }))
      throw InputError(declared.front().where,
                       fmt::format("the parameters leave out {}, which {}:{} declares with %RANGE%: give it values "
                                   "(or leave out parameters: to tune every %RANGE% line as written)",
                                   r.name, file, r.where.line));
}

}  // namespace

void Loader::space(const Map& m, Spec& s) const {
  bool declared = false;
  if (auto v = get(m, "parameters"); v && !v->node.IsNull()) {
    Map pm = map(*v, {}, "a mapping of parameter names to their values");
    for (const Entry& e : pm.entries) {
      if (!is_identifier(e.key))
        fail(loc(e.key_node),
             "parameter name '" + e.key + "' is not a valid name (letters, digits and '_', not starting with a digit)");
      if (auto reserved = reserved_name_problem(e.key)) fail(loc(e.key_node), *reserved);
      if (auto sz = size_names_.find(e.key); sz != size_names_.end())
        fail(loc(e.key_node), "'" + e.key + "' is both a parameter and a size (at " + sz->second.str() + ")");
      s.parameters.push_back(parameter(child(pm, e), e.key, loc(e.key_node)));
    }
    declared = true;
  }

  if (auto v = get(m, "constraints"); v && !v->node.IsNull()) {
    const std::string expected = "a list of expressions";
    if (v->node.IsScalar()) s.constraints.push_back(expression_of(*v, expected));
    else if (v->node.IsSequence())
      for (const Item& el : elements(*v)) {
        if (!el.node.IsScalar())
          fail(el.where,
               display(v->path) + " must be " + expected + ", but " + display(el.path) + " is " + kind_of(el.node));
        s.constraints.push_back(expression_of(el, "an expression"));
      }
    else wrong_type(*v, expected);
  }

  if (auto v = get(m, "configs"); v && !v->node.IsNull()) {
    if (!v->node.IsSequence()) wrong_type(*v, "a list of configs (mappings of parameter names to values)");
    const std::vector<Item> items = elements(*v);
    std::vector<SourceLocation> where;
    std::unordered_map<std::string, std::size_t> index;  // config key -> position: linear, for lists of 10^5 configs
    for (const Item& el : items) {
      Config c = config(el, declared ? &s.parameters : nullptr);
      // A listed config with a value outside its parameter's list can never
      // run (the default, which may, is only warned about).
      if (declared) {
        const Map entries = map(el, {});
        for (const Entry& e : entries.entries) {
          const std::string& key = e.key;
          auto p =
              std::find_if(s.parameters.begin(), s.parameters.end(), [&](const Parameter& q) { return q.name == key; });
          const Item value = child(entries, e);
          if (p == s.parameters.end() || p->values.empty() || p->listed(value_of(value))) continue;
          std::vector<std::string> listed;
          for (const auto& v : p->values) listed.push_back(v.repr());
          fail(value.where,
               "'" + key + "' = " + value_of(value).repr() + " is not among its values [" + join(listed) + "]");
        }
      }
      if (auto [j, fresh] = index.try_emplace(c.key(), s.configs.size()); !fresh)
        fail(el.where, "config " + c.str() + " repeats configs[" + std::to_string(j->second) + "] (at " +
                           where[j->second].str() + ")");
      s.configs.push_back(std::move(c));
      where.push_back(el.where);
    }
    if (!declared && !s.configs.empty()) {
      // The parameters are implied: each name with its distinct values, in
      // order of appearance, located at its first key.
      std::map<std::string, detail::DistinctValues> values_seen;
      for (std::size_t i = 0; i < s.configs.size(); ++i)
        for (const auto& [name, value] : s.configs[i]) {
          const std::string& key = name;  // clang 14 cannot capture a structured binding
          auto p =
              std::find_if(s.parameters.begin(), s.parameters.end(), [&](const Parameter& q) { return q.name == key; });
          if (p == s.parameters.end()) {
            const Entry* e = map(items[i], {}).find(name);
            const SourceLocation at = e ? loc(e->key_node) : where[i];
            if (auto reserved = reserved_name_problem(name)) fail(at, *reserved);
            if (auto sz = size_names_.find(name); sz != size_names_.end())
              fail(at, "'" + name + "' is both a parameter and a size (at " + sz->second.str() + ")");
            s.parameters.push_back(Parameter{name, {}, at});
            p = s.parameters.end() - 1;
          }
          if (!values_seen[name].add(value)) p->values.push_back(value);
        }
      // A name only some configs give that is a near miss of another is a
      // typo: said at the key, not as a name the other configs miss.
      auto given_by = [&](const std::string& name) {
        return static_cast<std::size_t>(std::count_if(s.configs.begin(), s.configs.end(),
                                                      [&](const Config& c) { return c.find(name) != nullptr; }));
      };
      for (const auto& p : s.parameters) {
        const std::size_t given = given_by(p.name);
        if (given == s.configs.size()) continue;
        // What a misspelt key stands for: a name no config gives beside it,
        // given by at least as many configs (the typo is the rarer one).
        std::vector<std::string> others;
        for (const auto& q : s.parameters)
          if (q.name != p.name && given_by(q.name) >= given &&
              std::none_of(s.configs.begin(), s.configs.end(),
                           [&](const Config& c) { return c.find(p.name) && c.find(q.name); }))
            others.push_back(q.name);
        if (auto near = closest_match(p.name, others))
          fail(p.where, fmt::format("'{}' is given by {} of the {} configs; did you mean '{}'? (a config gives "
                                    "every parameter a value)",
                                    p.name, given, s.configs.size(), *near));
      }
      // A name that fewer than half the configs give is more likely a key
      // those few have too many than one all the others lack: said at its
      // first, where the fix is.
      for (const auto& p : s.parameters)
        if (const std::size_t given = given_by(p.name); 2 * given < s.configs.size())
          fail(p.where, fmt::format("'{}' is given by {} of the {} configs; a config gives every parameter a value "
                                    "(give it in every config, or remove it)",
                                    p.name, given, s.configs.size()));
      // Like a declared space's configs, each one gives every parameter.
      for (std::size_t i = 0; i < s.configs.size(); ++i) {
        std::vector<std::string> missing;
        for (const auto& p : s.parameters)
          if (!s.configs[i].find(p.name)) missing.push_back(p.name);
        if (!missing.empty())
          fail(where[i], "'configs[" + std::to_string(i) + "]' misses parameter" + (missing.size() > 1 ? "s " : " ") +
                             join(missing) + "; a config gives every parameter a value");
      }
      declared = true;
    }
  }

  if (!declared && s.configs.empty()) {
    // A CCCL-style source declares its own parameters with %RANGE% lines.
    bool ok = false;
    std::string source = read_text(s.kernel.source, ok);
    if (ok && source.find("%RANGE%") != std::string::npos)
      s.parameters =
          parameters_from_ranges(parse_range_annotations(source, s.kernel.source.string()), s.kernel.source.string());
  }

  // Through tunable lines, a parameter that names none would fail every
  // config's build, each failure located at the source: it is an error of
  // the spec, at the parameter's name.
  if (!s.parameters.empty()) {
    bool ok = false;
    const std::string source = read_text(s.kernel.source, ok);
    const std::string file = s.kernel.source.string();
    if (ok && s.kernel.injection == Injection::automatic && !has_tunable_lines(source)) {
      // A comment that reads like a tunable line and is not one (`//
      // Tunable`) would leave the source to -D defines that nothing reads:
      // every config the same code.
      try {
        (void)tunable_names(source, file);
      } catch (const InputError& e) {
        throw InputError(e.where(), e.message() + " (or, if the comment is prose, set kernel.injection: defines)");
      }
    }
    if (ok && uses_tunable_lines(s.kernel.injection, source)) {
      const std::vector<std::string> names = tunable_names(source, file);
      // A source with both kinds of annotation is read by its tunable lines
      // under injection: auto; a %RANGE% parameter is then none of theirs.
      std::vector<std::string> ranged;
      if (s.kernel.injection == Injection::automatic && source.find("%RANGE%") != std::string::npos)
        for (const auto& r : parse_range_annotations(source, file)) ranged.push_back(r.name);
      for (const auto& p : s.parameters)
        if (!std::binary_search(names.begin(), names.end(), p.name))
          fail(p.where, "'" + p.name + "' matches no '// tunable' line in " + file + did_you_mean(p.name, names) +
                            tunable_names_text(names) +
                            (std::find(ranged.begin(), ranged.end(), p.name) == ranged.end()
                                 ? ""
                                 : "; it is a %RANGE% parameter of the source, which has both kinds of annotation: "
                                   "set kernel.injection: range to tune its %RANGE% lines"));
    } else if (ok && resolve_injection(s.kernel.injection, source, file) == Injection::range_defines) {
      // As the builder decides: prose that mentions %RANGE% is no annotation.
      check_against_ranges(s.parameters, source, file);
    }
  }

  if (auto v = get(m, "default"); v) {
    // A value no config has is said by default_config_problem() when the
    // tune starts (issue #20: a warning, and the first valid config is the
    // baseline), like a default that breaks a constraint on this machine.
    s.default_config = config(*v, &s.parameters);
    s.default_config_where = content_loc(*v);
  }

  if (auto v = get(m, "base")) base_values(*v, s);
}

void Loader::base_values(const Item& it, Spec& s) const {
  // Only a source the base is built from: given for any other, the values
  // would go nowhere, silently.
  bool ok = false;
  const std::string source = read_text(s.kernel.source, ok);
  const std::string file = s.kernel.source.string();
  const bool named_base =
      std::any_of(s.parameters.begin(), s.parameters.end(), [](const Parameter& p) { return p.name == kTuneBase; });
  if (ok && (resolve_injection(s.kernel.injection, source, file) != Injection::range_defines ||
             !has_tune_base_branch(source) || named_base))
    fail(it.where, fmt::format("'base' gives the values that CCCL's base variant ({}=1) reads in its launch, entry "
                               "and arguments, but {} {}, so no base is built; remove 'base'",
                               kTuneBase, file,
                               named_base ? fmt::format("has a parameter named {}", kTuneBase)
                                          : fmt::format("is no %RANGE% source whose preprocessor reads {} (`#if {}`)",
                                                        kTuneBase, kTuneBase)));
  std::vector<std::string> names;
  for (const auto& p : s.parameters) names.push_back(p.name);
  const Map entries = map(it, {}, "a mapping of parameter names to the values CUB's own policy uses");
  for (const Entry& e : entries.entries) {
    if (e.key == kTuneBase)
      fail(loc(e.key_node), fmt::format("'{}' is the base's own define ({}=1); 'base' gives the parameters its "
                                        "launch, entry and arguments read",
                                        kTuneBase, kTuneBase));
    if (std::find(names.begin(), names.end(), e.key) == names.end())
      fail(loc(e.key_node),
           "unknown parameter '" + e.key + "' in 'base'" + did_you_mean(e.key, names) +
               (names.empty() ? "; the spec declares no parameters" : " (parameters: " + join(names) + ")"));
    // As on a %RANGE% line, where each of these is declared.
    const Item value = child(entries, e);
    if (!value.node.IsScalar() || !value_of(value).is_int())
      fail(content_loc(value), "'base." + e.key + "' must be an integer, as a %RANGE% parameter's values are, got " +
                                   (value.node.IsScalar() ? value_of(value).repr() : kind_of(value.node)));
  }
  s.base_values = config(it, nullptr);
  s.base_values_where = it.where;
}

Parameter Loader::parameter(const Item& it, const std::string& name, const SourceLocation& name_where) const {
  Parameter p;
  p.name = name;
  p.where = name_where;
  const std::string expected =
      "a list of values, a range 'start:end:step', a Python list expression \"[2**i for i in range(6)]\" or "
      "{pow2: [lo, hi]}";
  if (it.node.IsSequence()) {
    std::vector<Item> els = elements(it);
    if (els.empty()) fail(it.where, "parameter '" + name + "' has no values");
    detail::DistinctValues seen;
    for (const Item& el : els) {
      if (!el.node.IsScalar()) wrong_type(el, "a value (int, float or string)");
      if (el.node.Tag() != "!" && reads_as_comprehension(el.node.Scalar())) {
        // YAML splits the list at its commas (range(3, 7)): the quoting
        // to suggest is of every piece, joined as they were written.
        std::string whole;
        for (const Item& piece : els) whole += (whole.empty() ? "" : ", ") + piece.node.Scalar();
        fail(content_loc(el), "parameter '" + name + "': '" + el.node.Scalar() +
                                  "' reads as a Python comprehension, but YAML took the list around it as a list " +
                                  (els.size() == 1 ? std::string("of one string")
                                                   : "of " + std::to_string(els.size()) + " strings, split at its commas") +
                                  "; quote the whole list to have it evaluated: " + name + ": \"[" + whole + "]\"");
      }
      Value v = finite_value_of(el);
      if (auto j = seen.add(v))
        fail(content_loc(el),
             "duplicate value " + v.repr() + " in parameter '" + name + "' (also at index " + std::to_string(*j) + ")");
      p.values.push_back(std::move(v));
    }
  } else if (it.node.IsMap()) {
    Map m = map(it, {"pow2"}, expected);
    Item range = require(m, "pow2");
    const std::string pexp = "a list [lo, hi] of two powers of two";
    if (!range.node.IsSequence() || range.node.size() != 2) wrong_type(range, pexp);
    std::vector<Item> ends = elements(range);
    std::int64_t lo = int_of(ends[0], 1, "a power of two >= 1");
    std::int64_t hi = int_of(ends[1], 1, "a power of two >= 1");
    for (int i = 0; i < 2; ++i) {
      std::int64_t v = i == 0 ? lo : hi;
      if ((v & (v - 1)) != 0)
        fail(content_loc(ends[i]), display(range.path) + ": " + std::to_string(v) + " is not a power of two");
    }
    if (lo > hi)
      fail(range.where,
           display(range.path) + ": lo (" + std::to_string(lo) + ") is greater than hi (" + std::to_string(hi) + ")");
    for (std::int64_t v = lo;; v *= 2) {
      p.values.emplace_back(v);
      if (v == hi) break;
    }
  } else if (it.node.IsScalar()) {
    const std::string& s = it.node.Scalar();
    if (is_list_expression(s)) {
      // Evaluated as a T1 file's Values are, with Python's semantics.
      try {
        p.values = evaluate_value_list(s, content_loc(it));
      } catch (const InputError& e) {
        throw InputError(e.where(), "parameter '" + name + "': " + e.message());
      }
      if (p.values.empty()) fail(it.where, "parameter '" + name + "' has no values (its list expression is empty)");
      detail::DistinctValues seen;
      for (std::size_t i = 0; i < p.values.size(); ++i)
        if (auto j = seen.add(p.values[i]))
          fail(content_loc(it), "duplicate value " + p.values[i].repr() + " in parameter '" + name + "' (at index " +
                                    std::to_string(*j) + " and " + std::to_string(i) + " of its list expression)");
    } else if (s.find(':') != std::string::npos) {
      IntRange r;
      try {
        r = parse_int_range(s, content_loc(it), /*require_step=*/false);
      } catch (const InputError& e) {
        throw InputError(e.where(), "parameter '" + name + "': " + e.message());
      }
      append_range(r, p.values);
    } else {
      p.values.push_back(finite_value_of(it));
    }
  } else {
    wrong_type(it, expected);
  }
  return p;
}

Config Loader::config(const Item& it, const std::vector<Parameter>* declared) const {
  Map m = map(it, {}, "a mapping of parameter names to values");
  std::vector<std::pair<std::string, Value>> entries;
  for (const Entry& e : m.entries) {
    if (!is_identifier(e.key)) fail(loc(e.key_node), "'" + e.key + "' is not a valid parameter name");
    const Parameter* param = nullptr;
    if (declared) {
      auto known = std::find_if(declared->begin(), declared->end(), [&](const Parameter& p) { return p.name == e.key; });
      if (known == declared->end()) {
        std::vector<std::string> names;
        for (const auto& p : *declared) names.push_back(p.name);
        std::string msg = "unknown parameter '" + e.key + "' in " + context_name(it.path);
        if (names.empty()) {
          msg += "; the spec declares no parameters";
        } else {
          if (auto near = closest_match(e.key, names)) msg += "; did you mean '" + *near + "'?";
          msg += " (parameters: " + join(names) + ")";
        }
        fail(loc(e.key_node), msg);
      }
      param = &*known;
    }
    Value v = finite_value_of(child(m, e));
    // As listed (a value outside the lists stays as given: the default's
    // check says so later).
    if (const Value* as_listed = param ? param->listed(v) : nullptr) v = *as_listed;
    entries.emplace_back(e.key, std::move(v));
  }
  if (declared) {  // parameter order; a config names every parameter
    std::vector<std::pair<std::string, Value>> ordered;
    std::vector<std::string> missing;
    for (const auto& p : *declared) {
      auto e = std::find_if(entries.begin(), entries.end(), [&](const auto& x) { return x.first == p.name; });
      if (e == entries.end()) missing.push_back(p.name);
      else ordered.push_back(std::move(*e));
    }
    if (!missing.empty())
      fail(it.where, context_name(it.path) + " misses parameter" + (missing.size() > 1 ? "s " : " ") + join(missing) +
                         "; a config gives every parameter a value");
    entries = std::move(ordered);
  }
  return Config(std::move(entries));
}

}  // namespace tunekit::spec_detail
