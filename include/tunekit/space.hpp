#pragma once
// A search space: parameters with finite value lists, pruned by constraints.
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "tunekit/config.hpp"
#include "tunekit/constraint.hpp"
#include "tunekit/value.hpp"

namespace tunekit {

struct Parameter {
  std::string name;
  std::vector<Value> values;
  SourceLocation where;

  // The listed value equal to `v` by Python's equality (1 == 1.0), or null:
  // what a config that names `v` holds, so that it builds and is stored as
  // the space lists it (-DSCALE=1.0, not -DSCALE=1).
  const Value* listed(const Value& v) const {
    for (const auto& x : values)
      if (x == v) return &x;
    return nullptr;
  }
};

// Which configs are neighbours of a config (for local search).
enum class Neighbourhood {
  hamming,   // exactly one parameter has another value (any other value)
  adjacent,  // exactly one parameter moved to the previous or next value of its list
};

namespace detail {
class SpaceIndex;
}

class Space {
 public:
  // Every free name of a constraint must be a parameter or a key of
  // `constants` (problem sizes, machine properties); otherwise InputError at
  // the constraint's location. A parameter shadows a constant of the same
  // name; duplicate parameter names are an InputError. A constraint that is
  // constant after binding is dropped (true) or empties the space (false);
  // a constraint that fails to evaluate counts as false.
  // The const members may be called from several threads at once. The
  // index below is built on first use (or by build()), once, and shared by
  // copies of the space.
  Space(std::vector<Parameter> parameters, std::vector<Expression> constraints, const Bindings& constants = {});

  const std::vector<Parameter>& parameters() const { return params_; }
  const std::vector<Expression>& constraints() const { return constraints_; }

  // Product of the value-list lengths (saturates at UINT64_MAX).
  std::uint64_t cartesian_size() const;
  // Number of valid configs, counted without materialising the product
  // (saturates at UINT64_MAX).
  std::uint64_t count() const;
  // Whether some config is valid: without an index, the search stops at the
  // first, where count() goes through them all. Answered once per space.
  bool any_valid() const;
  // Calls `visit` for each valid config as value indices (one per
  // parameter), in lexicographic order; stops early when it returns false.
  void for_each(const std::function<bool(std::span<const std::uint32_t>)>& visit) const;
  // The same from the first valid config after `after` (value indices, one
  // per parameter, valid or not): a walk resumed where it stopped costs the
  // walk from there, not from the start, without an index too.
  void for_each_after(std::span<const std::uint32_t> after,
                      const std::function<bool(std::span<const std::uint32_t>)>& visit) const;
  std::vector<Config> enumerate(std::size_t limit = SIZE_MAX) const;

  // ---- The index: every valid config by its position in for_each order.
  //
  // Built once, on first use of any member below or of count()/for_each().
  // It is a layered graph with counts: one layer per parameter, shared
  // subgraphs stored once; its memory is far below the Cartesian size
  // (memory_bytes()). at() and index_of() take one step per parameter (a
  // binary search among the valid values of that step). If the graph would
  // outgrow the index budget (set_index_budget(), default 1 GiB), the space
  // is not indexable: count() and for_each() then use a bounded-memory
  // search, contains_indices() and neighbours() evaluate the constraints,
  // and at(), indices_at(), index_of(), random(), random_indices() and
  // size() throw std::length_error.

  // Builds the index now (else on first use). Returns indexable().
  bool build() const;
  bool indexable() const;
  // Bytes held by the index (0 if not indexable).
  std::size_t memory_bytes() const;
  // Number of valid configs, exact; throws std::overflow_error if it does
  // not fit in 64 bits (count() saturates instead).
  std::uint64_t size() const;
  // The i-th valid config in for_each (lexicographic) order, i < size().
  // Throws std::out_of_range otherwise.
  Config at(std::uint64_t i) const;
  void indices_at(std::uint64_t i, std::span<std::uint32_t> value_indices) const;
  std::vector<std::uint32_t> indices_at(std::uint64_t i) const;
  // The position of a valid config in for_each order; nullopt if it is not
  // valid (or not in the space).
  std::optional<std::uint64_t> index_of(const Config& c) const;
  std::optional<std::uint64_t> index_of(std::span<const std::uint32_t> value_indices) const;
  // Membership by value indices (a walk of the index; the constraints are
  // evaluated instead when the space is not indexable).
  bool contains_indices(std::span<const std::uint32_t> value_indices) const;
  // Where value indices leave the space: a parameter p such that changing
  // only parameters after p never makes them valid (with the index, the
  // first p at which no valid config agrees with them on every parameter
  // up to p; without it, the last parameter). Their size when they are
  // valid. A search that repairs an invalid config tries only the
  // parameters up to p.
  std::size_t first_invalid(std::span<const std::uint32_t> value_indices) const;
  // A valid config drawn uniformly at random. Throws std::out_of_range if
  // the space is empty.
  Config random(std::mt19937_64& rng) const;
  std::vector<std::uint32_t> random_indices(std::mt19937_64& rng) const;
  // The valid neighbours of a config (which need not itself be valid), by
  // parameter in declaration order, then by value index. Empty if the
  // config is not in the space.
  std::vector<Config> neighbours(const Config& c, Neighbourhood kind = Neighbourhood::hamming) const;
  std::vector<std::vector<std::uint32_t>> neighbours(std::span<const std::uint32_t> value_indices,
                                                     Neighbourhood kind = Neighbourhood::hamming) const;
  // Upper bound on the memory the index may take while it is built (bytes;
  // default 1 GiB). Drops this space's index, if built; the next use builds
  // it again under the new budget. (0 forces the fallback, for tests.)
  void set_index_budget(std::size_t bytes);

