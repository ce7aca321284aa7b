// Rule-based starting configs for matmul-like kernels (search.rules); see
// rules.hpp for the exact procedure.
#include <algorithm>
#include <cmath>
#include <set>
#include <tuple>
#include <utility>

#include "tunekit/rules.hpp"
#include "tunekit/seeds.hpp"

namespace tunekit {

std::string_view to_string(TileReason r) {
  switch (r) {
    case TileReason::tiny_m:
      return "tiny M: the smallest tile >= M";
    case TileReason::not_split:
      return "small axis, not split: the largest tile <= the axis";
    case TileReason::large:
      return "large axis: the largest tile";
    case TileReason::axis_too_short:
      return "every tile exceeds the axis: the smallest";
  }
  return "?";
}

namespace {

struct Axis {
  std::size_t rule;
  char name;
  const TileAxis* tile;
};

// The rules' axes in the order the repair gives way last to first: all M
// axes (rule order), then N, then K. K tiles are walked down first because a
// smaller K tile only adds trips of the reduction loop, while the M and N
// tiles set the output blocking (the data reuse, the number of blocks).
std::vector<Axis> axes_of(const std::vector<MatmulRule>& rules) {
  std::vector<Axis> out;
  for (char name : {'M', 'N', 'K'})
    for (std::size_t r = 0; r < rules.size(); ++r) {
      const auto& t = name == 'M' ? rules[r].m : name == 'N' ? rules[r].n : rules[r].k;
      if (t) out.push_back({r, name, &*t});
    }
  return out;
}

const Parameter* find_parameter(const Space& space, std::string_view name) {
  for (const auto& p : space.parameters())
    if (p.name == name) return &p;
  return nullptr;
}

// Index of `v` in the list (the same value and kind), if it is there.
std::optional<std::size_t> index_in(const std::vector<Value>& values, const Value& v) {
  for (std::size_t i = 0; i < values.size(); ++i)
    if (values[i] == v && values[i].is_string() == v.is_string()) return i;
  return std::nullopt;
}

// The tile one axis of length L asks for, from the parameter's values.
std::pair<Value, TileReason> choose_tile(const std::vector<Value>& values, double length, bool is_m) {
  std::vector<std::size_t> order(values.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return values[a].to_double() < values[b].to_double(); });
  // Rule 4 first: with M rows a tiny M (a decode step, a GEMV-like shape)
  // should be covered by ONE tile, even one larger than M: splitting M rows
  // over two tiles streams all of B twice, and the padded rows of one tile
  // cost little beside that.
  if (is_m && length <= kTinyM)
    for (std::size_t i : order)
      if (values[i].to_double() >= length) return {values[i], TileReason::tiny_m};
  // Rules 1 to 3: the largest tile that does not exceed the axis. A tile
  // longer than its axis computes padding; a small axis taken whole by one
  // tile is not split into partial tiles; a large axis gets the largest
  // tile, which gives the most reuse per loaded element.
  const double largest = values[order.back()].to_double();
  for (auto it = order.rbegin(); it != order.rend(); ++it)
    if (values[*it].to_double() <= length)
      return {values[*it], length > largest ? TileReason::large : TileReason::not_split};
  // Every tile exceeds the axis: the smallest wastes the least.
  return {values[order.front()], TileReason::axis_too_short};
}

double length_of(const Axis& a, const Bindings& constants, const Config& config) {
  Bindings env = constants;
  for (const auto& [name, value] : config) env[name] = value;  // parameters shadow constants
  const Value v = a.tile->length.evaluate(env);                // throws InputError at the expression
  if (!v.is_number())
    throw InputError(a.tile->length.where(), std::string("the length of axis ") + a.name + " ('" +
                                                 a.tile->length.text() + "') is '" + v.str() + "', not a number");
  return v.to_double();
}

// The rules' tiles for `base`: one choice per axis, lengths evaluated with
// `base`'s values.
std::vector<TileChoice> derive_tiles(const Space& space, const Bindings& constants, const std::vector<Axis>& axes,
                                     const Config& base) {
  std::vector<TileChoice> out;
  for (const Axis& a : axes) {
    const Parameter* p = find_parameter(space, a.tile->parameter);
    TileChoice c;
    c.rule = a.rule;
    c.axis = a.name;
    c.parameter = a.tile->parameter;
    c.length = length_of(a, constants, base);
    std::tie(c.value, c.reason) = choose_tile(p->values, c.length, a.name == 'M');
    out.push_back(std::move(c));
  }
  // Report them in rule order, then M, N, K.
  std::stable_sort(out.begin(), out.end(), [](const TileChoice& x, const TileChoice& y) {
    auto rank = [](char axis) { return axis == 'M' ? 0 : axis == 'N' ? 1 : 2; };
    return std::pair(x.rule, rank(x.axis)) < std::pair(y.rule, rank(y.axis));
  });
  return out;
}

// `base` with every tile parameter set; a parameter that tiles several axes
// takes the smallest of their tiles, so it exceeds none of them.
Config with_tiles(const Space& space, const Config& base, const std::vector<TileChoice>& tiles) {
  std::vector<std::pair<std::string, Value>> entries;
  for (const auto& p : space.parameters()) {
    Value v = base.at(p.name);
    bool first = true;
    for (const auto& t : tiles)
      if (t.parameter == p.name) {
        if (first || t.value.to_double() < v.to_double()) v = t.value;
        first = false;
      }
    entries.emplace_back(p.name, v);
  }
  return Config(std::move(entries));
}

// A value list reordered by preference, the wanted value first. Tiles: the
// smaller values downwards, then the larger ones upwards (a tile grows past
// what its axis asked for only when nothing smaller fits). Other
// parameters: by distance from the wanted value in the spec's list, the
// lower index first on a tie (the spec's list order is its author's order).
std::vector<Value> by_preference(const std::vector<Value>& values, const Value& wanted, bool is_tile) {
  const std::size_t w = index_in(values, wanted).value_or(0);
  std::vector<std::size_t> order(values.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  if (is_tile) {
    const double x = values[w].to_double();
    auto key = [&](std::size_t i) {
      const double v = values[i].to_double();
      // (0, 0) the wanted; (1, x - v) smaller, nearest first; (2, v - x) larger, nearest first.
      return i == w ? std::pair(0, 0.0) : v < x || (v == x) ? std::pair(1, x - v) : std::pair(2, v - x);
    };
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return key(a) < key(b); });
  } else {
    auto dist = [&](std::size_t i) { return i > w ? i - w : w - i; };
    std::stable_sort(order.begin(), order.end(),
                     [&](std::size_t a, std::size_t b) { return std::pair(dist(a), a) < std::pair(dist(b), b); });
  }
  std::vector<Value> out;
  for (std::size_t i : order) out.push_back(values[i]);
  return out;
}

