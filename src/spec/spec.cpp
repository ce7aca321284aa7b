// Loading a spec (YAML or JSON, through yaml-cpp) with every mistake
// reported as an InputError at its file:line:column.
#include "tunekit/spec.hpp"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <fstream>
#include <initializer_list>
#include <map>
#include <regex>
#include <sstream>

#include "spec/detail/text.hpp"
#include "tunekit/annotation.hpp"
#include "tunekit/backend.hpp"
#include "tunekit/output.hpp"
#include "tunekit/error.hpp"
#include "tunekit/registry.hpp"
#include "tunekit/strategy.hpp"

namespace tunekit {
namespace {

namespace fs = std::filesystem;
using namespace spec_detail;

std::string read_text(const fs::path& file, bool& ok) {
  std::ifstream in(file, std::ios::binary);
  ok = static_cast<bool>(in);
  std::ostringstream ss;
  if (ok) ss << in.rdbuf();
  return ss.str();
}

std::string kind_of(const YAML::Node& n) {
  switch (n.Type()) {
    case YAML::NodeType::Scalar: return "'" + n.Scalar() + "'";
    case YAML::NodeType::Sequence: return "a list";
    case YAML::NodeType::Map: return "a mapping";
    default: return "nothing";
  }
}

bool is_plain(const YAML::Node& n) { return n.Tag() == "?"; }

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

std::string context_name(const std::string& path) { return path.empty() ? "spec" : "'" + path + "'"; }
std::string display(const std::string& path) { return path.empty() ? "the spec" : "'" + path + "'"; }

class Loader {
 public:
  Loader(std::string file, std::string text, fs::path dir) : file_(std::move(file)), text_(std::move(text)), dir_(std::move(dir)) {
    std::size_t begin = 0;
    while (begin <= text_.size()) {
      std::size_t nl = text_.find('\n', begin);
      std::string_view line = std::string_view(text_).substr(begin, nl == std::string::npos ? std::string::npos : nl - begin);
      if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
      lines_.push_back(line);
      if (nl == std::string::npos) break;
      begin = nl + 1;
    }
  }

  Spec load(const YAML::Node& root);

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
      if (!key.IsScalar())
        fail(loc(key), "keys in " + context_name(it.path) + " must be names, got " + kind_of(key));
      std::string k = key.Scalar();
      if (!allowed.empty() && std::find(allowed.begin(), allowed.end(), k) == allowed.end()) {
        std::string msg = "unknown key '" + k + "' in " + context_name(it.path);
        if (auto near = closest_match(k, allowed)) msg += "; did you mean '" + *near + "'?";
        msg += " (allowed keys: " + join(allowed) + ")";
        fail(loc(key), msg);
      }
      if (auto prev = seen.find(k); prev != seen.end())
        fail(loc(key), "duplicate key '" + k + "' in " + context_name(it.path) + " (first at " + prev->second.str() + ")");
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
      fail(content_loc(it), display(it.path) + " must be " + what + " (letters, digits and '_', not starting with a digit), got '" + s + "'");
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
        fail(content_loc(it), display(it.path) + " must be a function name or name<template arguments>, got '" + full + "'");
      s = full.substr(0, lt);
    }
    std::size_t begin = 0;
    for (;;) {
      std::size_t sep = s.find("::", begin);
      std::string_view part = std::string_view(s).substr(begin, sep == std::string::npos ? std::string::npos : sep - begin);
      if (!is_identifier(part)) fail(content_loc(it), display(it.path) + " must be a function name, got '" + full + "'");
      if (sep == std::string::npos) return full;
      begin = sep + 2;
    }
  }

  std::int64_t int_of(const Item& it, std::int64_t min, const std::string& expected) const {
    if (!it.node.IsScalar()) wrong_type(it, expected);
    auto v = parse_int(trim(it.node.Scalar()));
    if (!v) wrong_type(it, expected);
    if (*v < min) fail(content_loc(it), display(it.path) + " must be " + expected + ", got " + std::to_string(*v));
    return *v;
  }

