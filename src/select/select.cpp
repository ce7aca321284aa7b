#include "tunekit/select.hpp"

#include <cmath>
#include <functional>
#include <map>
#include <optional>

namespace tunekit {

namespace {

// Trials that ran correctly, indexed by size key and config key.
struct Table {
  std::vector<Bindings> sizes;                                        // in order of first appearance
  std::map<std::string, std::size_t> size_index;                      // size key -> index
  std::map<std::string, Config> configs;                              // config key -> config
  std::map<std::string, std::map<std::size_t, Microseconds>> times;  // config key -> size -> median
  // Trials cut short by the early stop: config key -> size -> their fastest
  // sample, the least a full measurement could have said. Never chosen.
  std::map<std::string, std::map<std::size_t, Microseconds>> cut;
  std::map<std::string, Config> cut_configs;

  explicit Table(const std::vector<TrialRecord>& trials) {
    for (const auto& t : trials) {
      const std::string sk = size_key(t.size);
      auto [it, added] = size_index.try_emplace(sk, sizes.size());
      if (added) sizes.push_back(t.size);
      if (t.status == Status::slower && t.stats.count > 0) {
        cut_configs.try_emplace(t.config.key(), t.config);
        cut[t.config.key()][it->second] = t.stats.min;
      }
      if (t.status != Status::ok) continue;
      const std::string ck = t.config.key();
      configs.try_emplace(ck, t.config);
      times[ck][it->second] = t.stats.median;
    }
  }
};

}  // namespace

std::vector<SizeBest> best_per_size(const std::vector<TrialRecord>& trials) {
  Table table(trials);
  std::vector<std::optional<SizeBest>> best(table.sizes.size());
  for (const auto& [ck, per_size] : table.times)
    for (const auto& [si, time] : per_size)
      if (!best[si] || time < best[si]->time) best[si] = SizeBest{table.sizes[si], table.configs.at(ck), time};
  std::vector<SizeBest> out;
  for (auto& b : best)
    if (b) out.push_back(std::move(*b));
  return out;
}

std::optional<UniversalChoice> best_for_all_sizes(const std::vector<TrialRecord>& trials, const Config& baseline) {
  Table table(trials);
  const auto base = table.times.find(baseline.key());
  const std::size_t n = table.sizes.size();
  if (n == 0 || base == table.times.end() || base->second.size() != n) return std::nullopt;
  std::optional<UniversalChoice> best;
  for (const auto& [ck, per_size] : table.times) {
    if (per_size.size() != n) continue;
    // Sum of logs: the geometric mean without overflow.
    double log_sum = 0;
    for (const auto& [si, time] : per_size) log_sum += std::log(base->second.at(si) / time);
    const double geomean = std::exp(log_sum / static_cast<double>(n));
    if (best && geomean <= best->geomean_speedup) continue;
    UniversalChoice c{table.configs.at(ck), geomean, {}};
    for (const auto& [si, time] : per_size)
      c.per_size.push_back({table.sizes[si], time, base->second.at(si), base->second.at(si) / time});
    best = std::move(c);
  }
  if (!best) return best;
  // A config cut short at some size was not measured there; at its fastest
  // sample's time it might still have beaten the choice.
  for (const auto& [ck, partial] : table.cut) {
    const auto measured = table.times.find(ck);
    double log_sum = 0;
    std::size_t known = 0;
    for (std::size_t si = 0; si < n; ++si) {
      std::optional<Microseconds> time;
      if (auto p = partial.find(si); p != partial.end()) time = p->second;
      else if (measured != table.times.end())
        if (auto m = measured->second.find(si); m != measured->second.end()) time = m->second;
      if (!time || !(time->count() > 0)) break;
      log_sum += std::log(base->second.at(si) / *time);
      ++known;
    }
    if (known == n && std::exp(log_sum / static_cast<double>(n)) > best->geomean_speedup)
      best->unsettled_by.push_back(table.cut_configs.at(ck));
  }
  return best;
}

Cover covering_set(const std::vector<TrialRecord>& trials, double tolerance) {
  Table table(trials);
  Cover cover;
  cover.per_size = best_per_size(trials);
  // Sizes with no ok trial cannot be covered; work on those that have one.
  std::vector<std::size_t> sizes;  // table index of each per_size entry
  for (const auto& b : cover.per_size) sizes.push_back(table.size_index.at(size_key(b.size)));
  const std::size_t n = sizes.size();
  if (n == 0) return cover;

  // Each config covers a set of sizes (as a bit set); a config whose set is
  // inside another's is never needed.
  std::vector<std::pair<std::vector<bool>, std::string>> sets;
  for (const auto& [ck, per_size] : table.times) {
    std::vector<bool> covers(n, false);
    bool any = false;
    for (std::size_t i = 0; i < n; ++i)
      if (auto it = per_size.find(sizes[i]); it != per_size.end())
        any |= covers[i] = it->second <= cover.per_size[i].time * (1.0 + tolerance);
    if (any) sets.emplace_back(std::move(covers), ck);
  }
  auto subset = [](const std::vector<bool>& a, const std::vector<bool>& b) {
    for (std::size_t i = 0; i < a.size(); ++i)
      if (a[i] && !b[i]) return false;
    return true;
  };
  std::vector<std::size_t> useful;
  for (std::size_t i = 0; i < sets.size(); ++i) {
    bool dominated = false;
    for (std::size_t j = 0; j < sets.size() && !dominated; ++j)
      if (i != j && subset(sets[i].first, sets[j].first) && (sets[i].first != sets[j].first || j < i)) dominated = true;
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
      const auto& s = sets[u].first;
      if (!s[first]) continue;
      for (std::size_t i = 0; i < n; ++i) covered[i] += s[i];
      chosen.push_back(u);
      search();
      chosen.pop_back();
      for (std::size_t i = 0; i < n; ++i) covered[i] -= s[i];
    }
  };
  search();

  for (std::size_t u : best_choice) cover.configs.push_back(table.configs.at(sets[u].second));
  cover.config_of_size.assign(n, 0);
  for (std::size_t i = 0; i < n; ++i) {
    // The covering config that is fastest at this size.
    Microseconds fastest{INFINITY};
    for (std::size_t c = 0; c < best_choice.size(); ++c) {
      const auto& per_size = table.times.at(sets[best_choice[c]].second);
      if (auto it = per_size.find(sizes[i]); it != per_size.end() && sets[best_choice[c]].first[i] && it->second < fastest) {
        fastest = it->second;
        cover.config_of_size[i] = c;
      }
    }
  }
  return cover;
}

}  // namespace tunekit