// The nearest valid config to `wanted` (see rule_config in search.hpp): the
// first valid config of the same space with its parameters and values
// reordered by preference. The space engine's depth-first search stops at
// that first config, so nothing else is enumerated.
std::optional<Config> repair(const Space& space, const Bindings& constants, const std::vector<Axis>& axes,
                             const Config& wanted) {
  std::vector<std::string> order;  // tile parameters, in give-way-last-first order, then the others
  auto add = [&](const std::string& name) {
    if (std::find(order.begin(), order.end(), name) == order.end()) order.push_back(name);
  };
  for (const Axis& a : axes) add(a.tile->parameter);
  const std::size_t tiles = order.size();
  for (const auto& p : space.parameters()) add(p.name);
  std::vector<Parameter> reordered;
  for (std::size_t i = 0; i < order.size(); ++i) {
    const Parameter* p = find_parameter(space, order[i]);
    reordered.push_back(Parameter{p->name, by_preference(p->values, wanted.at(p->name), i < tiles), p->where});
  }
  Space preferred(std::move(reordered), space.constraints(), constants);
  // No index: building one would visit the whole space; the fallback search
  // stops at the first valid config.
  preferred.set_index_budget(0);
  auto first = preferred.enumerate(1);
  if (first.empty()) return std::nullopt;
  std::vector<std::pair<std::string, Value>> entries;
  for (const auto& p : space.parameters()) entries.emplace_back(p.name, first.front().at(p.name));
  return Config(std::move(entries));
}

