// search.seeds end to end on the CPU: after the rule config, each seed valid
// at a size is evaluated, in the spec's order, before the search goes on;
// a seed the constraints rule out at a size is left out there.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include <nlohmann/json.hpp>

#include "support/temp_dir.hpp"
#include "tuner/data/tiled_matmul.hpp"
#include "tunekit/report.hpp"
#include "tunekit/rules.hpp"
#include "tunekit/seeds.hpp"
#include "tunekit/tuner.hpp"

using namespace tunekit;
using tunekit::testing::fresh_dir;
using tunekit::testing::read_file;

namespace {

const std::filesystem::path& kSpec = tunekit::testing::kTiledMatmulSpec;
using tunekit::testing::tiles;

void expect_distinct(const SizeReport& s) {
  std::set<std::string> keys;
  for (const auto& t : s.trials)
    EXPECT_TRUE(keys.insert(t.config.key()).second) << "evaluated twice: " << t.config.str();
}

}  // namespace

TEST(TuneSeeds, SeedsFollowTheRuleConfigWhereTheyAreValid) {
  const auto dir = fresh_dir();
  Spec spec = load_spec(kSpec);
  // A size-dependent constraint: at M = 4 (size 0) BM may be 8 at most.
  spec.constraints.push_back(Expression::parse("BM <= 2 * M"));
  spec.search.seeds = {tiles(16, 32, 16),   // BM 16: ruled out at M = 4
                       tiles(8, 64, 16),    // valid at both sizes
                       tiles(32, 16, 32)};  // size 1's rule config; ruled out at M = 4
  TuneOptions opt;
  opt.out_dir = dir / "out";
  TuneReport report = tune(spec, opt);
  ASSERT_EQ(report.sizes.size(), 2u);

  // Size 0 (M 4, N 64, K 32): the rule config, the one valid seed, the default.
  const SizeReport& s0 = report.sizes[0];
  ASSERT_EQ(s0.trials.size(), 6u);  // max_evals
  EXPECT_EQ(s0.count_of(kOriginSpecSeeds), 1u);
  EXPECT_EQ(s0.trials[0].config, tiles(8, 64, 32));
  EXPECT_EQ(s0.trials[0].origin, kOriginRules);
  EXPECT_EQ(s0.trials[1].config, tiles(8, 64, 16));
  EXPECT_EQ(s0.trials[1].origin, kOriginSpecSeeds);
  EXPECT_EQ(s0.trials[2].config, *spec.default_config);
  for (const auto& t : s0.trials) EXPECT_LE(t.config.at("BM").as_int(), 8) << t.config.str();
  expect_distinct(s0);

  // Size 1 (M 48): the rule config is also the third seed, which is not
  // evaluated again; the other two follow in order.
  const SizeReport& s1 = report.sizes[1];
  ASSERT_EQ(s1.trials.size(), 6u);
  EXPECT_EQ(s1.count_of(kOriginSpecSeeds), 2u);
  EXPECT_EQ(s1.trials[0].config, tiles(32, 16, 32));
  EXPECT_EQ(s1.trials[1].config, tiles(16, 32, 16));
  EXPECT_EQ(s1.trials[2].config, tiles(8, 64, 16));
  EXPECT_EQ(s1.trials[3].config, *spec.default_config);
  expect_distinct(s1);

  const std::string summary = format_summary(report);
  EXPECT_NE(summary.find("seed (search.seeds): No.2\n"), std::string::npos) << summary;
  EXPECT_NE(summary.find("seeds (search.seeds): No.2 to No.3\n"), std::string::npos) << summary;
  auto json = nlohmann::json::parse(format_json(report));
  EXPECT_EQ(json["sizes"][0]["seeds"], 1);
  EXPECT_EQ(json["sizes"][1]["seeds"], 2);

  // Without rules the first valid seed is evaluation No.1.
  spec.search.rules.clear();
  TuneOptions fresh = opt;
  fresh.out_dir = dir / "plain";
  TuneReport plain = tune(spec, fresh);
  EXPECT_EQ(plain.sizes[0].trials[0].config, tiles(8, 64, 16));
  EXPECT_EQ(plain.sizes[0].trials[1].config, *spec.default_config);
  EXPECT_EQ(plain.sizes[1].trials[0].config, tiles(16, 32, 16));
  EXPECT_EQ(plain.sizes[1].trials[1].config, tiles(8, 64, 16));
  EXPECT_EQ(plain.sizes[1].trials[2].config, tiles(32, 16, 32));
  EXPECT_EQ(plain.sizes[1].trials[3].config, *spec.default_config);
  for (const auto& s : plain.sizes) expect_distinct(s);
}

