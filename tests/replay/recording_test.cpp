// Reading recorded results: Kernel Tuner caches (original, T4, gzipped or
// not, left open), tunekit stores, and the errors a wrong file gets.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>

#include <fmt/format.h>

#include "support/cli.hpp"
#include "support/temp_dir.hpp"
#include "tunekit/constraint.hpp"
#include "tunekit/recording.hpp"
#include "tunekit/replay.hpp"
#include "tunekit/store.hpp"
#include "tunekit/t1.hpp"

using namespace tunekit;
using tunekit::testing::contains;
using tunekit::testing::fresh_dir;
using tunekit::testing::read_file;
using tunekit::testing::write_file;
namespace fs = std::filesystem;

namespace {

const fs::path kData = fs::path(TUNEKIT_SOURCE_DIR) / "tests" / "replay" / "data";

Space t1_space(const fs::path& t1) {
  SpaceDefinition def = load_t1(t1);
  return Space(def.parameters, def.constraints);
}

// A tiny cache in Kernel Tuner's format: a in {1, 2, 4}, b in {0, 1}; a = 4
// with b = 1 failed at run time.
const char* kTinyCache = R"({
"device_name": "Test GPU",
"kernel_name": "tiny",
"problem_size": [64],
"tune_params_keys": ["a", "b"],
"tune_params": {"a": [1, 2, 4], "b": [0, 1]},
"objective": "time",
"cache": {
"1,0": {"a": 1, "b": 0, "time": 3.0, "compile_time": 100.0, "benchmark_time": 20.0, "verification_time": 0},
"1,1": {"a": 1, "b": 1, "time": 2.5, "compile_time": 100.0, "benchmark_time": 20.0, "verification_time": 0},
"2,0": {"a": 2, "b": 0, "time": 2.0, "compile_time": 100.0, "benchmark_time": 20.0, "verification_time": 0},
"2,1": {"a": 2, "b": 1, "time": 1.5, "compile_time": 100.0, "benchmark_time": 20.0, "verification_time": 0},
"4,0": {"a": 4, "b": 0, "time": 1.25, "compile_time": 100.0, "benchmark_time": 20.0, "verification_time": 0},
"4,1": {"a": 4, "b": 1, "time": "RuntimeFailedConfig", "compile_time": 100.0, "benchmark_time": 0, "verification_time": 0}
}
})";

// A cache tuned for energy efficiency, as Kernel Tuner's power tuning
// records it: the fastest config (a = 4) is not the most efficient (a = 2).
const char* kEnergyCache = R"({
"device_name": "Test GPU",
"kernel_name": "tiny",
"tune_params_keys": ["a", "b"],
"tune_params": {"a": [1, 2, 4], "b": [0, 1]},
"objective": "GFLOPS/W",
"cache": {
"1,0": {"a": 1, "b": 0, "time": 3.0, "GFLOPS/W": 10.0, "energy": 0.9, "compile_time": 100.0},
"1,1": {"a": 1, "b": 1, "time": 2.5, "GFLOPS/W": 12.0, "energy": 0.8, "compile_time": 100.0},
"2,0": {"a": 2, "b": 0, "time": 2.0, "GFLOPS/W": 30.0, "energy": 0.3, "compile_time": 100.0},
"2,1": {"a": 2, "b": 1, "time": 1.5, "GFLOPS/W": 20.0, "energy": 0.5, "compile_time": 100.0},
"4,0": {"a": 4, "b": 0, "time": 1.25, "GFLOPS/W": 15.0, "compile_time": 100.0},
"4,1": {"a": 4, "b": 1, "time": "RuntimeFailedConfig", "GFLOPS/W": "RuntimeFailedConfig", "compile_time": 100.0}
}
})";

// The message of the InputError `f` throws.
template <typename F>
std::string input_error(F f) {
  try {
    f();
  } catch (const InputError& e) {
    return e.what();
  }
  return "(no InputError)";
}

}  // namespace

TEST(Recording, ReadsKernelTunerCache) {
  const fs::path dir = fresh_dir();
  write_file(dir / "tiny.json", kTinyCache);
  const Recording r = load_recording(dir / "tiny.json");
  EXPECT_EQ(r.format(), Recording::Format::kernel_tuner);
  EXPECT_EQ(r.kernel(), "tiny");
  EXPECT_EQ(r.device(), "Test GPU");
  ASSERT_EQ(r.parameters().size(), 2u);
  EXPECT_EQ(r.parameters()[0].name, "a");
  EXPECT_EQ(r.results().size(), 6u);
  EXPECT_EQ(r.ok_count(), 5u);
  const RecordedResult* best = r.find(Config({{"a", 4}, {"b", 0}}));
  ASSERT_NE(best, nullptr);
  ASSERT_TRUE(best->time);
  EXPECT_DOUBLE_EQ(best->time->count(), 1250.0);  // ms in the file, us here
  EXPECT_DOUBLE_EQ(best->compile_time.count(), 0.1);
  EXPECT_DOUBLE_EQ(best->run_time.count(), 0.02);
  const RecordedResult* failed = r.find(Config({{"a", 4}, {"b", 1}}));
  ASSERT_NE(failed, nullptr);
  EXPECT_EQ(failed->status, Status::launch_error);
  EXPECT_EQ(failed->error, "RuntimeFailedConfig");
  EXPECT_FALSE(failed->time);
  EXPECT_EQ(r.find(Config({{"a", 8}, {"b", 0}})), nullptr);
}

// Python's json writes a float nan or inf as NaN or Infinity, which JSON
// lacks: said so, where it is, rather than "truncated?".
// Python's json writes a float nan or inf as NaN or Infinity, and Kernel
// Tuner reads its caches with it: so does tunekit. A time that is not a
// finite number is a failed config; a metric's NaN is a missing value; the
// same words inside a string are text.
TEST(Recording, NaNOrInfinityInACacheIsReadAsPythonReadsIt) {
  const fs::path dir = fresh_dir();
  for (const std::string word : {"NaN", "Infinity", "-Infinity"}) {
    std::string text = kTinyCache;
    text.replace(text.find("\"time\": 3.0"), 11, "\"time\": " + word);
    text.replace(text.find("\"time\": 2.5"), 11, "\"time\": 2.5, \"GB/s\": " + word + ", \"note\": \"NaN\"");
    write_file(dir / "nan.json", text);
    const Recording r = load_recording(dir / "nan.json");
    ASSERT_EQ(r.results().size(), 6u) << word;
    const RecordedResult& failed = r.results()[0];
    EXPECT_EQ(failed.status, Status::launch_error) << word;
    EXPECT_TRUE(failed.error.starts_with("time ")) << failed.error;
    ASSERT_EQ(r.metric_names().back(), "GB/s") << word;
    const double metric = r.results()[1].metrics.back();
    if (word == "NaN") EXPECT_TRUE(std::isnan(metric));
    else EXPECT_EQ(metric, word == "Infinity" ? INFINITY : -INFINITY);
    EXPECT_EQ(r.results()[1].status, Status::ok);
    EXPECT_EQ(r.ok_count(), 4u) << word;
  }
  // A parameter cannot take one.
  std::string text = kTinyCache;
  text.replace(text.find("\"a\": [1, 2, 4]"), 14, "\"a\": [1, NaN, 4]");
  write_file(dir / "param.json", text);
  std::string why = input_error([&] { load_recording(dir / "param.json"); });
  EXPECT_TRUE(contains(why, "a value of tune_params['a'] is nan, not a value a parameter can take")) << why;
  // Where a number is already written as a stand-in, the words are refused
  // where they stand, not misread.
  text = kTinyCache;
  text.replace(text.find("\"time\": 3.0"), 11, "\"time\": NaN");
  text.replace(text.find("\"time\": 2.5"), 11, "\"time\": 0E0");
  write_file(dir / "clash.json", text);
  why = input_error([&] { load_recording(dir / "clash.json"); });
  EXPECT_TRUE(contains(why, "clash.json:9:")) << why;
  EXPECT_TRUE(contains(why, "it holds NaN or Infinity")) << why;
}

