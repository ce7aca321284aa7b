#pragma once
// The spec loader: a YAML (or JSON) document read section by section, with
// every mistake reported as an InputError at its file:line:column. This
// header holds the document helpers; each section's reader is in its own
// file (kernel.cpp, arguments.cpp, sizes.cpp, space.cpp, search.cpp,
// measure.cpp, application.cpp), and loader.cpp ties them together.
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "spec/detail/text.hpp"
#include "tunekit/backend.hpp"
#include "tunekit/error.hpp"
#include "tunekit/registry.hpp"
#include "tunekit/spec.hpp"

namespace tunekit::spec_detail {

namespace fs = std::filesystem;

inline std::string read_text(const fs::path& file, bool& ok) {
  std::ifstream in(file, std::ios::binary);
  ok = static_cast<bool>(in);
  std::ostringstream ss;
  if (ok) ss << in.rdbuf();
  return ss.str();
}

inline std::string kind_of(const YAML::Node& n) {
  switch (n.Type()) {
    case YAML::NodeType::Scalar:
      return "'" + n.Scalar() + "'";
    case YAML::NodeType::Sequence:
      return "a list";
    case YAML::NodeType::Map:
      return "a mapping";
    default:
      return "nothing";
  }
}

inline bool is_plain(const YAML::Node& n) { return n.Tag() == "?"; }

// A node with the path that names it in messages ("kernel.flags",
// "arguments[1].size") and where it is.
struct Item {
  YAML::Node node;
  std::string path;
  SourceLocation where;
};

struct Entry {
  std::string key;
  YAML::Node key_node;
  YAML::Node value;
};

struct Map {
  Item item;
  std::vector<Entry> entries;
  const Entry* find(std::string_view key) const {
    for (const auto& e : entries)
      if (e.key == key) return &e;
    return nullptr;
  }
};

inline std::string context_name(const std::string& path) { return path.empty() ? "spec" : "'" + path + "'"; }
inline std::string display(const std::string& path) { return path.empty() ? "the spec" : "'" + path + "'"; }

// The value of an expression without names (a literal such as 64 or 2*64),
// or nullopt: limits are checked at load time where the spec fixes them.
std::optional<std::int64_t> constant_int(const Expression& e);

// The languages whose backends allow `allowed`: "cuda and opencl".
std::string languages_with(bool KernelTraits::*allowed);

class Loader {
 public:
  Loader(std::string file, std::string text, fs::path dir)
      : file_(std::move(file)), text_(std::move(text)), dir_(std::move(dir)) {
    std::size_t begin = 0;
    while (begin <= text_.size()) {
      std::size_t nl = text_.find('\n', begin);
      std::string_view line =
          std::string_view(text_).substr(begin, nl == std::string::npos ? std::string::npos : nl - begin);
      if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
      lines_.push_back(line);
      if (nl == std::string::npos) break;
      begin = nl + 1;
    }
  }

  Spec load(const YAML::Node& root);
  // t1_kernel.cpp: a Kernel Tuner T1 file with a KernelSpecification.
  Spec t1(const YAML::Node& root);
  // t1_kernel.cpp: a T1 file's Search, Budget and KernelName alone
  // (load_t1_search), read as t1() reads them.
  T1Search t1_search_only(const YAML::Node& root);

 private:
  // --- locations and errors -------------------------------------------------
  SourceLocation loc(const YAML::Node& n) const {
    YAML::Mark m = n.Mark();
    if (m.line < 0) return SourceLocation{file_, 0, 0};
    return SourceLocation{file_, m.line + 1, m.column + 1};
  }

  // Where a scalar's text begins: past the quote of a quoted scalar, on the
  // first content line of a block scalar.
  SourceLocation content_loc(const Item& it) const {
    SourceLocation w = it.where;
    YAML::Mark m = it.node.Mark();
    if (!it.node.IsScalar() || m.line < 0 || static_cast<std::size_t>(m.line) >= lines_.size()) return w;
    std::string_view line = lines_[m.line];
    if (static_cast<std::size_t>(m.column) >= line.size()) return w;
    char c = line[m.column];
    if (c == '"' || c == '\'') {
      w.column += 1;
    } else if (c == '|' || c == '>') {
      for (std::size_t k = m.line + 1; k < lines_.size(); ++k) {
        std::size_t first = lines_[k].find_first_not_of(" \t");
        if (first == std::string_view::npos) continue;
        w.line = static_cast<int>(k + 1);
        w.column = static_cast<int>(first + 1);
        break;
      }
    }
    return w;
  }

