// A strategy is a plugin, and a plugin may be wrong: one that proposes only
// what was evaluated, a config with a name the space lacks, one that throws
// or that makes nothing. Each ends as a message that names it, within the
// run's budget, never as a hang or a crash.
#include <gtest/gtest.h>

#include <functional>
#include <stdexcept>
#include <string>

#include "support/temp_dir.hpp"
#include "tunekit/backend.hpp"
#include "tunekit/builder.hpp"
#include "tunekit/evaluator.hpp"
#include "tunekit/spec.hpp"
#include "tunekit/stop.hpp"
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

// A continuous optimiser proposes 1.0 for an integer's 1: that is the
// space's config, built with 1 and evaluated once, not a second config
// whose build gets `-DA=1.0`.
TEST(PluginFaults, AProposalInAnotherNumberTypeIsTheSpacesOwnConfig) {
  struct Floats final : Strategy {
    int asked = 0;
    std::vector<Config> next(std::size_t) override {  // the same config, as a float and as an integer
      if (++asked % 2) return {Config({{"A", Value(1.0)}, {"B", Value(0)}})};
      return {Config({{"B", Value(0)}, {"A", Value(1)}})};
    }
  };
  Registered floats(
      {"floats", "one config in two spellings", {}, [](const StrategyContext&) { return std::make_unique<Floats>(); }});
  Spec spec = tiny_spec();
  spec.search.strategy = "floats";
  spec.search.max_evaluations = 3;
  const TuneReport report = tune(spec, options_for(spec));
  std::vector<const TrialRecord*> ours;  // beside the baseline, the first valid config
  for (const auto& t : report.sizes.at(0).trials)
    if (t.config.at("A") == Value(1)) ours.push_back(&t);
  ASSERT_EQ(ours.size(), 1u);
  EXPECT_EQ(ours[0]->status, Status::ok) << ours[0]->error;
  EXPECT_EQ(ours[0]->config.str(), "{A: 1, B: 0}");
  EXPECT_FALSE(ours[0]->config.at("A").is_float());
}

namespace {

// The cpu backend, with a part of it replaced for one test.
struct BackendSwap {
  BackendSwap(std::function<std::unique_ptr<Builder>(Backend&)> builder,
              std::function<std::unique_ptr<Evaluator>(Backend&)> evaluator)
      : original(backends().get("cpu")) {
    struct Swapped final : Backend {
      std::unique_ptr<Backend> inner;
      std::function<std::unique_ptr<Builder>(Backend&)> builder;
      std::function<std::unique_ptr<Evaluator>(Backend&)> evaluator;
      std::string_view name() const override { return inner->name(); }
      const MachineInfo& machine() const override { return inner->machine(); }
      std::unique_ptr<Builder> make_builder() override { return builder(*inner); }
      std::unique_ptr<Evaluator> make_evaluator() override { return evaluator(*inner); }
      bool measures_while_building() const override { return inner->measures_while_building(); }
    };
    BackendInfo swapped = original;
    swapped.make = [make = original.make, builder, evaluator](const BackendOptions& o) -> std::unique_ptr<Backend> {
      auto b = std::make_unique<Swapped>();
      b->inner = make(o);
      b->builder = builder;
      b->evaluator = evaluator;
      return b;
    };
    backends().remove(original.name);
    backends().add(std::move(swapped));
  }
  ~BackendSwap() {
    backends().remove(original.name);
    backends().add(original);
  }
  BackendInfo original;
};

std::unique_ptr<Builder> its_builder(Backend& b) { return b.make_builder(); }
std::unique_ptr<Evaluator> its_evaluator(Backend& b) { return b.make_evaluator(); }

}  // namespace