TEST(Recording, ReadsACacheLeftOpenAsKernelTunerDoes) {
  // An interrupted Kernel Tuner run leaves "...}," with no closing braces.
  std::string open = kTinyCache;
  open = open.substr(0, open.rfind("}\n}")) + ",\n";
  const fs::path dir = fresh_dir();
  write_file(dir / "open.json", open);
  EXPECT_EQ(load_recording(dir / "open.json").results().size(), 6u);
  // One stopped before its first entry records nothing, which is the error.
  std::string empty = kTinyCache;
  write_file(dir / "empty.json", empty.substr(0, empty.find("\"cache\": {") + 10) + "\n");
  const std::string why = input_error([&] { load_recording(dir / "empty.json"); });
  EXPECT_TRUE(contains(why, "it records no configs (kernel 'tiny' on 'Test GPU')")) << why;
}

TEST(Recording, OriginalAndT4GzippedAgree) {
  const Recording kt = load_recording(kData / "conv_small.json.gz");
  const Recording t4 = load_recording(kData / "conv_small_T4.json.gz");
  EXPECT_EQ(t4.format(), Recording::Format::kernel_tuner_t4);
  ASSERT_EQ(kt.results().size(), t4.results().size());
  EXPECT_EQ(kt.ok_count(), t4.ok_count());
  EXPECT_LT(kt.ok_count(), kt.results().size());  // the fixture holds failures
  std::size_t compared = 0;
  for (const auto& a : kt.results()) {
    const RecordedResult* b = t4.find(kt.config_of(a));
    ASSERT_NE(b, nullptr) << kt.config_of(a).str();
    EXPECT_EQ(a.status, b->status);
    ASSERT_EQ(a.time.has_value(), b->time.has_value());
    if (a.time) EXPECT_DOUBLE_EQ(a.time->count(), b->time->count());
    EXPECT_NEAR(a.cost().count(), b->cost().count(), 1e-9);
    ++compared;
  }
  EXPECT_EQ(compared, kt.results().size());
  // T4 has no value lists: they are the values seen, numbers ascending.
  for (const auto& p : t4.parameters()) EXPECT_TRUE(std::is_sorted(p.values.begin(), p.values.end())) << p.name;
}

TEST(Recording, TableCoversTheT1Space) {
  const Recording r = load_recording(kData / "conv_small.json.gz");
  const Space space = t1_space(kData / "conv_small.T1.json");
  const ReplayTable table(r, space);
  EXPECT_EQ(table.missing(), 0u);
  EXPECT_NO_THROW(table.require_complete());
  ASSERT_TRUE(table.optimum());
  // The optimum is the fastest successful recorded config.
  double fastest = INFINITY;
  for (const auto& x : r.results())
    if (x.time) fastest = std::min(fastest, x.time->count());
  EXPECT_DOUBLE_EQ(table.optimum_time()->count(), fastest);
  for (std::uint64_t i = 0; i < space.size(); i += 97) {
    const RecordedResult* a = table.at(i);
    ASSERT_NE(a, nullptr);
    EXPECT_EQ(a, table.find(space.at(i)));
  }
}

TEST(Recording, MissingConfigIsAnErrorThatNamesIt) {
  const fs::path dir = fresh_dir();
  std::string text = kTinyCache;
  const auto line = text.find("\"2,1\"");
  text.erase(line, text.find('\n', line) + 1 - line);
  write_file(dir / "gap.json", text);
  const Recording r = load_recording(dir / "gap.json");
  const Space space({{"a", {1, 2, 4}, {}}, {"b", {0, 1}, {}}}, {});
  const ReplayTable table(r, space);
  EXPECT_EQ(table.missing(), 1u);
  const std::string msg = input_error([&] { table.require_complete(); });
  EXPECT_TRUE(contains(msg, "gap.json")) << msg;
  EXPECT_TRUE(contains(msg, "{a: 2, b: 1}")) << msg;
  EXPECT_TRUE(contains(msg, "give the kernel's restrictions, e.g. with its T1 file")) << msg;
  // Given a T1 file, the advice is not to give one.
  const std::string t1 = input_error([&] { table.require_complete(ReplayTable::SpaceFrom::t1); });
  EXPECT_TRUE(contains(t1, "or a T1 file of another kernel?")) << t1;
  // A space whose values are the recording's of another type lacks them all.
  const Space strings({{"a", {"1", "2", "4"}, {}}, {"b", {0, 1}, {}}}, {});
  const std::string typed = input_error([&] { ReplayTable(r, strings).require_complete(ReplayTable::SpaceFrom::t1); });
  EXPECT_TRUE(contains(typed, "it records a = 1, not '1'; give the space's values as the recording has them")) << typed;
}

TEST(Recording, BadFilesNameTheFile) {
  const fs::path dir = fresh_dir();
  // Truncated gzip.
  const std::string gz = read_file(kData / "conv_small.json.gz");
  write_file(dir / "cut.json.gz", gz.substr(0, gz.size() / 2));
  std::string msg = input_error([&] { load_recording(dir / "cut.json.gz"); });
  EXPECT_TRUE(contains(msg, "cut.json.gz")) << msg;
  EXPECT_TRUE(contains(msg, "truncated")) << msg;
  // Truncated JSON.
  write_file(dir / "cut.json", std::string(kTinyCache).substr(0, 300));
  msg = input_error([&] { load_recording(dir / "cut.json"); });
  EXPECT_TRUE(contains(msg, "cut.json")) << msg;
  EXPECT_TRUE(contains(msg, "not valid JSON")) << msg;
  // Not JSON at all.
  write_file(dir / "notes.txt", "block_size_x = 32\n");
  msg = input_error([&] { load_recording(dir / "notes.txt"); });
  EXPECT_TRUE(contains(msg, "notes.txt")) << msg;
  // Located as a T1 file's JSON errors are, without the parser's own ids.
  EXPECT_TRUE(contains(msg, (dir / "notes.txt").string() + ":1:1: it is not valid JSON (truncated?): ")) << msg;
  EXPECT_FALSE(contains(msg, "json.exception")) << msg;
  // JSON, but not a recording.
  write_file(dir / "other.json", R"({"parameters": []})");
  msg = input_error([&] { load_recording(dir / "other.json"); });
  EXPECT_TRUE(contains(msg, "neither a Kernel Tuner cache")) << msg;
  // No successful config.
  std::string failed = kTinyCache;
  for (const char* t : {"3.0", "2.5", "2.0", "1.5", "1.25"}) {
    const std::string from = std::string("\"time\": ") + t;
    failed.replace(failed.find(from), from.size(), "\"time\": \"CompilationFailedConfig\"");
  }
  write_file(dir / "failed.json", failed);
  msg = input_error([&] { load_recording(dir / "failed.json"); });
  EXPECT_TRUE(contains(msg, "failed.json")) << msg;
  EXPECT_TRUE(contains(msg, "none of its 6 configs succeeded")) << msg;
  // Missing file.
  msg = input_error([&] { load_recording(dir / "absent.json"); });
  EXPECT_TRUE(contains(msg, "absent.json")) << msg;
}

