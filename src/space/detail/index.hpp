#pragma once
// The space index: an AND/OR multi-valued decision diagram of the valid
// configs, with counts (see index.cpp for how it is built).
//
// Shape. Every parameter p owns one layer. A node of p's layer stands for a
// set of completions of p and of the parameters "below" p; its edges are
// the valid values of p in increasing index order. Below p, the later
// parameters that still share constraints form independent components
// (the children of p, fixed for the space); an edge holds one child node
// per component, and its count is the product of their counts. The roots
// are the independent parameter groups of the space.
//
// Walking the parameters in declaration order, each parameter's node is
// known once its parent parameter has a value, so lexicographic
// enumeration, the i-th config (lexicographic rank), the rank of a config
// and membership are one step per parameter.
#include <algorithm>
#include <cstdint>
#include <functional>
#include <optional>
#include <random>
#include <span>
#include <stdexcept>
#include <vector>

#include "tunekit/space.hpp"

namespace tunekit::detail {

// Thrown by the builder when the index would exceed its memory budget (or
// its allowance of values to try).
struct IndexBudgetExceeded : std::length_error {
  IndexBudgetExceeded() : std::length_error("space index exceeds its memory budget") {}
};

// Thrown while a space's index is built or its configs are counted when
// the run is asked to stop (stop.hpp): over a space of 10^15 combinations a
// count can take hours, and a signal must still end the run.
struct CountingStopped : std::runtime_error {
  CountingStopped() : std::runtime_error("stopped while the space's valid configs were counted") {}
};

class SpaceIndex {
 public:
  static constexpr std::uint32_t kDead = UINT32_MAX;
  // A count past 64 bits is stored as kCap, and flagged: kCap alone is
  // also the exact count 2^64 - 1.
  static constexpr std::uint64_t kCap = UINT64_MAX;

  // Builds the index of `space`; throws IndexBudgetExceeded. With
  // `tries_left`, each parameter value the build tries takes one from it,
  // and the build gives up (IndexBudgetExceeded) when it runs out: memory
  // alone does not bound the time, as a parameter of many values tried
  // again at every node shows. Shared by several builds, it bounds them all.
  SpaceIndex(const Space& space, std::size_t budget_bytes, std::uint64_t* tries_left = nullptr);

  // Number of valid configs; kCap if it does not fit (saturated()), or is
  // 2^64 - 1 exactly (not saturated()).
  std::uint64_t total() const { return total_; }
  bool saturated() const { return saturated_; }
  std::size_t bytes() const;

  // Requires !saturated() and i < total().
  void at(std::uint64_t i, std::uint32_t* out) const;
  // Rank of a config given by value indices; nullopt if not valid.
  // Requires !saturated() for the rank (membership works regardless).
  std::optional<std::uint64_t> rank(const std::uint32_t* idx) const;
  bool contains(const std::uint32_t* idx) const;
  // The first parameter whose value the walk of idx finds no edge for (no
  // valid config agrees with idx up to and including it); the number of
  // parameters when idx is valid.
  std::size_t first_invalid(const std::uint32_t* idx) const;
  // Uniform among the valid configs; requires total() > 0 and that no
  // node count saturated (checked: throws std::overflow_error).
  void random(std::mt19937_64& rng, std::uint32_t* out) const;
  // Lexicographic; returns false if `visit` stopped it.
  bool for_each(const std::function<bool(std::span<const std::uint32_t>)>& visit) const;

  // Statistics, for reports and tests.
  std::size_t node_count() const;
  std::size_t edge_count() const;

  struct Layer {
    int arity = 0;                        // number of child components
    int width = 1;                        // bytes per stored value index: 1, 2 or 4
    std::vector<std::uint32_t> first{0};  // per node: its first edge; one extra entry at the end
    std::vector<std::uint8_t> values;     // per edge: the value index, `width` bytes little-endian
    std::vector<std::uint32_t> kids;      // per edge: `arity` child node ids
    std::vector<std::uint64_t> cum64;     // per edge: count of the node's edges up to and including it
    std::vector<std::uint32_t> cum32;     // the same when every count fits (then cum64 is empty)
    bool saturated = false;               // some count in this layer saturated
    std::vector<std::uint32_t> overflowed_nodes;  // those nodes, in increasing id order

    std::size_t edges() const { return values.size() / static_cast<std::size_t>(width); }
    std::uint32_t value(std::size_t e) const {
      const std::uint8_t* p = values.data() + e * static_cast<std::size_t>(width);
      if (width == 1) return p[0];
      if (width == 2) return static_cast<std::uint32_t>(p[0] | (p[1] << 8));
      return static_cast<std::uint32_t>(p[0]) | (static_cast<std::uint32_t>(p[1]) << 8) |
             (static_cast<std::uint32_t>(p[2]) << 16) | (static_cast<std::uint32_t>(p[3]) << 24);
    }
    // Cumulative count through edge e of a node whose first edge is f.
    std::uint64_t cum(std::size_t e, std::size_t f) const {
      if (arity == 0) return e - f + 1;
      return cum32.empty() ? cum64[e] : cum32[e];
    }
    std::uint64_t count(std::uint32_t node) const {
      const std::size_t f = first[node], l = first[node + 1];
      return cum(l - 1, f);
    }
    // Whether node's count exceeds 64 bits (count() is then kCap).
    bool overflowed(std::uint32_t node) const {
      return saturated && count(node) == kCap &&
             std::binary_search(overflowed_nodes.begin(), overflowed_nodes.end(), node);
    }
    // The edge of `node` holding value index v, or SIZE_MAX.
    std::size_t find_value(std::uint32_t node, std::uint32_t v) const;
    // The edge e of `node` with cum(e-1) <= q < cum(e).
    std::size_t find_rank(std::uint32_t node, std::uint64_t q) const;
  };

 private:
  friend class IndexBuilder;

  int n_ = 0;
  std::vector<Layer> layers_;               // per parameter
  std::vector<std::vector<int>> children_;  // per parameter: the first parameter of each child component
  std::vector<int> roots_;                  // first parameter of each root component
  std::vector<std::uint32_t> root_nodes_;   // their nodes
  std::uint64_t total_ = 0;
  bool saturated_ = false;
  bool empty_ = false;  // no valid config at all
};

}  // namespace tunekit::detail
