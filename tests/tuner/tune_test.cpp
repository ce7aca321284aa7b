// The whole loop on planted kernels: one run meets every failure mode,
// records each with its status, and still finds the best config.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <functional>
#include <map>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "support/outputs.hpp"
#include "support/temp_dir.hpp"
#include "tunekit/backend.hpp"
#include "tunekit/report.hpp"
#include "tunekit/stop.hpp"
#include "tunekit/store.hpp"
#include "tunekit/tuner.hpp"

using namespace tunekit;
using tunekit::testing::fresh_dir;
using tunekit::testing::output_file;
using tunekit::testing::read_file;
using tunekit::testing::write_default_outputs;
using tunekit::testing::write_file;

namespace {

const char* kKernel = R"(
#include <cstdlib>
#include <unistd.h>
extern "C" void scale(const float* x, float* y, int n) {
#if KIND == 0
  for (int i = 0; i < n; ++i) y[i] = 2 * x[i];
#elif KIND == 1
  volatile int* p = nullptr; *p = n;
#elif KIND == 2
  std::abort();
#elif KIND == 3
  for (volatile int i = 0;;) ++i;
#elif KIND == 4
  for (int i = 0; i < n; ++i) y[i] = 2 * x[i] + (i == 7);
#elif KIND == 5
  this does not compile;
#elif KIND == 6
  for (int i = 0; i < n; ++i) { y[i] = 2 * x[i]; } usleep(2000);
#elif KIND == 8
  for (int i = 0; i < n - 1; ++i) y[i] = 2 * x[i];  // the last element is never written
#endif
}
extern "C" void scale_ref(const float* x, float* y, int n) { for (int i = 0; i < n; ++i) y[i] = 2 * x[i]; }
)";

std::string spec_text(const std::string& extra = "") {
  return R"(name: planted
kernel:
  source: planted.cpp
  entry: scale
  flags: [-O1]
arguments:
  - {name: x, type: f32, size: N, fill: random}
  - {name: y, type: f32, size: N, role: out}
  - {name: n, type: i32, value: N}
sizes: {N: 4096}
parameters:
  KIND: [0, 1, 2, 3, 4, 5, 6, 7]
constraints:
  - KIND != 7
default: {KIND: 6}
reference: {entry: scale_ref}
tolerance: {atol: 1e-6, rtol: 0}
measure: {warmup: 1ms, min_samples: 3, max_samples: 20, max_time: 200ms, cache: hot, timeout: 30s}
)" + extra;
}

// The planted kernel and its spec in `dir`, loaded.
Spec planted_spec(const std::filesystem::path& dir) {
  write_file(dir / "planted.cpp", kKernel);
  write_file(dir / "planted.yaml", spec_text());
  return load_spec(dir / "planted.yaml");
}

}  // namespace

TEST(Tune, PlantedFailuresAreRecordedAndTheBestIsFound) {
  const auto dir = fresh_dir();
  Spec spec = planted_spec(dir);
  TuneOptions opt;
  opt.out_dir = dir / "out";
  std::size_t events = 0;
  TuneReport report = tune(spec, opt, [&](const ProgressEvent& e) {
    ++events;
    EXPECT_LE(e.done, e.total.value_or(0));
  });
  EXPECT_GT(events, 7u);
  ASSERT_EQ(report.sizes.size(), 1u);
  const SizeReport& s = report.sizes[0];
  ASSERT_EQ(s.trials.size(), 7u);  // KIND 7 is pruned by the constraint
  std::map<std::int64_t, Status> status;
  for (const auto& t : s.trials) status[t.config.at("KIND").as_int()] = t.status;
  EXPECT_EQ(status[0], Status::ok);
  EXPECT_EQ(status[1], Status::crash);
  EXPECT_EQ(status[2], Status::crash);
  EXPECT_EQ(status[3], Status::timeout);
  EXPECT_EQ(status[4], Status::wrong_result);
  EXPECT_EQ(status[5], Status::compile_error);
  EXPECT_EQ(status[6], Status::ok);
  // The default config is evaluated first and is the baseline.
  EXPECT_EQ(s.trials[0].config.at("KIND"), Value(6));
  ASSERT_TRUE(s.baseline && s.best);
  EXPECT_EQ(*s.baseline, 0u);
  EXPECT_TRUE(s.baseline_is_spec_default);
  EXPECT_EQ(s.trials[*s.best].config.at("KIND"), Value(0));
  EXPECT_TRUE(s.trials[*s.best].verification.checked);
  EXPECT_LT(s.trials[*s.best].stats.median, s.trials[0].stats.median);
  // Where each trial's time went: the evaluator's whole time for it, and of
  // that the comparison with the reference. A config that failed to compile
  // never reached the evaluator.
  for (const auto& t : s.trials) {
    if (t.status == Status::compile_error) {
      EXPECT_EQ(t.eval_time.count(), 0);
      continue;
    }
    EXPECT_GT(t.eval_time.count(), 0) << t.config.str();
    EXPECT_LE(t.verify_time, t.eval_time) << t.config.str();
  }
  EXPECT_GT(s.trials[*s.best].verify_time.count(), 0);
  EXPECT_GT(report.verify.count(), 0);
  EXPECT_LE(report.verify, report.measure);

  // Everything went to the store; the default writers give the CSV and the JSON.
  Store store(report.db);
  EXPECT_EQ(store.trials(report.spec_hash).size(), 7u);
  EXPECT_TRUE(report.files.empty());  // tune() itself writes no report file
  write_default_outputs(report, spec, opt.out_dir);
  const std::string csv = read_file(output_file(report, "csv"));
  EXPECT_NE(csv.find("compile_error"), std::string::npos);
  auto json = nlohmann::json::parse(read_file(output_file(report, "json")));
  EXPECT_EQ(json["sizes"][0]["best"]["config"]["KIND"], 0);
  // And the HTML report, with the failures and their reasons.
  const std::string html = read_file(output_file(report, "html"));
  EXPECT_NE(html.find("<svg "), std::string::npos);
  EXPECT_NE(html.find("<td>compile_error</td>"), std::string::npos);
  EXPECT_NE(html.find("2 ok, 1 compile_error, 2 crash, 1 timeout, 1 wrong_result"), std::string::npos);
}

TEST(Tune, RerunResumesWithoutRerunning) {
  const auto dir = fresh_dir();
  Spec spec = planted_spec(dir);
  spec.parameters[0].values = {0, 4, 6};
  TuneOptions opt;
  opt.out_dir = dir / "out";
  TuneReport first = tune(spec, opt);
  EXPECT_EQ(first.resumed, 0u);
  TuneReport second = tune(spec, opt);
  EXPECT_EQ(second.resumed, 3u);
  EXPECT_EQ(second.build.count(), 0.0);
  EXPECT_EQ(second.measure.count(), 0.0);
  for (std::size_t i = 0; i < 3; ++i) EXPECT_EQ(second.sizes[0].trials[i].id, first.sizes[0].trials[i].id);

  // A wider space keeps what was measured and runs only the new config.
  spec.parameters[0].values = {0, 2, 4, 6};
  TuneReport wider = tune(spec, opt);
  EXPECT_EQ(wider.resumed, 3u);
  EXPECT_EQ(wider.sizes[0].trials.size(), 4u);

  // --fresh reruns everything, and the store still holds one row per config.
  opt.fresh = true;
  TuneReport fresh = tune(spec, opt);
  EXPECT_EQ(fresh.resumed, 0u);
  EXPECT_GT(fresh.measure.count(), 0.0);
  EXPECT_EQ(Store(fresh.db).trials(fresh.spec_hash).size(), 4u);
}

