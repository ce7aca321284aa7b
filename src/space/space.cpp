// The search space: constraint placement, independent parameter groups and a
// memoised depth-first search.
//
// Parameters that share no constraint (transitively) form independent
// groups; the number of valid configs is the product of the groups' counts.
// Within a group, parameters are visited in declaration order and every
// constraint is checked as soon as its deepest parameter has a value. The
// number of completions below a level depends only on the values of the
// earlier parameters that constraints at or below that level still read
// (the level's "frontier"), so counts are memoised by the frontier's value
// indices. Enumeration uses the same memo to know whether a partial config
// has any valid completion, so it never walks into a dead end and its cost is
// proportional to the number of valid configs it visits.
//
// This solver is the fallback. The index (index.cpp) serves count(),
// for_each() and the indexed members; the solver runs only when the index
// would exceed its memory budget, with memory bounded by the limits below.
#include <algorithm>
#include <atomic>
#include <mutex>
#include <numeric>
#include <stdexcept>
#include <unordered_map>

#include "space/detail/flat_map.hpp"
#include "space/detail/index.hpp"
#include "tunekit/space.hpp"
#include "tunekit/stop.hpp"

namespace tunekit {

namespace {

constexpr std::uint64_t kUnknown = UINT64_MAX;      // memo cell not computed
constexpr std::uint64_t kNonzero = UINT64_MAX - 1;  // known to have a completion, count unknown
constexpr std::uint64_t kCap = UINT64_MAX - 2;      // counts saturate here

std::uint64_t sat_add(std::uint64_t a, std::uint64_t b) { return a > kCap - b ? kCap : a + b; }
std::uint64_t sat_mul(std::uint64_t a, std::uint64_t b) {
  if (a == 0 || b == 0) return 0;
  return a > kCap / b ? kCap : a * b;
}

static_assert(detail::FlatMap::kMissing == kUnknown);

// Dense memo tables up to this many cells; larger key spaces use a hash map.
constexpr std::uint64_t kDenseCells = 1u << 16;
// At most this many hash-map memo entries per search (about 32 MiB at most).
constexpr std::size_t kMaxHashedEntries = 1u << 19;
// Result tables for checks over at most this many value combinations, and
// at most this many bytes of tables per search.
constexpr std::uint64_t kTableMaxCells = std::uint64_t{1} << 22;
constexpr std::uint64_t kTableBudgetBytes = std::uint64_t{1} << 23;

}  // namespace

// ---------------------------------------------------------------- Solver

struct Space::Solver {
  struct Level {
    int param = 0;
    std::vector<int> checks;      // checks to run once `param` has a value
    std::vector<int> key_params;  // the frontier
    std::vector<std::uint64_t> key_strides;
    bool memo = false;         // key space small enough to index
    bool full_prefix = false;  // the key is every earlier parameter: counts never repeat
    bool dense = false;
    bool leaf = false;  // no later level reads `param`
    std::uint64_t key_space = 1;
    std::vector<std::uint64_t> table;  // dense memo, allocated on first use
    detail::FlatMap map;
  };
  struct Group {
    std::vector<Level> levels;
  };

  // A check's results by the value indices of its parameters, 2 bits a
  // cell (0 = not evaluated yet, 1 = false, 2 = true), filled on demand.
  struct Table {
    std::vector<std::uint64_t> strides;
    std::uint64_t cells = 0;
    bool enabled = false;
    std::vector<std::uint8_t> bits;
  };

  const Space& space;
  std::uint64_t steps = 0;  // level checks made, for the stop flag
  std::vector<std::uint32_t> idx;
  std::vector<std::vector<Value>> scratch;  // per check
  std::vector<Table> tables;                // per check
  std::uint64_t table_budget = kTableBudgetBytes;
  std::vector<Group> groups;
  std::vector<std::pair<int, int>> place;  // parameter -> (group, level)
  std::size_t hashed = 0;