TEST(Recording, ParametersOfAnotherKernelAreAnError) {
  const fs::path dir = fresh_dir();
  write_file(dir / "tiny.json", kTinyCache);
  const Recording r = load_recording(dir / "tiny.json");
  const Space other({{"BM", {64, 128}, {}}, {"b", {0, 1}, {}}}, {});
  std::string msg = input_error([&] { ReplayTable(r, other); });
  EXPECT_TRUE(contains(msg, "tiny.json")) << msg;
  EXPECT_TRUE(contains(msg, "do not match")) << msg;
  EXPECT_TRUE(contains(msg, "BM")) << msg;
}

TEST(Recording, AnUnrecordedValueIsMissingOnlyWhereAValidConfigNeedsIt) {
  const fs::path dir = fresh_dir();
  write_file(dir / "tiny.json", kTinyCache);
  const Recording r = load_recording(dir / "tiny.json");
  // a = 8 was never recorded: the configs that hold it are missing, named.
  const Space wider({{"a", {1, 2, 4, 8}, {}}, {"b", {0, 1}, {}}}, {});
  const ReplayTable gap(r, wider);
  EXPECT_EQ(gap.missing(), 2u);
  const std::string msg = input_error([&] { gap.require_complete(); });
  EXPECT_TRUE(contains(msg, "tiny.json")) << msg;
  EXPECT_TRUE(contains(msg, "{a: 8, b: 0}")) << msg;
  // A constraint that rules a = 8 out (as a spec's constraints do at some
  // sizes): the recording covers the space.
  const Space ruled_out({{"a", {1, 2, 4, 8}, {}}, {"b", {0, 1}, {}}}, {Expression::parse("a < 8")});
  const ReplayTable whole(r, ruled_out);
  EXPECT_EQ(whole.missing(), 0u);
  EXPECT_NO_THROW(whole.require_complete());
  // The optimum is a = 4, b = 0 (1.25 ms).
  ASSERT_TRUE(whole.optimum());
  EXPECT_EQ(ruled_out.at(*whole.optimum()).str(), "{a: 4, b: 0}");
}

TEST(Recording, ReadsATunekitStorePerSize) {
  const fs::path dir = fresh_dir();
  {
    Store store(dir / "t.db");
    for (int m : {64, 128})
      for (int bm : {8, 16, 32}) {
        TrialRecord t;
        t.spec_hash = "h";
        t.kernel = "gemm";
        t.device = "cpu: test";
        t.size = {{"M", m}};
        t.config = Config({{"BM", bm}});
        t.status = bm == 32 && m == 64 ? Status::compile_error : Status::ok;
        if (t.status == Status::ok) {
          t.samples = {Microseconds(100.0 * m / bm), Microseconds(100.0 * m / bm)};
          t.stats = summarize(t.samples);
        }
        t.build_time = Seconds(0.5);
        // The trial's whole evaluation, where recorded, is its run cost.
        if (bm == 16) t.eval_time = Seconds(0.25);
        t.machine = R"({"device": "cpu: test", "cores": 2})";
        store.put(t);
      }
  }
  const auto all = load_recordings(dir / "t.db");
  ASSERT_EQ(all.size(), 2u);
  const Recording r = load_recording(dir / "t.db", RecordingFilter{"", "", Bindings{{"M", 128}}});
  EXPECT_EQ(r.format(), Recording::Format::tunekit);
  EXPECT_EQ(r.size().at("M").as_int(), 128);
  EXPECT_EQ(r.ok_count(), 3u);
  const RecordedResult* x = r.find(Config({{"BM", 32}}));
  ASSERT_NE(x, nullptr);
  EXPECT_DOUBLE_EQ(x->time->count(), 400.0);
  EXPECT_DOUBLE_EQ(x->compile_time.count(), 0.5);
  EXPECT_DOUBLE_EQ(x->run_time.count(), 800e-6);  // no evaluation time recorded: its samples
  EXPECT_DOUBLE_EQ(r.find(Config({{"BM", 16}}))->run_time.count(), 0.25);
  EXPECT_TRUE(contains(r.machine(), "\"cores\""));
  const Recording small = load_recording(dir / "t.db", RecordingFilter{"", "", Bindings{{"M", 64}}});
  EXPECT_EQ(small.find(Config({{"BM", 32}}))->status, Status::compile_error);
  // Two recordings, no filter: the error lists them.
  const std::string msg = input_error([&] { load_recording(dir / "t.db"); });
  EXPECT_TRUE(contains(msg, "2 recordings")) << msg;
}

TEST(Recording, KeepsTheOtherRecordedNumbersAndWhatItWasTunedFor) {
  const fs::path dir = fresh_dir();
  write_file(dir / "energy.json", kEnergyCache);
  const Recording r = load_recording(dir / "energy.json");
  EXPECT_EQ(r.tuned_for(), std::vector<std::string>{"GFLOPS/W"});
  EXPECT_EQ(r.metric_names(), (std::vector<std::string>{"GFLOPS/W", "energy", "compile_time"}));
  const RecordedResult* efficient = r.find(Config({{"a", 2}, {"b", 0}}));
  ASSERT_NE(efficient, nullptr);
  ASSERT_EQ(efficient->metrics.size(), 3u);
  EXPECT_DOUBLE_EQ(efficient->metrics[0], 30.0);
  EXPECT_DOUBLE_EQ(efficient->metrics[1], 0.3);
  EXPECT_TRUE(std::isnan(r.find(Config({{"a", 4}, {"b", 0}}))->metrics[1]));  // no energy recorded
  // A T4 file's measurements other than the time, and its objective.
  write_file(dir / "t4.json", R"({"schema_version": "1.0.0", "results": [
{"configuration": {"a": 1}, "invalidity": "correct", "objectives": ["energy"],
 "times": {"benchmark": 5.0, "validation": 1.0, "runtimes": [2.0, 2.0]},
 "measurements": [{"name": "time", "value": 2.0, "unit": "ms"}, {"name": "energy", "value": 0.7, "unit": "J"}]},
{"configuration": {"a": 2}, "invalidity": "correct", "objectives": ["energy"],
 "times": {"validation": 1.0, "runtimes": [1.0, 1.0]},
 "measurements": [{"name": "time", "value": 1.0, "unit": "ms"}, {"name": "energy", "value": 0.9, "unit": "J"}]}]})");
  const Recording t4 = load_recording(dir / "t4.json");
  EXPECT_EQ(t4.tuned_for(), std::vector<std::string>{"energy"});
  // The run time: the benchmark time with the validation where the file has
  // it, else the samples with the validation.
  EXPECT_DOUBLE_EQ(t4.find(Config({{"a", 1}}))->run_time.count(), 0.006);
  EXPECT_DOUBLE_EQ(t4.find(Config({{"a", 2}}))->run_time.count(), 0.003);
  EXPECT_EQ(t4.metric_names(), std::vector<std::string>{"energy"});
  EXPECT_DOUBLE_EQ(t4.find(Config({{"a", 1}}))->metrics[0], 0.7);
}