// An exhaustive search stopped by its budget says so, and how many configs
// it left unmeasured; one that ran its course, a random sample, or a guided
// search (which chose what the budget bought, as the warning advises) says
// nothing of it.
TEST(Tune, AnExhaustiveSearchStoppedByItsBudgetSaysWhatItLeftUnmeasured) {
  const auto dir = fresh_dir();
  Spec spec = planted_spec(dir);
  spec.parameters[0].values = {0, 4, 6, 8};
  spec.default_config.reset();
  spec.search.strategy = "exhaustive";
  TuneOptions opt;
  opt.out_dir = dir / "out";
  auto warned = [](const TuneReport& r) {
    for (const auto& w : r.warnings)
      if (w.find("stopped at the budget") != std::string::npos) return w;
    return std::string();
  };
  spec.search.max_evaluations = 2;
  const TuneReport stopped = tune(spec, opt);
  EXPECT_EQ(stopped.sizes.at(0).trials.size(), 2u);
  EXPECT_EQ(warned(stopped),
            "at size N=4096: the search 'exhaustive' ran the first 2 of its 4 configs, in its order, and stopped at "
            "the budget (search.max_evals, --max-evals); the other 2 were not measured (a guided strategy, such as "
            "auto, chooses which configs a budget buys)")
      << ::testing::PrintToString(stopped.warnings);
  spec.search.max_evaluations = 4;
  EXPECT_EQ(warned(tune(spec, opt)), "");
  spec.search.strategy = "random";
  spec.search.max_evaluations = 2;
  EXPECT_EQ(warned(tune(spec, opt)), "");
  for (const char* guided : {"auto", "genetic", "surrogate", "bayes"}) {
    spec.search.strategy = guided;
    const TuneReport r = tune(spec, opt);
    EXPECT_EQ(r.sizes.at(0).trials.size(), 2u) << guided;
    EXPECT_EQ(warned(r), "") << guided;
  }
}

// A spec that names no reference compares the default config's outputs;
// with no output argument (its role left out) there are none: no trial may
// say it was verified.
TEST(Tune, NoOutputArgumentMeansNothingIsVerifiedAndTheSummarySaysSo) {
  const auto dir = fresh_dir();
  Spec spec = planted_spec(dir);
  // Written and left `in`, as a timing-only tune may: with nothing
  // compared, a write into it is not looked for (no wrong_result).
  spec.arguments.at(1).role = Role::in;
  spec.reference = ReferenceSpec{};  // the default config's outputs
  spec.parameters[0].values = {0, 6};
  TuneOptions opt;
  opt.out_dir = dir / "out";
  const TuneReport report = tune(spec, opt);
  ASSERT_EQ(report.sizes.size(), 1u);
  ASSERT_EQ(report.sizes[0].trials.size(), 2u);
  for (const auto& t : report.sizes[0].trials) {
    EXPECT_EQ(t.status, Status::ok) << t.error;
    EXPECT_FALSE(t.verification.checked);
  }
  const std::string summary = format_summary(report);
  EXPECT_NE(summary.find("verification: not checked (no argument has role out or inout)\n"), std::string::npos)
      << summary;
  EXPECT_EQ(summary.find("max abs diff"), std::string::npos) << summary;
  EXPECT_THAT(report.warnings,
              ::testing::Contains(::testing::HasSubstr("nothing was verified: no argument has role out or inout")));
  for (const auto& t : nlohmann::json::parse(format_json(report))["sizes"][0]["trials"])
    EXPECT_EQ(t["verified"], false);
}

// A size that stopped for another reason (here its reference failed, before
// any config ran) says that reason; the budget had no part in it, so no
// warning says the search stopped there.
TEST(Tune, ASizeStoppedBeforeItsSearchRanSaysNothingOfTheBudget) {
  const auto dir = fresh_dir();
  Spec spec = planted_spec(dir);
  write_file(dir / "crashing_ref.cpp",
             "#include <cstdlib>\nextern \"C\" void crashing_ref(const float*, float*, int) { std::abort(); }\n");
  spec.reference.source = dir / "crashing_ref.cpp";
  spec.reference.entry = "crashing_ref";
  spec.parameters[0].values = {0, 4, 6, 8};
  spec.default_config.reset();
  spec.search.strategy = "exhaustive";
  spec.search.max_evaluations = 2;
  TuneOptions opt;
  opt.out_dir = dir / "out";
  const TuneReport report = tune(spec, opt);
  auto contains = [](const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; };
  ASSERT_EQ(report.sizes.size(), 1u);
  EXPECT_TRUE(contains(report.sizes[0].error, "the reference function 'crashing_ref' failed (crash)"))
      << report.sizes[0].error;
  EXPECT_TRUE(report.sizes[0].trials.empty());
  for (const auto& w : report.warnings) EXPECT_FALSE(contains(w, "stopped at the budget")) << w;
  EXPECT_FALSE(contains(format_summary(report), "stopped at the budget")) << format_summary(report);
}

// A size whose buffers exceed the machine's memory and swap is the size's
// recorded error, said as such: not the machine's passing state, whose
// reference would be run again (and its configs on every resume).
TEST(Tune, ASizeLargerThanTheMachinesMemoryIsTheSizesErrorNotTheMachines) {
  const auto dir = fresh_dir();
  planted_spec(dir);
  std::string text = spec_text();
  // x holds N * N floats: 4 TiB.
  text.replace(text.find("size: N, fill: random"), 7, "size: N*N");
  text.replace(text.find("sizes: {N: 4096}"), 16, "sizes: {N: 1048576}");
  write_file(dir / "big.yaml", text);
  Spec spec = load_spec(dir / "big.yaml");
  spec.parameters[0].values = {0, 6};
  TuneOptions opt;
  opt.out_dir = dir / "out";
  const TuneReport r = tune(spec, opt);
  ASSERT_EQ(r.sizes.size(), 1u);
  EXPECT_NE(r.sizes[0].error.find("failed (resource_limit)"), std::string::npos) << r.sizes[0].error;
  EXPECT_NE(r.sizes[0].error.find("more than this machine's memory and swap"), std::string::npos) << r.sizes[0].error;
  for (const auto& w : r.warnings) EXPECT_EQ(w.find("ran again"), std::string::npos) << w;
}

// Cold, cold-read and hot times are different measurements: a tune in one
// mode measures anew, then resumes only its own trials.
TEST(Tune, CacheModesDoNotResumeEachOthersTrials) {
  const auto dir = fresh_dir();
  Spec spec = planted_spec(dir);
  spec.parameters[0].values = {0, 6};
  spec.measure.cache = CacheMode::cold;
  const std::string cold_hash = spec_hash(spec);
  TuneOptions opt;
  opt.out_dir = dir / "out";
  EXPECT_EQ(tune(spec, opt).resumed, 0u);

  spec.measure.cache = CacheMode::cold_read;
  EXPECT_NE(spec_hash(spec), cold_hash);
  TuneReport read = tune(spec, opt);
  EXPECT_EQ(read.resumed, 0u);
  ASSERT_EQ(read.sizes[0].trials.size(), 2u);
  for (const auto& t : read.sizes[0].trials) {
    EXPECT_EQ(t.status, Status::ok) << t.config.str() << ": " << t.error;
    EXPECT_TRUE(t.verification.passed);
    EXPECT_GT(t.stats.median.count(), 0.0);
  }
  EXPECT_EQ(tune(spec, opt).resumed, 2u);

  // Hot trials are a third measurement, kept apart from both.
  spec.measure.cache = CacheMode::hot;
  EXPECT_NE(spec_hash(spec), cold_hash);
  EXPECT_NE(spec_hash(spec), [&] {
    Spec r = spec;
    r.measure.cache = CacheMode::cold_read;
    return spec_hash(r);
  }());
  EXPECT_EQ(tune(spec, opt).resumed, 0u);
}

