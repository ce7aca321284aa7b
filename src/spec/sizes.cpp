// Problem sizes: the spec's `sizes` section, and the grids the command line
// and the spec build them from.
#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>

#include <fmt/format.h>

#include "spec/detail/loader.hpp"
#include "tunekit/constraint.hpp"
#include "tunekit/spec.hpp"

namespace tunekit {

namespace {

// More sizes than anyone tunes, and few enough to hold in memory: a grid
// past it is a mistake in the axes, said before it is built.
constexpr std::uint64_t kMaxSizes = 100000;

void check_grid(std::uint64_t base, const std::vector<Parameter>& axes) {
  std::uint64_t count = base;
  for (const auto& axis : axes) {
    if (axis.values.empty()) return;
    if (count > kMaxSizes / axis.values.size()) {
      std::string shape;
      for (const auto& a : axes) shape += (shape.empty() ? "" : " x ") + std::to_string(a.values.size()) + " " + a.name;
      throw InputError(axes.front().where,
                       fmt::format("the sizes' grid ({}{}) has more than {} sizes; narrow the axes",
                                   base > 1 ? std::to_string(base) + " sizes x " : "", shape, kMaxSizes));
    }
    count *= axis.values.size();
  }
}

}  // namespace

std::vector<Bindings> size_grid(const std::vector<Parameter>& axes) {
  check_grid(1, axes);
  std::vector<Bindings> out{Bindings{}};
  for (const auto& axis : axes) {
    std::vector<Bindings> next;
    for (const auto& b : out)
      for (const auto& v : axis.values) {
        Bindings c = b;
        c[axis.name] = v;
        next.push_back(std::move(c));
      }
    out = std::move(next);
  }
  return out;
}

namespace {

// A finite number as YAML reads one unquoted ("1024", "1.5e3", "0x400").
bool reads_as_number(const std::string& text) {
  if (spec_detail::parse_yaml_int(text)) return true;
  const auto d = spec_detail::parse_yaml_float(text);
  return d && std::isfinite(*d);
}

// What to write instead of the string `text` when it is an expression of
// literals alone ("2**20", "64 * 1024", "2**64", "True"), which a size's
// expressions would read as the string, not as what it computes; nullopt
// for any other string (a name such as "f16", text that does not parse).
std::optional<std::string> instead_of_constant(const std::string& key, const std::string& text) {
  std::optional<Expression> e;
  try {
    e = Expression::parse(text);
  } catch (const InputError&) {
    return std::nullopt;
  }
  if (!e->variables().empty()) return std::nullopt;
  std::string trimmed = text;
  std::erase_if(trimmed, [](char c) { return std::isspace(static_cast<unsigned char>(c)); });
  if (trimmed == "True" || trimmed == "False")
    return fmt::format("a size is a number or a name, not a truth value: write {}: {} ({} unquoted reads as {})", key,
                       trimmed == "True" ? 1 : 0, trimmed, trimmed == "True" ? 1 : 0);
  std::string why;
  try {
    const Value v = e->evaluate(Bindings{});
    if (v.is_string())
      return fmt::format("a size is a number or a name, not an expression: write {}: {}", key, v.str());
    if (v.is_int() || std::isfinite(v.as_float()))
      return fmt::format("a size is a number, not an expression: write {}: {}", key, v.repr());
    why = "its value is not a finite number";
  } catch (const InputError& failed) {
    why = failed.message();
  }
  return fmt::format(
      "a size is a number, not an expression, and this one fails ({}): write {} as a number, an "
      "integer within 64 bits or a finite float",
      why, key);
}

}  // namespace

Parameter parse_axis(std::string_view text) {
  const SourceLocation where{"-a " + std::string(text)};
  const std::string expected = "expected NAME=[v1,v2,...], NAME=[start:end:step], NAME[pow2]=[lo:hi] or NAME=value";
  const auto eq = text.find('=');
  if (eq == std::string_view::npos || eq == 0) throw InputError(where, "missing '='; " + expected);
  std::string name(text.substr(0, eq));
  bool pow2 = false;
  if (name.size() > 6 && name.substr(name.size() - 6) == "[pow2]") {
    pow2 = true;
    name.resize(name.size() - 6);
  } else if (const auto open = name.find('['); open != std::string::npos) {
    // Not taken for a size named "n[pow3]", which no spec has.
    throw InputError(where, fmt::format("unknown modifier '{}' after '{}' (the one there is: [pow2]); {}",
                                        name.substr(open), name.substr(0, open), expected));
  }
  std::string_view rhs = text.substr(eq + 1);
  Parameter p;
  p.name = name;
  p.where = where;
  if (rhs.size() >= 2 && rhs.front() == '[' && rhs.back() == ']') {
    std::string_view inner = rhs.substr(1, rhs.size() - 2);
    if (inner.find(':') != std::string_view::npos) {
      p.values = parse_range(inner, where.shifted(static_cast<int>(eq + 2)));
    } else {
      std::size_t start = 0;
      while (start <= inner.size()) {
        auto comma = inner.find(',', start);
        std::string_view item =
            inner.substr(start, comma == std::string_view::npos ? std::string_view::npos : comma - start);
        while (!item.empty() && item.front() == ' ') item.remove_prefix(1);
        while (!item.empty() && item.back() == ' ') item.remove_suffix(1);
        if (item.empty()) throw InputError(where, "empty value in the list; " + expected);
        p.values.push_back(spec_detail::flag_value(item, where));
        if (comma == std::string_view::npos) break;
        start = comma + 1;
      }
    }
  } else if (!rhs.empty()) {
    p.values.push_back(spec_detail::flag_value(spec_detail::trim(rhs), where));
  } else {
    throw InputError(where, "no value after '='; " + expected);
  }
  if (pow2) {
    // The range's end, not its first exponent past 62: what the user wrote.
    const auto past = std::find_if(p.values.begin(), p.values.end(),
                                   [](const Value& v) { return !v.is_int() || v.as_int() < 0 || v.as_int() > 62; });
    if (past != p.values.end()) {
      const Value* shown = &*past;
      for (const Value& v : p.values)  // the largest, which a range ends at
        if (v.is_int() && shown->is_int() && v.as_int() > shown->as_int()) shown = &v;
      throw InputError(where, "[pow2] takes exponents from 0 to 62, got " + shown->repr());
    }
    for (auto& v : p.values) v = Value(std::int64_t{1} << v.as_int());
  }
  // A value listed twice would tune the same size twice, or (as a size grid
  // dedupes) once with no word said; the spec's lists refuse it too.
  std::map<std::string, std::size_t> seen;
  for (std::size_t i = 0; i < p.values.size(); ++i)
    if (auto [at, fresh] = seen.try_emplace(p.values[i].repr(), i); !fresh)
      throw InputError(
          where, fmt::format("duplicate value {} in '{}' (also at index {})", p.values[i].repr(), name, at->second));
  return p;
}

std::vector<Bindings> apply_axes(const std::vector<Bindings>& sizes, const std::vector<Parameter>& axes) {
  if (axes.empty()) return sizes;
  check_grid(std::max<std::uint64_t>(1, sizes.size()), axes);
  std::vector<Bindings> out;
  std::set<std::string> seen;
  for (const auto& base : sizes)
    for (const auto& combo : size_grid(axes)) {
      Bindings b = base;
      for (const auto& [k, v] : combo) b[k] = v;
      std::string key;
      for (const auto& [k, v] : b) key += k + "=" + v.repr() + ",";
      if (seen.insert(key).second) out.push_back(std::move(b));
    }
  return out;
}

}  // namespace tunekit