// Kernel Tuner 1.5 writes the cache's objective as a list (of one, unless
// the tune had several objectives); earlier versions wrote a name.
TEST(Recording, WhatItWasTunedForIsReadFromKernelTuner15sList) {
  const fs::path dir = fresh_dir();
  const std::string text = kEnergyCache;
  const auto with_objective = [&](const std::string& objective) {
    std::string t = text;
    t.replace(t.find("\"GFLOPS/W\",\n\"cache\""), 10, objective);
    write_file(dir / "c.json", t);
    return load_recording(dir / "c.json").tuned_for();
  };
  EXPECT_EQ(with_objective(R"(["GFLOP/s"])"), std::vector<std::string>{"GFLOP/s"});
  EXPECT_EQ(with_objective(R"(["GFLOP/s", "energy"])"), (std::vector<std::string>{"GFLOP/s", "energy"}));
  EXPECT_EQ(with_objective(R"("time")"), std::vector<std::string>{"time"});
  EXPECT_EQ(with_objective("[]"), std::vector<std::string>{});
}

TEST(Recording, TheTableRanksByTheObjective) {
  const fs::path dir = fresh_dir();
  write_file(dir / "energy.json", kEnergyCache);
  const Recording r = load_recording(dir / "energy.json");
  const Space space({{"a", {Value(1), Value(2), Value(4)}, {}}, {"b", {Value(0), Value(1)}, {}}}, {});
  const ReplayTable by_time(r, space);
  EXPECT_EQ(space.at(*by_time.optimum()), Config({{"a", 4}, {"b", 0}}));
  EXPECT_DOUBLE_EQ(*by_time.optimum_value(), 1250.0);  // us
  const ReplayTable efficient(r, space, {Objective{"GFLOPS/W", true, {}}, {}, {}});
  EXPECT_EQ(space.at(*efficient.optimum()), Config({{"a", 2}, {"b", 0}}));
  EXPECT_DOUBLE_EQ(*efficient.optimum_value(), 30.0);
  EXPECT_DOUBLE_EQ(efficient.optimum_time()->count(), 2000.0);           // the optimum's time
  EXPECT_FALSE(efficient.value(*r.find(Config({{"a", 4}, {"b", 1}}))));  // failed
  const ReplayTable frugal(r, space, {Objective{"energy", false, {}}, {}, {}});
  EXPECT_EQ(space.at(*frugal.optimum()), Config({{"a", 2}, {"b", 0}}));
  EXPECT_FALSE(frugal.value(*r.find(Config({{"a", 4}, {"b", 0}}))));  // not recorded there
  // To a replay, a config without the objective's value failed, as the
  // config that failed outright did.
  ReplaySettings every;
  every.strategy = "exhaustive";
  const ReplayRun run = replay(frugal, every);
  EXPECT_EQ(run.evaluations, 6u);
  EXPECT_EQ(run.failed, 2u);
  EXPECT_EQ(run.best, Config({{"a", 2}, {"b", 0}}));
  EXPECT_DOUBLE_EQ(run.fraction_of_optimum, 1.0);
  // A spec's metric, computed from the recorded time, the config and the size.
  const ReplayTable rate(r, space,
                         {Objective{"rate", true, {}}, {{"rate", Expression::parse("N * a / time_us")}}, {{"N", 8}}});
  EXPECT_EQ(space.at(*rate.optimum()), Config({{"a", 4}, {"b", 0}}));
  EXPECT_DOUBLE_EQ(*rate.optimum_value(), 8 * 4 / 1250.0);
  // A name that is neither: where it was given, what is known, and a guess.
  try {
    ReplayTable(r, space, {Objective{"GFLOPs/W", true, SourceLocation{"--maximize"}}, {}, {}});
    ADD_FAILURE() << "no InputError";
  } catch (const InputError& e) {
    EXPECT_EQ(e.where().str(), "--maximize");
    const std::string m = e.what();
    EXPECT_TRUE(contains(m, "did you mean 'GFLOPS/W'")) << m;
    EXPECT_TRUE(contains(m, "known: time, GFLOPS/W, energy, compile_time")) << m;
  }
}

TEST(Recording, AT4FileThatNamesItsSizesHoldsOneRecordingEach) {
  // tunekit's t4 writer names each result's problem size (T4 has no field
  // for it): one recording per size, and a filter picks one.
  const fs::path dir = fresh_dir();
  write_file(dir / "sizes.json", R"({"schema_version": "1.0.0", "results": [
{"configuration": {"a": 1}, "invalidity": "correct", "correctness": 1, "times": {}, "problem_size": {"N": 64},
 "measurements": [{"name": "time", "value": 2.0, "unit": "ms"}]},
{"configuration": {"a": 1}, "invalidity": "correct", "correctness": 1, "times": {}, "problem_size": {"N": 128},
 "measurements": [{"name": "time", "value": 7.0, "unit": "ms"}]},
{"configuration": {"a": 2}, "invalidity": "compile", "correctness": 1, "times": {}, "problem_size": {"N": 128},
 "measurements": []}]})");
  const auto all = load_recordings(dir / "sizes.json");
  ASSERT_EQ(all.size(), 2u);
  const Recording big = load_recording(dir / "sizes.json", {"", "", Bindings{{"N", Value(128)}}});
  EXPECT_EQ(big.size(), (Bindings{{"N", Value(128)}}));
  ASSERT_EQ(big.results().size(), 2u);
  EXPECT_DOUBLE_EQ(big.find(Config({{"a", 1}}))->time->count(), 7000.0);
  EXPECT_EQ(big.find(Config({{"a", 2}}))->status, Status::compile_error);
  const std::string m = input_error([&] { load_recording(dir / "sizes.json", {"", "", Bindings{{"N", Value(32)}}}); });
  EXPECT_TRUE(contains(m, "no results at N=32")) << m;
  EXPECT_TRUE(contains(m, "N=64")) << m;
  EXPECT_TRUE(contains(m, "N=128")) << m;
  // Without a filter, picking one is the caller's to ask.
  EXPECT_TRUE(contains(input_error([&] { load_recording(dir / "sizes.json"); }), "holds 2 recordings"));
}