// The compiler is part of the kernel however it is named: by the spec, by
// --compiler, or by $CXX; trials of another are not resumed as this one's.
TEST(Tune, ACompilerNamedByTheEnvironmentIsPartOfTheKernel) {
  const auto dir = fresh_dir();
  Spec spec = planted_spec(dir);
  const char* had = std::getenv("CXX");
  const std::string saved = had ? had : "";
  ::unsetenv("CXX");
  const std::string plain = spec_hash(spec);
  ::setenv("CXX", "clang++", 1);
  const std::string clang = spec_hash(spec);
  ::setenv("CXX", "g++", 1);
  const std::string gcc = spec_hash(spec);
  Spec named = spec;
  named.kernel.compiler = "clang++";  // the spec's own wins over $CXX, which then changes nothing
  const std::string own = spec_hash(named);
  ::setenv("CXX", "icpx", 1);
  EXPECT_EQ(spec_hash(named), own);
  if (had) ::setenv("CXX", saved.c_str(), 1);
  else ::unsetenv("CXX");
  EXPECT_NE(clang, plain);
  EXPECT_NE(gcc, clang);
}

// A separate reference source's own headers decide the verdicts as much
// as it does: an edit to one makes the stored trials another kernel's.
TEST(Tune, AnEditToTheReferencesHeaderIsAnotherKernel) {
  const auto dir = fresh_dir();
  Spec spec = planted_spec(dir);
  write_file(dir / "ref.h", "#define REFVAL 2\n");
  write_file(dir / "ref.cpp", "#include \"ref.h\"\nextern \"C\" void ref(float* y) { y[0] = REFVAL; }\n");
  spec.reference.kind = ReferenceSpec::Kind::function;
  spec.reference.source = dir / "ref.cpp";
  spec.reference.entry = "ref";
  const std::string before = spec_hash(spec);
  EXPECT_EQ(spec_hash(spec), before);
  write_file(dir / "ref.h", "#define REFVAL 5\n");
  EXPECT_NE(spec_hash(spec), before);
}

// A kernel's headers are told by their place beside its source, not on the
// disk: the project moved or cloned to another folder is the same kernel,
// and its trials resume.
TEST(Tune, AProjectMovedElsewhereIsTheSameKernel) {
  const auto dir = fresh_dir();
  for (const char* d : {"a", "b"}) {
    write_file(dir / d / "h.h", "#define REFVAL 2\n");
    write_file(dir / d / "k.cpp", "#include \"h.h\"\nextern \"C\" void f(float* y) { y[0] = REFVAL; }\n");
    write_file(dir / d / "k.yaml",
               "kernel: {source: k.cpp, entry: f}\narguments: [{name: y, type: f32, size: 1, "
               "role: out}]\nparameters: {A: [1, 2]}\n");
  }
  EXPECT_EQ(spec_hash(load_spec(dir / "a" / "k.yaml")), spec_hash(load_spec(dir / "b" / "k.yaml")));
  write_file(dir / "b" / "h.h", "#define REFVAL 3\n");  // but not another header's text
  EXPECT_NE(spec_hash(load_spec(dir / "a" / "k.yaml")), spec_hash(load_spec(dir / "b" / "k.yaml")));
}

// Headers that flags bring in are the kernel's too: one forced in with
// `-include`, and one the reference reaches through its own -I folder
// when it lives in the kernel's source.
TEST(Tune, HeadersThatFlagsBringInArePartOfTheKernel) {
  const auto dir = fresh_dir();
  write_file(dir / "forced.h", "#define TWO 2\n");
  write_file(dir / "refinc" / "ref.h", "#define REFVAL 2\n");
  write_file(dir / "k.cpp",
             "extern \"C\" void f(float* y) { y[0] = TWO; }\n"
             "#ifdef REF_BUILD\n#include \"ref.h\"\n#endif\n"
             "extern \"C\" void f_ref(float* y) { y[0] = 2; }\n");
  write_file(dir / "k.yaml", "kernel: {source: k.cpp, entry: f, flags: [-include, " + (dir / "forced.h").string() +
                                 "]}\narguments: [{name: y, type: f32, size: 1, role: out}]\nparameters: {A: [1, 2]}\n"
                                 "reference: {entry: f_ref, flags: [-DREF_BUILD, -Irefinc]}\n");
  const std::string before = spec_hash(load_spec(dir / "k.yaml"));
  write_file(dir / "forced.h", "#define TWO 2.0f\n");
  const std::string forced = spec_hash(load_spec(dir / "k.yaml"));
  EXPECT_NE(forced, before);
  write_file(dir / "refinc" / "ref.h", "#define REFVAL 3\n");
  EXPECT_NE(spec_hash(load_spec(dir / "k.yaml")), forced);
}

// A Kernel Tuner port keeps its problem size a compile-time constant: a
// parameter pinned to the size by a constraint. The reference function, in
// the kernel's source, was built once with the first size's baseline, so at
// the second size it wrote the first size's elements only and the size
// stopped ("the reference's output 'y' has nan at element 4").
TEST(Tune, TheReferenceIsBuiltWithEachSizesBaseline) {
  const auto dir = fresh_dir();
  write_file(dir / "k.cpp",
             "extern \"C\" void f(float* y, int n) { for (int i = 0; i < n; ++i) y[i] = i * U; }\n"
             "extern \"C\" void f_ref(float* y, int) { for (int i = 0; i < NDEF; ++i) y[i] = i; }\n");
  write_file(dir / "k.yaml",
             "kernel: {source: k.cpp, entry: f, flags: [-O1]}\n"
             "arguments: [{name: y, type: f32, size: n, role: out}, {name: n, type: i32, value: n}]\n"
             "sizes: [{n: 4}, {n: 8}]\nparameters: {NDEF: [4, 8], U: [1, 2]}\nconstraints: [NDEF == n]\n"
             "reference: {entry: f_ref}\nmeasure: {confirm: off}\n");
  TuneOptions opt;
  opt.out_dir = dir / "out";
  const TuneReport r = tune(load_spec(dir / "k.yaml"), opt);
  ASSERT_EQ(r.sizes.size(), 2u);
  for (const SizeReport& s : r.sizes) {
    EXPECT_EQ(s.error, "") << s.size.at("n").repr();
    ASSERT_EQ(s.trials.size(), 2u) << s.size.at("n").repr();
    std::map<std::int64_t, Status> status;
    for (const auto& t : s.trials) status[t.config.at("U").as_int()] = t.status;
    EXPECT_EQ(status[1], Status::ok) << s.size.at("n").repr();
    EXPECT_EQ(status[2], Status::wrong_result) << s.size.at("n").repr();
  }
}

TEST(Tune, BudgetLimitsEvaluations) {
  const auto dir = fresh_dir();
  Spec spec = planted_spec(dir);
  spec.parameters[0].values = {0, 4, 6};
  spec.search.strategy = "random";
  spec.search.max_evaluations = 2;
  TuneOptions opt;
  opt.out_dir = dir / "out";
  TuneReport r = tune(spec, opt);
  EXPECT_EQ(r.sizes[0].trials.size(), 2u);
}