// A config seeded by an earlier run and measured again by a run that seeds
// nothing (--fresh, without the spec's seeds) is the search's in this run's
// report: the store keeps the earlier seed origin (Store::put), but this
// run's summary and JSON say why each config ran in this run.
TEST(TuneSeeds, AConfigSeededByAnEarlierRunIsTheSearchsInARunWithoutSeeds) {
  const auto dir = fresh_dir();
  Spec spec = load_spec(kSpec);
  spec.search.rules.clear();
  spec.search.max_evaluations.reset();
  spec.sizes = {spec.sizes.front()};
  spec.configs = {tiles(2, 16, 16), tiles(8, 16, 16), tiles(8, 32, 32)};
  spec.search.seeds = {tiles(8, 32, 32)};
  TuneOptions opt;
  opt.out_dir = dir / "out";
  ASSERT_EQ(tune(spec, opt).sizes.front().count_of(kOriginSpecSeeds), 1u);

  spec.search.seeds.clear();
  opt.fresh = true;
  const TuneReport again = tune(spec, opt);
  const SizeReport& s = again.sizes.front();
  ASSERT_EQ(s.trials.size(), 3u);
  for (const auto& t : s.trials) EXPECT_NE(t.origin, kOriginSpecSeeds) << t.config.str();
  EXPECT_EQ(s.count_of(kOriginSpecSeeds), 0u);
  const std::string summary = format_summary(again);
  EXPECT_EQ(summary.find("search.seeds"), std::string::npos) << summary;
  EXPECT_EQ(nlohmann::json::parse(format_json(again))["sizes"][0]["seeds"], 0);
}

TEST(TuneSeeds, ASpecThatListsItsConfigsTriesTheSeedsFirstAndCountsThem) {
  // msKPP style: `configs` lists what to try; a seed outside the list is
  // tried as well, one the list holds is not tried twice, and the progress
  // total counts each once.
  const auto dir = fresh_dir();
  Spec spec = load_spec(kSpec);
  spec.search.rules.clear();
  spec.search.max_evaluations.reset();
  spec.sizes = {spec.sizes.front()};
  spec.configs = {tiles(2, 16, 16), tiles(8, 16, 16), tiles(8, 32, 32)};
  spec.search.seeds = {tiles(8, 32, 32), tiles(16, 32, 16)};
  TuneOptions opt;
  opt.out_dir = dir / "out";
  std::optional<std::size_t> total;  // as planned before the first trial (later events take max(total, done))
  TuneReport report = tune(spec, opt, [&](const ProgressEvent& e) {
    if (!total) total = e.total;
  });
  const SizeReport& s = report.sizes.front();
  ASSERT_EQ(s.trials.size(), 4u);
  EXPECT_EQ(s.count_of(kOriginSpecSeeds), 2u);
  EXPECT_EQ(s.trials[0].config, tiles(8, 32, 32));
  EXPECT_EQ(s.trials[1].config, tiles(16, 32, 16));
  EXPECT_EQ(s.trials[2].config, *spec.default_config);  // {2, 16, 16}, also the first listed
  EXPECT_EQ(s.trials[3].config, tiles(8, 16, 16));
  expect_distinct(s);
  ASSERT_TRUE(total);
  EXPECT_EQ(*total, 4u);
}

