#pragma once
// An enumeration's names, as specs, the command line, the store and the
// worker protocol spell them: one table per enumeration, declared next to
// it, and these lookups over it. No name is spelled anywhere else.
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace tunekit {

template <typename E>
struct Named {
  E value;
  std::string_view name;
};

template <typename E>
using NameTable = std::span<const Named<E>>;

// The first name of `value` (a value may have an alias after it).
template <typename E>
std::string_view name_of(NameTable<E> table, E value) {
  for (const auto& n : table)
    if (n.value == value) return n.name;
  return "?";
}

template <typename E>
std::optional<E> value_named(NameTable<E> table, std::string_view name) {
  for (const auto& n : table)
    if (n.name == name) return n.value;
  return std::nullopt;
}

template <typename E>
std::vector<std::string> names_in(NameTable<E> table) {
  std::vector<std::string> out;
  for (const auto& n : table) out.emplace_back(n.name);
  return out;
}

// "a, b or c": for messages that say what was expected.
std::string either(const std::vector<std::string>& names);

}  // namespace tunekit