// A T4 file's version and time unit are read, not assumed: an unknown one is
// an error, another unit is converted, and a time that is neither a number
// nor an error name is refused (it became a launch_error).
TEST(Recording, AT4FilesVersionUnitAndTimesAreChecked) {
  const fs::path dir = fresh_dir();
  auto t4 = [&](const std::string& head, const std::string& time) {
    write_file(dir / "t4.json", "{" + head + R"("results": [
{"configuration": {"a": 1}, "invalidity": "correct", "times": {"compilation": 2.0},
 "measurements": [{"name": "time", "value": )" +
                                    time + R"(, "unit": "ms"}]}]})");
    return dir / "t4.json";
  };
  EXPECT_DOUBLE_EQ(
      load_recording(t4(R"("metadata": {"timeunit": "miliseconds"}, )", "2.0")).find(Config({{"a", 1}}))->time->count(),
      2000.0);
  const Recording seconds = load_recording(t4(R"("metadata": {"timeunit": "seconds"}, )", "2.0"));
  EXPECT_DOUBLE_EQ(seconds.find(Config({{"a", 1}}))->time->count(), 2e6);
  EXPECT_DOUBLE_EQ(seconds.find(Config({{"a", 1}}))->compile_time.count(), 2.0);
  EXPECT_TRUE(contains(input_error([&] { load_recording(t4(R"("schema_version": "9.0.0", )", "2.0")); }),
                       "schema_version \"9.0.0\" is not one tunekit reads"));
  EXPECT_TRUE(contains(input_error([&] { load_recording(t4(R"("metadata": {"timeunit": "fortnights"}, )", "2.0")); }),
                       "timeunit \"fortnights\" is not a unit tunekit reads"));
  EXPECT_TRUE(contains(input_error([&] { load_recording(t4("", "\"fast\"")); }),
                       "results[0] has time \"fast\", neither a number nor an error name"));
  write_file(dir / "named.json", R"({"results": [
{"configuration": {"a": 1}, "invalidity": "correct", "measurements": [{"name": "time", "value": "CompilationFailedConfig"}]},
{"configuration": {"a": 2}, "invalidity": "correct", "measurements": [{"name": "time", "value": 1.0}]}]})");
  EXPECT_EQ(load_recording(dir / "named.json").find(Config({{"a", 1}}))->status, Status::compile_error);
  // The times a time budget counts: the first file's compilation alone, the
  // second's none at all; Kernel Tuner's three, or the samples for the
  // benchmark, which a failed config may lack (older Kernel Tuner T4 files
  // write no runtimes for it).
  EXPECT_EQ(seconds.find(Config({{"a", 1}}))->missing_times, "times.validation, times.benchmark");
  EXPECT_EQ(load_recording(dir / "named.json").find(Config({{"a", 2}}))->missing_times, "times");
  write_file(dir / "timed.json", R"({"results": [
{"configuration": {"a": 1}, "invalidity": "correct", "times": {"compilation": 2.0, "validation": 0, "benchmark": 1.0},
 "measurements": [{"name": "time", "value": 1.0}]},
{"configuration": {"a": 2}, "invalidity": "correct", "times": {"compilation_time": 2.0, "validation": 0, "runtimes": [1.0]},
 "measurements": [{"name": "time", "value": 1.0}]},
{"configuration": {"a": 3}, "invalidity": "runtime", "times": {"compilation": 2.0, "validation": 0},
 "measurements": [{"name": "time", "value": "RuntimeFailedConfig"}]}]})");
  for (int a : {1, 2, 3})
    EXPECT_EQ(load_recording(dir / "timed.json").find(Config({{"a", a}}))->missing_times, "") << a;
}

// Every T4 result names the same parameters. A first result that lacks one
// was once read with a value of 0 (and past its end); an extra one in a
// later result was blamed on the result after it.
TEST(Recording, T4ResultsThatNameOtherParametersAreRefusedWhereTheyDiffer) {
  const fs::path dir = fresh_dir();
  auto result = [](const std::string& config, double time) {
    return fmt::format(
        R"({{"configuration": {}, "invalidity": "correct", "measurements": [{{"name": "time", "value": {}}}]}})",
        config, time);
  };
  auto refused = [&](const std::vector<std::string>& results) {
    std::string text = R"({"results": [)";
    for (std::size_t i = 0; i < results.size(); ++i) text += (i ? ",\n" : "") + results[i];
    write_file(dir / "t4.json", text + "]}");
    return input_error([&] { load_recording(dir / "t4.json"); });
  };
  const std::string both = R"({"a": 1, "u": 0})";
  std::string why = refused({result(R"({"a": 2})", 0.1), result(both, 1.0), result(R"({"a": 2, "u": 1})", 2.0)});
  EXPECT_TRUE(contains(why, "results[1].configuration has parameter 'u', which the first result lacks")) << why;
  why = refused({result(both, 1.0), result(R"({"a": 1, "u": 1, "zz": 3})", 1.5), result(R"({"a": 2, "u": 0})", 2.0)});
  EXPECT_TRUE(contains(why, "results[1].configuration has parameter 'zz'")) << why;
  why = refused({result(both, 1.0), result(R"({"a": 2})", 2.0)});
  EXPECT_TRUE(contains(why, "results[1].configuration has no value for parameter 'u'")) << why;
}

