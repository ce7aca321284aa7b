#pragma once
// A search space: parameters with finite value lists, pruned by constraints.
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "tunekit/constraint.hpp"
#include "tunekit/value.hpp"

namespace tunekit {

struct Parameter {
  std::string name;
  std::vector<Value> values;
  SourceLocation where;
};

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

  // "{BM: 64, BN: 128}" (msKPP style), strings unquoted.
  std::string str() const;
  // Canonical, order-independent identity used by the store: names sorted,
  // values as Python repr. Two equal configs have the same key.
  std::string key() const;
  Bindings bindings() const;

  friend bool operator==(const Config& a, const Config& b) { return a.key() == b.key(); }

 private:
  std::vector<std::pair<std::string, Value>> entries_;
};

class Space {
 public:
  // Every free name of a constraint must be a parameter or a key of
  // `constants` (problem sizes, machine properties); otherwise InputError at
  // the constraint's location. A parameter shadows a constant of the same
  // name; duplicate parameter names are an InputError. A constraint that is
  // constant after binding is dropped (true) or empties the space (false);
  // a constraint that fails to evaluate counts as false.
  // The const members may be called from several threads at once: each
  // count()/for_each() call uses its own working memory (nothing is cached).
  Space(std::vector<Parameter> parameters, std::vector<Expression> constraints, const Bindings& constants = {});

  const std::vector<Parameter>& parameters() const { return params_; }
  const std::vector<Expression>& constraints() const { return constraints_; }

  // Product of the value-list lengths (saturates at UINT64_MAX).
  std::uint64_t cartesian_size() const;
  // Number of valid configs, counted without materialising the product.
  std::uint64_t count() const;
  // Calls `visit` for each valid config as value indices (one per
  // parameter), in lexicographic order; stops early when it returns false.
  void for_each(const std::function<bool(std::span<const std::uint32_t>)>& visit) const;
  std::vector<Config> enumerate(std::size_t limit = SIZE_MAX) const;

  Config config_at(std::span<const std::uint32_t> value_indices) const;
  // Value indices of `c`, or nullopt if a parameter is missing or a value
  // is not in its list.
  std::optional<std::vector<std::uint32_t>> indices_of(const Config& c) const;
  // nullopt if valid; otherwise a reason ("not in space: X=3", or the text of
  // the first failing constraint).
  std::optional<std::string> why_invalid(const Config& c) const;
  bool contains(const Config& c) const { return !why_invalid(c).has_value(); }

 private:
  struct Check {
    Expression expr;         // the constraint bound to the constants
    std::vector<int> slots;  // parameter index for each expression variable
    int level;               // deepest parameter index used; -1 = constant
    std::size_t constraint;  // index into constraints_
  };
  struct Solver;  // memoised counting and pruning (space.cpp)

  bool passes(const Check& check, std::span<const std::uint32_t> value_indices, std::vector<Value>& scratch) const;

  std::vector<Parameter> params_;
  std::vector<Expression> constraints_;
  std::vector<Check> checks_;                // in constraint order
  std::vector<std::vector<int>> checks_at_;  // per parameter: the checks whose deepest parameter it is
  std::vector<std::vector<int>> groups_;     // independent parameter groups, each in declaration order
  bool constant_false_ = false;
};

}  // namespace tunekit
