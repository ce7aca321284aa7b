#include "tunekit/select.hpp"

#include <cmath>
#include <functional>
#include <map>
#include <set>
#include <stdexcept>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/detail/text.hpp"

namespace tunekit {

namespace {

struct Measured {
  Microseconds time{0};
  double value = 0;  // the goal's objective
  bool confirmed = false;
};

// Trials that ran correctly (and whose objective could be computed), indexed
// by size key and config key.
struct Table {
  std::vector<Bindings> sizes;                                    // in order of first appearance
  std::map<std::string, std::size_t> size_index;                  // size key -> index
  std::map<std::string, Config> configs;                          // config key -> config
  std::map<std::string, std::map<std::size_t, Measured>> values;  // config key -> size -> measured
  // Trials cut short by the early stop: config key -> size -> their fastest
  // sample and the objective at that time, the most a full measurement could
  // have said. Never chosen.
  std::map<std::string, std::map<std::size_t, Measured>> cut;
  std::map<std::string, Config> cut_configs;
  std::set<std::size_t> confirmed_at;  // sizes where some trial was confirmed (competes_for_best)
  // CCCL's base variant where it ran correctly: size key -> measured. No
  // config to choose, only a baseline.
  std::map<std::string, Measured> base;
  const Goal& goal;

  Table(const std::vector<TrialRecord>& trials, const Goal& g) : goal(g) {
    for (std::size_t i = 0; i < trials.size(); ++i) {
      const TrialRecord& t = trials[i];
      const auto value = objective_value(goal.objective, goal.metrics, t);
      if (is_base_trial(t)) {
        if (value) base[size_key(t.size)] = Measured{t.stats.median, *value, t.confirmed};
        continue;
      }
      const bool cut_short = t.status == Status::slower && t.stats.count > 0;
      // A size where no config ran correctly has none to offer: the others
      // keep their choice (per-size and cover drop it too, with a note).
      if (!value && !cut_short) continue;
      const std::string sk = size_key(t.size);
      auto [it, added] = size_index.try_emplace(sk, sizes.size());
      if (added) sizes.push_back(t.size);
      if (cut_short) {
        TrialRecord at_best = t;
        at_best.status = Status::ok;
        at_best.stats.median = t.stats.min;
        if (const auto v = objective_value(goal.objective, goal.metrics, at_best)) {
          cut_configs.try_emplace(t.config.key(), t.config);
          cut[t.config.key()][it->second] = Measured{t.stats.min, *v};
        }
      }
      if (!value) continue;
      const std::string ck = t.config.key();
      configs.try_emplace(ck, t.config);
      values[ck][it->second] = Measured{t.stats.median, *value, t.confirmed};
      if (t.confirmed) confirmed_at.insert(it->second);
    }
  }
  // Lower is better.
  double cost(double value) const { return goal.objective.maximize ? -value : value; }
  bool better(double a, double b) const { return objective_better(goal.objective, a, b); }
};

UniversalChoice choose(const Table& table, const std::function<std::optional<double>(std::size_t, double)>& gain,
                       const std::function<Microseconds(std::size_t)>& reference_time, bool against_best, bool& found) {
  const std::size_t n = table.sizes.size();
  UniversalChoice best;
  found = false;
  for (const auto& [ck, per_size] : table.values) {
    if (per_size.size() != n) continue;
    // Sum of logs: the geometric mean without overflow.
    double log_sum = 0;
    bool defined = true;
    for (const auto& [si, m] : per_size) {
      auto g = gain(si, m.value);
      if (!g) {
        defined = false;
        break;
      }
      log_sum += std::log(*g);
    }
    if (!defined) continue;
    const double geomean = std::exp(log_sum / static_cast<double>(n));
    if (found && geomean <= best.geomean_speedup) continue;
    UniversalChoice c{table.configs.at(ck), geomean, {}, {}, against_best};
    for (const auto& [si, m] : per_size)
      c.per_size.push_back({table.sizes[si], m.time, reference_time(si), *gain(si, m.value)});
    best = std::move(c);
    found = true;
  }
  return best;
}

// One config for all sizes against `reference`, each size's baseline (by
// table size index; none null).
std::optional<UniversalChoice> against(const Table& table, const std::vector<const Measured*>& reference) {
  const Goal& goal = table.goal;
  const std::size_t n = table.sizes.size();
  bool found = false;
  auto c = choose(
      table, [&](std::size_t si, double v) { return objective_gain(goal.objective, reference[si]->value, v); },
      [&](std::size_t si) { return reference[si]->time; }, false, found);
  if (!found) return std::nullopt;
  // A config cut short at some size was not measured there; at its fastest
  // sample's time it might still have beaten the choice.
  for (const auto& [ck, partial] : table.cut) {
    const auto measured = table.values.find(ck);
    double log_sum = 0;
    std::size_t known = 0;
    for (std::size_t si = 0; si < n; ++si) {
      std::optional<double> value;
      if (auto p = partial.find(si); p != partial.end()) value = p->second.value;
      else if (measured != table.values.end())
        if (auto m = measured->second.find(si); m != measured->second.end()) value = m->second.value;
      const auto gain = value ? objective_gain(goal.objective, reference[si]->value, *value) : std::nullopt;
      if (!gain) break;
      log_sum += std::log(*gain);
      ++known;
    }
    if (known == n && std::exp(log_sum / static_cast<double>(n)) > c.geomean_speedup)
      c.unsettled_by.push_back(table.cut_configs.at(ck));
  }
  return c;
}

}  // namespace

std::vector<SizeBest> best_per_size(const std::vector<TrialRecord>& trials, const Goal& goal) {
  std::vector<std::vector<const TrialRecord*>> of_size;  // in order of first appearance
  std::map<std::string, std::size_t> size_index;
  for (const TrialRecord& t : trials) {
    auto [it, added] = size_index.try_emplace(size_key(t.size), of_size.size());
    if (added) of_size.emplace_back();
    of_size[it->second].push_back(&t);
  }
  std::vector<SizeBest> out;
  for (const auto& these : of_size)
    if (const auto b = best_of_size(these, goal)) {
      const TrialRecord& t = *these[*b];
      out.push_back(SizeBest{t.size, t.config, t.stats.median, *objective_value(goal.objective, goal.metrics, t)});
    }
  return out;
}

std::optional<UniversalChoice> best_for_all_sizes(const std::vector<TrialRecord>& trials, const Config& baseline,
                                                  const Goal& goal) {
  Table table(trials, goal);
  const auto base = table.values.find(baseline.key());
  if (table.sizes.empty() || base == table.values.end() || base->second.size() != table.sizes.size())
    return std::nullopt;
  std::vector<const Measured*> reference;
  for (std::size_t si = 0; si < table.sizes.size(); ++si) reference.push_back(&base->second.at(si));
  return against(table, reference);
}

std::optional<UniversalChoice> best_for_all_sizes_over_base(const std::vector<TrialRecord>& trials, const Goal& goal) {
  Table table(trials, goal);
  if (table.sizes.empty()) return std::nullopt;
  std::vector<const Measured*> reference;
  for (const auto& size : table.sizes) {
    const auto base = table.base.find(size_key(size));
    if (base == table.base.end()) return std::nullopt;
    reference.push_back(&base->second);
  }
  return against(table, reference);
}

std::optional<UniversalChoice> best_valid_everywhere(const std::vector<TrialRecord>& trials, const Goal& goal) {
  Table table(trials, goal);
  if (table.sizes.empty()) return std::nullopt;
  const auto bests = best_per_size(trials, goal);
  if (bests.size() != table.sizes.size()) return std::nullopt;  // a size where nothing ran
  std::vector<const SizeBest*> best_of(table.sizes.size());
  for (const auto& b : bests) best_of[table.size_index.at(size_key(b.size))] = &b;
  bool found = false;
  auto c = choose(
      table, [&](std::size_t si, double v) { return objective_gain(goal.objective, best_of[si]->value, v); },
      [&](std::size_t si) { return best_of[si]->time; }, true, found);
  if (!found) return std::nullopt;
  return c;
}

std::string why_no_universal(const std::vector<TrialRecord>& trials, const std::optional<Config>& baseline) {
  std::vector<Bindings> sizes;
  std::map<std::string, std::size_t> size_index;
  std::map<std::string, std::set<std::size_t>> ok_at;  // config key -> sizes where it ran correctly
  std::map<std::size_t, std::string> baseline_status;
  for (const auto& t : trials) {
    if (is_base_trial(t)) continue;  // as Table
    auto [it, added] = size_index.try_emplace(size_key(t.size), sizes.size());
    if (added) sizes.push_back(t.size);
    if (t.status == Status::ok) ok_at[t.config.key()].insert(it->second);
    if (baseline && t.config == *baseline) baseline_status[it->second] = std::string(to_string(t.status));
  }
  std::string out;
  if (baseline) {
    std::vector<std::string> missing;
    for (std::size_t i = 0; i < sizes.size(); ++i) {
      auto st = baseline_status.find(i);
      if (st == baseline_status.end())
        missing.push_back(detail::shown_bindings(sizes[i]) +
                          " (not run there: not valid there, left out by a --where, or not reached within a budget)");
      else if (st->second != "ok") missing.push_back(detail::shown_bindings(sizes[i]) + " (" + st->second + ")");
    }
    if (!missing.empty())
      out = fmt::format("the default {} did not run correctly at {} of {} sizes: {}", baseline->str(), missing.size(),
                        sizes.size(), fmt::join(missing, ", "));
  }
  std::size_t widest = 0;
  for (const auto& [ck, at] : ok_at) widest = std::max(widest, at.size());
  if (widest < sizes.size()) {
    const std::string none =
        fmt::format("no config ran correctly at all {} sizes (the most any did is {})", sizes.size(), widest);
    out += (out.empty() ? "" : "; ") + none;
  }
  return out.empty() ? "every size has a config that ran correctly at all of them" : out;
}

Cover covering_set(const std::vector<TrialRecord>& trials, double tolerance, const Goal& goal) {
  // A negative or NaN tolerance covers no size, not even with its own best.
  if (!(tolerance >= 0) || !std::isfinite(tolerance))
    throw std::invalid_argument(fmt::format("the tolerance of a cover must be a finite number >= 0, not {}", tolerance));
  Table table(trials, goal);
  Cover cover;
  cover.per_size = best_per_size(trials, goal);
  // Sizes with no ok trial cannot be covered; work on those that have one.
  std::vector<std::size_t> sizes;  // table index of each per_size entry
  for (const auto& b : cover.per_size) sizes.push_back(table.size_index.at(size_key(b.size)));
  const std::size_t n = sizes.size();
  if (n == 0) return cover;

  // Each config covers a set of sizes (as a bit set), each with its regret:
  // how far it is from the size's best, in the tolerance's terms. A config
  // whose set is inside another's is never needed; of configs with the same
  // set, the one with the least regret over it is kept.
  struct CoverSet {
    std::vector<bool> covers;
    std::vector<double> regret;  // per size, where it covers
    double total = 0;            // over the sizes it covers
    std::string config;
  };
  std::vector<CoverSet> sets;
  for (const auto& [ck, per_size] : table.values) {
    CoverSet set{std::vector<bool>(n, false), std::vector<double>(n, 0), 0, ck};
    bool any = false;
    for (std::size_t i = 0; i < n; ++i)
      if (auto it = per_size.find(sizes[i]); it != per_size.end()) {
        // Within the tolerance of the size's best: for time, at most
        // (1 + tolerance) times its time.
        const double best = cover.per_size[i].value;
        const double over = table.cost(it->second.value) - table.cost(best);
        // One measured once and faster than the confirmed configs of its size
        // is what best_per_size passes over (competes_for_best); counted here,
        // it would cover the size better than its best.
        if (over < 0 && !it->second.confirmed && table.confirmed_at.count(sizes[i])) continue;
        any |= set.covers[i] = over <= tolerance * std::fabs(best);
        if (set.covers[i]) {
          set.regret[i] = best != 0 ? over / std::fabs(best) : over;
          set.total += set.regret[i];
        }
      }
    if (any) sets.push_back(std::move(set));
  }
  auto subset = [](const std::vector<bool>& a, const std::vector<bool>& b) {
    for (std::size_t i = 0; i < a.size(); ++i)
      if (a[i] && !b[i]) return false;
    return true;
  };
  std::vector<std::size_t> useful;
  for (std::size_t i = 0; i < sets.size(); ++i) {
    bool dominated = false;
    for (std::size_t j = 0; j < sets.size() && !dominated; ++j) {
      if (i == j || !subset(sets[i].covers, sets[j].covers)) continue;
      const bool same = sets[i].covers == sets[j].covers;
      dominated = !same || sets[j].total < sets[i].total || (sets[j].total == sets[i].total && j < i);
    }
    if (!dominated) useful.push_back(i);
  }

  // Exact search: branch on the first uncovered size over the sets that
  // cover it, bounded by the best cover found so far.
  std::vector<std::size_t> chosen, best_choice;
  std::size_t best_size = SIZE_MAX;
  std::vector<int> covered(n, 0);
  std::function<void()> search = [&] {
    if (chosen.size() >= best_size) return;
    std::size_t first = n;
    for (std::size_t i = 0; i < n && first == n; ++i)
      if (!covered[i]) first = i;
    if (first == n) {
      best_size = chosen.size();
      best_choice = chosen;
      return;
    }
    if (chosen.size() + 1 >= best_size) return;
    for (std::size_t u : useful) {
      const auto& s = sets[u].covers;
      if (!s[first]) continue;
      for (std::size_t i = 0; i < n; ++i) covered[i] += s[i];
      chosen.push_back(u);
      search();
      chosen.pop_back();
      for (std::size_t i = 0; i < n; ++i) covered[i] -= s[i];
    }
  };
  search();

  // Of the covers with that many configs, the search found the first; swap
  // a config for another while the cover stays whole and its regret (each
  // size served by its best covering config) falls, so that a tie goes to
  // the faster configs, not to the first in the table's order.
  auto regret_of = [&](const std::vector<std::size_t>& choice) -> std::optional<double> {
    double total = 0;
    for (std::size_t i = 0; i < n; ++i) {
      std::optional<double> least;
      for (std::size_t u : choice)
        if (sets[u].covers[i] && (!least || sets[u].regret[i] < *least)) least = sets[u].regret[i];
      if (!least) return std::nullopt;
      total += *least;
    }
    return total;
  };
  if (auto current = regret_of(best_choice))
    for (bool improved = true; improved;) {
      improved = false;
      for (std::size_t k = 0; k < best_choice.size(); ++k)
        for (std::size_t u = 0; u < sets.size(); ++u) {  // a set inside another's may be the faster
          if (std::find(best_choice.begin(), best_choice.end(), u) != best_choice.end()) continue;
          std::vector<std::size_t> swapped = best_choice;
          swapped[k] = u;
          if (auto r = regret_of(swapped); r && *r < *current - 1e-12) {
            best_choice = std::move(swapped);
            current = r;
            improved = true;
          }
        }
    }

  for (std::size_t u : best_choice) cover.configs.push_back(table.configs.at(sets[u].config));
  cover.config_of_size.assign(n, 0);
  for (std::size_t i = 0; i < n; ++i) {
    // The covering config that is best at this size.
    std::optional<double> fastest;
    for (std::size_t c = 0; c < best_choice.size(); ++c) {
      const auto& per_size = table.values.at(sets[best_choice[c]].config);
      if (auto it = per_size.find(sizes[i]); it != per_size.end() && sets[best_choice[c]].covers[i] &&
                                             (!fastest || table.better(it->second.value, *fastest))) {
        fastest = it->second.value;
        cover.config_of_size[i] = c;
      }
    }
  }
  return cover;
}

}  // namespace tunekit