  double number_of(const Item& it, const std::string& expected) const {
    if (!it.node.IsScalar()) wrong_type(it, expected);
    std::string_view s = trim(it.node.Scalar());
    double d = 0;
    if (auto i = parse_int(s)) d = static_cast<double>(*i);
    else if (auto f = parse_float(s)) d = *f;
    else wrong_type(it, expected);
    return d;
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

  // A value: plain scalars are ints, then floats (true/false are 1/0), else
  // strings; quoted scalars are strings.
  Value value_of(const Item& it, const std::string& expected = "a value (int, float or string)") const {
    if (!it.node.IsScalar()) wrong_type(it, expected);
    const std::string& s = it.node.Scalar();
    if (!is_plain(it.node)) return Value(s);
    if (s == "true" || s == "True" || s == "TRUE") return Value(1);
    if (s == "false" || s == "False" || s == "FALSE") return Value(0);
    return parse_value_text(s);
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

  // A name registered in `registry` (a strategy, a backend's language...).
  template <typename Entry>
  std::string name_in(const Item& it, const Registry<Entry>& registry) const {
    const std::string name = string_of(it, "a " + registry.kind() + " name");
    if (!registry.find(name)) fail(content_loc(it), unknown_name_message(registry.kind(), name, registry.names()));
    return name;
  }

  std::vector<std::string> strings_of(const Item& it) const {
    const std::string expected = "a list of strings";
    if (!it.node.IsSequence()) wrong_type(it, expected);
    std::vector<std::string> out;
    for (const Item& el : elements(it)) {
      if (!el.node.IsScalar()) fail(el.where, display(it.path) + " must be " + expected + ", but " + display(el.path) + " is " + kind_of(el.node));
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
    if (!fs::exists(p, ec))
      fail(content_loc(it), what + " '" + text + "' not found (looked for " + p.string() + ")");
    if (!fs::is_regular_file(p, ec)) fail(content_loc(it), what + " '" + text + "' is not a regular file (" + p.string() + ")");
    return p;
  }

  // --- sections ---------------------------------------------------------------
  KernelSpec kernel(const Item& it) const;
  ArgumentSpec argument(const Item& it) const;
  TensorMapSpec tensor_map(const Item& it, const std::string& arg) const;
  std::vector<Expression> cluster_of(const Item& it) const;
  void check_tensor_maps(Spec& s) const;
  std::vector<Bindings> sizes(const Item& it);
  Parameter parameter(const Item& it, const std::string& name, const SourceLocation& name_where) const;
  Config config(const Item& it, const std::vector<Parameter>* declared) const;
  Config seed(const Item& it, const Spec& s) const;
  ReferenceSpec reference(const Item& it, const std::string& language) const;
  ApplicationSpec application(const Item& it, const Spec& s) const;

  std::string file_;
  std::string text_;
  fs::path dir_;
  std::vector<std::string_view> lines_;
  std::map<std::string, SourceLocation> size_names_;
};

// The languages whose backends allow `allowed`: "cuda and opencl".
std::string languages_with(bool KernelTraits::*allowed) {
  std::vector<std::string> out;
  for (const BackendInfo& b : backends().entries())
    if (b.kernel.*allowed) out.insert(out.end(), b.languages.begin(), b.languages.end());
  if (out.size() <= 1) return join(out);
  const std::string last = out.back();
  out.pop_back();
  return join(out) + " and " + last;
}

KernelSpec Loader::kernel(const Item& it) const {
  Map m = map(it, {"source", "entry", "language", "compiler", "flags", "injection", "arch", "grid", "block",
                   "shared_memory", "cluster"});
  KernelSpec k;
  k.source = existing_file(require(m, "source"), "kernel source file");
  if (auto v = get(m, "language")) {
    const std::vector<std::string> known = kernel_languages();
    std::string name = string_of(*v, "a kernel language");
    if (std::find(known.begin(), known.end(), name) == known.end()) {
      std::string msg = "bad value '" + name + "' for " + display(v->path) + ": expected one of " + join(known);
      if (auto near = closest_match(name, known)) msg += "; did you mean '" + *near + "'?";
      fail(content_loc(*v), msg);
    }
    k.language = name;
  }
  const KernelTraits& traits = backend_for_language(k.language).kernel;
  k.flags = traits.default_flags;
  if (traits.application) {
    // An application: the user's build and run commands ('application')
    // replace the compiler and the call, so there is no entry to call.
    for (const char* key : {"compiler", "flags", "arch", "grid", "block", "shared_memory", "cluster"})
      if (const Entry* e = m.find(key))
        fail(loc(e->key_node), "'" + std::string(key) + "' does not apply to a " + k.language +
                                   " kernel: its build and run commands are given in 'application'");
  }
  if (traits.entry) k.entry = function_name(require(m, "entry"));
  else if (auto v = get(m, "entry")) k.entry = function_name(*v);
  if (auto v = get(m, "compiler")) {
    if (!traits.compilers.empty()) {
      const std::string name = string_of(*v, "one of " + join(traits.compilers));
      if (std::find(traits.compilers.begin(), traits.compilers.end(), name) == traits.compilers.end()) {
        std::string msg = "bad value '" + name + "' for " + display(v->path) + ": expected one of " + join(traits.compilers);
        if (auto near = closest_match(name, traits.compilers)) msg += "; did you mean '" + *near + "'?";
        fail(content_loc(*v), msg);
      }
      k.compiler = name;
    } else {
      k.compiler = string_of(*v, "a compiler command");
    }
  }
  if (auto v = get(m, "flags")) k.flags = strings_of(*v);
  if (auto v = get(m, "arch")) k.arch = string_of(*v, "an architecture such as sm_90a");
  if (auto v = get(m, "grid")) k.launch.grid = expressions_of(*v, 1, 3);
  if (auto v = get(m, "block")) k.launch.block = expressions_of(*v, 1, 3);
  if (auto v = get(m, "shared_memory")) k.launch.shared_memory = expression_of(*v, "an expression (bytes)");
  if (auto v = get(m, "cluster")) {
    if (!traits.cluster)
      fail(loc(m.find("cluster")->key_node), "'cluster' (thread-block clusters) applies to " +
                                                 languages_with(&KernelTraits::cluster) + " kernels, not " + k.language);
    k.launch.cluster = cluster_of(*v);
  }
  if (traits.launch && (k.launch.grid.empty() || k.launch.block.empty()))
    fail(it.where, "a " + k.language + " kernel needs 'grid' and 'block' in 'kernel' (expressions over sizes and "
                   "parameters, e.g. grid: [\"ceil_div(N, BLOCK)\"], block: [BLOCK]; quote an expression with a comma)");
  if (!traits.launch && !traits.application && (!k.launch.grid.empty() || !k.launch.block.empty() || k.launch.shared_memory))
    fail(it.where, "'grid', 'block' and 'shared_memory' apply to " + languages_with(&KernelTraits::launch) +
                       " kernels, not " + k.language);
  if (auto v = get(m, "injection"))
    k.injection = traits.defines ? enum_of<Injection>(*v, {{"auto", Injection::automatic},
                                                           {"defines", Injection::defines},
                                                           {"tunable", Injection::tunable_lines},
                                                           {"range", Injection::range_defines}})
                                 : enum_of<Injection>(*v, {{"auto", Injection::automatic},
                                                           {"tunable", Injection::tunable_lines},
                                                           {"range", Injection::range_defines},
                                                           {"none", Injection::defines}});
  return k;
}

ArgumentSpec Loader::argument(const Item& it) const {
  Map m = map(it, {"name", "type", "size", "value", "fill", "role", "tensor_map"},
              "a mapping such as {name: A, type: f32, size: N}");
  ArgumentSpec a;
  a.where = it.where;
  a.name = name_of(require(m, "name"), "a C identifier");
  if (auto t = get(m, "tensor_map")) {
    for (const char* key : {"type", "size", "value", "fill", "role"})
      if (const Entry* e = m.find(key))
        fail(loc(e->key_node), "argument '" + a.name + "' is a tensor map: '" + key +
                                   "' does not apply (its element type is that of the buffer its 'of' names)");
    a.role = Role::tensor_map;
    a.tensor_map = tensor_map(*t, a.name);
    return a;
  }
  a.type = enum_of<ElementType>(require(m, "type"),
                                {{"f32", ElementType::f32}, {"f64", ElementType::f64}, {"f16", ElementType::f16},
                                 {"bf16", ElementType::bf16}, {"i8", ElementType::i8},
                                 {"i16", ElementType::i16}, {"i32", ElementType::i32}, {"i64", ElementType::i64},
                                 {"u8", ElementType::u8}, {"u16", ElementType::u16}, {"u32", ElementType::u32},
                                 {"u64", ElementType::u64}});
  auto size = get(m, "size");
  auto value = get(m, "value");
  auto role = get(m, "role");
  auto fill = get(m, "fill");
  const std::string who = "argument '" + a.name + "'";
  if (size && value)
    fail(value->where, who + " has both 'size' (a buffer) and 'value' (a scalar); give one of them");
  if (!size && !value)
    fail(it.where, who + " needs 'size' (a buffer's element count) or 'value' (a scalar's value)");
  if (value) {
    a.value = expression_of(*value, "an expression");
    a.role = Role::scalar;
    if (role) {
      Role r = enum_of<Role>(*role, {{"in", Role::in}, {"out", Role::out}, {"inout", Role::inout}, {"scalar", Role::scalar}});
      if (r != Role::scalar)
        fail(content_loc(*role), who + " is a scalar (it has 'value'), so its role is 'scalar', not '" +
                                     std::string(to_string(r)) + "'");
    }
    if (fill) fail(fill->where, who + " is a scalar (it has 'value'); 'fill' applies to buffers only");
    return a;
  }
  a.size = expression_of(*size, "an expression");
  if (role) {
    a.role = enum_of<Role>(*role, {{"in", Role::in}, {"out", Role::out}, {"inout", Role::inout}, {"scalar", Role::scalar}});
    if (a.role == Role::scalar)
      fail(content_loc(*role), who + " has role 'scalar' but a 'size'; a scalar has 'value' instead of 'size'");
  }
  a.fill = a.role == Role::out ? Fill::zeros : Fill::random;
  if (fill) {
    const std::string expected = "random, zeros, {constant: v} or {sequence: start}";
    if (fill->node.IsScalar()) {
      const std::string& s = fill->node.Scalar();
      if (s == "random") a.fill = Fill::random;
      else if (s == "zeros") a.fill = Fill::zeros;
      else if (s == "constant" || s == "sequence")
        fail(content_loc(*fill), "fill '" + s + "' of " + who + " needs a value: {" + s + ": " + (s == "constant" ? "1.5" : "0") + "}");
      else {
        std::string msg = "bad value '" + s + "' for " + display(fill->path) + ": expected " + expected;
        if (auto near = closest_match(s, {"random", "zeros"})) msg += "; did you mean '" + *near + "'?";
        fail(content_loc(*fill), msg);
      }
    } else if (fill->node.IsMap()) {
      Map f = map(*fill, {"constant", "sequence"}, expected);
      if (f.entries.size() != 1) fail(fill->where, display(fill->path) + " must be " + expected + " (exactly one key)");
      const Entry& e = f.entries.front();
      a.fill = e.key == "constant" ? Fill::constant : Fill::sequence;
      a.fill_value = number_of(child(f, e), "a number");
    } else {
      wrong_type(*fill, expected);
    }
  }
  return a;
}

// The value of an expression without names (a literal such as 64 or 2*64),
// or nullopt: limits are checked at load time where the spec fixes them.
std::optional<std::int64_t> constant_int(const Expression& e) {
  if (!e.variables().empty()) return std::nullopt;
  auto v = e.evaluate(std::span<const Value>{});
  if (!v || !v->is_int()) return std::nullopt;
  return v->as_int();
}

// tensor_map: {of: A, dims: [K, M], box: [BK, BM], swizzle: 128, oob: zero, l2_promotion: 128}
TensorMapSpec Loader::tensor_map(const Item& it, const std::string& arg) const {
  const std::string expected = "a mapping {of: BUFFER, dims: [...], box: [...]} (optional: swizzle, oob, l2_promotion)";
  Map m = map(it, {"of", "dims", "box", "swizzle", "oob", "l2_promotion"}, expected);
  TensorMapSpec t;
  t.where = it.where;
  Item of = require(m, "of");
  t.of = name_of(of, "the name of a buffer argument");
  t.of_where = content_loc(of);
  Item dims = require(m, "dims");
  Item box = require(m, "box");
  t.dims = expressions_of(dims, 1, 5);
  t.box = expressions_of(box, 1, 5);
  if (t.box.size() != t.dims.size())
    fail(box.where, fmt::format("tensor map '{}': 'box' has {} extent{} but 'dims' has {}; give one per dimension "
                                "(innermost first)",
                                arg, t.box.size(), t.box.size() == 1 ? "" : "s", t.dims.size()));
  if (auto v = get(m, "swizzle")) t.swizzle = enum_of<int>(*v, {{"none", 0}, {"32", 32}, {"64", 64}, {"128", 128}});
  if (auto v = get(m, "oob")) t.oob_nan = enum_of<bool>(*v, {{"zero", false}, {"nan", true}});
  if (auto v = get(m, "l2_promotion"))
    t.l2_promotion = enum_of<int>(*v, {{"none", 0}, {"64", 64}, {"128", 128}, {"256", 256}});
  for (std::size_t i = 0; i < t.dims.size(); ++i) {
    if (auto d = constant_int(t.dims[i]); d && *d < 1)
      fail(t.dims[i].where(), fmt::format("tensor map '{}': dims[{}] = {} must be at least 1", arg, i, *d));
    if (auto b = constant_int(t.box[i]); b && (*b < 1 || *b > 256))
      fail(t.box[i].where(), fmt::format("tensor map '{}': box[{}] = {}; a box extent is 1 to 256 elements", arg, i, *b));
  }
  return t;
}

// What needs the other arguments: `of` names a buffer, whose element type
// is the map's, and the limits in bytes where the spec fixes the extents.
void Loader::check_tensor_maps(Spec& s) const {
  for (ArgumentSpec& a : s.arguments) {
    if (!a.tensor_map) continue;
    TensorMapSpec& t = *a.tensor_map;
    if (!backend_for_language(s.kernel.language).kernel.tensor_maps)
      fail(a.where, "argument '" + a.name + "' is a tensor map, which needs kernel.language: " +
                        languages_with(&KernelTraits::tensor_maps) + " (TMA, compute capability 9.0 on), not " +
                        s.kernel.language);
    auto of = std::find_if(s.arguments.begin(), s.arguments.end(), [&](const ArgumentSpec& b) { return b.name == t.of; });
    std::vector<std::string> buffers;
    for (const auto& b : s.arguments)
      if (b.role != Role::scalar && b.role != Role::tensor_map) buffers.push_back(b.name);
    if (of == s.arguments.end()) {
      std::string msg = "tensor map '" + a.name + "': 'of' names no argument: '" + t.of + "'";
      if (auto near = closest_match(t.of, buffers)) msg += "; did you mean '" + *near + "'?";
      msg += buffers.empty() ? " (the spec declares no buffer)" : " (buffers: " + join(buffers) + ")";
      fail(t.of_where, msg);
    }
    if (of->role == Role::scalar || of->role == Role::tensor_map)
      fail(t.of_where, "tensor map '" + a.name + "': 'of' must name a buffer argument (one with 'size'), but '" + t.of +
                           "' is a " + (of->role == Role::scalar ? "scalar" : "tensor map"));
    a.type = of->type;
    const auto elem = static_cast<std::int64_t>(size_of(a.type));
    if (t.oob_nan && !is_floating(a.type))
      fail(t.where, "tensor map '" + a.name + "': oob: nan needs a floating-point buffer; '" + t.of + "' is " +
                        std::string(to_string(a.type)));
    if (auto d = constant_int(t.dims[0]); d && t.dims.size() > 1 && *d * elem % 16 != 0)
      fail(t.dims[0].where(), fmt::format("tensor map '{}': a row of dims[0] = {} {} elements is {} bytes; TMA needs "
                                          "the global strides to be multiples of 16 bytes",
                                          a.name, *d, to_string(a.type), *d * elem));
    if (auto b = constant_int(t.box[0])) {
      if (*b * elem % 16 != 0)
        fail(t.box[0].where(), fmt::format("tensor map '{}': the inner box extent box[0] = {} {} elements is {} bytes; "
                                           "TMA needs a multiple of 16 bytes",
                                           a.name, *b, to_string(a.type), *b * elem));
      if (t.swizzle > 0 && *b * elem > t.swizzle)
        fail(t.box[0].where(), fmt::format("tensor map '{}': the inner box extent box[0] = {} {} elements is {} bytes, "
                                           "over the {}-byte swizzle span",
                                           a.name, *b, to_string(a.type), *b * elem, t.swizzle));
    }
  }
}

// cluster: [2, 1, 1]: blocks per thread-block cluster (CUDA).
std::vector<Expression> Loader::cluster_of(const Item& it) const {
  std::vector<Expression> c = expressions_of(it, 1, 3);
  std::int64_t blocks = 1;
  bool fixed = true;
  for (std::size_t i = 0; i < c.size(); ++i) {
    auto v = constant_int(c[i]);
    if (!v) {
      fixed = false;
      continue;
    }
    if (*v < 1) fail(c[i].where(), fmt::format("cluster[{}] = {} must be at least 1", i, *v));
    blocks *= *v;
  }
  // 8 blocks is the portable size; Hopper and later take up to 16.
  if (fixed && blocks > 16)
    fail(c.front().where(), fmt::format("a cluster of {} blocks; no GPU allows more than 16", blocks));
  return c;
}

std::vector<Bindings> Loader::sizes(const Item& it) {
  auto one = [&](const Item& m_item) {
    Map m = map(m_item, {}, "a mapping of size names to values, e.g. {M: 256, N: 256}");
    Bindings b;
    for (const Entry& e : m.entries) {
      Item v = child(m, e);
      if (!is_identifier(e.key))
        fail(loc(e.key_node), "size name '" + e.key + "' in " + context_name(m_item.path) + " is not a valid name");
      b.emplace(e.key, value_of(v));
      size_names_.try_emplace(e.key, loc(e.key_node));
    }
    return b;
  };
  // {grid: {M: [1, 4], N: "1024:4096:1024"}}: every combination of the
  // axes' values (each axis written like a parameter's values).
  auto grid = [&](const Item& g_item, std::vector<Bindings>& out) {
    Map m = map(g_item, {}, "a mapping of size names to value lists, e.g. {M: [1, 4, 16], N: '1024:8192:1024'}");
    std::vector<Parameter> axes;
    for (const Entry& e : m.entries) {
      if (!is_identifier(e.key))
        fail(loc(e.key_node), "size name '" + e.key + "' in " + context_name(g_item.path) + " is not a valid name");
      axes.push_back(parameter(child(m, e), e.key, loc(e.key_node)));
      size_names_.try_emplace(e.key, loc(e.key_node));
    }
    for (const Bindings& b : size_grid(axes)) out.push_back(b);
  };
  auto is_grid = [&](const Item& x) { return x.node.IsMap() && x.node.size() == 1 && x.node["grid"]; };
  std::vector<Bindings> out;
  if (it.node.IsNull()) {
  } else if (is_grid(it)) {
    grid(child(map(it, {"grid"}), *map(it, {"grid"}).find("grid")), out);
  } else if (it.node.IsMap()) {
    out.push_back(one(it));
  } else if (it.node.IsSequence()) {
    for (const Item& el : elements(it)) {
      if (is_grid(el)) grid(child(map(el, {"grid"}), *map(el, {"grid"}).find("grid")), out);
      else out.push_back(one(el));
    }
  } else {
    wrong_type(it, "a mapping of size names to values or a list of them");
  }
  if (out.empty()) out.emplace_back();
  return out;
}

Parameter Loader::parameter(const Item& it, const std::string& name, const SourceLocation& name_where) const {
  Parameter p;
  p.name = name;
  p.where = name_where;
  const std::string expected =
      "a list of values, a range 'start:end:step' or {pow2: [lo, hi]}";
  if (it.node.IsSequence()) {
    std::vector<Item> els = elements(it);
    if (els.empty()) fail(it.where, "parameter '" + name + "' has no values");
    for (const Item& el : els) {
      if (!el.node.IsScalar()) wrong_type(el, "a value (int, float or string)");
      Value v = value_of(el);
      for (std::size_t j = 0; j < p.values.size(); ++j)
        if (p.values[j] == v && p.values[j].is_string() == v.is_string())
          fail(content_loc(el), "duplicate value " + v.repr() + " in parameter '" + name + "' (also at index " + std::to_string(j) + ")");
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
    if (lo > hi) fail(range.where, display(range.path) + ": lo (" + std::to_string(lo) + ") is greater than hi (" + std::to_string(hi) + ")");
    for (std::int64_t v = lo;; v *= 2) {
      p.values.emplace_back(v);
      if (v == hi) break;
    }
  } else if (it.node.IsScalar()) {
    const std::string& s = it.node.Scalar();
    if (s.find(':') != std::string::npos) {
      IntRange r;
      try {
        r = parse_int_range(s, content_loc(it), /*require_step=*/false);
      } catch (const InputError& e) {
        throw InputError(e.where(), "parameter '" + name + "': " + e.message());
      }
      append_range(r, p.values);
    } else {
      p.values.push_back(value_of(it));
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
    if (declared) {
      bool known = std::any_of(declared->begin(), declared->end(), [&](const Parameter& p) { return p.name == e.key; });
      if (!known) {
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
    }
    entries.emplace_back(e.key, value_of(child(m, e)));
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

// One of search.seeds: a config named in part; every value must be one of
// its parameter's, and a parameter it leaves out takes the default config's
// value, else its first.
Config Loader::seed(const Item& it, const Spec& s) const {
  Map m = map(it, {}, "a mapping of parameter names to values");
  std::vector<std::pair<std::string, Value>> given;
  for (const Entry& e : m.entries) {
    auto p = std::find_if(s.parameters.begin(), s.parameters.end(), [&](const Parameter& q) { return q.name == e.key; });
    if (p == s.parameters.end()) {
      std::vector<std::string> names;
      for (const auto& q : s.parameters) names.push_back(q.name);
      std::string msg = "unknown parameter '" + e.key + "' in " + context_name(it.path);
      if (auto near = closest_match(e.key, names)) msg += "; did you mean '" + *near + "'?";
      fail(loc(e.key_node), msg);
    }
    Item vi = child(m, e);
    Value v = value_of(vi);
    if (std::none_of(p->values.begin(), p->values.end(), [&](const Value& x) { return x == v; })) {
      std::vector<std::string> values;
      for (const auto& x : p->values) values.push_back(x.str());
      fail(content_loc(vi), "'" + v.str() + "' in " + context_name(it.path) + " is not one of " + e.key +
                                "'s values (" + join(values) + ")");
    }
    given.emplace_back(e.key, std::move(v));
  }
  std::vector<std::pair<std::string, Value>> entries;
  for (const auto& p : s.parameters) {
    auto g = std::find_if(given.begin(), given.end(), [&](const auto& x) { return x.first == p.name; });
    const Value* d = s.default_config ? s.default_config->find(p.name) : nullptr;
    if (g != given.end()) entries.push_back(*g);
    else if (d) entries.emplace_back(p.name, *d);
    else if (!p.values.empty()) entries.emplace_back(p.name, p.values.front());
  }
  return Config(std::move(entries));
}

ReferenceSpec Loader::reference(const Item& it, const std::string& language) const {
  ReferenceSpec r;
  const std::string expected = "'default', 'none' or a mapping {source, entry, flags}";
  if (it.node.IsScalar()) {
    const std::string& s = it.node.Scalar();
    if (s == "default") r.kind = ReferenceSpec::Kind::default_config;
    else if (s == "none") r.kind = ReferenceSpec::Kind::none;
    else fail(content_loc(it), "bad value '" + s + "' for 'reference': expected " + expected);
    return r;
  }
  Map m = map(it, {"source", "entry", "flags", "grid", "block", "shared_memory", "cluster"}, expected);
  r.kind = ReferenceSpec::Kind::function;
  if (auto v = get(m, "source")) r.source = existing_file(*v, "reference source file");
  r.entry = function_name(require(m, "entry"));
  if (auto v = get(m, "flags")) r.flags = strings_of(*v);
  if (auto v = get(m, "grid")) r.launch.grid = expressions_of(*v, 1, 3);
  if (auto v = get(m, "block")) r.launch.block = expressions_of(*v, 1, 3);
  if (auto v = get(m, "shared_memory")) r.launch.shared_memory = expression_of(*v, "an expression (bytes)");
  if (r.launch.grid.empty() != r.launch.block.empty())
    fail(it.where, "'reference' needs both 'grid' and 'block', or neither (then the kernel's launch is used)");
  if (auto v = get(m, "cluster")) {
    const SourceLocation key = loc(m.find("cluster")->key_node);
    if (!backend_for_language(language).kernel.cluster)
      fail(key, "'cluster' (thread-block clusters) applies to " + languages_with(&KernelTraits::cluster) +
                    " kernels, not " + language);
    if (r.launch.grid.empty())
      fail(key, "'reference.cluster' needs the reference's own 'grid' and 'block' (without them the kernel's "
                "launch, its cluster included, is used)");
    r.launch.cluster = cluster_of(*v);
  }
  return r;
}

Spec Loader::load(const YAML::Node& root) {
  Item top{root, "", loc(root)};
  if (top.where.line == 0) top.where = SourceLocation{file_, 1, 1};
  if (root.IsNull()) fail(top.where, "the spec is empty; expected a mapping with at least 'kernel' and 'arguments'");
  Map m = map(top,
              {"name", "kernel", "arguments", "sizes", "parameters", "constraints", "configs", "default", "reference",
               "tolerance", "measure", "search", "output", "application"},
              "a mapping with at least 'kernel' and 'arguments'");
  Spec s;
  s.kernel = kernel(require(m, "kernel"));
  const BackendInfo& backend = backend_for_language(s.kernel.language);
  const bool command = backend.kernel.application;
  if (auto v = get(m, "name")) s.name = string_of(*v, "a name");
  else s.name = command && s.kernel.entry.empty() ? s.kernel.source.stem().string() : s.kernel.entry;

  if (command) {
    // The application checks its own results: nothing is passed by
    // tunekit, and nothing is compared with a reference.
    for (const char* key : {"arguments", "reference", "tolerance"})
      if (const Entry* e = m.find(key))
        fail(loc(e->key_node), "'" + std::string(key) + "' does not apply to a " + s.kernel.language +
                                   " kernel (kernel.language: " + s.kernel.language +
                                   "): the application gets its values through placeholders in "
                                   "'application.run' and checks its own results");
    s.reference.kind = ReferenceSpec::Kind::none;
  } else {
    if (const Entry* e = m.find("application"))
      fail(loc(e->key_node), "'application' needs 'kernel.language: " + languages_with(&KernelTraits::application) +
                                 "' (got '" + s.kernel.language + "')");
    Item args = require(m, "arguments");
    if (!args.node.IsSequence()) wrong_type(args, "a list of arguments, in call order");
    std::map<std::string, SourceLocation> seen;
    for (const Item& el : elements(args)) {
      ArgumentSpec a = argument(el);
      if (auto prev = seen.find(a.name); prev != seen.end())
        fail(el.where, "duplicate argument name '" + a.name + "' (first at " + prev->second.str() + ")");
      seen.emplace(a.name, el.where);
      s.arguments.push_back(std::move(a));
    }
    check_tensor_maps(s);
  }

  if (auto v = get(m, "sizes")) s.sizes = sizes(*v);
  else s.sizes.emplace_back();

  bool declared = false;
  if (auto v = get(m, "parameters"); v && !v->node.IsNull()) {
    Map pm = map(*v, {}, "a mapping of parameter names to their values");
    for (const Entry& e : pm.entries) {
      if (!is_identifier(e.key))
        fail(loc(e.key_node), "parameter name '" + e.key + "' is not a valid name (letters, digits and '_', not starting with a digit)");
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
        if (!el.node.IsScalar()) fail(el.where, display(v->path) + " must be " + expected + ", but " + display(el.path) + " is " + kind_of(el.node));
        s.constraints.push_back(expression_of(el, "an expression"));
      }
    else wrong_type(*v, expected);
  }

  if (auto v = get(m, "configs"); v && !v->node.IsNull()) {
    if (!v->node.IsSequence()) wrong_type(*v, "a list of configs (mappings of parameter names to values)");
    std::vector<SourceLocation> where;
    for (const Item& el : elements(*v)) {
      Config c = config(el, declared ? &s.parameters : nullptr);
      for (std::size_t j = 0; j < s.configs.size(); ++j)
        if (s.configs[j] == c)
          fail(el.where, "config " + c.str() + " repeats configs[" + std::to_string(j) + "] (at " + where[j].str() + ")");
      s.configs.push_back(std::move(c));
      where.push_back(el.where);
    }
    if (!declared && !s.configs.empty()) {
      // The parameters are implied: each name with its distinct values, in
      // order of appearance.
      for (std::size_t i = 0; i < s.configs.size(); ++i)
        for (const auto& [name, value] : s.configs[i]) {
          auto p = std::find_if(s.parameters.begin(), s.parameters.end(), [&](const Parameter& q) { return q.name == name; });
          if (p == s.parameters.end()) {
            if (auto sz = size_names_.find(name); sz != size_names_.end())
              fail(where[i], "'" + name + "' is both a parameter and a size (at " + sz->second.str() + ")");
            s.parameters.push_back(Parameter{name, {}, where[i]});
            p = s.parameters.end() - 1;
          }
          bool seen = std::any_of(p->values.begin(), p->values.end(), [&](const Value& x) {
            return x == value && x.is_string() == value.is_string();
          });
          if (!seen) p->values.push_back(value);
        }
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
      s.parameters = parameters_from_ranges(parse_range_annotations(source, s.kernel.source.string()),
                                            s.kernel.source.string());
  }

  if (auto v = get(m, "default"); v) {
    s.default_config = config(*v, &s.parameters);
  }

  if (auto v = get(m, "reference")) s.reference = reference(*v, s.kernel.language);

  if (auto v = get(m, "tolerance")) {
    Map t = map(*v, {"atol", "rtol"}, "a mapping {atol: number, rtol: number}");
    if (auto x = get(t, "atol")) s.tolerance.atol = non_negative(*x);
    if (auto x = get(t, "rtol")) s.tolerance.rtol = non_negative(*x);
  }

  if (auto v = get(m, "measure")) {
    Map t = map(*v, {"warmup", "min_samples", "max_samples", "max_time", "noise", "cache", "timeout"});
    MeasureSettings& ms = s.measure;
    if (auto x = get(t, "warmup")) ms.warmup = std::chrono::duration_cast<Microseconds>(duration_of(*x, false));
    if (auto x = get(t, "min_samples")) ms.min_samples = static_cast<std::size_t>(int_of(*x, 1, "an integer >= 1"));
    if (auto x = get(t, "max_samples")) ms.max_samples = static_cast<std::size_t>(int_of(*x, 1, "an integer >= 1"));
    if (ms.min_samples > ms.max_samples) {
      auto x = get(t, "max_samples");
      Item at = x ? *x : *get(t, "min_samples");
      fail(content_loc(at), "'measure.min_samples' (" + std::to_string(ms.min_samples) + ") exceeds 'measure.max_samples' (" +
                                std::to_string(ms.max_samples) + ")");
    }
    if (auto x = get(t, "max_time")) ms.max_time = duration_of(*x, true);
    if (auto x = get(t, "noise")) ms.target_noise = non_negative(*x);
    if (auto x = get(t, "cache"))
      ms.cache = enum_of<CacheMode>(
          *x, {{"cold", CacheMode::cold}, {"cold-read", CacheMode::cold_read}, {"hot", CacheMode::hot}});
    if (auto x = get(t, "timeout")) ms.timeout = duration_of(*x, true);
  }

  if (auto v = get(m, "search")) {
    Map t = map(*v, {"strategy", "options", "max_evals", "max_time", "seed", "rules", "seeds", "transfer"});
    if (auto x = get(t, "strategy")) {
      s.search.strategy_where = content_loc(*x);
      s.search.strategy = name_in(*x, strategies());
    }
    if (auto x = get(t, "options"); x && !x->node.IsNull()) {
      Map om = map(*x, {}, "a mapping of the strategy's option names to values");
      for (const Entry& e : om.entries) {
        Item val = child(om, e);
        s.search.options.push_back(OptionValue{e.key, value_of(val, "an option value"), loc(e.key_node)});
      }
    }
    // Checked now, so a typo is reported where it was written.
    (void)Options::resolve("strategy '" + s.search.strategy + "'", strategies().get(s.search.strategy).options,
                           s.search.options);
    if (auto x = get(t, "max_evals")) s.search.max_evaluations = static_cast<std::size_t>(int_of(*x, 1, "an integer >= 1"));
    if (auto x = get(t, "max_time")) s.search.max_time = duration_of(*x, true);
    if (auto x = get(t, "seed")) s.search.seed = static_cast<std::uint64_t>(int_of(*x, 0, "an integer >= 0"));
    if (auto x = get(t, "transfer"))
      s.search.transfer = static_cast<std::size_t>(int_of(*x, 0, "an integer >= 0 (configs carried over from the nearest tuned sizes; 0: none)"));
    if (auto x = get(t, "rules"); x && !x->node.IsNull()) {
      // One entry per matmul: {M: [BM, M], N: [BN, N], K: [BK, "K // SPLIT_K"]};
      // an axis is [tile parameter, axis length] or just the parameter (the
      // length is then the size named like the axis).
      const std::string expected = "a list of matmul tile rules such as {M: [BM, M], N: [BN, N], K: [BK, K]}";
      if (!x->node.IsSequence()) wrong_type(*x, expected);
      for (const Item& el : elements(*x)) {
        Map rm = map(el, {"M", "N", "K"}, "a mapping of axes (M, N, K) to [tile parameter, axis length]");
        if (rm.entries.empty()) fail(el.where, display(el.path) + " tiles no axis; give at least one of M, N, K");
        MatmulRule rule;
        rule.where = el.where;
        for (const Entry& e : rm.entries) {
          Item ax = child(rm, e);
          const std::string axis_expected = "[tile parameter, axis length] or a tile parameter, e.g. [BM, M]";
          Item param_item = ax;
          std::optional<Expression> length;
          if (ax.node.IsSequence()) {
            if (ax.node.size() != 2) wrong_type(ax, axis_expected);
            std::vector<Item> parts = elements(ax);
            param_item = parts[0];
            length = expression_of(parts[1], "an expression (the axis length)");
          } else if (!ax.node.IsScalar()) {
            wrong_type(ax, axis_expected);
          }
          TileAxis tile;
          tile.where = content_loc(param_item);
          tile.parameter = name_of(param_item, "a parameter name");
          auto p = std::find_if(s.parameters.begin(), s.parameters.end(),
                                [&](const Parameter& q) { return q.name == tile.parameter; });
          if (p == s.parameters.end()) {
            std::vector<std::string> names;
            for (const auto& q : s.parameters) names.push_back(q.name);
            std::string msg = "'" + tile.parameter + "' in " + display(ax.path) + " is not a parameter";
            if (auto near = closest_match(tile.parameter, names)) msg += "; did you mean '" + *near + "'?";
            fail(tile.where, msg);
          }
          for (const Value& val : p->values)
            if (!val.is_number())
              fail(tile.where, "tile parameter '" + tile.parameter + "' in " + display(ax.path) +
                                   " must have numeric values, but it has '" + val.str() + "'");
          tile.length = length ? *length : Expression::parse(e.key, loc(e.key_node));
          (e.key == "M" ? rule.m : e.key == "N" ? rule.n : rule.k) = std::move(tile);
        }
        s.search.rules.push_back(std::move(rule));
      }
    }
    if (auto x = get(t, "seeds"); x && !x->node.IsNull()) {
      if (!x->node.IsSequence()) wrong_type(*x, "a list of configs to try first, e.g. [{BM: 128, PERSISTENT: 1}]");
      std::vector<SourceLocation> where;
      for (const Item& el : elements(*x)) {
        Config c = seed(el, s);
        for (std::size_t j = 0; j < s.search.seeds.size(); ++j)
          if (s.search.seeds[j] == c)
            fail(el.where, "seed " + c.str() + " repeats search.seeds[" + std::to_string(j) + "] (at " + where[j].str() +
                               ") once the default fills it in");
        s.search.seeds.push_back(std::move(c));
        where.push_back(el.where);
      }
    }
  }

  if (auto v = get(m, "output")) {
    std::vector<std::string> keys{"db"};
    for (const WriterInfo& w : writers().entries())
      if (w.writes_file) keys.push_back(w.name);
    Map t = map(*v, keys);
    for (const Entry& e : t.entries) {
      const std::string file = string_of(child(t, e), "a file path");
      if (e.key == "db") s.output.db = file;
      else s.output.files[e.key] = file;
    }
  }

  if (command) s.application = application(require(m, "application"), s);
  if (backend.check_spec) backend.check_spec(s);
  return s;
}

ApplicationSpec Loader::application(const Item& it, const Spec& s) const {
  Map m = map(it, {"build", "run", "time", "warmup", "build_timeout", "run_timeout", "workdir"},
              "a mapping {build: [argv], run: [argv], time: ...}");
  ApplicationSpec a;
  a.where = it.where;
  a.workdir = dir_;
  if (auto v = get(m, "workdir")) {
    fs::path p(string_of(*v, "a folder path"));
    if (p.is_relative()) p = dir_ / p;
    p = p.lexically_normal();
    std::error_code ec;
    if (!fs::is_directory(p, ec)) fail(content_loc(*v), "'application.workdir' '" + v->node.Scalar() + "' is not a folder (looked for " + p.string() + ")");
    a.workdir = p;
  }
  // Placeholders name a variant path, a parameter or (in `run` only) a
  // problem size. The run command's names are checked when it runs, since
  // `--size` on the command line may add sizes.
  auto check_argv = [&](const Item& argv_item, bool is_build) {
    if (!argv_item.node.IsSequence())
      wrong_type(argv_item, "a list of strings (an argv: no shell runs it, so 'bash build.sh' is written "
                            "[bash, build.sh])");
    std::vector<Item> els = elements(argv_item);
    for (const Item& el : els)
      if (el.node.IsMap())
        fail(el.where, display(el.path) + " is a mapping: quote an element that is a placeholder, e.g. \"{M}\" "
                       "(YAML reads a bare {M} as a mapping)");
    std::vector<std::string> argv = strings_of(argv_item);
    std::vector<std::string> known{"source", "dir", "binary"};
    for (const auto& p : s.parameters) known.push_back(p.name);
    for (std::size_t i = 0; i < argv.size(); ++i) {
      for (const std::string& name : placeholder_names(argv[i], content_loc(els[i]))) {
        if (!is_build || std::find(known.begin(), known.end(), name) != known.end()) continue;
        std::string msg = "placeholder {" + name + "} in " + display(els[i].path) + " names no parameter";
        if (std::any_of(s.sizes.begin(), s.sizes.end(), [&](const Bindings& b) { return b.count(name) > 0; }))
          msg += ": '" + name + "' is a problem size, and sizes reach only the run command (one build serves every size)";
        else if (auto near = closest_match(name, known)) msg += "; did you mean {" + *near + "}?";
        msg += " (known here: " + join(known) + ")";
        fail(content_loc(els[i]), msg);
      }
    }
    return argv;
  };
  if (auto v = get(m, "build"); v && !v->node.IsNull()) {
    a.build = check_argv(*v, true);
    if (a.build.empty() || a.build[0].empty()) fail(v->where, "'application.build' must be a non-empty argv list, e.g. [bash, build.sh, '{source}', '{binary}']");
  }
  {
    Item v = require(m, "run");
    a.run = check_argv(v, false);
    if (a.run.empty() || a.run[0].empty()) fail(v.where, "'application.run' must be a non-empty argv list, e.g. ['{binary}', '{M}']");
  }
  if (auto v = get(m, "time")) {
    TimeSource& t = a.time;
    t.where = content_loc(*v);
    const std::string expected = "'wall', {regex: 'time: ([0-9.]+)'} or {json: 'a.b.c'}, with an optional unit";
    if (v->node.IsScalar()) {
      if (v->node.Scalar() != "wall") fail(content_loc(*v), "bad value '" + v->node.Scalar() + "' for 'application.time': expected " + expected);
    } else {
      Map tm = map(*v, {"regex", "json", "unit"}, expected);
      auto rx = get(tm, "regex");
      auto js = get(tm, "json");
      if (rx && js) fail(js->where, "'application.time' takes one of 'regex' and 'json', not both");
      if (!rx && !js) fail(v->where, "'application.time' needs 'regex' or 'json' (or is the string 'wall')");
      const Item& src = rx ? *rx : *js;
      t.kind = rx ? TimeSource::Kind::regex : TimeSource::Kind::json;
      t.pattern = string_of(src, rx ? "a regular expression" : "a JSON path such as result.time_us");
      t.where = content_loc(src);
      if (rx) {
        try {
          std::regex re(t.pattern);
        } catch (const std::regex_error& e) {
          fail(content_loc(src), "'application.time.regex' is not a valid regular expression: " + std::string(e.what()));
        }
      }
      if (auto u = get(tm, "unit"))
        t.to_us = enum_of<double>(*u, {{"us", 1.0}, {"ns", 1e-3}, {"ms", 1e3}, {"s", 1e6}});
    }
  }
  if (auto v = get(m, "warmup")) a.warmup = static_cast<std::size_t>(int_of(*v, 0, "an integer >= 0 (runs)"));
  if (auto v = get(m, "build_timeout")) a.build_timeout = duration_of(*v, true);
  if (auto v = get(m, "run_timeout")) a.run_timeout = duration_of(*v, true);
  return a;
}

}  // namespace

Spec load_spec(const fs::path& file) {
  const std::string name = file.string();
  std::error_code ec;
  if (!fs::exists(file, ec)) throw InputError(SourceLocation{name, 0, 0}, "spec file not found");
  if (fs::is_directory(file, ec)) throw InputError(SourceLocation{name, 0, 0}, "spec path is a directory, not a file");
  bool ok = false;
  std::string text = read_text(file, ok);
  if (!ok) throw InputError(SourceLocation{name, 0, 0}, "cannot read spec file");
  fs::path absolute = fs::absolute(file, ec).lexically_normal();
  if (ec) absolute = file;
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::Exception& e) {
    SourceLocation where{name, e.mark.line >= 0 ? e.mark.line + 1 : 0, e.mark.column >= 0 ? e.mark.column + 1 : 0};
    throw InputError(where, "YAML syntax error: " + e.msg);
  }
  try {
    Loader loader(name, std::move(text), absolute.parent_path());
    Spec spec = loader.load(root);
    spec.file = absolute;
    return spec;
  } catch (const YAML::Exception& e) {  // not expected: the loader checks types first
    SourceLocation where{name, e.mark.line >= 0 ? e.mark.line + 1 : 0, e.mark.column >= 0 ? e.mark.column + 1 : 0};
    throw InputError(where, e.msg);
  }
}

Spec spec_from_source(const fs::path& source) {
  const std::string name = source.string();
  std::error_code ec;
  if (!fs::exists(source, ec)) throw InputError(SourceLocation{name, 0, 0}, "source file not found");
  if (!fs::is_regular_file(source, ec)) throw InputError(SourceLocation{name, 0, 0}, "source path is not a regular file");
  bool ok = false;
  std::string text = read_text(source, ok);
  if (!ok) throw InputError(SourceLocation{name, 0, 0}, "cannot read source file");
  fs::path absolute = fs::absolute(source, ec).lexically_normal();
  if (ec) absolute = source;
  Spec spec;
  spec.file = absolute;
  spec.kernel.source = absolute;
  spec.kernel.injection = Injection::range_defines;
  spec.parameters = parameters_from_ranges(parse_range_annotations(text, name), name);
  spec.sizes.emplace_back();
  return spec;
}

std::pair<std::string, Value> parse_assignment(std::string_view text) {
  std::size_t eq = text.find('=');
  const std::string expected = "expected NAME=VALUE, e.g. M=4096";
  if (eq == std::string_view::npos)
    throw InputError(SourceLocation{}, "bad assignment '" + std::string(text) + "': " + expected);
  std::string_view name = trim(text.substr(0, eq));
  std::string_view value = trim(text.substr(eq + 1));
  if (!is_identifier(name))
    throw InputError(SourceLocation{}, "bad assignment '" + std::string(text) + "': '" + std::string(name) +
                                           "' is not a valid name; " + expected);
  if (value.empty())
    throw InputError(SourceLocation{}, "bad assignment '" + std::string(text) + "': the value is missing; " + expected);
  return {std::string(name), parse_value_text(value)};
}

std::vector<Value> parse_range(std::string_view text, const SourceLocation& where) {
  IntRange r = parse_int_range(text, where, /*require_step=*/false);
  std::vector<Value> out;
  append_range(r, out);
  return out;
}

}  // namespace tunekit
