// The early stop on planted losers: configs that sleep far longer than the
// best are cut short after a few samples, recorded as 'slower' with those
// samples, and never chosen; the best is the one a full measurement finds.
// The planted spread (250x) is far beyond what a busy machine's sleeps
// overshoot, and the assertions compare statuses, sample counts and
// choices, never times.
#include <gtest/gtest.h>

#include <map>

#include <nlohmann/json.hpp>

#include "support/outputs.hpp"
#include "support/temp_dir.hpp"
#include "tunekit/policy.hpp"
#include "tunekit/report.hpp"
#include "tunekit/select.hpp"
#include "tunekit/tuner.hpp"

using namespace tunekit;
using tunekit::testing::fresh_dir;
using tunekit::testing::output_file;
using tunekit::testing::read_file;
using tunekit::testing::write_default_outputs;
using tunekit::testing::write_file;

namespace {

// SLEEP_US: how long a call sleeps; WRONG: the outputs are off by one.
const char* kKernel = R"(
#include <unistd.h>
#ifdef SLEEP_US  // the reference's build has no parameters
extern "C" void twice(const float* x, float* y, int n) {
  for (int i = 0; i < n; ++i) y[i] = 2 * x[i] + WRONG;
  usleep(SLEEP_US);
}
#endif
extern "C" void twice_ref(const float* x, float* y, int n) { for (int i = 0; i < n; ++i) y[i] = 2 * x[i]; }
)";

// The default (evaluated first) is the fast config; the planted losers
// sleep 250x and 400x as long. One of them is also wrong: verification
// still runs, and a wrong result is a wrong result.
const char* kSpec = R"(name: losers
kernel: {source: losers.cpp, entry: twice, flags: [-O1]}
arguments:
  - {name: x, type: f32, size: N, fill: random}
  - {name: y, type: f32, size: N, role: out}
  - {name: n, type: i32, value: N}
sizes: {N: 256}
parameters:
  SLEEP_US: [200, 50000, 80000]
  WRONG: [0, 1]
constraints:
  - WRONG == 0 or SLEEP_US == 80000
default: {SLEEP_US: 200, WRONG: 0}
reference: {entry: twice_ref}
tolerance: {atol: 1e-6, rtol: 0}
measure: {warmup: 1ms, min_samples: 5, max_samples: 20, max_time: 2s, noise: 0.02, cache: hot, timeout: 30s}
)";

std::map<std::string, const TrialRecord*> by_config(const SizeReport& s) {
  std::map<std::string, const TrialRecord*> out;
  for (const auto& t : s.trials) out[t.config.str()] = &t;
  return out;
}

const std::string kFast = "{SLEEP_US: 200, WRONG: 0}";
const std::string kLoser = "{SLEEP_US: 50000, WRONG: 0}";
const std::string kWorse = "{SLEEP_US: 80000, WRONG: 0}";
const std::string kWrong = "{SLEEP_US: 80000, WRONG: 1}";

Spec planted(const std::filesystem::path& dir, double early_stop) {
  write_file(dir / "losers.cpp", kKernel);
  write_file(dir / "losers.yaml", kSpec);
  Spec spec = load_spec(dir / "losers.yaml");
  spec.measure.early_stop = early_stop;
  return spec;
}

}  // namespace