  [[noreturn]] void fail(const SourceLocation& where, const std::string& message) const {
    throw InputError(where, message);
  }
  [[noreturn]] void wrong_type(const Item& it, const std::string& expected) const {
    fail(it.where, display(it.path) + " must be " + expected + ", got " + kind_of(it.node));
  }

  Item child(const Map& m, const Entry& e) const {
    std::string path = m.item.path.empty() ? e.key : m.item.path + "." + e.key;
    return Item{e.value, path, e.value.IsNull() ? loc(e.key_node) : loc(e.value)};
  }
  Item element(const Item& seq, const YAML::Node& el, std::size_t i) const {
    SourceLocation w = loc(el);
    if (w.line == 0 || el.IsNull()) w = seq.where;
    return Item{el, seq.path + "[" + std::to_string(i) + "]", w};
  }
  std::vector<Item> elements(const Item& seq) const {
    std::vector<Item> out;
    std::size_t i = 0;
    for (const auto& el : seq.node) out.push_back(element(seq, el, i++));
    return out;
  }

  // A mapping whose keys must be among `allowed` (empty: any identifier).
  Map map(const Item& it, const std::vector<std::string>& allowed, const std::string& expected = "a mapping") const {
    if (!it.node.IsMap()) wrong_type(it, expected);
    Map m{it, {}};
    std::map<std::string, SourceLocation> seen;
    for (auto iter = it.node.begin(); iter != it.node.end(); ++iter) {
      const auto kv = *iter;  // by value: operator-> yields a temporary
      const YAML::Node key = kv.first;
      if (!key.IsScalar()) fail(loc(key), "keys in " + context_name(it.path) + " must be names, got " + kind_of(key));
      std::string k = key.Scalar();
      if (!allowed.empty() && std::find(allowed.begin(), allowed.end(), k) == allowed.end()) {
        std::string msg = "unknown key '" + k + "' in " + context_name(it.path);
        if (auto near = closest_match(k, allowed)) msg += "; did you mean '" + *near + "'?";
        msg += " (allowed keys: " + join(allowed) + ")";
        fail(loc(key), msg);
      }
      if (auto prev = seen.find(k); prev != seen.end())
        fail(loc(key),
             "duplicate key '" + k + "' in " + context_name(it.path) + " (first at " + prev->second.str() + ")");
      seen.emplace(k, loc(key));
      m.entries.push_back(Entry{k, key, kv.second});
    }
    return m;
  }

  std::optional<Item> get(const Map& m, std::string_view key) const {
    if (const Entry* e = m.find(key)) return child(m, *e);
    return std::nullopt;
  }
  Item require(const Map& m, std::string_view key) const {
    if (const Entry* e = m.find(key)) return child(m, *e);
    fail(m.item.where, "missing required key '" + std::string(key) + "' in " + context_name(m.item.path));
  }

  // --- scalars ----------------------------------------------------------------
  std::string string_of(const Item& it, const std::string& expected = "a string") const {
    if (!it.node.IsScalar()) wrong_type(it, expected);
    if (it.node.Scalar().empty()) fail(it.where, display(it.path) + " must be " + expected + ", got an empty string");
    return it.node.Scalar();
  }

  std::string name_of(const Item& it, const std::string& what) const {
    std::string s = string_of(it, what);
    if (!is_identifier(s))
      fail(content_loc(it), display(it.path) + " must be " + what +
                                " (letters, digits and '_', not starting with a digit), got '" + s + "'");
    return s;
  }

  // A C identifier, optionally qualified with "::".
  // A function name, optionally qualified (ns::f), optionally a template
  // named by expression (gemm<{BM}, 64>) whose arguments are left to the
  // compiler.
  std::string function_name(const Item& it) const {
    const std::string full = string_of(it, "a function name");
    std::string s = full;
    if (auto lt = full.find('<'); lt != std::string::npos) {
      if (full.back() != '>' || lt == 0)
        fail(content_loc(it),
             display(it.path) + " must be a function name or name<template arguments>, got '" + full + "'");
      s = full.substr(0, lt);
    }
    std::size_t begin = 0;
    for (;;) {
      std::size_t sep = s.find("::", begin);
      std::string_view part =
          std::string_view(s).substr(begin, sep == std::string::npos ? std::string::npos : sep - begin);
      if (!is_identifier(part))
        fail(content_loc(it), display(it.path) + " must be a function name, got '" + full + "'");
      if (sep == std::string::npos) return full;
      begin = sep + 2;
    }
  }

