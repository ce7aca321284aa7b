#include <algorithm>
#include <stdexcept>

#include "core/detail/text.hpp"
#include "tunekit/config.hpp"

namespace tunekit {

void Config::set(std::string name, Value v) {
  for (auto& [n, value] : entries_)
    if (n == name) {
      value = std::move(v);
      return;
    }
  entries_.emplace_back(std::move(name), std::move(v));
}

const Value* Config::find(std::string_view name) const {
  for (const auto& [n, value] : entries_)
    if (n == name) return &value;
  return nullptr;
}

const Value& Config::at(std::string_view name) const {
  if (const Value* v = find(name)) return *v;
  throw std::out_of_range("config has no parameter '" + std::string(name) + "'");
}

std::string Config::str() const {
  std::string out = "{";
  for (std::size_t i = 0; i < entries_.size(); ++i) {
    if (i) out += ", ";
    out += entries_[i].first + ": " + detail::shown_value(entries_[i].second);
  }
  return out + "}";
}

std::string Config::key() const {
  std::vector<const std::pair<std::string, Value>*> sorted;
  for (const auto& e : entries_) sorted.push_back(&e);
  std::sort(sorted.begin(), sorted.end(), [](auto* a, auto* b) { return a->first < b->first; });
  std::string out;
  for (const auto* e : sorted) {
    if (!out.empty()) out += ",";
    out += e->first + "=" + e->second.repr();
  }
  return out;
}

Bindings Config::bindings() const {
  Bindings b;
  for (const auto& [n, v] : entries_) b.emplace(n, v);
  return b;
}

}  // namespace tunekit
