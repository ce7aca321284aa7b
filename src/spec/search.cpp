// The `search` section: strategy and options, budgets, tile rules, seeds and transfer.
#include "spec/detail/loader.hpp"

#include "tunekit/strategy.hpp"

namespace tunekit::spec_detail {

void Loader::search(const Item& it, Spec& s) const {
  Map t =
      map(it, {"strategy", "options", "max_evals", "max_fraction", "max_time", "seed", "rules", "seeds", "transfer"});
  if (auto x = get(t, "strategy")) {
    s.search.strategy_where = content_loc(*x);
    s.search.strategy = name_in(*x, strategies());
    if (x->node.Scalar() != s.search.strategy) s.search.strategy_alias = x->node.Scalar();
  }
  if (auto x = get(t, "options"); x && !x->node.IsNull()) {
    Map om = map(*x, {}, "a mapping of the strategy's option names to values");
    for (const Entry& e : om.entries) {
      Item val = child(om, e);
      OptionValue o{e.key, value_of(val, "an option value"), loc(e.key_node)};
      o.written_as_boolean = is_boolean(val);
      if (val.node.IsScalar()) o.written = val.node.Scalar();
      s.search.options.push_back(std::move(o));
    }
  }
  // Checked now, so a typo is reported where it was written.
  (void)strategy_options(strategies().get(s.search.strategy), s.search.options, s.search.strategy_alias);
  if (auto x = get(t, "max_evals")) {
    s.search.max_evaluations = static_cast<std::size_t>(int_of(*x, 1, "an integer >= 1"));
    s.search.max_evaluations_where = content_loc(*x);
  }
  if (auto x = get(t, "max_fraction")) {
    const std::string expected = "a share of each size's valid configs in (0, 1], e.g. 0.02";
    if (s.search.max_evaluations)
      fail(x->where, display(x->path) + " and search.max_evals are two budgets; give one of them");
    const double f = number_of(*x, expected);
    if (!(f > 0 && f <= 1))
      fail(content_loc(*x), display(x->path) + " must be " + expected + ", got " + x->node.Scalar());
    s.search.max_fraction = f;
  }
  if (auto x = get(t, "max_time")) s.search.max_time = duration_of(*x, true);
  if (auto x = get(t, "seed")) s.search.seed = static_cast<std::uint64_t>(int_of(*x, 0, "an integer >= 0"));
  if (auto x = get(t, "transfer"))
    s.search.transfer = static_cast<std::size_t>(
        int_of(*x, 0, "an integer >= 0 (configs carried over from the nearest tuned sizes; 0: none)"));
  if (auto x = get(t, "rules"); x && !x->node.IsNull()) {
    // One entry per matmul: {M: [BM, M], N: [BN, N], K: [BK, "K // SPLIT_K"]};
    // an axis is [tile parameter, axis length] or just the parameter (the
    // length is then the size named like the axis).
    const std::string expected = "a list of matmul tile rules such as {M: [BM, M], N: [BN, N], K: [BK, K]}";
    if (!x->node.IsSequence()) wrong_type(*x, expected);
    for (const Item& el : elements(*x)) {
      Map rm = map(el, {"M", "N", "K"}, "a mapping of axes (M, N, K) to [tile parameter, axis length]");
      if (rm.entries.empty()) fail(el.where, display(el.path) + " tiles no axis; give at least one of M, N, K");
      MatmulRule rule;
      rule.where = el.where;
      for (const Entry& e : rm.entries) {
        Item ax = child(rm, e);
        const std::string axis_expected = "[tile parameter, axis length] or a tile parameter, e.g. [BM, M]";
        Item param_item = ax;
        std::optional<Expression> length;
        if (ax.node.IsSequence()) {
          if (ax.node.size() != 2) wrong_type(ax, axis_expected);
          std::vector<Item> parts = elements(ax);
          param_item = parts[0];
          length = expression_of(parts[1], "an expression (the axis length)");
        } else if (!ax.node.IsScalar()) {
          wrong_type(ax, axis_expected);
        }
        TileAxis tile;
        tile.where = content_loc(param_item);
        tile.parameter = name_of(param_item, "a parameter name");
        auto p = std::find_if(s.parameters.begin(), s.parameters.end(),
                              [&](const Parameter& q) { return q.name == tile.parameter; });
        if (p == s.parameters.end()) {
          std::vector<std::string> names;
          for (const auto& q : s.parameters) names.push_back(q.name);
          std::string msg = "'" + tile.parameter + "' in " + display(ax.path) + " is not a parameter";
          if (auto near = closest_match(tile.parameter, names)) msg += "; did you mean '" + *near + "'?";
          fail(tile.where, msg);
        }
        for (const Value& val : p->values)
          if (!val.is_number())
            fail(tile.where, "tile parameter '" + tile.parameter + "' in " + display(ax.path) +
                                 " must have numeric values, but it has '" + val.str() + "'");
        tile.length = length ? *length : Expression::parse(e.key, loc(e.key_node));
        (e.key == "M" ? rule.m : e.key == "N" ? rule.n : rule.k) = std::move(tile);
      }
      s.search.rules.push_back(std::move(rule));
    }
  }
  if (auto x = get(t, "seeds"); x && !x->node.IsNull()) {
    if (!x->node.IsSequence()) wrong_type(*x, "a list of configs to try first, e.g. [{BM: 128, PERSISTENT: 1}]");
    std::vector<SourceLocation> where;
    for (const Item& el : elements(*x)) {
      Config c = seed(el, s);
      for (std::size_t j = 0; j < s.search.seeds.size(); ++j)
        if (s.search.seeds[j] == c)
          fail(el.where, "seed " + c.str() + " repeats search.seeds[" + std::to_string(j) + "] (at " + where[j].str() +
                             ") once the default fills it in");
      s.search.seeds.push_back(std::move(c));
      where.push_back(el.where);
    }
  }
}

// One of search.seeds: a config named in part; every value must be one of
// its parameter's, and a parameter it leaves out takes the default config's
// value, else its first.
Config Loader::seed(const Item& it, const Spec& s) const {
  Map m = map(it, {}, "a mapping of parameter names to values");
  std::vector<std::pair<std::string, Value>> given;
  for (const Entry& e : m.entries) {
    auto p =
        std::find_if(s.parameters.begin(), s.parameters.end(), [&](const Parameter& q) { return q.name == e.key; });
    if (p == s.parameters.end()) {
      std::vector<std::string> names;
      for (const auto& q : s.parameters) names.push_back(q.name);
      std::string msg = "unknown parameter '" + e.key + "' in " + context_name(it.path);
      if (auto near = closest_match(e.key, names)) msg += "; did you mean '" + *near + "'?";
      fail(loc(e.key_node), msg);
    }
    Item vi = child(m, e);
    const Value v = value_of(vi);
    const Value* as_listed = p->listed(v);
    if (!as_listed) {
      // As Python writes them, so that a string '8' is not shown as the 8
      // it is not (quote the seed's value to give the string).
      std::vector<std::string> values;
      for (const auto& x : p->values) values.push_back(x.repr());
      fail(content_loc(vi),
           v.repr() + " in " + context_name(it.path) + " is not one of " + e.key + "'s values (" + join(values) + ")");
    }
    given.emplace_back(e.key, *as_listed);
  }
  std::vector<std::pair<std::string, Value>> entries;
  for (const auto& p : s.parameters) {
    auto g = std::find_if(given.begin(), given.end(), [&](const auto& x) { return x.first == p.name; });
    const Value* d = s.default_config ? s.default_config->find(p.name) : nullptr;
    if (g != given.end()) entries.push_back(*g);
    else if (d) entries.emplace_back(p.name, *d);
    else if (!p.values.empty()) entries.emplace_back(p.name, p.values.front());
  }
  return Config(std::move(entries));
}

}  // namespace tunekit::spec_detail
