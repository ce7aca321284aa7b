#include <set>

#include <fmt/format.h>

#include "tunekit/spec.hpp"

namespace tunekit {

std::vector<Bindings> size_grid(const std::vector<Parameter>& axes) {
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

Value scalar_value(std::string_view text) {
  std::string t(text);
  return parse_assignment("x=" + t).second;
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
        std::string_view item = inner.substr(start, comma == std::string_view::npos ? std::string_view::npos : comma - start);
        while (!item.empty() && item.front() == ' ') item.remove_prefix(1);
        while (!item.empty() && item.back() == ' ') item.remove_suffix(1);
        if (item.empty()) throw InputError(where, "empty value in the list; " + expected);
        p.values.push_back(scalar_value(item));
        if (comma == std::string_view::npos) break;
        start = comma + 1;
      }
    }
  } else if (!rhs.empty()) {
    p.values.push_back(scalar_value(rhs));
  } else {
    throw InputError(where, "no value after '='; " + expected);
  }
  if (pow2)
    for (auto& v : p.values) {
      if (!v.is_int() || v.as_int() < 0 || v.as_int() > 62)
        throw InputError(where, "[pow2] takes exponents from 0 to 62, got " + v.repr());
      v = Value(std::int64_t{1} << v.as_int());
    }
  return p;
}

std::vector<Bindings> apply_axes(const std::vector<Bindings>& sizes, const std::vector<Parameter>& axes) {
  if (axes.empty()) return sizes;
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