TEST(Recording, ATimeOfZeroOrBelowIsAFailedConfigNotTheOptimum) {
  // No kernel runs in no time: such a time is no measurement, and taken as
  // one it would be the optimum (fraction of optimum 0 for every search), as
  // Kernel Tuner 1.5 takes it.
  const fs::path dir = fresh_dir();
  std::string text = kTinyCache;
  text.replace(text.find("\"time\": 2.0"), 11, "\"time\": 0.0");    // a = 2, b = 0
  text.replace(text.find("\"time\": 1.25"), 12, "\"time\": -1.0");  // a = 4, b = 0, the optimum
  write_file(dir / "zero.json", text);
  const Recording r = load_recording(dir / "zero.json");
  for (const Config& c : {Config({{"a", 2}, {"b", 0}}), Config({{"a", 4}, {"b", 0}})}) {
    const RecordedResult* x = r.find(c);
    ASSERT_NE(x, nullptr);
    EXPECT_NE(x->status, Status::ok) << c.str();
    EXPECT_FALSE(x->time) << c.str();
  }
  EXPECT_EQ(r.ok_count(), 3u);
  // Said once, naming the file and the first config's key.
  ASSERT_EQ(r.warnings().size(), 1u);
  const std::string& w = r.warnings()[0];
  EXPECT_TRUE(contains(w, "zero.json: cache entry \"2,0\" has time 0 ms")) << w;
  EXPECT_TRUE(contains(w, "and 1 more")) << w;
  EXPECT_TRUE(contains(w, "count as failed")) << w;
  const Space space({{"a", {1, 2, 4}, {}}, {"b", {0, 1}, {}}}, {});
  const ReplayTable table(r, space);
  EXPECT_EQ(space.at(*table.optimum()), Config({{"a", 2}, {"b", 1}}));  // 1.5 ms
  ReplaySettings every;
  every.strategy = "exhaustive";
  const ReplayRun run = replay(table, every);
  EXPECT_EQ(run.failed, 3u);
  ASSERT_TRUE(run.best_time);
  EXPECT_DOUBLE_EQ(run.best_time->count(), 1500.0);
  EXPECT_DOUBLE_EQ(run.fraction_of_optimum, 1.0);
  // Maximised, by a number recorded beside the time: the config whose time
  // is no measurement is not the optimum either.
  std::string energy = kEnergyCache;
  energy.replace(energy.find("\"time\": 2.0"), 11, "\"time\": 0.0");  // a = 2, b = 0: 30 GFLOPS/W
  write_file(dir / "energy.json", energy);
  const Recording e = load_recording(dir / "energy.json");
  const ReplayTable efficient(e, space, {Objective{"GFLOPS/W", true, {}}, {}, {}});
  EXPECT_EQ(space.at(*efficient.optimum()), Config({{"a", 2}, {"b", 1}}));  // 20 GFLOPS/W
  EXPECT_DOUBLE_EQ(replay(efficient, every).fraction_of_optimum, 1.0);
  // A T4 file's time measurement, likewise.
  write_file(dir / "t4.json", R"({"schema_version": "1.0.0", "results": [
{"configuration": {"a": 1}, "invalidity": "correct", "times": {},
 "measurements": [{"name": "time", "value": 2.0, "unit": "ms"}]},
{"configuration": {"a": 2}, "invalidity": "correct", "times": {},
 "measurements": [{"name": "time", "value": 0, "unit": "ms"}]}]})");
  const Recording t4 = load_recording(dir / "t4.json");
  EXPECT_FALSE(t4.find(Config({{"a", 2}}))->time);
  ASSERT_EQ(t4.warnings().size(), 1u);
  EXPECT_TRUE(contains(t4.warnings()[0], "results[1] has time 0 ms")) << t4.warnings()[0];
  // A NaN time (Python's json writes one) is no measurement either, said
  // alike in both formats; an Infinity marks a failure, as 1e20 does.
  text = kTinyCache;
  text.replace(text.find("\"time\": 2.0"), 11, "\"time\": NaN");
  text.replace(text.find("\"time\": 1.25"), 12, "\"time\": Infinity");
  write_file(dir / "nan.json", text);
  const Recording nan = load_recording(dir / "nan.json");
  EXPECT_EQ(nan.ok_count(), 3u);
  ASSERT_EQ(nan.warnings().size(), 1u);
  EXPECT_TRUE(contains(nan.warnings()[0],
                       "nan.json: cache entry \"2,0\" has time nan ms; a time of 0 or below, or "
                       "NaN, measures nothing, so it counts as failed"))
      << nan.warnings()[0];
  write_file(dir / "t4nan.json", R"({"schema_version": "1.0.0", "results": [
{"configuration": {"a": 1}, "invalidity": "correct", "times": {},
 "measurements": [{"name": "time", "value": 2.0, "unit": "ms"}]},
{"configuration": {"a": 2}, "invalidity": "correct", "times": {},
 "measurements": [{"name": "time", "value": NaN, "unit": "ms"}]}]})");
  const Recording t4nan = load_recording(dir / "t4nan.json");
  EXPECT_FALSE(t4nan.find(Config({{"a", 2}}))->time);
  ASSERT_EQ(t4nan.warnings().size(), 1u);
  EXPECT_TRUE(contains(t4nan.warnings()[0], "results[1] has time nan ms")) << t4nan.warnings()[0];
  // A recording without such a time has nothing to say.
  EXPECT_TRUE(load_recording(kData / "conv_small.json.gz").warnings().empty());
}

TEST(Recording, ATrialCutShortByTheEarlyStopReplaysWithItsMedian) {
  // A `slower` trial ran correctly; its few samples' median is a real time,
  // as the T4 export records it, so a replay of the DB evaluates it with that
  // time as a replay of the export does, not as a failure.
  const fs::path dir = fresh_dir();
  {
    Store store(dir / "t.db");
    for (int bm : {8, 16, 32, 64}) {
      TrialRecord t;
      t.spec_hash = "h";
      t.kernel = "gemm";
      t.device = "cpu: test";
      t.size = {{"M", 64}};
      t.config = Config({{"BM", bm}});
      t.status = bm >= 32 ? Status::slower : Status::ok;
      t.samples = {Microseconds(100.0 * bm), Microseconds(110.0 * bm), Microseconds(120.0 * bm)};
      t.stats = summarize(t.samples);
      if (t.status == Status::slower) t.slower_than = SlowerThan{3.0, Microseconds(800.0)};
      store.put(t);
    }
  }
  const Recording r = load_recording(dir / "t.db");
  EXPECT_EQ(r.ok_count(), 4u);
  const RecordedResult* cut = r.find(Config({{"BM", 64}}));
  ASSERT_NE(cut, nullptr);
  EXPECT_EQ(cut->status, Status::ok);
  ASSERT_TRUE(cut->time);
  EXPECT_DOUBLE_EQ(cut->time->count(), 110.0 * 64);
  const Space space({{"BM", {8, 16, 32, 64}, {}}}, {});
  const ReplayTable table(r, space);
  ReplaySettings every;
  every.strategy = "exhaustive";
  const ReplayRun run = replay(table, every);
  EXPECT_EQ(run.failed, 0u);
  ASSERT_EQ(run.trace.size(), 4u);
  for (const auto& t : run.trace) EXPECT_TRUE(t);
  EXPECT_EQ(run.best, Config({{"BM", 8}}));
}

TEST(Recording, AStoreOnReadOnlyStorageIsRead) {
  // As `report` and `select` read it: a replay writes nothing. As root, the
  // check runs as an unprivileged user, for whom a folder of root's (0555)
  // holding the DB (0444) is read-only storage.
  const fs::path dir = fresh_dir();
  {
    Store store(dir / "t.db");
    TrialRecord t;
    t.spec_hash = "h";
    t.kernel = "k";
    t.device = "cpu: test";
    t.config = Config({{"BM", 8}});
    t.samples = {Microseconds(5.0)};
    t.stats = summarize(t.samples);
    store.put(t);
  }
  char pattern[] = "/tmp/tunekit-replay-ro-XXXXXX";
  ASSERT_NE(::mkdtemp(pattern), nullptr);
  const fs::path ro = pattern;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.path().filename().string().rfind("t.db", 0) == 0) fs::copy_file(e.path(), ro / e.path().filename());
  for (const auto& e : fs::directory_iterator(ro)) fs::permissions(e.path(), fs::perms(0444));
  fs::permissions(ro, fs::perms(0555));
  // The child reports through its exit status: 0 read, 1 an InputError
  // (its message on the pipe), 2 anything else, 100 could not drop root.
  int pipe_fds[2];
  ASSERT_EQ(::pipe(pipe_fds), 0);
  const pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    ::close(pipe_fds[0]);
    if (::geteuid() == 0 && (::setgid(65534) != 0 || ::setuid(65534) != 0)) _exit(100);
    try {
      (void)load_recordings(ro / "t.db");
      _exit(0);
    } catch (const InputError& e) {
      const std::string m = e.what();
      (void)!::write(pipe_fds[1], m.data(), m.size());
      _exit(1);
    } catch (...) {
      _exit(2);
    }
  }
  ::close(pipe_fds[1]);
  std::string message;
  char buffer[512];
  for (ssize_t n; (n = ::read(pipe_fds[0], buffer, sizeof buffer)) > 0;)
    message.append(buffer, static_cast<std::size_t>(n));
  ::close(pipe_fds[0]);
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  fs::permissions(ro, fs::perms(0755));
  fs::remove_all(ro);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0) << message;
}