TEST(TuneSeeds, TransferFollowsTheSeedsAndPrecedesTheDefault) {
  // With transfer on, size 1 tries the rule config, its seeds, then the
  // fastest configs size 0 measured (where valid at size 1 and not tried
  // already), then the default config unless it was among them; size 0 has
  // nothing to transfer.
  const auto dir = fresh_dir();
  Spec spec = load_spec(kSpec);
  spec.search.seeds = {tiles(16, 32, 16)};
  spec.search.transfer = 2;
  spec.search.max_evaluations = 8;
  TuneOptions opt;
  opt.out_dir = dir / "out";
  TuneReport report = tune(spec, opt);
  ASSERT_EQ(report.sizes.size(), 2u);
  EXPECT_EQ(report.seeded_by, (std::vector<std::string>{"rules", "spec", "transfer"}));
  EXPECT_EQ(report.sizes[0].count_of(kOriginTransfer), 0u);
  const SizeReport& s1 = report.sizes[1];
  // Size 0's ok trials, fastest first.
  std::vector<const TrialRecord*> fastest;
  for (const auto& t : report.sizes[0].trials)
    if (t.status == Status::ok) fastest.push_back(&t);
  std::stable_sort(fastest.begin(), fastest.end(),
                   [](const TrialRecord* a, const TrialRecord* b) { return a->stats.median < b->stats.median; });
  std::vector<Config> expected_transfer;
  for (const TrialRecord* t : fastest) {
    const Config& c = t->config;
    if (expected_transfer.size() == 2) break;
    if (c == s1.trials[0].config || c == tiles(16, 32, 16)) continue;  // the rule config and the seed come first
    expected_transfer.push_back(c);
  }
  std::size_t i = 0;
  EXPECT_EQ(s1.trials[i++].origin, kOriginRules);
  EXPECT_EQ(s1.trials[i++].origin, kOriginSpecSeeds);
  for (const Config& c : expected_transfer) {
    EXPECT_EQ(s1.trials[i].origin, kOriginTransfer);
    EXPECT_EQ(s1.trials[i++].config, c);
  }
  // Which configs size 0 measured fastest depends on the machine's load: the
  // default among them is transferred, and then not tried a second time.
  if (std::find(expected_transfer.begin(), expected_transfer.end(), *spec.default_config) == expected_transfer.end())
    EXPECT_EQ(s1.trials[i].config, *spec.default_config);
  else
    EXPECT_NE(s1.trials[i].config, *spec.default_config);
  expect_distinct(s1);
  const std::string summary = format_summary(report);
  EXPECT_NE(summary.find("transferred from the nearest tuned sizes (search.transfer): No.3 to No.4"), std::string::npos)
      << summary;
}

// A program's own provider is one add() to the registry: its seeds follow
// the built-ins' and carry its name, which `tunekit plugins` lists.
TEST(TuneSeeds, AProgramsOwnProviderSeedsUnderItsName) {
  struct Largest : SeedProvider {
    std::string_view origin() const override { return "largest"; }
    std::vector<Config> seeds(const SeedContext& ctx) const override {
      const Config big = tiles(16, 32, 32);  // BM * BN at the bound, 512
      return ctx.space.contains(big) ? std::vector<Config>{big} : std::vector<Config>{};
    }
  };
  seed_providers().add({"largest", "the largest tiles, where valid",
                        [](const Spec&) -> std::unique_ptr<SeedProvider> { return std::make_unique<Largest>(); }});
  struct Unregister {
    ~Unregister() { seed_providers().remove("largest"); }
  } unregister;
  const auto dir = fresh_dir();
  Spec spec = load_spec(kSpec);
  spec.search.seeds = {tiles(8, 64, 16)};
  TuneOptions opt;
  opt.out_dir = dir / "out";
  const TuneReport report = tune(spec, opt);
  const SizeReport& s1 = report.sizes.at(1);  // M 48: every seed is valid
  ASSERT_GE(s1.trials.size(), 3u);
  EXPECT_EQ(s1.trials[0].origin, kOriginRules);
  EXPECT_EQ(s1.trials[1].origin, kOriginSpecSeeds);
  EXPECT_EQ(s1.trials[2].origin, "largest");
  EXPECT_EQ(s1.trials[2].config, tiles(16, 32, 32));
  expect_distinct(s1);

  // A provider whose origin is not its name would file its trials under
  // another provider's.
  seed_providers().add(
      {"misnamed", "", [](const Spec&) -> std::unique_ptr<SeedProvider> { return std::make_unique<Largest>(); }});
  EXPECT_THROW(providers_for(spec), std::logic_error);
  seed_providers().remove("misnamed");
}

