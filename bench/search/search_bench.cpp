// tunekit's side of the search benchmark: every strategy, replayed on each
// recorded cache at each budget, for many seeds, in one process (each cache
// is read and indexed once). Prints one JSON object per (cache, strategy,
// budget): the fraction of optimum of every seed, the evaluations, and the
// strategy's CPU time.
//
//   search_bench --cache FILE --t1 FILE [--cache FILE --t1 FILE ...]
//                [--synthetic T1 ...]
//                [--strategies a,b,...] [--budgets 0.01,0.02,0.05] [--seeds N]
//                [--first-seed K] [--option STRATEGY:NAME=VALUE ...]
//
// --synthetic T1: a made-up recording of every valid config of T1's space
// (log time a sum of random per-value and per-pair effects, 5% failures), to
// measure the strategies' cost on large spaces that have no recording.
#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>
#include <iostream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tunekit/recording.hpp"
#include "tunekit/replay.hpp"
#include "tunekit/strategy.hpp"
#include "tunekit/t1.hpp"

using namespace tunekit;

namespace {

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  for (std::string item; std::getline(ss, item, sep);)
    if (!item.empty()) out.push_back(item);
  return out;
}

// Every valid config of `space` with a made-up time.
Recording synthetic_recording(const std::string& t1, const Space& space) {
  std::mt19937_64 rng(20261201);
  std::normal_distribution<double> normal;
  const auto& params = space.parameters();
  std::vector<std::vector<double>> main(params.size());
  for (std::size_t p = 0; p < params.size(); ++p)
    for (std::size_t v = 0; v < params[p].values.size(); ++v) main[p].push_back(0.5 * normal(rng));
  std::vector<std::pair<std::size_t, std::size_t>> pairs;
  std::vector<std::vector<double>> pair_effect;
  for (std::size_t p = 0; p < params.size(); ++p)
    for (std::size_t q = p + 1; q < params.size(); ++q)
      if (rng() % 4 == 0) {
        pairs.emplace_back(p, q);
        std::vector<double> e(params[p].values.size() * params[q].values.size());
        for (auto& x : e) x = 0.3 * normal(rng);
        pair_effect.push_back(std::move(e));
      }
  std::vector<RecordedResult> results;
  space.for_each([&](std::span<const std::uint32_t> ix) {
    RecordedResult r;
    r.values.assign(ix.begin(), ix.end());
    double y = 0;
    for (std::size_t p = 0; p < params.size(); ++p) y += main[p][ix[p]];
    for (std::size_t k = 0; k < pairs.size(); ++k)
      y += pair_effect[k][ix[pairs[k].first] * params[pairs[k].second].values.size() + ix[pairs[k].second]];
    if (rng() % 20 == 0) {
      r.status = Status::launch_error;
      r.error = "RuntimeFailedConfig";
    } else {
      r.time = Microseconds(1000.0 * std::exp(y + 0.02 * normal(rng)));
    }
    r.compile_time = Seconds(1.0);
    r.run_time = Seconds(0.1);
    results.push_back(std::move(r));
    return true;
  });
  return Recording("synthetic:" + t1, Recording::Format::kernel_tuner, "synthetic", "synthetic", {}, params,
                   std::move(results));
}

int usage() {
  std::fprintf(stderr,
               "usage: search_bench --cache FILE --t1 FILE [...] [--synthetic T1] [--strategies a,b]\n"
               "                    [--budgets 0.01,0.02,0.05]\n"
               "                    [--seeds N] [--first-seed K] [--option STRATEGY:NAME=VALUE]\n");
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::pair<std::string, std::string>> caches;  // cache, t1
  std::vector<std::string> strategy_names;
  std::vector<double> budgets{0.01, 0.02, 0.05};
  int seeds = 20;
  std::uint64_t first_seed = 1;
  std::map<std::string, std::vector<OptionValue>> options;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) throw std::runtime_error(a + " needs a value");
      return argv[++i];
    };
    try {
      if (a == "--cache") caches.emplace_back(value(), "");
      else if (a == "--synthetic") caches.emplace_back("", value());
      else if (a == "--t1") {
        if (caches.empty()) return usage();
        caches.back().second = value();
      } else if (a == "--strategies") strategy_names = split(value(), ',');
      else if (a == "--budgets") {
        budgets.clear();
        for (const auto& b : split(value(), ',')) budgets.push_back(std::stod(b));
      } else if (a == "--seeds") seeds = std::stoi(value());
      else if (a == "--first-seed") first_seed = std::stoull(value());
      else if (a == "--option") {
        const std::string o = value();
        const auto colon = o.find(':');
        if (colon == std::string::npos) return usage();
        options[o.substr(0, colon)].push_back(parse_option_assignment(o.substr(colon + 1), {"--option " + o}));
      } else return usage();
    } catch (const std::exception& e) {
      std::fprintf(stderr, "search_bench: %s\n", e.what());
      return 2;
    }
  }
  if (caches.empty()) return usage();
  if (strategy_names.empty()) strategy_names = strategies().names();

  try {
    for (const auto& [cache, t1] : caches) {
      std::vector<Parameter> params;
      std::vector<Expression> constraints;
      if (!t1.empty()) {
        SpaceDefinition def = load_t1(t1);
        params = def.parameters;
        constraints = def.constraints;
      }
      std::optional<Recording> loaded;
      if (!cache.empty()) loaded.emplace(load_recording(cache));
      if (params.empty()) params = loaded->parameters();
      const Space space(params, constraints);
      if (!loaded) loaded.emplace(synthetic_recording(t1, space));
      const Recording& recording = *loaded;
      const ReplayTable table(recording, space);
      table.require_complete();
      const std::uint64_t n = space.size();
      for (const auto& name : strategy_names) {
        for (double fraction : budgets) {
          const std::uint64_t budget = evaluations_for_fraction(fraction, n);
          nlohmann::json row;
          row["cache"] = cache.empty() ? "synthetic:" + t1 : cache;
          row["space"] = n;
          row["strategy"] = name;
          row["budget_fraction"] = fraction;
          row["budget"] = budget;
          std::vector<double> fractions;
          std::vector<std::uint64_t> evaluations;
          double cpu = 0;
          std::uint64_t total_evals = 0;
          std::string chosen;
          for (int s = 0; s < seeds; ++s) {
            ReplaySettings settings;
            settings.strategy = name;
            settings.seed = first_seed + static_cast<std::uint64_t>(s);
            settings.max_evaluations = budget;
            if (auto it = options.find(name); it != options.end()) settings.options = it->second;
            const ReplayRun run = replay(table, settings);
            fractions.push_back(run.fraction_of_optimum);
            evaluations.push_back(run.evaluations);
            cpu += run.strategy_cpu.count();
            total_evals += run.evaluations;
            chosen = run.strategy;
          }
          row["as_run"] = chosen;
          row["fractions"] = fractions;
          row["evaluations"] = evaluations;
          row["cpu_seconds"] = cpu;
          row["cpu_ms_per_evaluation"] = total_evals ? cpu * 1e3 / static_cast<double>(total_evals) : 0.0;
          std::cout << row.dump() << std::endl;
        }
      }
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "search_bench: %s\n", e.what());
    return 1;
  }
  return 0;
}