TEST(EarlyStop, LosersAreCutShortAndTheBestIsTheSame) {
  const auto dir = fresh_dir();
  TuneOptions opt;
  opt.out_dir = dir / "on";
  const TuneReport on = tune(planted(dir, 3.0), opt);
  opt.out_dir = dir / "off";
  const TuneReport off = tune(planted(dir, 0.0), opt);

  ASSERT_EQ(on.sizes.size(), 1u);
  ASSERT_EQ(off.sizes.size(), 1u);
  auto a = by_config(on.sizes[0]);
  auto b = by_config(off.sizes[0]);
  ASSERT_EQ(a.size(), 4u);
  ASSERT_EQ(b.size(), 4u);

  // On: the first config has nothing to be compared with; the losers are
  // cut after kEarlyStopSamples samples, fewer than min_samples.
  EXPECT_EQ(a[kFast]->status, Status::ok);
  EXPECT_GE(a[kFast]->stats.count, 5u);
  for (const auto& loser : {kLoser, kWorse}) {
    const TrialRecord& t = *a[loser];
    EXPECT_EQ(t.status, Status::slower) << loser;
    EXPECT_EQ(t.stats.count, kEarlyStopSamples) << loser;
    EXPECT_EQ(t.samples.size(), kEarlyStopSamples) << loser;
    ASSERT_TRUE(t.slower_than) << loser;
    EXPECT_DOUBLE_EQ(t.slower_than->factor, 3.0);
    EXPECT_EQ(t.slower_than->best, a[kFast]->stats.median);  // the best so far was the first config
    EXPECT_GT(t.stats.min, t.slower_than->best * t.slower_than->factor) << loser;
    EXPECT_TRUE(t.verification.checked && t.verification.passed) << loser;  // verified before it was timed
  }
  EXPECT_EQ(a[kWrong]->status, Status::wrong_result);

  // Off: every config that ran correctly is measured in full.
  for (const auto& config : {kFast, kLoser, kWorse}) {
    EXPECT_EQ(b[config]->status, Status::ok) << config;
    EXPECT_GE(b[config]->stats.count, 5u) << config;
    EXPECT_FALSE(b[config]->slower_than) << config;
  }
  EXPECT_EQ(b[kWrong]->status, Status::wrong_result);

  // The same best config either way.
  ASSERT_TRUE(on.sizes[0].best && off.sizes[0].best);
  EXPECT_EQ(on.sizes[0].trials[*on.sizes[0].best].config.str(), kFast);
  EXPECT_EQ(off.sizes[0].trials[*off.sizes[0].best].config.str(), kFast);
}

// What the store holds is what selection and policies read: a trial cut
// short is there, with its samples, and is chosen by nothing.
TEST(EarlyStop, TheStoreKeepsThemAndNoChoiceTakesThem) {
  const auto dir = fresh_dir();
  TuneOptions opt;
  opt.out_dir = dir / "out";
  const TuneReport report = tune(planted(dir, 3.0), opt);
  const auto stored = Store(report.db).trials(report.spec_hash);
  ASSERT_EQ(stored.size(), 4u);
  std::size_t slower = 0;
  for (const auto& t : stored)
    if (t.status == Status::slower) {
      ++slower;
      EXPECT_EQ(t.samples.size(), kEarlyStopSamples);
      EXPECT_TRUE(t.slower_than);
    }
  EXPECT_EQ(slower, 2u);

  const auto best = best_per_size(stored);
  ASSERT_EQ(best.size(), 1u);
  EXPECT_EQ(best[0].config.str(), kFast);
  const Config fast = stored.front().config;  // the default, evaluated first
  ASSERT_EQ(fast.str(), kFast);
  for (Selection how : {Selection::per_size, Selection::all_sizes, Selection::cover}) {
    const Policy p =
        make_policy("losers", stored, how, fast, 100.0);  // a cover tolerance of 100x: the losers would cover
    ASSERT_EQ(p.entries.size(), 1u);
    EXPECT_EQ(p.entries[0].config.str(), kFast);
  }
}

// A trial cut short was judged against a bar; a rerun keeps it only while
// the rerun's early stop would cut it too.
TEST(EarlyStop, ResumeKeepsACutOnlyWhileTheRunWouldCutItToo) {
  const auto dir = fresh_dir();
  TuneOptions opt;
  opt.out_dir = dir / "out";
  const TuneReport first = tune(planted(dir, 3.0), opt);
  ASSERT_EQ(by_config(first.sizes[0])[kLoser]->status, Status::slower);

  // The same factor, or a smaller one: everything resumes.
  for (double factor : {3.0, 2.0}) {
    const TuneReport again = tune(planted(dir, factor), opt);
    EXPECT_EQ(again.resumed, 4u) << factor;
    EXPECT_EQ(again.measure.count(), 0.0) << factor;
    auto t = by_config(again.sizes[0]);
    EXPECT_EQ(t[kLoser]->status, Status::slower) << factor;
    EXPECT_EQ(t[kLoser]->id, by_config(first.sizes[0])[kLoser]->id) << factor;
  }

  // A larger factor might not have cut them: they are measured again (and,
  // 250x slower, cut again against the new bar).
  const TuneReport larger = tune(planted(dir, 10.0), opt);
  EXPECT_EQ(larger.resumed, 2u);  // the ok and the wrong config
  auto l = by_config(larger.sizes[0]);
  EXPECT_EQ(l[kLoser]->status, Status::slower);
  EXPECT_DOUBLE_EQ(l[kLoser]->slower_than->factor, 10.0);

  // Off: every config in full; the store then holds full measurements.
  const TuneReport off = tune(planted(dir, 0.0), opt);
  EXPECT_EQ(off.resumed, 2u);
  auto o = by_config(off.sizes[0]);
  for (const auto& config : {kLoser, kWorse}) {
    EXPECT_EQ(o[config]->status, Status::ok) << config;
    EXPECT_GE(o[config]->stats.count, 5u) << config;
  }
  // Full measurements resume under any early stop.
  EXPECT_EQ(tune(planted(dir, 3.0), opt).resumed, 4u);
}