  explicit Solver(const Space& s) : space(s), idx(s.params_.size(), 0), place(s.params_.size()) {
    for (const auto& c : s.checks_) {
      std::vector<Value> buffer;
      for (int slot : c.slots) buffer.push_back(s.params_[slot].values.empty() ? Value() : s.params_[slot].values[0]);
      scratch.push_back(std::move(buffer));
      Table t;
      std::uint64_t cells = 1;
      for (int slot : c.slots) {
        t.strides.push_back(cells);
        cells *= std::max<std::uint64_t>(1, s.params_[slot].values.size());
        if (cells > kTableMaxCells) break;
      }
      t.cells = cells;
      t.enabled = !c.slots.empty() && cells <= kTableMaxCells;
      tables.push_back(std::move(t));
    }
    for (std::size_t g = 0; g < s.groups_.size(); ++g) {
      const auto& members = s.groups_[g];
      Group group;
      group.levels.resize(members.size());
      for (std::size_t k = 0; k < members.size(); ++k) {
        place[members[k]] = {static_cast<int>(g), static_cast<int>(k)};
        group.levels[k].param = members[k];
        group.levels[k].checks = s.checks_at_[members[k]];
      }
      // Frontier: an earlier parameter is in the key of every level from
      // just after it down to the level of a check that reads it.
      std::vector<std::vector<char>> in_key(members.size(), std::vector<char>(members.size(), 0));
      for (std::size_t k = 0; k < members.size(); ++k) {
        for (int ci : s.checks_at_[members[k]]) {
          for (int slot : s.checks_[ci].slots) {
            int j = place[slot].second;
            for (std::size_t m = static_cast<std::size_t>(j) + 1; m <= k; ++m) in_key[m][j] = 1;
          }
        }
      }
      for (std::size_t k = 0; k < members.size(); ++k) {
        Level& lv = group.levels[k];
        std::uint64_t space_size = 1;
        bool fits = true;
        for (std::size_t j = 0; j < k; ++j) {
          if (!in_key[k][j]) continue;
          int p = members[j];
          lv.key_params.push_back(p);
          lv.key_strides.push_back(space_size);
          std::uint64_t n = s.params_[p].values.size();
          if (n != 0 && space_size > (std::uint64_t{1} << 62) / n) fits = false;
          else space_size *= n;
        }
        lv.memo = fits;
        lv.key_space = space_size;
        lv.full_prefix = lv.key_params.size() == k;
        lv.dense = fits && space_size <= kDenseCells;
        lv.leaf = k + 1 == members.size() || !in_key[k + 1][k];
      }
      groups.push_back(std::move(group));
    }
  }

  bool check_ok(int ci) {
    Table& t = tables[ci];
    const Check& c = space.checks_[ci];
    if (!t.enabled) return space.passes(c, idx, scratch[ci]);
    std::uint64_t cell = 0;
    for (std::size_t j = 0; j < c.slots.size(); ++j) cell += idx[c.slots[j]] * t.strides[j];
    if (t.bits.empty()) {
      std::uint64_t bytes = (t.cells + 3) / 4;
      if (bytes > table_budget) {
        t.enabled = false;
        return space.passes(c, idx, scratch[ci]);
      }
      table_budget -= bytes;
      t.bits.assign(bytes, 0);
    }
    std::uint8_t& byte = t.bits[cell >> 2];
    const unsigned shift = static_cast<unsigned>(cell & 3) * 2;
    const unsigned state = (byte >> shift) & 3u;
    if (state != 0) return state == 2;
    bool ok = space.passes(c, idx, scratch[ci]);
    byte = static_cast<std::uint8_t>(byte | ((ok ? 2u : 1u) << shift));
    return ok;
  }

  bool level_ok(const Level& lv) {
    if ((++steps & 0xFFFF) == 0 && stop_requested()) throw detail::CountingStopped();
    for (int ci : lv.checks)
      if (!check_ok(ci)) return false;
    return true;
  }

  std::uint64_t key_of(const Level& lv) const {
    std::uint64_t key = 0;
    for (std::size_t j = 0; j < lv.key_params.size(); ++j) key += idx[lv.key_params[j]] * lv.key_strides[j];
    return key;
  }

  std::uint64_t recall(const Level& lv, std::uint64_t key) const {
    if (lv.dense) return lv.table.empty() ? kUnknown : lv.table[key];
    return lv.map.find(key);  // kMissing == kUnknown
  }

  void remember(Level& lv, std::uint64_t key, std::uint64_t value) {
    if (lv.dense) {
      if (lv.table.empty()) lv.table.assign(lv.key_space, kUnknown);
      lv.table[key] = value;
      return;
    }
    if (hashed >= kMaxHashedEntries && lv.map.find(key) == kUnknown) return;  // memory bound reached
    std::size_t before = lv.map.size();
    lv.map.set(key, value);
    hashed += lv.map.size() - before;
  }