// A program's provider that throws is named in the message, as a strategy
// is: which plugin failed, and in which call.
TEST(TuneSeeds, AProvidersFailureNamesIt) {
  struct Failing : SeedProvider {
    std::string_view origin() const override { return "failing"; }
    std::vector<Config> seeds(const SeedContext&) const override { throw std::runtime_error("boom"); }
  };
  seed_providers().add(
      {"failing", "", [](const Spec&) -> std::unique_ptr<SeedProvider> { return std::make_unique<Failing>(); }});
  struct Unregister {
    ~Unregister() { seed_providers().remove("failing"); }
  } unregister;
  const auto dir = fresh_dir();
  TuneOptions opt;
  opt.out_dir = dir / "out";
  try {
    (void)tune(load_spec(kSpec), opt);
    ADD_FAILURE() << "no error";
  } catch (const std::exception& e) {
    EXPECT_EQ(std::string(e.what()).find("the seed provider 'failing' failed in seeds(): boom"), 0u) << e.what();
  }
}

// Sizes tuned one by one, then the whole spec again: the rerun proposes
// what each first run did and measures nothing. (A size once took transfer
// from a stored size this run tunes after it, which its first run had not
// seen, and spent its budget on configs never measured there.) The
// objective is a metric of the config alone, so which configs transfer
// does not hang on timings; with seed 4 the rerun once measured 2 configs.
TEST(TuneSeeds, ARerunOfSizesTunedOneByOneMeasuresNothing) {
  const auto dir = fresh_dir();
  tunekit::testing::write_file(dir / "k.cpp",
                               "extern \"C\" void f(const float* x, float* y, int n) {\n"
                               "  for (int i = 0; i < n; ++i) y[i] = 2 * x[i] + A * 0 + B * 0;\n}\n");
  tunekit::testing::write_file(dir / "k.yaml", R"(name: k
kernel: {source: k.cpp, entry: f, flags: [-O1]}
arguments:
  - {name: x, type: f32, size: n}
  - {name: y, type: f32, size: n, role: out}
  - {name: n, type: i32, value: n}
sizes: [{n: 4}, {n: 16}]
parameters: {A: [1, 2, 4, 8, 16], B: [1, 2, 3, 4, 5, 6]}
constraints: ["A <= n"]
default: {A: 4, B: 6}
metrics: {score: "(A - n // 4) ** 2 * 10 + B"}
objective: {minimize: score}
search: {strategy: random, max_evals: 6, transfer: 2, seed: 4}
measure: {warmup: 0us, min_samples: 2, max_samples: 2, cache: hot, early_stop: off, confirm: 0}
)");
  Spec spec = load_spec(dir / "k.yaml");
  TuneOptions opt;
  opt.out_dir = dir / "out";
  std::size_t measured = 0;
  for (std::size_t i = 0; i < 2; ++i) {
    Spec one = spec;
    one.sizes = {spec.sizes[i]};
    const TuneReport r = tune(one, opt);
    measured += r.all_trials().size() - r.resumed;
  }
  const TuneReport again = tune(spec, opt);
  EXPECT_EQ(again.resumed, again.all_trials().size());
  EXPECT_EQ(again.all_trials().size(), measured);
}