TEST(Tune, SpecHashFollowsTheKernelNotTheSpace) {
  const auto dir = fresh_dir();
  Spec spec = planted_spec(dir);
  spec.parameters[0].values = {0, 6};
  const std::string before = spec_hash(spec);
  write_file(dir / "planted.cpp", std::string(kKernel) + "\n// edited\n");
  const std::string after = spec_hash(spec);
  EXPECT_NE(after, before);
  // Widening the space or changing search settings keeps the identity.
  spec.parameters[0].values = {0, 4, 6};
  spec.search.max_time = std::chrono::seconds(100);
  EXPECT_EQ(spec_hash(spec), after);
  // A different tolerance is a different experiment.
  spec.tolerance.atol = 0.5;
  EXPECT_NE(spec_hash(spec), after);
}

// A run whose time budget ran out says so, at the size where it did: its
// results are not those of a search that ran its course.
TEST(Tune, ATimeBudgetThatRunsOutIsSaid) {
  const auto dir = fresh_dir();
  Spec spec = planted_spec(dir);
  spec.parameters[0].values = {0, 4, 6};
  spec.search.max_time = Seconds(1e-9);
  TuneOptions opt;
  opt.out_dir = dir / "out";
  const TuneReport r = tune(spec, opt);
  std::size_t said = 0;
  for (const auto& w : r.warnings)
    said += w.find("the time budget (1e-09 s: search.max_time, --max-time) ran out") == 0;
  EXPECT_EQ(said, 1u) << ::testing::PrintToString(r.warnings);
  // One size, which the warning names; no later size to leave unsearched.
  for (const auto& w : r.warnings)
    if (w.find("the time budget") == 0) {
      EXPECT_NE(w.find("ran out at size " + size_key(spec.sizes.at(0)) + " after"), std::string::npos) << w;
      EXPECT_EQ(w.find("sizes after it"), std::string::npos) << w;
    }
}

// Under a budget the progress total is the budget, whichever strategy runs
// (`auto`'s blend once said nothing, and the bar showed 1/1, 2/2, ...).
TEST(Tune, TheProgressTotalIsTheBudget) {
  const auto dir = fresh_dir();
  Spec spec = planted_spec(dir);
  spec.parameters[0].values = {0, 4, 6};  // KIND 4 is a wrong result: quick, whatever it is
  spec.parameters.push_back(Parameter{"PAD", {Value(1), Value(2), Value(3)}, {}});
  spec.search.max_evaluations = 4;
  ASSERT_EQ(spec.search.strategy, "auto");
  TuneOptions opt;
  opt.out_dir = dir / "out";
  std::set<std::size_t> totals;
  TuneReport r = tune(spec, opt, [&](const ProgressEvent& e) { totals.insert(e.total.value_or(0)); });
  EXPECT_EQ(r.sizes.at(0).trials.size(), 4u);
  EXPECT_EQ(totals, std::set<std::size_t>{4});
}

// A device backend builds the next batch while it measures this one, so the
// tuner asks the strategy for that batch before this one's results are in.
// A guided strategy that waits for them proposes nothing then, and the search
// used to end there with its budget unspent (a Triton tune of 4 evaluations
// ran 2). The replay backend, made to say it measures while building, stands
// in for a GPU.
TEST(Tune, AGuidedSearchSpendsItsBudgetWhenBuildsOverlapMeasuring) {
  class Overlapping : public Backend {
   public:
    explicit Overlapping(std::unique_ptr<Backend> inner) : inner_(std::move(inner)) {}
    std::string_view name() const override { return inner_->name(); }
    const MachineInfo& machine() const override { return inner_->machine(); }
    std::unique_ptr<Builder> make_builder() override { return inner_->make_builder(); }
    std::unique_ptr<Evaluator> make_evaluator() override { return inner_->make_evaluator(); }
    bool measures_while_building() const override { return true; }
    std::optional<Seconds> clock() const override { return inner_->clock(); }

   private:
    std::unique_ptr<Backend> inner_;
  };
  const BackendInfo original = backends().get("replay");
  struct Restore {
    const BackendInfo& info;
    ~Restore() {
      backends().remove(info.name);
      backends().add(info);
    }
  } restore{original};
  BackendInfo overlapping = original;
  overlapping.make = [make = original.make](const BackendOptions& o) -> std::unique_ptr<Backend> {
    return std::make_unique<Overlapping>(make(o));
  };
  backends().remove(original.name);
  backends().add(overlapping);

  const std::filesystem::path data = std::filesystem::path(TUNEKIT_SOURCE_DIR) / "tests" / "replay" / "data";
  Spec spec = load_spec(data / "conv_small.yaml");
  ASSERT_EQ(spec.search.strategy, "auto");
  TuneOptions opt;
  opt.out_dir = fresh_dir() / "out";
  opt.replay = data / "conv_small.json.gz";
  // The whole space (hundreds of configs), and six of them, as the Triton
  // tune's two parameters had.
  // Seeds 1 to 10: in some, the strategy's second proposal is the default,
  // which the tuner queued itself and had not measured yet.
  for (const std::size_t budget : {20u, 4u}) {
    if (budget == 4)
      spec.constraints.push_back(Expression::parse(
          "block_size_x <= 48 and block_size_y == 1 and tile_size_x == 1 and tile_size_y == 1 and use_padding == 0 "
          "and use_shmem == 0"));
    spec.search.max_evaluations = budget;
    for (std::uint64_t seed = 1; seed <= 10; ++seed) {
      spec.search.seed = seed;
      opt.fresh = true;
      TuneReport r = tune(spec, opt);
      EXPECT_EQ(r.sizes.at(0).trials.size(), budget) << "seed " << seed;
    }
  }
}

// A default config that is the reference and fails the reference's own
// checks (an element it never writes) is that config's failure: its trial
// says so, nothing is named best or shipped, and the size ends (nothing can
// be verified). Before, its unchecked trial was stored as ok and won.
TEST(Tune, ADefaultConfigThatFailsAsTheReferenceIsRecordedAsFailed) {
  const auto dir = fresh_dir();
  Spec spec = planted_spec(dir);
  spec.parameters[0].values = {8, 0};
  spec.default_config = Config({{"KIND", Value(8)}});
  spec.reference = ReferenceSpec{};  // the default config's outputs
  TuneOptions opt;
  opt.out_dir = dir / "out";
  TuneReport r = tune(spec, opt);
  ASSERT_EQ(r.sizes.size(), 1u);
  const SizeReport& s = r.sizes[0];
  ASSERT_EQ(s.trials.size(), 1u);
  EXPECT_EQ(s.trials[0].config.at("KIND"), Value(8));
  EXPECT_EQ(s.trials[0].status, Status::wrong_result);
  EXPECT_EQ(s.trials[0].fault, Fault::config);
  EXPECT_NE(s.trials[0].error.find("as the reference: "), std::string::npos) << s.trials[0].error;
  EXPECT_FALSE(s.best);
  EXPECT_NE(s.error.find("the reference (the default config {KIND: 8}) failed (wrong_result)"), std::string::npos)
      << s.error;
  // The store agrees: a later select has nothing of this size to ship.
  const auto stored = Store(opt.out_dir / "tunekit.db").all();
  ASSERT_EQ(stored.size(), 1u);
  EXPECT_EQ(stored[0].status, Status::wrong_result);
}

// With no default, the baseline is the first valid config; when it does not
// compile, the reference function in the same source is built without it,
// and the config's failure is its own trial's, not the run's (once "the
// reference function does not build", exit 1, nothing tuned).
TEST(Tune, AFirstConfigThatDoesNotCompileDoesNotSinkTheReference) {
  const auto dir = fresh_dir();
  Spec spec = planted_spec(dir);
  spec.parameters[0].values = {5, 0};  // KIND 5 does not compile
  spec.default_config.reset();
  TuneOptions opt;
  opt.out_dir = dir / "out";
  TuneReport r = tune(spec, opt);
  ASSERT_EQ(r.sizes.at(0).trials.size(), 2u);
  std::map<std::int64_t, Status> status;
  for (const auto& t : r.sizes[0].trials) status[t.config.at("KIND").as_int()] = t.status;
  EXPECT_EQ(status[5], Status::compile_error);
  EXPECT_EQ(status[0], Status::ok);
}