namespace tunekit::spec_detail {

// The `sizes` section: one mapping, a list of them, or {grid: {...}}.
std::vector<Bindings> Loader::sizes(const Item& it) {
  auto one = [&](const Item& m_item) {
    Map m = map(m_item, {}, "a mapping of size names to values, e.g. {M: 256, N: 256}");
    Bindings b;
    for (const Entry& e : m.entries) {
      Item v = child(m, e);
      if (!is_identifier(e.key))
        fail(loc(e.key_node), "size name '" + e.key + "' in " + context_name(m_item.path) + " is not a valid name");
      // {gird: {M: [1, 4]}}: a grid misspelled, not a size with a mapping.
      if (v.node.IsMap() && e.key != "grid" && closest_match(e.key, {"grid"}))
        fail(loc(e.key_node), "'" + e.key + "' in " + context_name(m_item.path) +
                                  " holds a mapping, as a grid does; did you mean 'grid'?");
      // A quoted number is a string, which every expression of the size
      // then fails on far from here ('str' * 'str').
      if (v.node.IsScalar() && v.node.Tag() == "!" && reads_as_number(v.node.Scalar()))
        fail(content_loc(v), fmt::format("size '{}' is the string \"{}\"; a size is a number: write {}: {}", e.key,
                                         v.node.Scalar(), e.key, v.node.Scalar()));
      Value value = finite_value_of(v);
      // `N: 2**20` reads as the string "2**20", not as 1048576: a size is a
      // value, and the string would fail every expression of the size far
      // from here, as a quoted number would.
      if (value.is_string())
        if (const auto instead = instead_of_constant(e.key, value.as_string()))
          fail(content_loc(v), fmt::format("size '{}' is the string \"{}\"; {}", e.key, value.as_string(), *instead));
      b.emplace(e.key, std::move(value));
      if (size_names_.try_emplace(e.key, loc(e.key_node)).second) size_order_.push_back(e.key);
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
      if (size_names_.try_emplace(e.key, loc(e.key_node)).second) size_order_.push_back(e.key);
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
    // Every size names the same ones: the arguments and constraints read
    // them, and one a size lacks would fail there, far from its cause.
    auto names = [](const Bindings& b) {
      std::vector<std::string> out;
      for (const auto& [name, value] : b) out.push_back(name);
      return out;
    };
    for (const Item& el : elements(it)) {
      if (is_grid(el)) grid(child(map(el, {"grid"}), *map(el, {"grid"}).find("grid")), out);
      else out.push_back(one(el));
      if (!out.empty() && names(out.back()) != names(out.front()))
        fail(el.where, fmt::format("{} names {}, and the first size names {}: every size names the same ones",
                                   context_name(el.path), join(names(out.back())), join(names(out.front()))));
    }
  } else {
    wrong_type(it, "a mapping of size names to values or a list of them");
  }
  if (out.empty()) out.emplace_back();
  return out;
}

}  // namespace tunekit::spec_detail