namespace {

// A tune of the planted spec (early stop 3), its best's stored median then
// multiplied by `factor`, and the rerun: both reports.
std::pair<TuneReport, TuneReport> rerun_after_the_best_moved(double factor) {
  const auto dir = fresh_dir();
  TuneOptions opt;
  opt.out_dir = dir / "out";
  TuneReport first = tune(planted(dir, 3.0), opt);
  Store store(first.db);
  TrialRecord best = *by_config(first.sizes[0])[kFast];
  best.stats.median = best.stats.median * factor;
  store.put(best);
  TuneReport again = tune(planted(dir, 3.0), opt);
  return {std::move(first), std::move(again)};
}

}  // namespace

// A cut was judged against the best at its size; when that best is gone
// (measured again, slower, by a --fresh run over part of the space), the
// cut no longer holds and is measured again.
TEST(EarlyStop, ACutWhoseBestIsGoneIsMeasuredAgain) {
  const auto [first, again] = rerun_after_the_best_moved(1000.0);  // as if re-measured 1000x slower
  auto t = by_config(again.sizes[0]);
  EXPECT_EQ(again.resumed, 2u);  // the (edited) best and the wrong config
  EXPECT_NE(t[kLoser]->id, 0);
  EXPECT_EQ(t[kLoser]->status, Status::ok);  // nothing to be 3x slower than now: measured in full
  EXPECT_GE(t[kLoser]->stats.count, 5u);
}

// A best that moved a little since (confirmation pools its samples) leaves
// the trials cut against it standing, when their samples are over the new
// bar too: a rerun of a finished tune measures nothing (it measured every cut
// trial again, against a best 2% slower).
TEST(EarlyStop, ACutStandsAgainstABestThatMovedALittle) {
  const auto [first, again] = rerun_after_the_best_moved(1.02);
  EXPECT_EQ(again.resumed, first.sizes[0].trials.size());
  EXPECT_EQ(by_config(again.sizes[0])[kLoser]->status, Status::slower);
}

// Every report shows a trial cut short as such: the console line, the
// status counts, the CSV, the JSON and the HTML page.
TEST(EarlyStop, ReportsShowTrialsCutShort) {
  const auto dir = fresh_dir();
  TuneOptions opt;
  opt.out_dir = dir / "out";
  const Spec spec = planted(dir, 3.0);
  TuneReport report = tune(spec, opt);
  const std::string summary = format_summary(report);
  EXPECT_NE(summary.find("4 trials: 1 ok, 2 slower, 1 wrong_result"), std::string::npos) << summary;
  EXPECT_NE(summary.find("slower, " + kLoser + " (cut short after 3 samples, all over 3 x "), std::string::npos)
      << summary;
  EXPECT_NE(summary.find("early stop: 2 trials cut short, slower than 3 x the best so far"), std::string::npos)
      << summary;
  EXPECT_NE(summary.find("best: No.1 "), std::string::npos) << summary;

  write_default_outputs(report, spec, opt.out_dir);
  const std::string csv = read_file(output_file(report, "csv"));
  EXPECT_NE(csv.find(",slower,"), std::string::npos) << csv;
  EXPECT_NE(csv.find("cut short after 3 samples"), std::string::npos) << csv;

  const auto json = nlohmann::json::parse(read_file(output_file(report, "json")));
  std::size_t cut = 0;
  for (const auto& t : json["sizes"][0]["trials"]) {
    if (t["status"] != "slower") continue;
    ++cut;
    EXPECT_TRUE(t["time_us"].is_null());  // never a full measurement
    EXPECT_EQ(t["samples_us"].size(), kEarlyStopSamples);
    EXPECT_EQ(t["slower_than"]["factor"], 3.0);
    EXPECT_GT(t["slower_than"]["partial_median_us"].get<double>(), 3 * t["slower_than"]["best_us"].get<double>());
  }
  EXPECT_EQ(cut, 2u);
  EXPECT_EQ(json["sizes"][0]["best"]["config"]["SLEEP_US"], 200);

  const std::string html = read_file(output_file(report, "html"));
  EXPECT_NE(html.find("<h3>Cut short by the early stop</h3>"), std::string::npos);
  EXPECT_NE(html.find("1 ok, 2 slower, 1 wrong_result"), std::string::npos);
  // The parameter table keeps the value whose every trial was cut short,
  // marked as a lower bound.
  EXPECT_NE(html.find("<code>50000</code>: &gt;="), std::string::npos);
}