// A reference function that cannot be built for the machine's sake (the
// compiler reports a full disk) is the run's failure, not the spec's: not an
// InputError, which `tunekit tune` reports as bad input (exit 1).
TEST(Tune, AReferenceThatTheMachineCannotBuildIsNotTheSpecsError) {
  const auto dir = fresh_dir();
  Spec spec = planted_spec(dir);
  // The compiler writes the reference's build (the one without a config's
  // -DKIND) to /dev/full: the kernel itself says "No space left on device",
  // as on a full disk.
  write_file(dir / "cc.sh",
             "#!/bin/sh\ncase \"$*\" in *-DKIND=*) exec c++ \"$@\";; esac\nexec c++ \"$@\" -o /dev/full\n");
  std::filesystem::permissions(dir / "cc.sh", std::filesystem::perms::owner_all);
  spec.kernel.compiler = (dir / "cc.sh").string();
  std::filesystem::copy_file(spec.kernel.source, dir / "ref.cpp");
  spec.parameters[0].values = {0};
  spec.reference.source = dir / "ref.cpp";
  TuneOptions opt;
  opt.out_dir = dir / "out";
  try {
    (void)tune(spec, opt);
    ADD_FAILURE() << "the run went on without its reference";
  } catch (const InputError& e) {
    ADD_FAILURE() << "blamed on the spec: " << e.what();
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("the reference function 'scale_ref' cannot be built here"), std::string::npos)
        << e.what();
  }
}

// A size whose constraints leave no valid config (here N < 64) runs nothing
// and needs no reference; the run goes on to the other sizes, whichever kind
// of reference the spec has.
TEST(Tune, SizeWithoutValidConfigsIsReportedAndTheRunGoesOn) {
  for (const bool function_reference : {true, false}) {
    SCOPED_TRACE(function_reference ? "reference function" : "default config as the reference");
    const auto dir = fresh_dir();
    Spec spec = planted_spec(dir);
    spec.parameters[0].values = {0, 6};
    spec.default_config = Config({{"KIND", Value(0)}});
    spec.sizes = {Bindings{{"N", Value(16)}}, Bindings{{"N", Value(4096)}}};
    spec.constraints.push_back(Expression::parse("N >= 64"));
    spec.measure.early_stop = 0;  // KIND 6 naps 2 ms, far behind KIND 0: measured in full all the same
    if (!function_reference) spec.reference = ReferenceSpec{};
    ASSERT_EQ(spec.reference.kind,
              function_reference ? ReferenceSpec::Kind::function : ReferenceSpec::Kind::default_config);
    TuneOptions opt;
    opt.out_dir = dir / "out";
    TuneReport r = tune(spec, opt);
    ASSERT_EQ(r.sizes.size(), 2u);
    EXPECT_TRUE(r.sizes[0].trials.empty());
    EXPECT_FALSE(r.sizes[0].best);
    ASSERT_EQ(r.sizes[1].trials.size(), 2u);
    for (const auto& t : r.sizes[1].trials) {
      EXPECT_EQ(t.status, Status::ok) << t.config.str() << ": " << t.error;
      // The default config too, against its own reference run.
      EXPECT_TRUE(t.verification.checked) << t.config.str();
    }
    EXPECT_NE(format_summary(r).find("no config is valid at this size: the constraint 'N >= 64' holds for no config"),
              std::string::npos)
        << format_summary(r);
  }
}

// Each size's report names the search that proposed its configs (docs/search.md:
// "results and reports name tunekit's strategy"); `auto` says what it chose.
TEST(Tune, EachSizeNamesItsSearch) {
  const auto dir = fresh_dir();
  Spec spec = planted_spec(dir);
  spec.parameters[0].values = {Value(0), Value(4)};  // the configs that run correctly, quickly
  TuneOptions opt;
  opt.out_dir = dir / "out";
  TuneReport report = tune(spec, opt);
  EXPECT_EQ(report.sizes.at(0).strategy, "auto: exhaustive");
  EXPECT_NE(format_summary(report).find("search: auto: exhaustive\n"), std::string::npos);
  spec.search.strategy = "random_sample";  // Kernel Tuner's name: tunekit's is reported
  spec.search.max_evaluations = 3;
  opt.out_dir = dir / "out2";
  EXPECT_EQ(tune(spec, opt).sizes.at(0).strategy, "random");
}

// A Spec built or edited in C++ gets the refusals load_spec() and the
// command line give, naming the field, before anything is built; not a
// reason that is not the cause (every config a wrong_result for an empty
// entry, the reference "timed out" for a timeout of 0).
TEST(Tune, ASpecThatLoadSpecWouldRefuseIsRefusedNamingTheField) {
  const auto dir = fresh_dir();
  const Spec good = planted_spec(dir);
  struct Case {
    std::function<void(Spec&, TuneOptions&)> edit;
    std::string says;
  };
  const Case cases[] = {
      {[](Spec& s, TuneOptions&) { s.kernel.entry.clear(); }, "Spec::kernel.entry is empty"},
      {[](Spec&, TuneOptions& o) { o.out_dir.clear(); }, "TuneOptions::out_dir is empty"},
      {[](Spec& s, TuneOptions&) { s.sizes.clear(); }, "Spec::sizes is empty"},
      {[](Spec& s, TuneOptions&) { s.measure.min_samples = 0; }, "measure.min_samples is 0"},
      {[](Spec& s, TuneOptions&) { s.measure.min_samples = 10, s.measure.max_samples = 2; },
       "measure.min_samples (10) exceeds measure.max_samples (2)"},
      {[](Spec& s, TuneOptions&) { s.measure.timeout = Seconds(0); }, "measure.timeout is not above 0"},
      {[](Spec& s, TuneOptions&) { s.measure.target_noise = -0.1; }, "measure.target_noise is -0.1"},
      {[](Spec& s, TuneOptions&) { s.tolerance.atol = std::nan(""); }, "tolerance.atol is nan"},
      {[](Spec& s, TuneOptions&) { s.search.max_evaluations = 0; }, "search.max_evaluations is 0"},
      {[](Spec& s, TuneOptions&) { s.search.max_fraction = 1.5; }, "search.max_fraction is 1.5"},
  };
  for (const Case& c : cases) {
    Spec spec = good;
    TuneOptions options;
    options.out_dir = dir / "out";
    c.edit(spec, options);
    try {
      tune(spec, options);
      ADD_FAILURE() << "tuned: " << c.says;
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find(c.says), std::string::npos) << e.what();
    }
  }
  EXPECT_FALSE(std::filesystem::exists(dir / "out" / "tunekit.db"));  // refused before the store was made
}