  // A plain scalar's int as YAML reads it (0x40 is 64), else nullopt; one
  // beyond an int64 is an error here. A quoted one is left to the caller.
  std::optional<std::int64_t> plain_int(const Item& it) const {
    if (!is_plain(it.node)) return std::nullopt;
    bool beyond_int64 = false;
    auto v = parse_yaml_int(it.node.Scalar(), &beyond_int64);
    if (beyond_int64) fail(content_loc(it), display(it.path) + ": " + it.node.Scalar() + " is beyond a 64-bit integer");
    return v;
  }

  std::int64_t int_of(const Item& it, std::int64_t min, const std::string& expected) const {
    if (!it.node.IsScalar()) wrong_type(it, expected);
    auto v = is_plain(it.node) ? plain_int(it) : parse_int(trim(it.node.Scalar()));
    if (!v) wrong_type(it, expected);
    if (*v < min) fail(content_loc(it), display(it.path) + " must be " + expected + ", got " + std::to_string(*v));
    return *v;
  }

  double number_of(const Item& it, const std::string& expected) const {
    if (!it.node.IsScalar()) wrong_type(it, expected);
    std::string_view s = trim(it.node.Scalar());
    double d = 0;
    bool out_of_range = false;
    if (is_plain(it.node)) {
      if (auto i = plain_int(it)) d = static_cast<double>(*i);
      else if (auto f = parse_yaml_float(s, &out_of_range)) d = *f;
      else if (out_of_range) beyond_float(it, expected);
      else wrong_type(it, expected);
    } else if (auto i = parse_int(s)) {
      d = static_cast<double>(*i);
    } else if (auto f = parse_float(s, &out_of_range)) {
      d = *f;
    } else if (out_of_range) {
      beyond_float(it, expected);
    } else {
      wrong_type(it, expected);
    }
    // YAML's .inf and .nan are numbers, but no setting of a spec means one:
    // refused here, where it is written, rather than by a check that has no
    // place to name.
    if (!std::isfinite(d))
      fail(content_loc(it),
           display(it.path) + " is " + it.node.Scalar() + ", which is not a finite number; expected " + expected);
    return d;
  }

  // A number written well that no double holds (1e400): out of range, not
  // of the wrong type.
  [[noreturn]] void beyond_float(const Item& it, const std::string& expected) const {
    fail(content_loc(it), display(it.path) + " is " + it.node.Scalar() + ", which is out of the range of a float (" +
                              float_range_text() + "); expected " + expected);
  }

  double non_negative(const Item& it) const {
    double d = number_of(it, "a number >= 0");
    if (!(d >= 0)) fail(content_loc(it), display(it.path) + " must be a number >= 0, got " + it.node.Scalar());
    return d;
  }

  Seconds duration_of(const Item& it, bool positive) const {
    if (!it.node.IsScalar()) wrong_type(it, "a duration (seconds, or a number with a unit such as 50ms or 2s)");
    Seconds s;
    try {
      s = parse_duration(it.node.Scalar());
    } catch (const std::invalid_argument& e) {
      fail(content_loc(it), display(it.path) + ": " + e.what());
    }
    if (positive && s.count() <= 0) fail(content_loc(it), display(it.path) + " must be a duration > 0");
    return s;
  }