  // Number of valid completions of group `g` from level `k` on, given the
  // values of its earlier parameters in idx.
  std::uint64_t count(int g, std::size_t k) {
    Group& group = groups[g];
    if (k == group.levels.size()) return 1;
    Level& lv = group.levels[k];
    bool use_memo = lv.memo && !lv.full_prefix;
    std::uint64_t key = 0;
    if (use_memo) {
      key = key_of(lv);
      std::uint64_t known = recall(lv, key);
      if (known < kNonzero) return known;
    }
    std::uint64_t total = 0;
    const auto n = static_cast<std::uint32_t>(space.params_[lv.param].values.size());
    if (lv.leaf) {
      // Nothing below reads this parameter: the completions below are the
      // same for each of its valid values.
      std::uint64_t valid = 0;
      for (std::uint32_t v = 0; v < n; ++v) {
        idx[lv.param] = v;
        if (level_ok(lv)) ++valid;
      }
      if (valid != 0) total = sat_mul(valid, count(g, k + 1));
    } else {
      for (std::uint32_t v = 0; v < n; ++v) {
        idx[lv.param] = v;
        if (!level_ok(lv)) continue;
        total = sat_add(total, count(g, k + 1));
      }
    }
    if (use_memo) remember(lv, key, total);
    return total;
  }

