// How far the rule config (search.rules) is from the tuned optimum, and how
// many evaluations it took to beat it.
#include <algorithm>
#include <map>
#include <stdexcept>

#include <fmt/format.h>

#include "core/detail/text.hpp"
#include "tunekit/report.hpp"
#include "tunekit/rules.hpp"

namespace tunekit {

double expected_draws_to_first(std::size_t n, std::size_t b) {
  if (b == 0 || b > n)
    throw std::invalid_argument(fmt::format("expected_draws_to_first: need 1 <= b <= n, got n={} b={}", n, b));
  // Draw the n items in a uniformly random order (without replacement); X is
  // the position of the first of the b marked ones. The b marked items cut
  // the n - b others into b + 1 runs (before the first marked item, between
  // two, after the last). Every arrangement of the marked and unmarked items
  // is equally likely, and swapping the contents of two runs maps
  // arrangements one to one, so all b + 1 runs have the same expected length:
  // (n - b) / (b + 1). X is the first run plus the marked item itself:
  //   E[X] = 1 + (n - b) / (b + 1) = (n + 1) / (b + 1).
  return static_cast<double>(n + 1) / static_cast<double>(b + 1);
}

RuleOutcome rule_outcome(const std::vector<TrialRecord>& trials, std::size_t seed) {
  if (seed >= trials.size()) throw std::out_of_range("rule_outcome: the seed index is past the trials");
  const TrialRecord& rule = trials[seed];
  RuleOutcome o;
  o.device = rule.device;
  o.size = rule.size;
  o.seed = seed;
  o.config = rule.config;
  o.status = rule.status;
  const bool rule_ok = rule.status == Status::ok;
  if (rule_ok) o.time = rule.stats.median;
  // Faster than the rule config: strictly, so a tie does not "beat" it; any
  // ok trial beats a rule config that failed.
  auto beats = [&](const TrialRecord& t) { return t.status == Status::ok && (!rule_ok || t.stats.median < *o.time); };
  for (std::size_t i = 0; i < trials.size(); ++i) {
    const TrialRecord& t = trials[i];
    // An invalid trial was neither built nor run: a search pays nothing for
    // it (random and exhaustive search never propose one).
    if (t.status != Status::invalid) ++o.evaluations;
    if (t.status == Status::ok) {
      ++o.ok;
      if (!o.best || t.stats.median < *o.best) o.best = t.stats.median;
    }
    if (beats(t)) {
      ++o.faster;
      if (!o.beaten_by) {
        o.beaten_by = i;
        o.evaluations_to_beat = o.evaluations;
      }
    }
  }
  if (rule_ok) {
    o.rank = o.faster + 1;
    if (o.best->count() > 0) o.ratio = o.time->count() / o.best->count();
  }
  // A uniform random search pays for every evaluation the run paid for,
  // failed ones included, and may draw the rule config itself (it has no
  // reason to start there): n = o.evaluations, b = o.faster.
  if (o.faster > 0) o.expected_random_evaluations = expected_draws_to_first(o.evaluations, o.faster);
  return o;
}

std::vector<RuleOutcome> rule_outcomes(const std::vector<TrialRecord>& trials) {
  std::vector<std::vector<TrialRecord>> groups;
  std::map<std::pair<std::string, std::string>, std::size_t> group_of;
  for (const auto& t : trials) {
    auto [it, added] = group_of.emplace(std::pair(t.device, size_key(t.size)), groups.size());
    if (added) groups.emplace_back();
    groups[it->second].push_back(t);
  }
  std::vector<RuleOutcome> out;
  for (const auto& g : groups) {
    auto seed = std::find_if(g.begin(), g.end(), [](const TrialRecord& t) { return t.origin == kOriginRules; });
    if (seed != g.end()) out.push_back(rule_outcome(g, static_cast<std::size_t>(seed - g.begin())));
  }
  return out;
}

std::string format_rule_report(const std::vector<RuleOutcome>& outcomes) {
  if (outcomes.empty()) return "rules: no size has a rule config\n";
  bool several_devices = false;
  for (const auto& o : outcomes) several_devices = several_devices || o.device != outcomes.front().device;
  auto size_text = [&](const RuleOutcome& o) {
    const std::string s = detail::shown_bindings(o.size);
    return several_devices ? o.device + " " + s : s;
  };
  std::size_t width = 4;
  for (const auto& o : outcomes) width = std::max(width, size_text(o).size());
  std::string out = "rules: the rule config (search.rules) against the search\n";
  const char* row = "  {:<{}}  {:>10}  {:>10}  {:>7}  {:>8}  {:>15}  {:>14}\n";
  out += fmt::format(fmt::runtime(row), "size", width, "rule (us)", "best (us)", "x best", "rank", "first faster",
                     "random search");
  for (const auto& o : outcomes) {
    const std::string time = o.time ? format_us(*o.time) : std::string(to_string(o.status));
    const std::string best = o.best ? format_us(*o.best) : "-";
    const std::string ratio = o.ratio ? fmt::format("{:.2f}x", *o.ratio) : "-";
    const std::string rank = o.rank ? fmt::format("{}/{}", *o.rank, o.ok) : "-";
    const std::string beaten =
        o.beaten_by ? fmt::format("No.{} ({} ev.)", *o.beaten_by + 1, *o.evaluations_to_beat) : "never";
    const std::string random =
        o.expected_random_evaluations ? fmt::format("{:.1f} ev.", *o.expected_random_evaluations) : "never";
    out += fmt::format(fmt::runtime(row), size_text(o), width, time, best, ratio, rank, beaten, random);
    out += fmt::format("    rule config No.{}: {}\n", o.seed + 1, o.config.str());
  }
  out +=
      "  rank: among the ok trials; first faster: the first faster trial in run order, with the evaluations made "
      "by then;\n  random search: the expected evaluations for uniform random search to draw a faster config, "
      "(n+1)/(b+1)\n  with n evaluations of which b are faster. Evaluations count every trial but invalid ones.\n";
  return out;
}

}  // namespace tunekit