// A parameter nothing reads (a misspelling, most often) is named: the tune
// would rank identical variants by their noise. One read in a header, one
// in an argument's expression and one in a flag are read; one that only a
// constraint names is not.
TEST(Tune, AParameterNothingReadsIsNamed) {
  const auto dir = fresh_dir();
  write_file(dir / "inc" / "unroll.h", "#define STEP UNROLL\n");
  write_file(dir / "k.cpp",
             "#include \"unroll.h\"\n"
             "extern \"C\" void f(float* y, int n) { for (int i = 0; i < n; i += STEP) y[i] = 1; "
             "y[0] = FLAGGED; }\n");
  write_file(dir / "k.yaml", R"(kernel: {source: k.cpp, entry: f, flags: [-O1, -Iinc, -DFLAGGED=WIDE]}
arguments:
  - {name: y, type: f32, size: 64 * ROWS, role: out}
  - {name: n, type: i32, value: 64}
parameters:
  UNROLL: [1, 2]
  ROWS: [1]
  WIDE: [1]
  UNROL: [1, 2]
constraints: ["UNROL <= UNROLL"]
reference: none
measure: {warmup: 0us, min_samples: 1, max_samples: 1, early_stop: off, confirm: off}
)");
  TuneOptions opt;
  opt.out_dir = dir / "out";
  const TuneReport r = tune(load_spec(dir / "k.yaml"), opt);
  std::vector<std::string> about;
  for (const auto& w : r.warnings)
    if (w.find("appears nowhere") != std::string::npos) about.push_back(w);
  ASSERT_EQ(about.size(), 1u) << fmt::format("{}", fmt::join(r.warnings, "\n"));
  EXPECT_NE(about[0].find("k.yaml:9:3: the parameter 'UNROL' appears nowhere in k.cpp"), std::string::npos) << about[0];
  EXPECT_NE(about[0].find("(did you mean 'UNROLL'?)"), std::string::npos) << about[0];
}

// kernel.build_timeout bounds each build: the compiler sleeps a minute
// before it builds A = 2, and with a limit of 1 s that build is stopped and
// recorded as the config's compile_error, while A = 1 builds and runs. The
// limit takes part in the settings a stored failure is reused under, except
// at its default (stores made before it keep theirs).
TEST(Tune, ABuildPastTheSpecsBuildTimeoutIsStoppedAsACompileError) {
  const auto dir = fresh_dir();
  write_file(dir / "sleepycc", "#!/bin/sh\ncase \"$*\" in *-DA=2*) sleep 60 ;; esac\nexec c++ \"$@\"\n");
  std::filesystem::permissions(dir / "sleepycc", std::filesystem::perms::owner_all);
  write_file(dir / "k.cpp", "extern \"C\" void f(float* y, int n) { for (int i = 0; i < n; ++i) y[i] = A; }\n");
  const std::string spec =
      "kernel: {source: k.cpp, entry: f, flags: [-O1], build_timeout: 1s, compiler: " + (dir / "sleepycc").string() +
      R"(}
arguments:
  - {name: y, type: f32, size: 64, role: out}
  - {name: n, type: i32, value: 64}
parameters: {A: [1, 2]}
default: {A: 1}
reference: none
measure: {warmup: 0us, min_samples: 1, max_samples: 1, early_stop: off, confirm: off}
)";
  write_file(dir / "k.yaml", spec);
  TuneOptions opt;
  opt.out_dir = dir / "out";
  opt.jobs = 2;
  // A build the limit did not stop would end after the sleep, ok: the
  // statuses tell, with no clock in the test.
  const TuneReport r = tune(load_spec(dir / "k.yaml"), opt);
  ASSERT_EQ(r.sizes.at(0).trials.size(), 2u);
  for (const auto& t : r.sizes[0].trials) {
    if (t.config.at("A") == Value(1)) {
      EXPECT_EQ(t.status, Status::ok) << t.error;
    } else {
      EXPECT_EQ(t.status, Status::compile_error);
      EXPECT_EQ(t.fault, Fault::config);
      EXPECT_NE(t.error.find("timed out after 1 s (kernel.build_timeout)"), std::string::npos) << t.error;
    }
  }
  const Spec limited = load_spec(dir / "k.yaml");
  EXPECT_NE(settings_key(limited).find(" build_timeout=1s"), std::string::npos) << settings_key(limited);
  Spec by_default = limited;
  by_default.kernel.build_timeout = kDefaultBuildTimeout;
  EXPECT_EQ(settings_key(by_default).find("build_timeout"), std::string::npos) << settings_key(by_default);
}

// The builds a run waits for before it measures (here the default config's,
// as the reference) are in the time line's build, not in "other". The
// compiler sleeps 0.4 s a build, so its builds take at least that.
TEST(Tune, TheBuildsARunWaitsForAreItsBuildTime) {
  const auto dir = fresh_dir();
  write_file(dir / "slowcc", "#!/bin/sh\nsleep 0.4\nexec c++ \"$@\"\n");
  std::filesystem::permissions(dir / "slowcc", std::filesystem::perms::owner_all);
  write_file(dir / "k.cpp", "extern \"C\" void f(float* y, int n) { for (int i = 0; i < n; ++i) y[i] = A; }\n");
  write_file(dir / "k.yaml", "kernel: {source: k.cpp, entry: f, flags: [-O1], compiler: " + (dir / "slowcc").string() +
                                 R"(}
arguments:
  - {name: y, type: f32, size: 64, role: out}
  - {name: n, type: i32, value: 64}
parameters: {A: [1]}
measure: {warmup: 0us, min_samples: 1, max_samples: 1, early_stop: off, confirm: off}
)");
  TuneOptions opt;
  opt.out_dir = dir / "out";
  const TuneReport r = tune(load_spec(dir / "k.yaml"), opt);
  ASSERT_EQ(r.sizes.at(0).trials.size(), 1u);
  EXPECT_EQ(r.sizes[0].trials[0].status, Status::ok) << r.sizes[0].trials[0].error;
  EXPECT_GE(r.build.count(), 0.4);
  EXPECT_GE(r.build_wait.count(), 0.4);
}

// A tune's identity follows kernel.defines and the files its flags name, by
// their text: a trial of another build is never resumed as this one's. A
// compiler that is nowhere adds nothing rather than failing the hash (its
// build fails later, with a message of its own).
TEST(SpecHash, FollowsTheDefinesAndTheFilesTheFlagsName) {
  const auto dir = fresh_dir();
  write_file(dir / "k.cpp",
             "extern \"C\" float helper(float);\n"
             "extern \"C\" void k(float* y) { y[0] = SCALE * helper(1.0f); }\n");
  auto spec = [&](const std::string& kernel) {
    write_file(dir / "k.yaml", "kernel: {source: k.cpp, entry: k" + kernel +
                                   "}\narguments:\n  - {name: y, type: f32, size: 1, role: out}\n");
    return load_spec(dir / "k.yaml");
  };
  const std::string two = spec_hash(spec(", defines: {SCALE: \"2\"}"));
  EXPECT_EQ(spec_hash(spec(", defines: {SCALE: \"2\"}")), two);
  EXPECT_NE(spec_hash(spec(", defines: {SCALE: \"3\"}")), two);
  write_file(dir / "helper.cpp", "extern \"C\" float helper(float a) { return 2 * a; }\n");
  const std::string flags = ", flags: [-O2, " + (dir / "helper.cpp").string() + "]";
  const std::string before = spec_hash(spec(flags));
  EXPECT_EQ(spec_hash(spec(flags)), before);
  write_file(dir / "helper.cpp", "extern \"C\" float helper(float a) { return 30 * a; }\n");
  EXPECT_NE(spec_hash(spec(flags)), before);
  EXPECT_NO_THROW(spec_hash(spec(", compiler: no-such-compiler-anywhere")));
  // A device kernel's architecture: sm_90a's trials are not sm_90's.
  write_file(dir / "k.cu", "extern \"C\" __global__ void k(float* y) { y[0] = 1; }\n");
  auto cuda = [&](const std::string& arch) {
    write_file(dir / "c.yaml", "kernel: {source: k.cu, entry: k, language: cuda, grid: [1], block: [1]" + arch +
                                   "}\narguments:\n  - {name: y, type: f32, size: 1, role: out}\n");
    return spec_hash(load_spec(dir / "c.yaml"));
  };
  EXPECT_EQ(cuda(", arch: sm_90a"), cuda(", arch: sm_90a"));
  EXPECT_NE(cuda(", arch: sm_90a"), cuda(", arch: sm_90"));
}