  // Whether group `g` has any valid completion from level `k` on.
  bool feasible(int g, std::size_t k) {
    Group& group = groups[g];
    if (k == group.levels.size()) return true;
    Level& lv = group.levels[k];
    std::uint64_t key = 0;
    // A full-prefix key is asked about at most a few times (by for_each and
    // the feasibility checks above it): not worth memory.
    bool use_memo = lv.memo && !lv.full_prefix;
    if (use_memo) {
      key = key_of(lv);
      std::uint64_t known = recall(lv, key);
      if (known != kUnknown) return known != 0;
    }
    const auto n = static_cast<std::uint32_t>(space.params_[lv.param].values.size());
    for (std::uint32_t v = 0; v < n; ++v) {
      idx[lv.param] = v;
      if (level_ok(lv) && feasible(g, k + 1)) {
        if (use_memo) remember(lv, key, kNonzero);
        return true;
      }
    }
    if (use_memo) remember(lv, key, 0);
    return false;
  }
};

// ---------------------------------------------------------------- Space

struct Space::Cache {
  std::once_flag once;
  std::unique_ptr<detail::SpaceIndex> index;  // null: over budget
  // Whether some config is valid: -1 not known yet. Set by whichever of
  // any_valid() and count() gets there first (they agree).
  std::atomic<int> any{-1};
  // Per parameter with a long list of values: a hash of each value (equal
  // values hash alike, whatever their type) to where it is listed, in order.
  std::once_flag lookup_once;
  std::vector<std::unordered_map<std::size_t, std::vector<std::uint32_t>>> lookup;
};

Space::Space(std::vector<Parameter> parameters, std::vector<Expression> constraints, const Bindings& constants)
    : params_(std::move(parameters)), constraints_(std::move(constraints)), cache_(std::make_shared<Cache>()) {
  std::unordered_map<std::string, int> index;
  for (std::size_t i = 0; i < params_.size(); ++i)
    if (!index.emplace(params_[i].name, static_cast<int>(i)).second)
      throw InputError(params_[i].where, "duplicate parameter '" + params_[i].name + "'");

  // A parameter shadows a constant of the same name.
  Bindings usable;
  for (const auto& [name, value] : constants)
    if (!index.count(name)) usable.emplace(name, value);

  checks_at_.assign(params_.size(), {});
  for (std::size_t ci = 0; ci < constraints_.size(); ++ci) {
    const Expression& c = constraints_[ci];
    Check check{c.bind(usable), {}, -1, ci};
    for (const auto& name : check.expr.variables()) {
      auto it = index.find(name);
      if (it == index.end()) {
        std::string known_params, known_constants;
        std::vector<std::string> known;
        for (const auto& p : params_) {
          known_params += (known_params.empty() ? "" : ", ") + p.name;
          known.push_back(p.name);
        }
        for (const auto& [n, v] : usable) {
          known_constants += (known_constants.empty() ? "" : ", ") + n;
          known.push_back(n);
        }
        throw InputError(c.where(), "unknown name '" + name + "' in constraint '" + c.text() + "'" +
                                        did_you_mean(name, known) + "; known: parameters " +
                                        (known_params.empty() ? "(none)" : known_params) +
                                        "; sizes/machine properties " +
                                        (known_constants.empty() ? "(none)" : known_constants));
      }
      check.slots.push_back(it->second);
      check.level = std::max(check.level, it->second);
    }
    if (check.slots.empty()) {
      if (check.expr.test({})) continue;  // always true: nothing to check
      constant_false_ = true;
    } else {
      checks_at_[check.level].push_back(static_cast<int>(checks_.size()));
    }
    checks_.push_back(std::move(check));
  }

  // Independent groups: union-find over the parameters each check reads.
  std::vector<int> parent(params_.size());
  std::iota(parent.begin(), parent.end(), 0);
  auto find = [&](int x) {
    while (parent[x] != x) x = parent[x] = parent[parent[x]];
    return x;
  };
  for (const auto& check : checks_)
    for (std::size_t k = 1; k < check.slots.size(); ++k) {
      int a = find(check.slots[0]), b = find(check.slots[k]);
      if (a != b) parent[std::max(a, b)] = std::min(a, b);
    }
  std::vector<int> group_of_root(params_.size(), -1);
  for (std::size_t p = 0; p < params_.size(); ++p) {
    int root = find(static_cast<int>(p));
    if (group_of_root[root] < 0) {
      group_of_root[root] = static_cast<int>(groups_.size());
      groups_.emplace_back();
    }
    groups_[group_of_root[root]].push_back(static_cast<int>(p));
  }
}

std::vector<std::string> Space::constraint_errors(std::uint64_t limit) const {
  std::vector<std::string> out;
  // A failure where another constraint over the same parameters (or some of
  // them) is false drops nothing: that one rules the values out anyway
  // (`WARPS % WK == 0` guarding `WARPS // WK` in a later constraint).
  auto ruled_out = [&](const Check& failing, const std::vector<Value>& values) {
    for (const Check& other : checks_) {
      if (&other == &failing || other.slots.empty()) continue;
      std::vector<Value> own;
      for (int p : other.slots) {
        auto at = std::find(failing.slots.begin(), failing.slots.end(), p);
        if (at == failing.slots.end()) break;
        own.push_back(values[static_cast<std::size_t>(at - failing.slots.begin())]);
      }
      if (own.size() == other.slots.size() && !other.expr.test(own)) return true;
    }
    return false;
  };
  for (const Check& check : checks_) {
    const std::size_t n = check.slots.size();
    // A parameter without values leaves nothing to evaluate (the space is
    // empty, and why_empty() says why).
    if (std::any_of(check.slots.begin(), check.slots.end(), [&](int p) { return params_[p].values.empty(); }))
      continue;
    if (n == 0) {  // constant after binding the sizes: its failure empties the space
      const Expression& c = constraints_[check.constraint];
      if (!check.expr.evaluate(std::span<const Value>{})) {
        std::string why = "evaluation failed";
        try {
          (void)check.expr.evaluate(Bindings{});
        } catch (const InputError& e) {
          why = e.message();
        }
        out.push_back((c.where().str().empty() ? "" : c.where().str() + ": ") + "constraint '" + c.text() +
                      "': " + why + "; it counts as false, so no config is valid");
      }
      continue;
    }
    each_combination(check, limit, [&](const std::vector<Value>& values) {
      if (check.expr.evaluate(values) || ruled_out(check, values)) return true;
      Bindings at;
      for (std::size_t k = 0; k < n; ++k) at[params_[check.slots[k]].name] = values[k];
      std::string why = "evaluation failed";
      try {
        (void)check.expr.evaluate(at);
      } catch (const InputError& e) {
        why = e.message();
      }
      const Expression& c = constraints_[check.constraint];
      std::string first;
      for (const auto& [name, value] : at) first += (first.empty() ? "" : ", ") + name + ": " + value.repr();
      out.push_back((c.where().str().empty() ? "" : c.where().str() + ": ") + "constraint '" + c.text() +
                    "': " + why + ", first at {" + first + "}; the configs where it fails count as invalid");
      return false;
    });
  }
  return out;
}

bool Space::each_combination(const Check& check, std::uint64_t limit,
                             const std::function<bool(const std::vector<Value>&)>& visit) const {
  const std::size_t n = check.slots.size();
  std::vector<std::uint32_t> digit(n, 0);
  std::vector<Value> values(n);
  for (std::uint64_t tried = 0; tried < limit; ++tried) {
    for (std::size_t k = 0; k < n; ++k) values[k] = params_[check.slots[k]].values[digit[k]];
    if (!visit(values)) return false;
    // The next combination, the last parameter fastest (for_each order).
    std::size_t k = n;
    while (k > 0 && ++digit[k - 1] == params_[check.slots[k - 1]].values.size()) digit[--k] = 0;
    if (k == 0) return true;
  }
  return false;
}

namespace {
// What the counts of why_empty's spaces with one constraint left out may
// take: memory for each, and parameter values tried for all of them
// together, so that the message costs a bounded time at every empty size of
// a tune whatever the number of constraints (about 0.1 s on a 2-core VM).
constexpr std::size_t kWhatIfIndexBudget = std::size_t{16} << 20;
constexpr std::uint64_t kWhatIfTries = std::uint64_t{1} << 22;
}  // namespace

bool Space::any_valid() const {
  if (!cache_) return count() > 0;  // moved from
  if (const int known = cache_->any.load(); known >= 0) return known == 1;
  // Without an index, counting is a search of the whole space: the first
  // valid config is enough to know.
  bool any = false;
  if (indexable()) any = count() > 0;
  else for_each([&](std::span<const std::uint32_t>) { return !(any = true); });
  cache_->any = any ? 1 : 0;
  return any;
}

std::optional<std::string> Space::why_empty(std::uint64_t limit) const {
  if (any_valid()) return std::nullopt;
  for (const auto& p : params_)
    if (p.values.empty())
      return (p.where.str().empty() ? "" : p.where.str() + ": ") + "parameter '" + p.name + "' has no values";
  std::size_t unchecked = 0;  // constraints with more combinations than `limit`, none of them seen to hold
  for (const Check& check : checks_) {
    const std::size_t n = check.slots.size();
    // Complete only when every combination was tried and none held.
    bool held = false;
    const bool holds_for_none = each_combination(check, limit, [&](const std::vector<Value>& values) {
      held = check.expr.test(values);
      return !held;
    });
    if (!holds_for_none) {
      unchecked += !held;
      continue;
    }
    const Expression& c = constraints_[check.constraint];
    return (c.where().str().empty() ? "" : c.where().str() + ": ") + "the constraint '" + c.text() +
           "' holds for no config" +
           (n == 0 ? " (it reads no parameter: the sizes and the machine's properties decide it)"
                   : " (it holds for none of the values of its parameters)");
  }
  if (unchecked > 0)
    return "no config meets all the constraints; " + std::to_string(unchecked) +
           " of them held for none of the first " + std::to_string(limit) +
           " combinations of their parameters' values (the rest were not tried)";
  std::string message = "each of the " + std::to_string(constraints_.size()) +
                        " constraints holds for some configs, but no config meets them all";
  // Which ones to relax: those without which some config is valid, each with
  // how many. Without an index each count would be a search of the space.
  if (!indexable()) return message;
  std::string relax;
  std::size_t not_tried = 0;
  // A constraint left out may open a space whose index is large or slow to
  // build: the counts share one allowance, and those past it are untried.
  std::uint64_t tries_left = kWhatIfTries;
  for (std::size_t left_out = 0; left_out < checks_.size(); ++left_out) {
    std::vector<Expression> others;
    for (std::size_t k = 0; k < checks_.size(); ++k)
      if (k != left_out) others.push_back(checks_[k].expr);
    const Space without(params_, std::move(others));
    std::uint64_t n = 0;
    try {
      n = detail::SpaceIndex(without, std::min(index_budget_, kWhatIfIndexBudget), &tries_left).total();
    } catch (const detail::IndexBudgetExceeded&) {
      ++not_tried;
      continue;
    }
    if (n == 0) continue;
    const Expression& c = constraints_[checks_[left_out].constraint];
    relax += std::string(relax.empty() ? "" : "; ") + "without '" + c.text() + "'" +
             (c.where().str().empty() ? "" : " (" + c.where().str() + ")") + ", " + std::to_string(n) + " config" +
             (n == 1 ? " is" : "s are") + " valid";
  }
  const std::string untried = not_tried == 0 ? ""
                                             : std::to_string(not_tried) +
                                                   " of them not tried: the counts with one left out stop at a "
                                                   "fixed amount of work";
  if (!relax.empty()) return message + ": " + relax + (untried.empty() ? "" : "; " + untried);
  if (!untried.empty()) return message + " (" + untried + ")";
  return message + " (nor does any one of them left out make a config valid)";
}

bool Space::passes(const Check& check, std::span<const std::uint32_t> value_indices,
                   std::vector<Value>& scratch) const {
  for (std::size_t k = 0; k < check.slots.size(); ++k) {
    int p = check.slots[k];
    scratch[k] = params_[p].values[value_indices[p]];
  }
  return check.expr.test(scratch);
}

std::uint64_t Space::cartesian_size() const {
  std::uint64_t total = 1;
  for (const auto& p : params_) {
    std::uint64_t n = p.values.size();
    if (n == 0) return 0;
    total = total > UINT64_MAX / n ? UINT64_MAX : total * n;
  }
  return total;
}

const detail::SpaceIndex* Space::index() const {
  if (!cache_) return nullptr;  // moved from
  std::call_once(cache_->once, [this] {
    try {
      cache_->index = std::make_unique<detail::SpaceIndex>(*this, index_budget_);
    } catch (const detail::IndexBudgetExceeded&) {
      cache_->index.reset();
    }
  });
  return cache_->index.get();
}

const detail::SpaceIndex& Space::require_index() const {
  const detail::SpaceIndex* ix = index();
  if (!ix)
    throw std::length_error("tunekit: this space is too large to index (its index would exceed " +
                            std::to_string(index_budget_) + " bytes)");
  return *ix;
}

bool Space::build() const { return index() != nullptr; }
bool Space::indexable() const { return index() != nullptr; }

std::size_t Space::memory_bytes() const {
  const detail::SpaceIndex* ix = index();
  return ix ? ix->bytes() : 0;
}

void Space::set_index_budget(std::size_t bytes) {
  index_budget_ = bytes;
  cache_ = std::make_shared<Cache>();
}

std::uint64_t Space::size() const {
  const detail::SpaceIndex& ix = require_index();
  if (ix.saturated()) throw std::overflow_error("tunekit: the number of valid configs exceeds 64 bits");
  return ix.total();
}

void Space::indices_at(std::uint64_t i, std::span<std::uint32_t> value_indices) const {
  const std::uint64_t n = size();
  if (i >= n)
    throw std::out_of_range("Space::at: index " + std::to_string(i) + " out of range (" + std::to_string(n) +
                            " valid configs)");
  if (value_indices.size() != params_.size())
    throw std::out_of_range("Space::indices_at: " + std::to_string(value_indices.size()) + " slots for " +
                            std::to_string(params_.size()) + " parameters");
  require_index().at(i, value_indices.data());
}

std::vector<std::uint32_t> Space::indices_at(std::uint64_t i) const {
  std::vector<std::uint32_t> out(params_.size());
  indices_at(i, std::span<std::uint32_t>(out));
  return out;
}

Config Space::at(std::uint64_t i) const { return config_at(indices_at(i)); }

std::optional<std::uint64_t> Space::index_of(std::span<const std::uint32_t> value_indices) const {
  const detail::SpaceIndex& ix = require_index();
  if (ix.saturated()) throw std::overflow_error("tunekit: the number of valid configs exceeds 64 bits");
  if (value_indices.size() != params_.size()) return std::nullopt;
  for (std::size_t p = 0; p < params_.size(); ++p)
    if (value_indices[p] >= params_[p].values.size()) return std::nullopt;
  return ix.rank(value_indices.data());
}

std::optional<std::uint64_t> Space::index_of(const Config& c) const {
  auto ix = indices_of(c);
  if (!ix) return std::nullopt;
  return index_of(std::span<const std::uint32_t>(*ix));
}

std::size_t Space::first_invalid(std::span<const std::uint32_t> value_indices) const {
  const std::size_t n = params_.size();
  if (value_indices.size() != n) return 0;
  if (const detail::SpaceIndex* ix = index()) return ix->first_invalid(value_indices.data());
  return contains_indices(value_indices) ? n : n == 0 ? 0 : n - 1;
}

bool Space::contains_indices(std::span<const std::uint32_t> value_indices) const {
  if (value_indices.size() != params_.size()) return false;
  for (std::size_t p = 0; p < params_.size(); ++p)
    if (value_indices[p] >= params_[p].values.size()) return false;
  if (const detail::SpaceIndex* ix = index()) return ix->contains(value_indices.data());
  if (constant_false_) return false;
  std::vector<Value> scratch;
  for (const auto& check : checks_) {
    scratch.resize(check.slots.size());
    if (!passes(check, value_indices, scratch)) return false;
  }
  return true;
}

std::vector<std::uint32_t> Space::random_indices(std::mt19937_64& rng) const {
  std::vector<std::uint32_t> out(params_.size());
  require_index().random(rng, out.data());
  return out;
}

Config Space::random(std::mt19937_64& rng) const { return config_at(random_indices(rng)); }

std::vector<std::vector<std::uint32_t>> Space::neighbours(std::span<const std::uint32_t> value_indices,
                                                          Neighbourhood kind) const {
  std::vector<std::vector<std::uint32_t>> out;
  if (value_indices.size() != params_.size()) return out;
  for (std::size_t p = 0; p < params_.size(); ++p)
    if (value_indices[p] >= params_[p].values.size()) return out;
  std::vector<std::uint32_t> probe(value_indices.begin(), value_indices.end());
  auto try_value = [&](std::size_t p, std::uint32_t v) {
    probe[p] = v;
    if (contains_indices(probe)) out.push_back(probe);
  };
  for (std::size_t p = 0; p < params_.size(); ++p) {
    const std::uint32_t own = value_indices[p];
    const auto n = static_cast<std::uint32_t>(params_[p].values.size());
    if (kind == Neighbourhood::adjacent) {
      if (own > 0) try_value(p, own - 1);
      if (own + 1 < n) try_value(p, own + 1);
    } else {
      for (std::uint32_t v = 0; v < n; ++v)
        if (v != own) try_value(p, v);
    }
    probe[p] = own;
  }
  return out;
}

std::vector<Config> Space::neighbours(const Config& c, Neighbourhood kind) const {
  std::vector<Config> out;
  auto ix = indices_of(c);
  if (!ix) return out;
  for (const auto& n : neighbours(std::span<const std::uint32_t>(*ix), kind)) out.push_back(config_at(n));
  return out;
}

std::uint64_t Space::count() const {
  if (const detail::SpaceIndex* ix = index()) return ix->total();
  if (constant_false_) return 0;
  for (const auto& p : params_)
    if (p.values.empty()) return 0;
  Solver solver(*this);
  std::uint64_t total = 1;
  for (std::size_t g = 0; g < groups_.size() && total != 0; ++g)
    total = sat_mul(total, solver.count(static_cast<int>(g), 0));
  // Without an index the count is a search: any_valid() need not search again.
  if (cache_) cache_->any = total != 0 ? 1 : 0;
  return total >= kCap ? UINT64_MAX : total;
}

void Space::for_each(const std::function<bool(std::span<const std::uint32_t>)>& visit) const {
  if (const detail::SpaceIndex* ix = index()) {
    ix->for_each(visit);
    return;
  }
  walk(nullptr, visit);
}

void Space::for_each_after(std::span<const std::uint32_t> after,
                           const std::function<bool(std::span<const std::uint32_t>)>& visit) const {
  if (after.size() != params_.size())
    throw std::invalid_argument("Space::for_each_after: one value index per parameter expected");
  walk(&after, visit);
}

// Depth-first in declaration order, so lexicographic; with `after`, the
// branches before it are never entered.
void Space::walk(const std::span<const std::uint32_t>* after,
                 const std::function<bool(std::span<const std::uint32_t>)>& visit) const {
  if (constant_false_) return;
  for (const auto& p : params_)
    if (p.values.empty()) return;
  Solver solver(*this);
  for (std::size_t g = 0; g < groups_.size(); ++g)
    if (!solver.feasible(static_cast<int>(g), 0)) return;
  const std::size_t n = params_.size();
  // Depth-first in declaration order; a value is taken only if its group
  // still has a valid completion, so every branch ends in a valid config.
  // `on_after`: the values so far are `after`'s, so this branch starts at
  // its value and its leaf (`after` itself) is not visited.
  auto descend = [&](auto& self, std::size_t k, bool on_after) -> bool {
    if (k == n) return on_after || visit(std::span<const std::uint32_t>(solver.idx));
    auto [g, level] = solver.place[k];
    Solver::Group& group = solver.groups[g];
    Solver::Level& lv = group.levels[level];
    bool last = static_cast<std::size_t>(level) + 1 == group.levels.size();
    const auto count = static_cast<std::uint32_t>(params_[k].values.size());
    for (std::uint32_t v = on_after ? (*after)[k] : 0; v < count; ++v) {
      solver.idx[k] = v;
      if (!solver.level_ok(lv)) continue;
      if (!last && !solver.feasible(g, level + 1)) continue;
      if (!self(self, k + 1, on_after && v == (*after)[k])) return false;
    }
    return true;
  };
  descend(descend, 0, after != nullptr);
}

std::vector<Config> Space::enumerate(std::size_t limit) const {
  std::vector<Config> out;
  if (limit == 0) return out;
  for_each([&](std::span<const std::uint32_t> value_indices) {
    out.push_back(config_at(value_indices));
    return out.size() < limit;
  });
  return out;
}

Config Space::config_at(std::span<const std::uint32_t> value_indices) const {
  if (value_indices.size() != params_.size())
    throw std::out_of_range("Space::config_at: " + std::to_string(value_indices.size()) + " indices for " +
                            std::to_string(params_.size()) + " parameters");
  std::vector<std::pair<std::string, Value>> entries;
  entries.reserve(params_.size());
  for (std::size_t p = 0; p < params_.size(); ++p) {
    if (value_indices[p] >= params_[p].values.size())
      throw std::out_of_range("Space::config_at: value index " + std::to_string(value_indices[p]) +
                              " out of range for parameter '" + params_[p].name + "'");
    entries.emplace_back(params_[p].name, params_[p].values[value_indices[p]]);
  }
  return Config(std::move(entries));
}

namespace {

// Index of `v` in `values`: an exact match (same type) first, else Python
// equality (1 == 1.0).
std::optional<std::uint32_t> index_in(const std::vector<Value>& values, const Value& v) {
  for (std::size_t j = 0; j < values.size(); ++j)
    if (values[j].raw().index() == v.raw().index() && values[j] == v) return static_cast<std::uint32_t>(j);
  for (std::size_t j = 0; j < values.size(); ++j)
    if (values[j] == v) return static_cast<std::uint32_t>(j);
  return std::nullopt;
}

}  // namespace

namespace {

constexpr std::size_t kScanAtMost = 32;  // values a lookup scans rather than hashes

// Equal values (Value's ==: 1 and 1.0 alike) hash alike.
std::size_t value_hash(const Value& v) {
  return v.is_string() ? std::hash<std::string>{}(v.as_string()) : std::hash<double>{}(v.to_double());
}

}  // namespace

std::optional<std::uint32_t> Space::value_index(std::size_t k, const Value& v) const {
  const std::vector<Value>& values = params_[k].values;
  if (values.size() <= kScanAtMost || !cache_) return index_in(values, v);
  std::call_once(cache_->lookup_once, [this] {
    cache_->lookup.resize(params_.size());
    for (std::size_t p = 0; p < params_.size(); ++p)
      if (params_[p].values.size() > kScanAtMost)
        for (std::size_t j = 0; j < params_[p].values.size(); ++j)
          cache_->lookup[p][value_hash(params_[p].values[j])].push_back(static_cast<std::uint32_t>(j));
  });
  const auto& table = cache_->lookup[k];
  const auto bucket = table.find(value_hash(v));
  if (bucket == table.end()) return std::nullopt;
  std::optional<std::uint32_t> other_type;
  for (std::uint32_t j : bucket->second) {
    if (!(values[j] == v)) continue;
    if (values[j].raw().index() == v.raw().index()) return j;
    if (!other_type) other_type = j;
  }
  return other_type;
}

std::optional<std::vector<std::uint32_t>> Space::indices_of(const Config& c) const {
  std::vector<std::uint32_t> out;
  out.reserve(params_.size());
  for (std::size_t k = 0; k < params_.size(); ++k) {
    const Parameter& p = params_[k];
    // A config the space made lists its parameters in the space's order:
    // looked up there first, a lookup costs one name comparison, not k.
    const auto at_k = c.begin() + static_cast<std::ptrdiff_t>(std::min(k, c.size()));
    const Value* v = at_k != c.end() && at_k->first == p.name ? &at_k->second : c.find(p.name);
    if (!v) return std::nullopt;
    auto j = value_index(k, *v);
    if (!j) return std::nullopt;
    out.push_back(*j);
  }
  // Every parameter found, and a config names each once: more entries than
  // parameters means one the space lacks.
  if (c.size() != params_.size()) return std::nullopt;
  return out;
}

std::optional<Config> Space::canonical(const Config& c) const {
  auto ix = indices_of(c);
  if (!ix) return std::nullopt;
  return config_at(*ix);
}

std::optional<std::string> Space::why_invalid(const Config& c) const {
  std::vector<std::uint32_t> value_indices;
  value_indices.reserve(params_.size());
  for (std::size_t k = 0; k < params_.size(); ++k) {
    const Parameter& p = params_[k];
    const Value* v = c.find(p.name);
    if (!v) return "not in space: no value for " + p.name;
    auto j = value_index(k, *v);
    if (!j) return "not in space: " + p.name + "=" + v->str();
    value_indices.push_back(*j);
  }
  if (c.size() > params_.size())
    for (const auto& entry : c)  // not a structured binding: older clang cannot capture one
      if (std::none_of(params_.begin(), params_.end(), [&](const Parameter& p) { return p.name == entry.first; }))
        return "not in space: " + entry.first + " is not a parameter";
  std::vector<Value> scratch;
  for (const auto& check : checks_) {
    if (check.slots.empty()) return constraints_[check.constraint].text();  // constant false
    scratch.resize(check.slots.size());
    if (!passes(check, value_indices, scratch)) return constraints_[check.constraint].text();
  }
  return std::nullopt;
}

}  // namespace tunekit
