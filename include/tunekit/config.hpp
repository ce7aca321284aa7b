#pragma once
// A config: one value per parameter, the unit everything else is about.
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "tunekit/value.hpp"

namespace tunekit {

// One point of a space: parameter name -> value, in parameter order.
class Config {
 public:
  Config() = default;
  explicit Config(std::vector<std::pair<std::string, Value>> entries) : entries_(std::move(entries)) {}

  void set(std::string name, Value v);
  const Value* find(std::string_view name) const;
  const Value& at(std::string_view name) const;  // throws std::out_of_range
  bool empty() const { return entries_.empty(); }
  std::size_t size() const { return entries_.size(); }
  auto begin() const { return entries_.begin(); }
  auto end() const { return entries_.end(); }

  // "{BM: 64, BN: 128}" (msKPP style); a string as detail::shown_value shows it.
  std::string str() const;
  // Canonical, order-independent identity used by the store: names sorted,
  // values as Python repr. Two equal configs have the same key.
  std::string key() const;
  Bindings bindings() const;

  friend bool operator==(const Config& a, const Config& b) { return a.key() == b.key(); }

 private:
  std::vector<std::pair<std::string, Value>> entries_;
};

}  // namespace tunekit