// A CUDA kernel's identity follows the toolkit version its builds run:
// nvcc is $CUDA_HOME's first, not $PATH's, so trials built by another
// release are another kernel's; the same release installed elsewhere (a
// rank's host, the machine that reads the store) is the same kernel.
TEST(SpecHash, AnotherCudaReleaseIsAnotherKernel) {
  if (!backend_for_language("cuda").kernel.toolchain_identity) GTEST_SKIP() << "built without the cuda backend";
  const auto dir = fresh_dir();
  write_file(dir / "k.cu", "extern \"C\" __global__ void k(float* y) { y[0] = 1; }\n");
  write_file(dir / "k.yaml",
             "kernel: {source: k.cu, entry: k, language: cuda, compiler: nvcc, arch: sm_90a, grid: "
             "[1], block: [1]}\narguments:\n  - {name: y, type: f32, size: 1, role: out}\n");
  const Spec spec = load_spec(dir / "k.yaml");
  const char* before = std::getenv("CUDA_HOME");
  const std::string saved = before ? before : "";
  auto under = [&](const std::string& home, const std::string& release) {
    write_file(
        dir / home / "bin" / "nvcc",
        "#!/bin/sh\necho 'nvcc: NVIDIA (R) Cuda compiler driver'\necho 'Cuda compilation tools, " + release + "'\n");
    std::filesystem::permissions(dir / home / "bin" / "nvcc", std::filesystem::perms::owner_all);
    ::setenv("CUDA_HOME", (dir / home).c_str(), 1);
    return spec_hash(spec);
  };
  const std::string a = under("kit-a", "release 12.4, V12.4.131");
  const std::string same_release = under("kit-b", "release 12.4, V12.4.131");
  const std::string other_release = under("kit-c", "release 13.0, V13.0.88");
  if (before) ::setenv("CUDA_HOME", saved.c_str(), 1);
  else ::unsetenv("CUDA_HOME");
  EXPECT_EQ(a, same_release);
  EXPECT_NE(a, other_release);
}

// A CPU kernel's identity follows its compiler's release, as CUDA's does:
// the same name ($PATH's cc here) running the same release installed at
// another path and time (another machine reading the store, an MPI rank's
// host) is the same kernel; another release is another.
TEST(SpecHash, AnotherHostCompilerReleaseIsAnotherKernel) {
  const auto dir = fresh_dir();
  write_file(dir / "k.cpp", "extern \"C\" void k(float* y) { y[0] = 1; }\n");
  write_file(dir / "k.yaml",
             "kernel: {source: k.cpp, entry: k, compiler: cc}\narguments:\n  - {name: y, type: f32, size: 1, role: "
             "out}\n");
  const Spec spec = load_spec(dir / "k.yaml");
  const std::string saved = std::getenv("PATH") ? std::getenv("PATH") : "";
  auto under = [&](const std::string& folder, const std::string& release, std::chrono::hours age = {}) {
    const auto cc = dir / folder / "cc";
    write_file(cc, "#!/bin/sh\ncase \"$1\" in --version) echo 'cc (Fake) " + release +
                       "';; -dumpmachine) echo x86_64-linux-gnu;; *) exit 1;; esac\n");
    std::filesystem::permissions(cc, std::filesystem::perms::owner_all);
    std::filesystem::last_write_time(cc, std::filesystem::last_write_time(cc) - age);
    ::setenv("PATH", ((dir / folder).string() + ":" + saved).c_str(), 1);
    return spec_hash(spec);
  };
  const std::string a = under("here", "12.2.0");
  const std::string same_release = under("elsewhere", "12.2.0", std::chrono::hours(24 * 30));
  const std::string other_release = under("upgraded", "13.1.0");
  ::setenv("PATH", saved.c_str(), 1);
  EXPECT_EQ(a, same_release);
  EXPECT_NE(a, other_release);
}

// A file written for a device (a T1 file's Device.Name) tuned on another
// says so, where it names the device: its results are the other's. The
// check is the tuner's; here a C++ spec names the device.
TEST(Tune, AFileWrittenForAnotherDeviceSaysSo) {
  const auto dir = fresh_dir();
  Spec spec = planted_spec(dir);
  spec.parameters[0].values = {0};
  spec.default_config = Config({{"KIND", Value(0)}});
  spec.intended_device = "NVIDIA A100-PCIE-40GB";
  spec.intended_device_where = SourceLocation{"t1.json", 16, 25};
  TuneOptions opt;
  opt.out_dir = dir / "out";
  TuneReport r = tune(spec, opt);
  const auto written_for = [](const TuneReport& report) {
    return std::count_if(report.warnings.begin(), report.warnings.end(),
                         [](const std::string& w) { return w.find("written for the device") != std::string::npos; });
  };
  EXPECT_EQ(written_for(r), 1) << fmt::format("{}", fmt::join(r.warnings, "\n"));
  EXPECT_THAT(r.warnings, ::testing::Contains(
                              "t1.json:16:25: the file was written for the device 'NVIDIA A100-PCIE-40GB', and this "
                              "tune runs on another (" +
                              r.device + "): its results are that device's"));
  // The device's name holds it (letters and digits, case aside): nothing said.
  spec.intended_device = "CPU";
  r = tune(spec, opt);
  EXPECT_EQ(written_for(r), 0) << fmt::format("{}", fmt::join(r.warnings, "\n"));
  // A word of it cut short names another device, as an A10 is not an A100.
  spec.intended_device = "CP";
  r = tune(spec, opt);
  EXPECT_EQ(written_for(r), 1) << r.device << "\n" << fmt::format("{}", fmt::join(r.warnings, "\n"));
}