// A backend is a plugin too: a part it fails to make, or what its builder
// or evaluator throws, names it, the call and (for a build) the config.
TEST(PluginFaults, WhatABackendThrowsOrFailsToMakeNamesIt) {
  Spec spec = tiny_spec();
  spec.search.strategy = "exhaustive";
  {
    BackendSwap swap([](Backend&) { return std::unique_ptr<Builder>(); }, its_evaluator);
    EXPECT_EQ(error_of(spec), "the backend 'cpu' failed in make_builder(): it returned none");
  }
  {
    BackendSwap swap(its_builder, [](Backend&) { return std::unique_ptr<Evaluator>(); });
    EXPECT_EQ(error_of(spec), "the backend 'cpu' failed in make_evaluator(): it returned none");
  }
  {
    struct Throws final : Builder {
      BuildResult build(const BuildInput&) override { throw std::out_of_range("map::at"); }
    };
    BackendSwap swap([](Backend&) { return std::make_unique<Throws>(); }, its_evaluator);
    EXPECT_EQ(error_of(spec), "the backend 'cpu' failed in build() at {A: 0, B: 0}: map::at");
  }
  {
    struct Throws final : Evaluator {
      TrialResult evaluate(const TrialRequest&) override { throw 42; }  // not even a std::exception
    };
    BackendSwap swap(its_builder, [](Backend&) { return std::make_unique<Throws>(); });
    EXPECT_EQ(error_of(spec),
              "the backend 'cpu' failed in evaluate(): it threw something that is not a std::exception");
  }
}

// A header edited while the run builds variants would mix the two versions
// under one spec_hash (the source's text is read once, its headers are not):
// the run ends with a message that says so, and what it stored is the
// version it started with. (A strategy stands in for the user's editor: it
// edits the header between two proposals.)
TEST(PluginFaults, AHeaderEditedDuringTheRunEndsIt) {
  const auto dir = fresh_dir();
  write_file(dir / "h.h", "#define TWO 2\n");
  write_file(dir / "k.cpp",
             "#include \"h.h\"\nextern \"C\" void f(const float* x, float* y, int n) {\n"
             "  for (int i = 0; i < n; ++i) y[i] = TWO * x[i] + A * 0;\n}\n");
  write_file(dir / "k.yaml",
             "name: k\nkernel: {source: k.cpp, entry: f, flags: [-O1]}\n"
             "arguments:\n"
             "  - {name: x, type: f32, size: 64}\n"
             "  - {name: y, type: f32, size: 64, role: out}\n"
             "  - {name: n, type: i32, value: 64}\n"
             "parameters: {A: [0, 1, 2, 3]}\n"
             "measure: {warmup: 0us, min_samples: 2, max_samples: 2, cache: hot, confirm: 0}\n");
  struct Editing final : Strategy {
    const Space& space;
    std::filesystem::path header;
    std::uint64_t next_index = 0;
    Editing(const Space& s, std::filesystem::path h) : space(s), header(std::move(h)) {}
    std::vector<Config> next(std::size_t) override {
      if (next_index == 2) write_file(header, "#define TWO 2.0f\n");
      if (next_index >= space.size()) return {};
      return {space.at(next_index++)};
    }
  };
  const auto header = dir / "h.h";
  Registered editing({"editing", "edits the header after two proposals", {}, [header](const StrategyContext& c) {
                        return std::make_unique<Editing>(c.space, header);
                      }});
  Spec spec = load_spec(dir / "k.yaml");
  spec.search.strategy = "editing";
  TuneOptions options;
  options.out_dir = dir / "out";
  try {
    (void)tune(spec, options);
    ADD_FAILURE() << "the run went on after the edit";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("a header that k.cpp includes changed during the run"), std::string::npos)
        << e.what();
  }
}

// A --fresh run stopped part way leaves the trials it had not reached
// stale: a resume measures them anew rather than taking them from before
// it, mixed with the new ones. (A run stopped after its third trial.)
TEST(PluginFaults, AFreshRunStoppedPartWayLeavesTheRestToMeasureAnew) {
  Spec spec = tiny_spec();
  spec.search.strategy = "exhaustive";
  TuneOptions options = options_for(spec);
  const std::size_t all = tune(spec, options).all_trials().size();
  ASSERT_EQ(all, 8u);

  options.fresh = true;
  const TuneReport stopped = tune(spec, options, [](const ProgressEvent& e) {
    if (e.done >= 3) request_stop();
  });
  clear_stop();
  ASSERT_TRUE(stopped.interrupted);
  const std::size_t anew = stopped.all_trials().size();
  ASSERT_LT(anew, all);

  options.fresh = false;
  const TuneReport resumed = tune(spec, options);
  EXPECT_EQ(resumed.all_trials().size(), all);
  EXPECT_EQ(resumed.resumed, anew);  // what the --fresh run measured, and no more
  EXPECT_EQ(resumed.retried, 0u);    // the stale ones were ok: no failure was measured again
  const TuneReport again = tune(spec, options);
  EXPECT_EQ(again.resumed, all);  // then every trial is current again
}