TEST(Recording, AFilterThatMatchesNothingSaysWhichAndWhatTheStoreHolds) {
  const fs::path dir = fresh_dir();
  {
    Store store(dir / "t.db");
    for (const auto& [kernel, m] :
         std::vector<std::pair<std::string, int>>{{"gemm", 64}, {"gemm", 128}, {"axpy", 128}}) {
      TrialRecord t;
      t.spec_hash = kernel;
      t.kernel = kernel;
      t.device = "cpu: test";
      t.size = {{"M", m}};
      t.config = Config({{"BM", 8}});
      t.samples = {Microseconds(5.0)};
      t.stats = summarize(t.samples);
      store.put(t);
    }
  }
  const fs::path db = dir / "t.db";
  const std::string holds =
      "what it holds: kernel 'gemm' on 'cpu: test' at M=64; kernel 'gemm' on 'cpu: test' at M=128; kernel 'axpy' on "
      "'cpu: test' at M=128";
  std::string m = input_error([&] { load_recordings(db, {"nope", "", std::nullopt}); });
  EXPECT_TRUE(contains(m, "t.db: it holds no trials of kernel 'nope'; " + holds)) << m;
  m = input_error([&] { load_recordings(db, {"", "nope", std::nullopt}); });
  EXPECT_TRUE(contains(m, "it holds no trials on device 'nope'; " + holds)) << m;
  m = input_error([&] { load_recordings(db, {"", "", Bindings{{"N", 5}}}); });
  EXPECT_TRUE(contains(m, "it holds no trials at N=5; " + holds)) << m;
  m = input_error([&] { load_recordings(db, {"nope", "", Bindings{{"N", 5}}}); });
  EXPECT_TRUE(contains(m, "it holds no trials of kernel 'nope' and none at N=5; ")) << m;
  // Each field matches some trials, but not together.
  m = input_error([&] { load_recordings(db, {"axpy", "", Bindings{{"M", 64}}}); });
  EXPECT_TRUE(contains(m, "it holds no trials of kernel 'axpy' at M=64 (each matches some trials, but not together)"))
      << m;
  // A spec picks its own kernel among several at its size.
  const auto both = load_recordings(db, {"", "", Bindings{{"M", 128}}});
  ASSERT_EQ(both.size(), 2u);
  const auto mine = recordings_of_kernel(both, "axpy");
  ASSERT_EQ(mine.size(), 1u);
  EXPECT_EQ(mine[0].kernel(), "axpy");
  m = input_error([&] { recordings_of_kernel(both, "conv"); });
  EXPECT_TRUE(contains(m, "t.db: it records kernels axpy, gemm, none named 'conv' as the spec")) << m;
}

TEST(Recording, AStoreThatLacksConfigsAsksForItsSpec) {
  // A tunekit DB's restrictions are its spec's constraints (no T1 file).
  const fs::path dir = fresh_dir();
  {
    Store store(dir / "t.db");
    for (int bm : {8, 16}) {
      TrialRecord t;
      t.spec_hash = "h";
      t.kernel = "k";
      t.device = "cpu: test";
      t.config = Config({{"BM", bm}, {"U", 1}});
      t.samples = {Microseconds(5.0)};
      t.stats = summarize(t.samples);
      store.put(t);
    }
    TrialRecord t;
    t.spec_hash = "h";
    t.kernel = "k";
    t.device = "cpu: test";
    t.config = Config({{"BM", 8}, {"U", 2}});
    t.samples = {Microseconds(5.0)};
    t.stats = summarize(t.samples);
    store.put(t);
  }
  const Recording r = load_recording(dir / "t.db");
  const ReplayTable table(r, Space(r.parameters(), {}));
  const std::string m = input_error([&] { table.require_complete(); });
  EXPECT_TRUE(contains(m, "{BM: 16, U: 2}")) << m;
  EXPECT_TRUE(contains(m, "--spec")) << m;
  EXPECT_FALSE(contains(m, "T1")) << m;
}

// A config recorded twice (a T4 results list may hold it twice): the last
// entry is replayed, whatever the order, the earlier one is gone (it cannot
// be the optimum), and a warning names the file and the config.
TEST(Recording, AConfigRecordedTwiceIsItsLastEntryWithAWarning) {
  const auto dir = tunekit::testing::fresh_dir();
  auto entry = [](int a, double ms) {
    return fmt::format(R"({{"configuration": {{"a": {}}}, "invalidity": "correct", "objectives": ["time"],
 "times": {{"runtimes": [{}]}}, "measurements": [{{"name": "time", "value": {}, "unit": "ms"}}]}})",
                       a, ms, ms);
  };
  for (const bool fast_first : {true, false}) {
    const std::string fast = entry(1, 0.001), slow = entry(1, 2.0);
    tunekit::testing::write_file(dir / "t4.json", R"({"schema_version": "1.0.0", "results": [)" + entry(2, 1.0) + "," +
                                                      (fast_first ? fast : slow) + "," + (fast_first ? slow : fast) +
                                                      "]}");
    const Recording r = load_recording(dir / "t4.json");
    EXPECT_EQ(r.results().size(), 2u);
    const RecordedResult* a1 = r.find(Config({{"a", 1}}));
    ASSERT_NE(a1, nullptr);
    EXPECT_DOUBLE_EQ(a1->time->count(), fast_first ? 2000.0 : 1.0) << fast_first;
    ASSERT_EQ(r.warnings().size(), 1u);
    EXPECT_EQ(r.warnings()[0], (dir / "t4.json").string() +
                                   ": 1 config is recorded more than once ({a: 1} the first); the last entry of each "
                                   "is replayed");
  }
}