// A run stopped part way through a size names that size's best as the best
// of the configs measured before the stop, out of how many the size has: on
// the console, in the JSON and on the HTML page. The stop is asked for after
// the third trial, so nothing depends on timing.
TEST(Tune, ASizeStoppedPartWaySaysItsBestIsOfPartOfItsSpace) {
  const auto dir = fresh_dir();
  write_file(dir / "k.cpp",
             "extern \"C\" void f(const float* x, float* y, int n) {\n"
             "  for (int i = 0; i < n; ++i) y[i] = 2 * x[i] + U * 0;\n}\n");
  write_file(dir / "k.yaml",
             "name: k\nkernel: {source: k.cpp, entry: f, flags: [-O1]}\n"
             "arguments:\n"
             "  - {name: x, type: f32, size: 64}\n"
             "  - {name: y, type: f32, size: 64, role: out}\n"
             "  - {name: n, type: i32, value: 64}\n"
             "parameters: {U: [1, 2, 3, 4, 5, 6, 7, 8]}\n"
             "search: {strategy: exhaustive}\n"
             "measure: {warmup: 0us, min_samples: 2, max_samples: 2, cache: hot, confirm: 0}\n");
  const Spec spec = load_spec(dir / "k.yaml");
  TuneOptions opt;
  opt.out_dir = dir / "out";
  TuneReport stopped = tune(spec, opt, [](const ProgressEvent& e) {
    if (e.done >= 3) request_stop();
  });
  clear_stop();
  ASSERT_TRUE(stopped.interrupted);
  const SizeReport& s = stopped.sizes.at(0);
  const std::size_t measured = s.trials.size();
  ASSERT_GE(measured, 3u);
  ASSERT_LT(measured, 8u);
  ASSERT_TRUE(s.stopped_part_way);
  EXPECT_EQ(s.stopped_part_way->cause, StoppedPartWay::Cause::stop_requested);
  EXPECT_EQ(s.stopped_part_way->measured, measured);
  EXPECT_EQ(s.stopped_part_way->valid, 8u);
  const std::string console = write_default_outputs(stopped, spec, opt.out_dir);
  const std::string of_part =
      fmt::format("the {} configs measured before the run was stopped (of 8 valid at this size)", measured);
  EXPECT_THAT(console, ::testing::HasSubstr("\nbest of " + of_part + ": No.")) << console;
  const auto json = nlohmann::json::parse(read_file(output_file(stopped, "json"))).at("sizes").at(0);
  EXPECT_EQ(json.at("stopped_part_way"), nlohmann::json({{"cause", "stop_requested"},
                                                         {"configs_measured", measured},
                                                         {"configs_resumed", 0},
                                                         {"valid_configs", 8},
                                                         {"text", of_part}}))
      << json.dump();
  EXPECT_THAT(read_file(output_file(stopped, "html")),
              ::testing::HasSubstr("Size (no sizes): its best is the best of " + of_part + "."));

  // A resume stopped part way too: the configs it resumed were measured by
  // the run before, which the count says.
  TuneReport stopped_again = tune(spec, opt, [&](const ProgressEvent& e) {
    if (e.done > measured) request_stop();
  });
  clear_stop();
  const SizeReport& again = stopped_again.sizes.at(0);
  ASSERT_TRUE(again.stopped_part_way) << again.trials.size();
  EXPECT_EQ(again.stopped_part_way->resumed, measured);
  EXPECT_EQ(again.stopped_part_way->measured, again.trials.size());
  EXPECT_THAT(format_summary(stopped_again),
              ::testing::HasSubstr(fmt::format("\nbest of the {} configs measured before the run was stopped, {} of "
                                               "them by an earlier run (of 8 valid at this size): No.",
                                               again.trials.size(), measured)));

  // The resumed run ends the size's search: its best is of the whole space.
  const TuneReport resumed = tune(spec, opt);
  EXPECT_FALSE(resumed.sizes.at(0).stopped_part_way);
  EXPECT_THAT(format_summary(resumed), ::testing::HasSubstr("\nbest: No."));

  // A budget of evaluations is the search the user chose, not a stop.
  Spec budget = spec;
  budget.search.max_evaluations = 3;
  opt.fresh = true;
  const TuneReport within_budget = tune(budget, opt);
  EXPECT_EQ(within_budget.sizes.at(0).trials.size(), 3u);
  EXPECT_FALSE(within_budget.sizes.at(0).stopped_part_way);
  EXPECT_THAT(format_summary(within_budget), ::testing::HasSubstr("\nbest: No."));
  EXPECT_TRUE(nlohmann::json::parse(format_json(within_budget)).at("sizes").at(0).at("stopped_part_way").is_null());
}

// A time budget that runs out part way through a size stops it too; the
// replay's recorded times are its clock, so the stop falls at the same
// trial every run.
TEST(Tune, ASizeTheTimeBudgetCutShortSaysItsBestIsOfPartOfItsSpace) {
  const std::filesystem::path data = std::filesystem::path(TUNEKIT_SOURCE_DIR) / "tests" / "replay" / "data";
  Spec spec = load_spec(data / "conv_small.yaml");
  spec.search.max_time = Seconds(5);  // 3 recorded trials: it runs out inside the first batch
  TuneOptions opt;
  opt.out_dir = fresh_dir() / "out";
  opt.replay = data / "conv_small.json.gz";
  const TuneReport r = tune(spec, opt);
  EXPECT_FALSE(r.interrupted);
  const SizeReport& s = r.sizes.at(0);
  ASSERT_TRUE(s.stopped_part_way);
  EXPECT_EQ(s.stopped_part_way->cause, StoppedPartWay::Cause::time_budget);
  EXPECT_EQ(s.stopped_part_way->measured, s.trials.size());
  ASSERT_TRUE(s.stopped_part_way->valid);
  EXPECT_LT(s.trials.size(), *s.stopped_part_way->valid);
  const std::string summary = format_summary(r);
  EXPECT_THAT(summary, ::testing::HasSubstr(fmt::format(
                           "\nbest of the {} configs measured before the time budget ran out (of {} valid at this "
                           "size): No.",
                           s.trials.size(), *s.stopped_part_way->valid)));
  // The warning counts the same trials, not the configs handed to a batch
  // whose later ones the budget left unrun.
  EXPECT_THAT(r.warnings, ::testing::Contains(::testing::HasSubstr(
                              fmt::format("ran out after {} evaluations: the search stopped there", s.trials.size()))));
}

// A '// tunable' line that no parameter names keeps its value in every
// build, as msKPP keeps it: the tune says so at the line, as it says of a
// %RANGE% parameter the code never reads, with how to tune it.
TEST(Tune, ATunableLineNoParameterNamesIsSaidAtTheLine) {
  const auto dir = fresh_dir();
  write_file(dir / "k.cpp",
             "constexpr int UNROLL = 1; // tunable\n"
             "extern \"C\" void f(const float* x, float* y, int n) {\n"
             "  constexpr int BLOCK = 64;  // tunable\n"
             "  float scale = 2.0f; // tunable: SCALE\n"
             "  for (int i = 0; i < n; ++i) y[i] = scale * x[i] + UNROLL * 0 + BLOCK * 0;\n"
             "}\n");
  write_file(dir / "k.yaml",
             "name: k\nkernel: {source: k.cpp, entry: f, flags: [-O1]}\n"
             "arguments:\n"
             "  - {name: x, type: f32, size: 64}\n"
             "  - {name: y, type: f32, size: 64, role: out}\n"
             "  - {name: n, type: i32, value: 64}\n"
             "parameters: {UNROLL: [1, 2]}\n"
             "measure: {warmup: 0us, min_samples: 2, max_samples: 2, cache: hot, confirm: 0}\n");
  Spec spec = load_spec(dir / "k.yaml");
  TuneOptions opt;
  opt.out_dir = dir / "out";
  const TuneReport r = tune(spec, opt);
  const auto said = [&](const std::string& text) {
    return std::count_if(r.warnings.begin(), r.warnings.end(),
                         [&](const std::string& w) { return w.find(text) != std::string::npos; });
  };
  EXPECT_EQ(said("k.cpp:3:17: 'BLOCK' is marked '// tunable', but no parameter of the spec names it: every config "
                 "keeps its value as written (64); to tune it, give it values under the spec's parameters (BLOCK: "
                 "[...])"),
            1)
      << fmt::format("{}", fmt::join(r.warnings, "\n"));
  EXPECT_EQ(said("k.cpp:4:35: 'SCALE' is marked '// tunable: SCALE', but no parameter of the spec names it: every "
                 "config keeps the line as written (float scale = 2.0f;)"),
            1)
      << fmt::format("{}", fmt::join(r.warnings, "\n"));
  EXPECT_EQ(said("'UNROLL' is marked"), 0);

  // Every line named: nothing said.
  spec.parameters.push_back(Parameter{"BLOCK", {Value(64), Value(128)}});
  spec.parameters.push_back(Parameter{"SCALE", {Value("float scale = 2.0f;")}});
  const TuneReport all = tune(spec, opt);
  EXPECT_EQ(std::count_if(all.warnings.begin(), all.warnings.end(),
                          [](const std::string& w) { return w.find("is marked '// tunable") != std::string::npos; }),
            0)
      << fmt::format("{}", fmt::join(all.warnings, "\n"));
}