  // A value: plain scalars are ints, then floats, as YAML 1.2's core schema
  // reads them (0x40 is 64, .inf a float; true/false are 1/0), else strings;
  // quoted scalars are strings.
  Value value_of(const Item& it, const std::string& expected = "a value (int, float or string)") const {
    if (!it.node.IsScalar()) wrong_type(it, expected);
    const std::string& s = it.node.Scalar();
    if (!is_plain(it.node)) return Value(s);
    if (is_boolean(it)) return Value(s[0] == 't' || s[0] == 'T' ? 1 : 0);
    if (auto i = plain_int(it)) return Value(*i);
    bool out_of_range = false;
    if (auto d = parse_yaml_float(s, &out_of_range)) return Value(*d);
    // YAML reads it as a float, which no double holds: no string either.
    if (out_of_range)
      fail(content_loc(it), display(it.path) + " is " + s + ", which is out of the range of a float (" +
                                float_range_text() + "; quote it for the string '" + s + "')");
    return Value(s);
  }
  // A value that becomes a -D define, a size's binding or a stored config
  // key, which an infinity or a NaN cannot be (NaN equals no value, so no
  // config would match it, and the store's JSON has neither).
  Value finite_value_of(const Item& it, const std::string& expected = "a value (int, float or string)") const {
    Value v = value_of(it, expected);
    if (v.is_float() && !std::isfinite(v.as_float()))
      fail(content_loc(it), display(it.path) + " is " + it.node.Scalar() +
                                ", which is not a finite number; a parameter's, size's or config's value must be "
                                "(quote it for the string '" +
                                it.node.Scalar() + "')");
    return v;
  }
  // A plain true or false (which value_of reads as 1 or 0).
  bool is_boolean(const Item& it) const {
    if (!it.node.IsScalar() || !is_plain(it.node)) return false;
    const std::string& s = it.node.Scalar();
    return s == "true" || s == "True" || s == "TRUE" || s == "false" || s == "False" || s == "FALSE";
  }

  template <typename E>
  E enum_of(const Item& it, std::initializer_list<std::pair<const char*, E>> choices) const {
    std::vector<std::string> names;
    for (const auto& c : choices) names.push_back(c.first);
    std::string expected = "one of " + join(names);
    if (!it.node.IsScalar()) wrong_type(it, expected);
    const std::string& s = it.node.Scalar();
    for (const auto& c : choices)
      if (s == c.first) return c.second;
    std::string msg = "bad value '" + s + "' for " + display(it.path) + ": expected " + expected;
    if (auto near = closest_match(s, names)) msg += "; did you mean '" + *near + "'?";
    fail(content_loc(it), msg);
  }

  // One of the names in `table` (an enumeration's, names.hpp), those `keep`
  // accepts when given.
  template <typename E, typename Keep = bool (*)(const Named<E>&)>
  E enum_of(
      const Item& it, NameTable<E> table, Keep keep = [](const Named<E>&) { return true; }) const {
    std::vector<std::string> names;
    for (const auto& n : table)
      if (keep(n)) names.emplace_back(n.name);
    const std::string expected = "one of " + join(names);
    if (!it.node.IsScalar()) wrong_type(it, expected);
    const std::string& s = it.node.Scalar();
    for (const auto& n : table)
      if (keep(n) && s == n.name) return n.value;
    std::string msg = "bad value '" + s + "' for " + display(it.path) + ": expected " + expected;
    if (auto near = closest_match(s, names)) msg += "; did you mean '" + *near + "'?";
    fail(content_loc(it), msg);
  }

  // A name registered in `registry` (a strategy, a backend's language...):
  // the entry's own name, where `it` gives an alias.
  template <typename Entry>
  std::string name_in(const Item& it, const Registry<Entry>& registry) const {
    const std::string name = string_of(it, "a " + registry.kind() + " name");
    const Entry* e = registry.find(name);
    if (!e) fail(content_loc(it), registry.unknown_name_message(name));
    return e->name;
  }

  std::vector<std::string> strings_of(const Item& it) const {
    const std::string expected = "a list of strings";
    if (!it.node.IsSequence()) wrong_type(it, expected);
    std::vector<std::string> out;
    for (const Item& el : elements(it)) {
      if (!el.node.IsScalar())
        fail(el.where,
             display(it.path) + " must be " + expected + ", but " + display(el.path) + " is " + kind_of(el.node));
      out.push_back(el.node.Scalar());
    }
    return out;
  }

  // One expression, or a list of `min` to `max` of them.
  std::vector<Expression> expressions_of(const Item& it, std::size_t min, std::size_t max) const {
    const std::string expected = fmt::format("an expression or a list of {} to {} expressions", min, max);
    std::vector<Expression> out;
    if (it.node.IsSequence()) {
      for (const Item& el : elements(it)) out.push_back(expression_of(el, expected));
    } else {
      out.push_back(expression_of(it, expected));
    }
    if (out.size() < min || out.size() > max) wrong_type(it, expected);
    return out;
  }