// Two tunes of one kernel at one size (another input seed, say) store a
// config twice, under two spec hashes: the replay takes the first of each,
// and says so (it merged them silently).
TEST(Recording, ADatabaseOfTwoTunesOfOneSizeSaysItReplaysTheFirstOfEach) {
  const fs::path dir = fresh_dir();
  {
    Store store(dir / "t.db");
    for (const char* hash : {"seed-1", "seed-2"})
      for (int bm : {8, 16}) {
        TrialRecord t;
        t.spec_hash = hash;
        t.kernel = "gemm";
        t.device = "cpu: test";
        t.size = {{"M", 64}};
        t.config = Config({{"BM", bm}});
        t.status = Status::ok;
        t.samples = {Microseconds(hash == std::string("seed-1") ? 100.0 : 200.0)};
        t.stats = summarize(t.samples);
        store.put(t);
      }
  }
  const Recording r = load_recording(dir / "t.db");
  EXPECT_DOUBLE_EQ(r.find(Config({{"BM", 8}}))->time->count(), 100.0);
  ASSERT_EQ(r.warnings().size(), 1u);
  EXPECT_TRUE(contains(r.warnings()[0], "2 configs of kernel 'gemm' at M=64 are recorded by more than one tune"))
      << r.warnings()[0];
}

// The parameters are in tune_params' order (a cache without
// tune_params_keys; a T4 file's first configuration), not sorted by name:
// the order is the space's, and a strategy's neighbours depend on it.
TEST(Recording, ParametersKeepTheFilesOrderNotTheAlphabets) {
  const fs::path dir = fresh_dir();
  write_file(dir / "kt.json", R"({"kernel_name": "k", "device_name": "d",
"tune_params": {"zeta": [1, 2], "block_size_x": [64, 32], "alpha": [0]},
"cache": {
"2,32,0": {"alpha": 0, "block_size_x": 32, "zeta": 2, "time": 1.0},
"1,64,0": {"alpha": 0, "zeta": 1, "block_size_x": 64, "time": 2.0}
}})");
  const Recording kt = load_recording(dir / "kt.json");
  ASSERT_EQ(kt.parameters().size(), 3u);
  EXPECT_EQ(kt.parameters()[0].name, "zeta");
  EXPECT_EQ(kt.parameters()[1].name, "block_size_x");
  EXPECT_EQ(kt.parameters()[2].name, "alpha");
  EXPECT_EQ(kt.parameters()[1].values, (std::vector<Value>{64, 32}));  // the declared order too
  EXPECT_EQ(kt.config_of(kt.results()[0]).str(), "{zeta: 2, block_size_x: 32, alpha: 0}");
  // An object of many keys (looked up by another path than a few) keeps
  // its order as well.
  std::string params, values;
  for (int i = 39; i >= 0; --i) {
    params += fmt::format("{}\"p{}\": [{}]", i == 39 ? "" : ", ", i, i);
    values += fmt::format("{}\"p{}\": {}", i == 39 ? "" : ", ", i, i);
  }
  write_file(dir / "many.json",
             "{\"tune_params\": {" + params + "}, \"cache\": {\"x\": {" + values + ", \"time\": 1.0}}}");
  const Recording many = load_recording(dir / "many.json");
  ASSERT_EQ(many.parameters().size(), 40u);
  for (std::size_t p = 0; p < 40; ++p) EXPECT_EQ(many.parameters()[p].name, fmt::format("p{}", 39 - p));
  // T4: the first configuration's order.
  write_file(dir / "t4.json", R"({"schema_version": "1.0.0", "results": [
{"configuration": {"zeta": 1, "alpha": 2}, "invalidity": "correct",
 "measurements": [{"name": "time", "value": 1.0, "unit": "ms"}]}]})");
  const Recording t4 = load_recording(dir / "t4.json");
  ASSERT_EQ(t4.parameters().size(), 2u);
  EXPECT_EQ(t4.parameters()[0].name, "zeta");
  EXPECT_EQ(t4.parameters()[1].name, "alpha");
}

// A large cache (Kernel Tuner's reach tens of thousands of entries) loads
// whole, its entries in the file's order, and a key the file gives twice is
// its last entry in the first one's place, as a JSON object keeps it.
TEST(Recording, ALargeCacheLoadsInTheFilesOrder) {
  constexpr int kZeta = 200, kAlpha = 100;  // 20,000 entries
  std::string cache;
  const auto entry = [](int z, int a, double ms) {
    return fmt::format(R"("{},{}": {{"zeta": {}, "alpha": {}, "time": {}, "times": [{}, {}], "GB/s": {}, )"
                       R"("compile_time": 1.5, "benchmark_time": 2.0, "timestamp": "2023-06-26 13:07:07"}})",
                       z, a, z, a, ms, ms, ms, 1.0 / ms);
  };
  // Written last config first, so the file's order is not the keys' sorted
  // order.
  for (int z = kZeta - 1; z >= 0; --z)
    for (int a = kAlpha - 1; a >= 0; --a) {
      if (!cache.empty()) cache += ",\n";
      cache += entry(z, a, 1.0 + z + a / 1000.0);
    }
  cache += ",\n" + entry(kZeta - 1, kAlpha - 1, 0.5);  // the first key again
  std::string zeta, alpha;
  for (int z = 0; z < kZeta; ++z) zeta += (z ? ", " : "") + std::to_string(z);
  for (int a = 0; a < kAlpha; ++a) alpha += (a ? ", " : "") + std::to_string(a);
  const fs::path dir = fresh_dir();
  write_file(dir / "large.json", R"({"device_name": "Test GPU", "kernel_name": "large", "problem_size": [4096],
"tune_params_keys": ["zeta", "alpha"], "tune_params": {"zeta": [)" +
                                     zeta + "], \"alpha\": [" + alpha + R"(]}, "objective": "time", "cache": {
)" + cache + "\n}}");
  const Recording r = load_recording(dir / "large.json");
  ASSERT_EQ(r.results().size(), std::size_t{kZeta * kAlpha});
  EXPECT_EQ(r.ok_count(), r.results().size());
  EXPECT_TRUE(r.warnings().empty()) << r.warnings().front();
  ASSERT_EQ(r.parameters().size(), 2u);
  EXPECT_EQ(r.parameters()[0].name, "zeta");
  EXPECT_EQ(r.parameters()[1].name, "alpha");
  EXPECT_EQ(r.metric_names(), (std::vector<std::string>{"GB/s", "compile_time", "benchmark_time"}));
  EXPECT_EQ(r.config_of(r.results()[0]).str(), fmt::format("{{zeta: {}, alpha: {}}}", kZeta - 1, kAlpha - 1));
  EXPECT_DOUBLE_EQ(r.results()[0].time->count(), 500.0);  // the repeated key's last entry
  EXPECT_EQ(r.config_of(r.results()[1]).str(), fmt::format("{{zeta: {}, alpha: {}}}", kZeta - 1, kAlpha - 2));
  EXPECT_EQ(r.config_of(r.results().back()).str(), "{zeta: 0, alpha: 0}");
  const RecordedResult* some = r.find(Config({{"zeta", 123}, {"alpha", 45}}));
  ASSERT_NE(some, nullptr);
  EXPECT_DOUBLE_EQ(some->time->count(), (1.0 + 123 + 0.045) * 1e3);
  const ReplayTable table(r, Space(r.parameters(), {}));
  EXPECT_EQ(table.missing(), 0u);
  EXPECT_DOUBLE_EQ(table.optimum_time()->count(), 500.0);
}