// The default config is the baseline of every speedup and of one config for
// all sizes: it is measured in full even when a seed ahead of it is 250x
// faster.
TEST(EarlyStop, TheBaselineIsAlwaysMeasuredInFull) {
  const auto dir = fresh_dir();
  (void)planted(dir, 3.0);  // the kernel and spec files
  write_file(dir / "seeded.yaml", std::string(kSpec) + "search: {seeds: [{SLEEP_US: 200, WRONG: 0}]}\n");
  Spec seeded = load_spec(dir / "seeded.yaml");
  seeded.default_config = Config({{"SLEEP_US", Value(50000)}, {"WRONG", Value(0)}});
  TuneOptions opt;
  opt.out_dir = dir / "out";
  const TuneReport report = tune(seeded, opt);
  const SizeReport& s = report.sizes[0];
  ASSERT_EQ(s.trials.front().config.str(), kFast);  // the seed, first
  ASSERT_TRUE(s.baseline);
  const TrialRecord& baseline = s.trials[*s.baseline];
  EXPECT_EQ(baseline.config.str(), kLoser);
  EXPECT_EQ(baseline.status, Status::ok);
  EXPECT_GE(baseline.stats.count, 5u);
  EXPECT_EQ(by_config(s)[kWorse]->status, Status::slower);  // the others are still cut
  EXPECT_NE(format_summary(report).find("speedup over default: "), std::string::npos) << format_summary(report);
}

// The early stop compares times, and a config it cuts is never chosen: under
// an objective other than the time it could throw the best away (here the
// slow config's cost, time over SLEEP_US squared, is some 100x lower). The
// tune measures every config in full instead, and says why. Planted 100x
// apart, the choice does not hang on a busy machine's timings.
TEST(EarlyStop, AnObjectiveOtherThanTimeMeasuresEveryConfigInFull) {
  const auto dir = fresh_dir();
  write_file(dir / "losers.cpp", kKernel);
  write_file(dir / "weighted.yaml", R"(name: weighted
kernel: {source: losers.cpp, entry: twice, flags: [-O1]}
arguments:
  - {name: x, type: f32, size: N, fill: random}
  - {name: y, type: f32, size: N, role: out}
  - {name: n, type: i32, value: N}
sizes: {N: 256}
parameters: {SLEEP_US: [200, 20000], WRONG: [0]}
default: {SLEEP_US: 200, WRONG: 0}
reference: {entry: twice_ref}
metrics: {cost: "time_us / SLEEP_US ** 2"}
objective: {minimize: cost}
measure: {warmup: 1ms, min_samples: 5, max_samples: 20, max_time: 2s, noise: 0.02, cache: hot, timeout: 30s}
)");
  const Spec spec = load_spec(dir / "weighted.yaml");
  EXPECT_DOUBLE_EQ(spec.measure.early_stop, 3.0);  // left at its default: the tune turns it off
  TuneOptions opt;
  opt.out_dir = dir / "out";
  const TuneReport report = tune(spec, opt);
  ASSERT_EQ(report.sizes.size(), 1u);
  const SizeReport& s = report.sizes[0];
  ASSERT_EQ(s.trials.size(), 2u);
  for (const auto& t : s.trials) {
    EXPECT_EQ(t.status, Status::ok) << t.config.str();
    EXPECT_FALSE(t.slower_than) << t.config.str();
  }
  ASSERT_TRUE(s.best);
  EXPECT_EQ(s.trials[*s.best].config.str(), "{SLEEP_US: 20000, WRONG: 0}");
  const std::string summary = format_summary(report);
  EXPECT_NE(summary.find("early stop: off, every config measured in full: the early stop compares times, and the "
                         "objective is cost (lower is better)"),
            std::string::npos)
      << summary;
}