// Seeds a strategy: the seed first, then the inner strategy's proposals
// without the seed.
}  // namespace

std::optional<RuleConfig> rule_config(const Space& space, const Bindings& constants,
                                      const std::vector<MatmulRule>& rules, const std::optional<Config>& defaults) {
  const std::vector<Axis> axes = axes_of(rules);
  std::set<std::string> tile_names;
  for (const Axis& a : axes) {
    const Parameter* p = find_parameter(space, a.tile->parameter);
    if (!p)
      throw InputError(a.tile->where, "tile parameter '" + a.tile->parameter + "' is not a parameter of the space");
    for (const Value& v : p->values)
      if (!v.is_number())
        throw InputError(a.tile->where,
                         "tile parameter '" + p->name + "' must have numeric values, but it has '" + v.str() + "'");
    tile_names.insert(p->name);
  }
  for (const auto& p : space.parameters())
    if (p.values.empty()) return std::nullopt;

  // Untiled parameters keep the spec's default (the author's baseline), else
  // their first value; tiles start there too, for lengths that read them.
  std::vector<std::pair<std::string, Value>> entries;
  for (const auto& p : space.parameters()) {
    const Value* d = defaults ? defaults->find(p.name) : nullptr;
    entries.emplace_back(p.name, d && index_in(p.values, *d) ? *d : p.values.front());
  }
  Config base(std::move(entries));

  // Parameters (not tiles) that some axis length reads, e.g. SPLIT_K in
  // "K // SPLIT_K": when the repair changes one, the tiles are derived again.
  std::set<std::string> read;
  for (const Axis& a : axes)
    for (const auto& name : a.tile->length.variables())
      if (find_parameter(space, name) && !tile_names.count(name)) read.insert(name);

  RuleConfig result;
  for (int round = 0; round < 4; ++round) {
    result.tiles = derive_tiles(space, constants, axes, base);
    result.wanted = with_tiles(space, base, result.tiles);
    if (space.contains(result.wanted)) {
      result.config = result.wanted;
      return result;
    }
    auto fixed = repair(space, constants, axes, result.wanted);
    if (!fixed) return std::nullopt;
    result.config = *fixed;
    bool moved = false;
    std::vector<std::pair<std::string, Value>> next;
    for (const auto& [name, value] : base) {
      const Value& now = fixed->at(name);
      if (read.count(name) && !(now == value)) moved = true;
      next.emplace_back(name, read.count(name) ? now : value);
    }
    if (!moved) return result;
    base = Config(std::move(next));
  }
  return result;
}

namespace detail {

namespace {

// search.rules: the one config the tile rules derive at each size.
class RulesProvider : public SeedProvider {
 public:
  RulesProvider(const std::vector<MatmulRule>& rules, const std::optional<Config>& defaults)
      : rules_(rules), defaults_(defaults) {}
  std::string_view origin() const override { return kOriginRules; }
  bool one_per_size() const override { return true; }
  std::vector<Config> seeds(const SeedContext& ctx) const override {
    if (auto rc = rule_config(ctx.space, ctx.constants, rules_, defaults_)) return {rc->config};
    return {};
  }

 private:
  const std::vector<MatmulRule>& rules_;  // the spec's, which outlives the tune
  const std::optional<Config>& defaults_;
};

}  // namespace

SeedProviderInfo rules_seed_provider() {
  return {std::string(kOriginRules), "search.rules: the config the matmul tile rules derive at each size",
          [](const Spec& spec) -> std::unique_ptr<SeedProvider> {
            if (spec.search.rules.empty()) return nullptr;
            return std::make_unique<RulesProvider>(spec.search.rules, spec.default_config);
          }};
}

}  // namespace detail

}  // namespace tunekit