  Expression expression_of(const Item& it, const std::string& expected) const {
    if (!it.node.IsScalar() || it.node.Scalar().empty()) wrong_type(it, expected);
    SourceLocation where = content_loc(it);
    try {
      return Expression::parse(it.node.Scalar(), where);
    } catch (const InputError&) {
      throw;
    } catch (const std::exception& e) {
      fail(where, display(it.path) + ": " + e.what());
    }
  }

  fs::path existing_file(const Item& it, const std::string& what) const {
    std::string text = string_of(it, "a file path");
    fs::path p(text);
    if (p.is_relative()) p = dir_ / p;
    p = p.lexically_normal();
    std::error_code ec;
    if (!fs::exists(p, ec)) fail(content_loc(it), what + " '" + text + "' not found (looked for " + p.string() + ")");
    if (!fs::is_regular_file(p, ec))
      fail(content_loc(it), what + " '" + text + "' is not a regular file (" + p.string() + ")");
    return p;
  }

  // --- sections, one file each -----------------------------------------------
  // kernel.cpp: `kernel` and `reference`, checked against the backend's traits.
  KernelSpec kernel(const Item& it) const;
  ReferenceSpec reference(const Item& it, const std::string& language) const;
  std::vector<Expression> cluster_of(const Item& it) const;
  void check_defines(const Spec& s) const;
  // loader.cpp: a spec's name, which names its files in the output folder.
  void check_name(const std::string& name, const SourceLocation& where) const;
  // arguments.cpp: `arguments`, tensor maps included.
  void arguments(const Item& it, Spec& s) const;
  ArgumentSpec argument(const Item& it) const;
  TensorMapSpec tensor_map(const Item& it, const std::string& arg) const;
  void check_tensor_maps(Spec& s) const;
  // sizes.cpp: `sizes` (lists and grids).
  std::vector<Bindings> sizes(const Item& it);
  // space.cpp: `parameters`, `constraints`, `configs`, `default`, `base`.
  void space(const Map& top, Spec& s) const;
  Parameter parameter(const Item& it, const std::string& name, const SourceLocation& name_where) const;
  Config config(const Item& it, const std::vector<Parameter>* declared) const;
  // `base`: the values CCCL's base variant's launch and arguments read.
  void base_values(const Item& it, Spec& s) const;
  // search.cpp: `search` (strategy, budgets, rules, seeds).
  void search(const Item& it, Spec& s) const;
  Config seed(const Item& it, const Spec& s) const;
  // measure.cpp: `tolerance`, `measure` and `output`.
  void tolerance(const Item& it, Spec& s) const;
  void measure(const Item& it, Spec& s) const;
  void output(const Item& it, Spec& s) const;
  // objective.cpp: `metrics` and `objective` (after the sizes and parameters).
  void metrics(const Item& it, Spec& s) const;
  void objective(const Item& it, Spec& s) const;
  // application.cpp: `application` (kernel.language: command).
  ApplicationSpec application(const Item& it, const Spec& s) const;
  // t1_kernel.cpp: a T1 file's arguments, and its expressions in tunekit's language.
  void t1_arguments(const Item& args, Spec& s) const;
  // t1_kernel.cpp: KernelSpecification's Device and Profiling (and the keys
  // of other runs than a tune's), read or warned of.
  void t1_device_and_profiling(const Map& k, Spec& s) const;
  // t1_kernel.cpp: a T1 file's Search and Budget (in `m`, its top level)
  // into s.search; what is left out of them said in `search_warnings` (the
  // strategy's options) and `budget_warnings`.
  void t1_search(const Map& m, Spec& s, std::vector<std::string>& search_warnings,
                 std::vector<std::string>& budget_warnings);
  Expression t1_expression(const Item& it, const Spec& s, const std::string& what) const;

  std::string file_;
  std::string text_;
  fs::path dir_;
  std::vector<std::string_view> lines_;
  std::map<std::string, SourceLocation> size_names_;
  std::vector<std::string> size_order_;  // the size names as declared
};

}  // namespace tunekit::spec_detail
