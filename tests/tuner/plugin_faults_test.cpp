// A strategy is a plugin, and a plugin may be wrong: one that proposes only
// what was evaluated, a config with a name the space lacks, one that throws
// or that makes nothing. Each ends as a message that names it, within the
// run's budget, never as a hang or a crash.
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

#include "support/temp_dir.hpp"
#include "tunekit/spec.hpp"
#include "tunekit/strategy.hpp"
#include "tunekit/tuner.hpp"

using namespace tunekit;
using tunekit::testing::fresh_dir;
using tunekit::testing::write_file;

namespace {

// Proposes what `pick` makes of the space, every time it is asked.
class Fixed final : public Strategy {
 public:
  Fixed(const Space& space, std::function<Config(const Space&)> pick) : space_(space), pick_(std::move(pick)) {}
  std::vector<Config> next(std::size_t) override { return {pick_(space_)}; }

 private:
  const Space& space_;
  std::function<Config(const Space&)> pick_;
};

// Registered for one test, removed after it.
struct Registered {
  explicit Registered(StrategyInfo info) : name(info.name) { strategies().add(std::move(info)); }
  ~Registered() { strategies().remove(name); }
  std::string name;
};

Spec tiny_spec() {
  const auto dir = fresh_dir();
  write_file(dir / "k.cpp", "extern \"C\" void f(const float* x, float* y, int n) {\n"
                            "  for (int i = 0; i < n; ++i) y[i] = 2 * x[i] + A * 0 + B * 0;\n}\n");
  write_file(dir / "k.yaml", "name: k\nkernel: {source: k.cpp, entry: f, flags: [-O1]}\n"
                             "arguments:\n"
                             "  - {name: x, type: f32, size: 64}\n"
                             "  - {name: y, type: f32, size: 64, role: out}\n"
                             "  - {name: n, type: i32, value: 64}\n"
                             "parameters: {A: [0, 1, 2, 3], B: [0, 1]}\n"
                             "measure: {warmup: 0us, min_samples: 2, max_samples: 2, cache: hot, confirm: 0}\n");
  Spec spec = load_spec(dir / "k.yaml");
  spec.output.db = (dir / "out" / "tunekit.db").string();
  return spec;
}

TuneOptions options_for(const Spec& spec) {
  TuneOptions o;
  o.out_dir = std::filesystem::path(spec.output.db).parent_path();
  return o;
}

std::string error_of(Spec spec) {
  try {
    (void)tune(spec, options_for(spec));
  } catch (const std::exception& e) {
    return e.what();
  }
  return "(no error)";
}

}  // namespace

TEST(PluginFaults, AStrategyThatProposesOnlyWhatWasEvaluatedEndsTheSize) {
  Registered stuck({"stuck", "always the first config", {}, [](const StrategyContext& c) {
                      return std::make_unique<Fixed>(c.space, [](const Space& s) { return s.at(0); });
                    }});
  Spec spec = tiny_spec();
  spec.search.strategy = "stuck";
  spec.search.max_evaluations = 5;
  const TuneReport report = tune(spec, options_for(spec));
  ASSERT_EQ(report.sizes.size(), 1u);
  EXPECT_LE(report.sizes[0].trials.size(), 2u);  // the default config and the first one (maybe the same)
  bool said = false;
  for (const auto& w : report.warnings)
    said |= w.find("the strategy 'stuck' proposed only configs this run has evaluated") != std::string::npos;
  EXPECT_TRUE(said) << ::testing::PrintToString(report.warnings);
}

TEST(PluginFaults, AProposalWithANameTheSpaceLacksIsInvalid) {
  Registered extra({"extra", "the first config and a name of its own", {}, [](const StrategyContext& c) {
                      return std::make_unique<Fixed>(c.space, [](const Space& s) {
                        Config config = s.at(1);
                        config.set("ZZ", Value(7));
                        return config;
                      });
                    }});
  Spec spec = tiny_spec();
  spec.search.strategy = "extra";
  spec.search.max_evaluations = 3;
  const TuneReport report = tune(spec, options_for(spec));
  bool invalid = false;
  for (const auto& t : report.sizes.at(0).trials)
    if (t.config.find("ZZ")) {
      EXPECT_EQ(t.status, Status::invalid);
      EXPECT_NE(t.error.find("ZZ is not a parameter"), std::string::npos) << t.error;
      invalid = true;
    }
  EXPECT_TRUE(invalid);
}

TEST(PluginFaults, WhatAStrategyThrowsNamesIt) {
  Registered throws({"throws", "fails when asked", {}, [](const StrategyContext& c) {
                       return std::make_unique<Fixed>(
                           c.space, [](const Space&) -> Config { throw std::out_of_range("map::at"); });
                     }});
  Registered none({"makes_none", "makes nothing", {}, [](const StrategyContext&) {
                     return std::unique_ptr<Strategy>();
                   }});
  Spec spec = tiny_spec();
  spec.search.strategy = "throws";
  EXPECT_EQ(error_of(spec), "the strategy 'throws' failed in next(): map::at");
  spec.search.strategy = "makes_none";
  EXPECT_EQ(error_of(spec), "the strategy 'makes_none' could not be made: its make returned none");
}