  Config config_at(std::span<const std::uint32_t> value_indices) const;
  // Value indices of `c`, or nullopt if a parameter is missing, a value is
  // not in its list, or `c` names a parameter the space lacks.
  std::optional<std::vector<std::uint32_t>> indices_of(const Config& c) const;
  // `c` as the space writes it: the space's own values (3 for a proposed
  // 3.0), in the space's parameter order; nullopt where indices_of is. A
  // config is built, stored and told apart from others by its text, so a
  // proposal is written this way before any of that.
  std::optional<Config> canonical(const Config& c) const;
  // nullopt if valid; otherwise a reason ("not in space: X=3", or the text of
  // the first failing constraint).
  std::optional<std::string> why_invalid(const Config& c) const;
  bool contains(const Config& c) const { return !why_invalid(c).has_value(); }

  // The constraints that fail to evaluate for some values of the parameters
  // they read (a division or modulo by zero, an integer overflow, a type
  // error): such a constraint drops those configs as if it were false, so
  // the user is told, once per constraint: its location, what failed and the
  // first values (in for_each order) that hit it. Each constraint is tried
  // over the product of its own parameters' values, up to `limit`
  // combinations.
  std::vector<std::string> constraint_errors(std::uint64_t limit = 1u << 16) const;

  // Why no config is valid, or nullopt: the first constraint that holds for none of its own
  // parameters' values (tried up to `limit` combinations), located; else that they exclude each
  // other, naming those without which some config is valid and how many (spaces with an index;
  // counted under a fixed allowance of work in all, those it does not reach said to be untried).
  std::optional<std::string> why_empty(std::uint64_t limit = 1u << 16) const;

 private:
  struct Check {
    Expression expr;         // the constraint bound to the constants
    std::vector<int> slots;  // parameter index for each expression variable
    int level;               // deepest parameter index used; -1 = constant
    std::size_t constraint;  // index into constraints_
  };
  struct Solver;  // memoised counting and pruning (space.cpp), the fallback
  struct Cache;   // the lazily built index (space.cpp)
  friend class detail::SpaceIndex;

  const detail::SpaceIndex* index() const;          // null if not indexable
  const detail::SpaceIndex& require_index() const;  // throws std::length_error

  // Where parameter k lists `v` (as Value's == compares: 1 for 1.0), its
  // own type's entry first; by hash for a long list, so that checking each
  // config of a long `configs:` list is not quadratic.
  std::optional<std::uint32_t> value_index(std::size_t k, const Value& v) const;

  bool passes(const Check& check, std::span<const std::uint32_t> value_indices, std::vector<Value>& scratch) const;
  // for_each's search without the index; from after `*after` when given.
  void walk(const std::span<const std::uint32_t>* after,
            const std::function<bool(std::span<const std::uint32_t>)>& visit) const;
  // Calls `visit` with the values of `check`'s own parameters, combination
  // by combination in for_each order, until it returns false or `limit`
  // combinations are done; true when every combination was visited.
  bool each_combination(const Check& check, std::uint64_t limit,
                        const std::function<bool(const std::vector<Value>&)>& visit) const;

  std::vector<Parameter> params_;
  std::vector<Expression> constraints_;
  std::vector<Check> checks_;                // in constraint order
  std::vector<std::vector<int>> checks_at_;  // per parameter: the checks whose deepest parameter it is
  std::vector<std::vector<int>> groups_;     // independent parameter groups, each in declaration order
  bool constant_false_ = false;
  std::size_t index_budget_ = std::size_t{1} << 30;
  std::shared_ptr<Cache> cache_;
};

}  // namespace tunekit
