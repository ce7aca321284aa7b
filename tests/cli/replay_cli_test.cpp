// `tunekit replay` and `tunekit tune --replay` as a user (or a benchmark
// script) meets them: the JSON, bad input, and the tuner's loop on recorded
// results (seeds, transfer across sizes, the simulated clock).
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>

#include <nlohmann/json.hpp>

#include "core/detail/process.hpp"
#include "support/cli.hpp"
#include "support/temp_dir.hpp"
#include "tunekit/store.hpp"

using namespace tunekit;
using tunekit::testing::contains;
using tunekit::testing::tunekit_cli;
using namespace std::chrono_literals;
using tunekit::testing::fresh_dir;
using tunekit::testing::read_file;
using tunekit::testing::tunekit_exe;
using tunekit::testing::write_file;
namespace fs = std::filesystem;

namespace {

const fs::path kData = fs::path(TUNEKIT_SOURCE_DIR) / "tests" / "replay" / "data";
const std::string kCache = (kData / "conv_small.json.gz").string();
const std::string kT1 = (kData / "conv_small.T1.json").string();
const std::string kSpec = (kData / "conv_small.yaml").string();

// The last line that parses as a JSON object.
nlohmann::json last_json(const std::string& output) {
  std::istringstream in(output);
  nlohmann::json j;
  for (std::string line; std::getline(in, line);)
    if (!line.empty() && line[0] == '{') j = nlohmann::json::parse(line, nullptr, false);
  return j;
}

// A store of exhaustive tunes at three sizes (dir/recorded.db) and their
// spec (dir/k.yaml): the fastest BM is M / 8 (at least 8), the others slower
// the farther they are from it. A constraint reads the recorded machine.
// `lacking`: a config left out of the recording at M = 512.
void write_three_size_recording(const fs::path& dir, const std::optional<Config>& lacking = std::nullopt) {
  write_file(dir / "k.cpp", "extern \"C\" void k(float* y, int m) { (void)y; (void)m; }\n");
  write_file(dir / "k.yaml", R"(name: k
kernel: {source: k.cpp, entry: k}
arguments:
  - {name: y, type: f32, size: M, role: out}
  - {name: m, type: i32, value: M}
sizes: [{M: 64}, {M: 512}, {M: 256}]
parameters:
  BM: [8, 16, 32, 64, 128]
  UNROLL: [1, 2, 4, 8]
constraints:
  - BM * UNROLL * 64 <= l1d_bytes
default: {BM: 8, UNROLL: 1}
search: {transfer: 2}
)");
  Store store(dir / "recorded.db");
  for (int m : {64, 512, 256})
    for (int bm : {8, 16, 32, 64, 128})
      for (int u : {1, 2, 4, 8}) {
        TrialRecord t;
        t.spec_hash = "recorded";
        t.kernel = "k";
        t.device = "cpu: recorded";
        t.machine = R"({"device": "cpu: recorded", "l1d_bytes": 32768})";
        t.size = {{"M", m}};
        t.config = Config({{"BM", bm}, {"UNROLL", u}});
        if (m == 512 && lacking && t.config == *lacking) continue;
        const double best_bm = std::max(8, m / 8);
        const double x = std::abs(std::log2(bm / best_bm)) + std::abs(std::log2(u / 4.0)) * 0.5;
        t.samples = {Microseconds(100.0 * (1.0 + x))};
        t.stats = summarize(t.samples);
        store.put(t);
      }
}

// `tunekit ARGS...`'s stdout alone, its stderr dropped: what a script that
// reads --json gets.
std::string stdout_of(std::vector<std::string> args) {
  args.insert(args.begin(), {"bash", "-c", "exec \"$@\" 2>/dev/null", "bash", tunekit_exe().string()});
  return detail::run_process(args, 300s).output;
}

// A tiny Kernel Tuner cache: a in {1, 2, 4}, b in {0, 1}, every config ok;
// (a, b) = (4, 0) is the fastest, at `fastest` ms.
std::string tiny_cache(const std::string& fastest) {
  return R"({"kernel_name": "tiny", "device_name": "Test GPU", "tune_params_keys": ["a", "b"],
"tune_params": {"a": [1, 2, 4], "b": [0, 1]}, "cache": {
"1,0": {"a": 1, "b": 0, "time": 3.0}, "1,1": {"a": 1, "b": 1, "time": 2.5},
"2,0": {"a": 2, "b": 0, "time": 2.0}, "2,1": {"a": 2, "b": 1, "time": 1.5},
"4,0": {"a": 4, "b": 0, "time": )" +
         fastest + R"(}, "4,1": {"a": 4, "b": 1, "time": 1.75}}})";
}

// A T1 file of the tiny cache's parameters with these restrictions.
std::string tiny_t1(const std::vector<std::string>& conditions) {
  std::string list;
  for (const auto& c : conditions)
    list += std::string(list.empty() ? "" : ", ") + R"({"Expression": ")" + c + R"(", "Parameters": []})";
  return R"({"General": {"BenchmarkName": "tiny"}, "ConfigurationSpace": {"TuningParameters": [
{"Name": "a", "Type": "int", "Values": "[1, 2, 4]"}, {"Name": "b", "Type": "int", "Values": "[0, 1]"}],
"Conditions": [)" +
         list + "]}}";
}

// A store with kernel 'k' (BM in {8, 16, 32}, U in {1, 2}, every config
// with BM * U <= 32) and kernel 'other', both at M = 64 on one device, and
// k's spec (dir/k.yaml).
void write_two_kernel_recording(const fs::path& dir) {
  write_file(dir / "k.cpp", "extern \"C\" void k(float* y, int m) { (void)y; (void)m; }\n");
  write_file(dir / "k.yaml", R"(name: k
kernel: {source: k.cpp, entry: k}
arguments:
  - {name: y, type: f32, size: M, role: out}
  - {name: m, type: i32, value: M}
sizes: [{M: 64}]
parameters:
  BM: [8, 16, 32]
  U: [1, 2]
constraints:
  - BM * U <= 32
default: {BM: 8, U: 1}
)");
  Store store(dir / "recorded.db");
  for (const std::string kernel : {"k", "other"})
    for (int bm : {8, 16, 32})
      for (int u : {1, 2}) {
        if (bm * u > 32) continue;
        TrialRecord t;
        t.spec_hash = kernel;
        t.kernel = kernel;
        t.device = "cpu: recorded";
        t.size = {{"M", 64}};
        t.config = Config({{"BM", bm}, {"U", u}});
        t.samples = {Microseconds(10.0 * bm / u)};
        t.stats = summarize(t.samples);
        store.put(t);
      }
}

}  // namespace

TEST(ReplayCli, JsonHasWhatScriptsRead) {
  auto r = tunekit_cli({"replay", kCache, "--t1", kT1, "--max-fraction", "0.02", "--seed", "4", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const auto j = last_json(r.output);
  ASSERT_TRUE(j.is_object()) << r.output;
  for (const char* key :
       {"strategy", "evaluations", "best_time", "optimum_time", "fraction_of_optimum", "strategy_cpu_seconds", "trace"})
    EXPECT_TRUE(j.contains(key)) << key;
  EXPECT_EQ(j["strategy"], "auto: surrogate+genetic+bayes");
  EXPECT_EQ(j["evaluations"], 26);  // ceil(0.02 * 1264)
  EXPECT_EQ(j["trace"].size(), 26u);
  // Each time's config beside it: the fastest in the trace is the best config.
  ASSERT_EQ(j["trace_configs"].size(), 26u);
  std::size_t fastest = 0;
  for (std::size_t i = 0; i < 26; ++i)
    if (!j["trace"][i].is_null() &&
        (j["trace"][fastest].is_null() || j["trace"][i].get<double>() < j["trace"][fastest].get<double>()))
      fastest = i;
  EXPECT_EQ(j["trace_configs"][fastest], j["best_config"]);
  EXPECT_NEAR(j["fraction_of_optimum"].get<double>(), j["optimum_time"].get<double>() / j["best_time"].get<double>(),
              1e-12);
  // The same seed replays the same trace.
  auto again = tunekit_cli({"replay", kCache, "--t1", kT1, "--max-fraction", "0.02", "--seed", "4", "--json"});
  EXPECT_EQ(last_json(again.output)["trace"], j["trace"]);
  EXPECT_EQ(last_json(again.output)["trace_configs"], j["trace_configs"]);
  // Exhaustive, the whole space: the optimum itself; failures are null.
  auto all = tunekit_cli({"replay", kCache, "--spec", kSpec, "--strategy", "exhaustive", "--json"});
  ASSERT_EQ(all.exit_code, 0) << all.output;
  const auto a = last_json(all.output);
  EXPECT_DOUBLE_EQ(a["fraction_of_optimum"].get<double>(), 1.0);
  std::size_t nulls = 0;
  for (const auto& t : a["trace"]) nulls += t.is_null() ? 1 : 0;
  EXPECT_EQ(nulls, a["failed"].get<std::size_t>());
  EXPECT_GT(nulls, 0u);
}

// A Kernel Tuner user's strategy name runs tunekit's strategy of the same
// algorithm, and the JSON names tunekit's.
TEST(ReplayCli, KernelTunersStrategyNamesWork) {
  auto theirs = tunekit_cli(
      {"replay", kCache, "--t1", kT1, "--strategy", "genetic_algorithm", "--max-evals", "20", "--seed", "3", "--json"});
  ASSERT_EQ(theirs.exit_code, 0) << theirs.output;
  auto ours = tunekit_cli(
      {"replay", kCache, "--t1", kT1, "--strategy", "genetic", "--max-evals", "20", "--seed", "3", "--json"});
  ASSERT_EQ(ours.exit_code, 0) << ours.output;
  EXPECT_EQ(last_json(theirs.output)["strategy"], "genetic");
  EXPECT_EQ(last_json(theirs.output)["trace_configs"], last_json(ours.output)["trace_configs"]);
}

// `tunekit replay --t1` takes the file's Search (the strategy and its
// options, Kernel Tuner's names read as a tune reads them) and Budget where
// no flag gives them, as Kernel Tuner's tune_kernel_T1 does; the flags win,
// and the file's options go with its strategy.
TEST(ReplayCli, AT1FilesSearchAndBudgetAreTheReplaysUnlessAFlagSaysOtherwise) {
  const fs::path dir = fresh_dir();
  const std::string space = read_file(kT1);
  const auto t1 = [&](const std::string& name, const std::string& extra) {
    std::string text = space;
    text.insert(text.rfind('}'), ", " + extra);
    write_file(dir / name, text);
    return (dir / name).string();
  };
  const std::string genetic = t1(
      "genetic.T1.json",
      R"("Search": {"Name": "genetic_algorithm", "Attributes": [{"Name": "popsize", "Value": 6}, {"Name": "maxiter", "Value": 3}]},
"Budget": [{"Type": "ConfigurationCount", "BudgetValue": 30}])");
  auto r = tunekit_cli({"replay", kCache, "--t1", genetic, "--seed", "2", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const auto from_file = last_json(r.output);
  EXPECT_EQ(from_file["strategy"], "genetic");
  EXPECT_EQ(from_file["evaluations"], 30);
  EXPECT_TRUE(contains(r.output, "Kernel Tuner's option 'maxiter' is left out")) << r.output;
  const auto flags = last_json(tunekit_cli({"replay", kCache, "--t1", kT1, "--strategy", "genetic", "--option",
                                            "population=6", "--max-evals", "30", "--seed", "2", "--json"})
                                   .output);
  EXPECT_EQ(from_file["trace_configs"], flags["trace_configs"]);
  // The flags win; another strategy leaves the file's options out.
  r = tunekit_cli({"replay", kCache, "--t1", genetic, "--strategy", "random", "--max-evals", "5", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(last_json(r.output)["strategy"], "random");
  EXPECT_EQ(last_json(r.output)["evaluations"], 5);
  EXPECT_FALSE(contains(r.output, "maxiter")) << r.output;
  r = tunekit_cli({"replay", kCache, "--t1", genetic, "--max-fraction", "0.01", "--json"});
  EXPECT_EQ(last_json(r.output)["strategy"], "genetic");
  EXPECT_EQ(last_json(r.output)["evaluations"], 13);  // ceil(0.01 * 1264)
  // A Budget beyond the space is the file's error, where it gives it.
  const std::string large = t1("large.T1.json", R"("Budget": [{"Type": "ConfigurationCount", "BudgetValue": 5000}])");
  r = tunekit_cli({"replay", kCache, "--t1", large});
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_TRUE(contains(r.output, large + ":")) << r.output;
  EXPECT_TRUE(contains(r.output, "a budget of 5000 evaluations: expected 1 to 1264")) << r.output;
  // Kernel Tuner refuses a cache of another kernel than the file's
  // KernelName; here that is a warning.
  const std::string other = t1(
      "other.T1.json",
      R"("KernelSpecification": {"KernelName": "other_kernel"}, "Budget": [{"Type": "ConfigurationCount", "BudgetValue": 3}])");
  r = tunekit_cli({"replay", kCache, "--t1", other});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "warning: " + other + ":")) << r.output;
  EXPECT_TRUE(contains(r.output, "KernelName is 'other_kernel', but " + kCache +
                                     " records kernel 'convolution_kernel' (its kernel_name)"))
      << r.output;
  EXPECT_FALSE(contains(tunekit_cli({"replay", kCache, "--t1", genetic}).output, "KernelName"));

  // A Search without a Budget stops where Kernel Tuner's strategy stops by
  // itself (greedy_ils: 100 evaluations): a smaller space caps it, as the
  // space running out stops Kernel Tuner, and another strategy named by a
  // flag drops it with the file's strategy.
  const std::string ils = t1("ils.T1.json", R"("Search": {"Name": "greedy_ils"})");
  EXPECT_EQ(last_json(tunekit_cli({"replay", kCache, "--t1", ils, "--json"}).output)["evaluations"], 100);
  r = tunekit_cli({"replay", kCache, "--t1", ils, "--strategy", "random", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(last_json(r.output)["evaluations"], 1264);
  auto narrow = nlohmann::json::parse(read_file(ils));
  narrow["ConfigurationSpace"]["Conditions"].push_back(
      {{"Expression", "block_size_x==16 and block_size_y==1"}, {"Parameters", {"block_size_x", "block_size_y"}}});
  write_file(dir / "small_ils.T1.json", narrow.dump());
  r = tunekit_cli({"replay", kCache, "--t1", (dir / "small_ils.T1.json").string(), "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(last_json(r.output)["evaluations"], last_json(r.output)["space_size"]);
  EXPECT_LT(last_json(r.output)["space_size"].get<int>(), 100);
}

TEST(ReplayCli, BadInputNamesTheFileOrTheFlag) {
  const fs::path dir = fresh_dir();
  const std::string gz = read_file(kCache);
  write_file(dir / "cut.json.gz", gz.substr(0, gz.size() / 3));
  write_file(dir / "notes.json", "not json at all\n");
  struct Case {
    std::vector<std::string> args;
    std::vector<std::string> expect;
  };
  const std::string matmul = (fs::path(TUNEKIT_SOURCE_DIR) / "examples" / "matmul" / "matmul.yaml").string();
  const std::vector<Case> cases{
      {{"replay", (dir / "cut.json.gz").string(), "--t1", kT1}, {"cut.json.gz", "truncated"}},
      {{"replay", (dir / "notes.json").string(), "--t1", kT1}, {"notes.json", "not valid JSON"}},
      // A cache of another kernel: its parameters are not the spec's.
      {{"replay", kCache, "--spec", matmul}, {"conv_small.json.gz", "do not match", "MR"}},
      {{"replay", kCache, "--t1", kT1, "--max-evals", "0"}, {"--max-evals", "expected 1 to 1264"}},
      {{"replay", kCache, "--t1", kT1, "--max-evals", "5000"}, {"--max-evals", "expected 1 to 1264"}},
      {{"replay", kCache, "--t1", kT1, "--max-fraction", "1.5"}, {"--max-fraction", "(0, 1]"}},
      {{"replay", kCache, "--t1", kT1, "--strategy", "genetik"}, {"did you mean 'genetic'", "surrogate"}},
      {{"replay", kCache, "--t1", kT1, "--strategy", "bayes_optt"},
       {"did you mean 'bayes_opt'", "also:", "bayes_opt (bayes)"}},
      {{"replay", kCache, "--t1", kT1, "--strategy", "genetic", "--option", "popsize=4"}, {"'popsize'", "population"}},
      {{"replay", kCache, "--t1", kT1, "--strategy", "genetic_algorithm", "--option", "max_fevals=40"},
       {"--option max_fevals=40", "--max-evals on the command line"}},
      // Kernel Tuner's restart (first or best improvement) is not local's.
      {{"replay", kCache, "--t1", kT1, "--strategy", "greedy_ils", "--option", "restart=false"},
       {"--option restart=false", "option 'restart' of strategy 'greedy_ils' is Kernel Tuner's",
        "name the strategy 'local' to set it"}},
      // Not wrapped to 2^64 - 1, not a run of no evaluations.
      {{"replay", kCache, "--t1", kT1, "--seed", "-1"}, {"--seed", "expected a whole number >= 0"}},
      {{"replay", kCache, "--t1", kT1, "--batch", "0"}, {"--batch", "expected a whole number >= 1"}},
      {{"replay", kCache, "--t1", kT1, "--max-time", "0"}, {"--max-time", "not a positive duration"}},
      {{"replay", kCache, "--t1", kT1, "--max-time", "-5s"}, {"--max-time", "negative"}},
      // The objective: a recorded number, a spec's metric, or the time.
      {{"replay", kCache, "--t1", kT1, "--maximize", "compile_tme"},
       {"--maximize", "did you mean 'compile_time'", "known: time, compile_time"}},
      {{"replay", kCache, "--t1", kT1, "--maximize", "time"}, {"--maximize", "time can only be minimised"}},
      {{"replay", kCache, "--t1", kT1, "--maximize", "compile_time", "--minimize", "benchmark_time"},
       {"--minimize excludes --maximize"}},
      // Options each within its bounds, but not together (or not in between).
      {{"replay", kCache, "--t1", kT1, "--strategy", "annealing", "--option", "t_start=0.001", "--option", "t_end=1"},
       {"--option t_end=1: option 't_end' of strategy 'annealing': 1 is above t_start (0.001)"}},
      {{"replay", kCache, "--t1", kT1, "--strategy", "surrogate", "--option", "cap=0.5"},
       {"--option cap=0.5: option 'cap' of strategy 'surrogate': 0.5 is below 1"}},
      // Flags that nothing would read: refused, not ignored.
      {{"replay", kCache, "--t1", kT1, "-s", "N=64"}, {"--size N=64", "records one problem size, unnamed"}},
      {{"replay", kCache, "--t1", kT1, "--properties",
        (fs::path(TUNEKIT_SOURCE_DIR) / "tests/cli/data/h200.json").string()},
       {"--properties", "with --t1 nothing reads them"}},
  };
  for (const auto& c : cases) {
    auto r = tunekit_cli(c.args);
    EXPECT_EQ(r.exit_code, 1) << c.args[1] << "\n" << r.output;
    for (const auto& e : c.expect) EXPECT_TRUE(contains(r.output, e)) << e << "\n" << r.output;
  }
}

TEST(ReplayCli, RanksByAnotherObjective) {
  const fs::path dir = fresh_dir();
  // A Kernel Tuner cache tuned for energy efficiency: the fastest config
  // (a = 4) is not the most efficient (a = 2).
  write_file(dir / "energy.json", R"({"kernel_name": "tiny", "device_name": "Test GPU",
"tune_params_keys": ["a"], "tune_params": {"a": [1, 2, 4]}, "objective": "GFLOPS/W", "cache": {
"1": {"a": 1, "time": 3.0, "GFLOPS/W": 10.0, "compile_time": 100.0},
"2": {"a": 2, "time": 2.0, "GFLOPS/W": 30.0, "compile_time": 100.0},
"4": {"a": 4, "time": 1.0, "GFLOPS/W": 15.0, "compile_time": 100.0}}})");
  const std::string cache = (dir / "energy.json").string();
  // By time, with a note that the file says what it was tuned for.
  auto by_time = tunekit_cli({"replay", cache, "--strategy", "exhaustive"});
  ASSERT_EQ(by_time.exit_code, 0) << by_time.output;
  EXPECT_TRUE(contains(by_time.output, "was tuned for 'GFLOPS/W'; this replay ranks configs by time"))
      << by_time.output;
  EXPECT_TRUE(contains(by_time.output, "best:      1 ms {a: 4}")) << by_time.output;
  auto efficient = tunekit_cli({"replay", cache, "--maximize", "GFLOPS/W", "--max-evals", "2", "--json"});
  ASSERT_EQ(efficient.exit_code, 0) << efficient.output;
  EXPECT_FALSE(contains(efficient.output, "note:")) << efficient.output;
  const auto j = last_json(efficient.output);
  EXPECT_EQ(j["objective"], "GFLOPS/W (higher is better)");
  EXPECT_EQ(j["optimum_value"], 30.0);
  EXPECT_EQ(j["optimum_time"], 2.0);
  ASSERT_EQ(j["objective_trace"].size(), 2u);
  double best = 0;
  for (const auto& v : j["objective_trace"]) best = std::max(best, v.get<double>());
  EXPECT_EQ(j["best_value"], best);
  EXPECT_DOUBLE_EQ(j["fraction_of_optimum"].get<double>(), best / 30.0);
  // A config without the objective's value is a failed evaluation: null in
  // both traces, though the cache has its time.
  write_file(
      dir / "gap.json",
      read_file(dir / "energy.json").replace(read_file(dir / "energy.json").find(", \"GFLOPS/W\": 15.0"), 18, ""));
  const auto gap = last_json(tunekit_cli({"replay", (dir / "gap.json").string(), "--maximize", "GFLOPS/W", "--strategy",
                                          "exhaustive", "--json"})
                                 .output);
  EXPECT_EQ(gap["failed"], 1);
  ASSERT_EQ(gap["trace"].size(), 3u);
  for (std::size_t i = 0; i < 3; ++i) EXPECT_EQ(gap["trace"][i].is_null(), gap["objective_trace"][i].is_null()) << i;
  // A spec's objective is the replay's, unless a flag says otherwise.
  fs::copy_file(kData / "conv_small.cpp", dir / "conv_small.cpp");
  write_file(dir / "rate.yaml",
             read_file(kSpec) + "metrics: {gpoints: \"4096 * 4096 / time_s / 1e9\"}\nobjective: {maximize: gpoints}\n");
  auto spec = tunekit_cli({"replay", kCache, "--spec", (dir / "rate.yaml").string(), "--max-evals", "20", "--json"});
  ASSERT_EQ(spec.exit_code, 0) << spec.output;
  EXPECT_EQ(last_json(spec.output)["objective"], "gpoints (higher is better)");
  auto flag = tunekit_cli(
      {"replay", kCache, "--spec", (dir / "rate.yaml").string(), "--max-evals", "20", "--json", "--minimize", "time"});
  ASSERT_EQ(flag.exit_code, 0) << flag.output;
  EXPECT_FALSE(last_json(flag.output).contains("objective")) << flag.output;
  EXPECT_EQ(last_json(flag.output)["trace_configs"], last_json(spec.output)["trace_configs"]);
}

// Kernel Tuner 1.5 writes the objective into a cache's header as a list:
// a list of one gets the note a name gets, a longer one (a tune of several
// objectives) says the replay ranks by one of them.
TEST(ReplayCli, SaysWhatAKernelTuner15CacheWasTunedFor) {
  const fs::path dir = fresh_dir();
  const auto note_for = [&](const std::string& objective) {
    write_file(dir / "c.json", R"({"kernel_name": "tiny", "device_name": "Test GPU",
"tune_params_keys": ["a"], "tune_params": {"a": [1, 2]}, "objective": )" +
                                   objective + R"(, "cache": {
"1": {"a": 1, "time": 2.0, "GFLOP/s": 10.0, "energy": 3.0}, "2": {"a": 2, "time": 1.0, "GFLOP/s": 20.0, "energy": 4.0}}})");
    auto r = tunekit_cli({"replay", (dir / "c.json").string(), "--max-evals", "1"});
    EXPECT_EQ(r.exit_code, 0) << r.output;
    return r.output;
  };
  const std::string cache = (dir / "c.json").string();
  std::string out = note_for(R"(["GFLOP/s"])");
  EXPECT_TRUE(contains(out, "note: " + cache +
                                " was tuned for 'GFLOP/s'; this replay ranks configs by time (--maximize or "
                                "--minimize 'GFLOP/s' ranks them by it)"))
      << out;
  out = note_for(R"(["GFLOP/s", "energy"])");
  EXPECT_TRUE(contains(out, "note: " + cache +
                                " was tuned for 2 objectives at once ('GFLOP/s', 'energy'); this replay ranks "
                                "configs by one, the time"))
      << out;
  EXPECT_FALSE(contains(note_for(R"(["time"])"), "note:"));
}

// A replayed tune stops measuring losers early as a live one does: a
// recorded time past the bar is a trial cut short, never named best, and a
// run with the early stop off has none.
TEST(TuneReplay, TheEarlyStopCutsRecordedLosersAsItCutsLiveOnes) {
  const fs::path dir = fresh_dir();
  auto count_slower = [&](const std::vector<std::string>& extra, const std::string& name) {
    std::vector<std::string> args{"tune", kSpec, "--replay", kCache, "--max-evals", "20", "-o", (dir / name).string(),
                                  "--no-progress", "--output", "json", "--json", (dir / (name + ".json")).string()};
    args.insert(args.end(), extra.begin(), extra.end());
    auto r = tunekit_cli(args);
    EXPECT_EQ(r.exit_code, 0) << r.output;
    const auto j = nlohmann::json::parse(read_file(dir / (name + ".json")));
    std::size_t slower = 0;
    double best = 1e300, fastest_slower = 1e300;
    for (const auto& t : j["sizes"][0]["trials"]) {
      if (t["status"] == "slower") {
        ++slower;
        fastest_slower = std::min(fastest_slower, t["min_us"].get<double>());  // a cut trial has no median
      } else if (t["status"] == "ok") {
        best = std::min(best, t["time_us"].get<double>());
      }
    }
    EXPECT_LT(best, fastest_slower);
    return slower;
  };
  EXPECT_GT(count_slower({}, "on"), 0u);
  EXPECT_EQ(count_slower({"--early-stop", "off"}, "off"), 0u);
}

TEST(TuneReplay, RunsTheTunersLoopOnARecording) {
  const fs::path dir = fresh_dir();
  auto r = tunekit_cli({"tune", kSpec, "--replay", kCache, "--max-evals", "20", "-o", dir.string(), "--no-progress",
                        "--output", "json", "--json", (dir / "out.json").string()});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  // A replay builds nothing: the stand-in source, which names none of the
  // parameters, is not warned about.
  EXPECT_FALSE(contains(r.output, "appears nowhere")) << r.output;
  const auto j = nlohmann::json::parse(read_file(dir / "out.json"));
  EXPECT_TRUE(j["device"].get<std::string>().starts_with("replay: NVIDIA A100-PCIE-40GB (recording ")) << j["device"];
  ASSERT_EQ(j["sizes"].size(), 1u);
  const auto& trials = j["sizes"][0]["trials"];
  ASSERT_EQ(trials.size(), 20u);
  EXPECT_EQ(trials[0]["origin"], "default");  // the spec's default config, first
  // Trials carry the recorded times (us here, ms in the cache).
  EXPECT_NEAR(trials[0]["time_us"].get<double>(), 3875.3279224038124, 1e-6);
  // The budget in recorded time: the tune stops at the first trial past
  // 10 s of recorded compile and run time, well before 20 configs, and not
  // at the end of that trial's batch.
  for (const char* seed : {"1", "2", "3", "4", "5"}) {
    const fs::path json = dir / (std::string("t") + seed + ".json");
    auto t =
        tunekit_cli({"tune", kSpec, "--replay", kCache, "--max-time", "10s", "--seed", seed, "-o", (dir / "t").string(),
                     "--fresh", "--no-progress", "--output", "json", "--json", json.string()});
    ASSERT_EQ(t.exit_code, 0) << t.output;
    const auto trials = nlohmann::json::parse(read_file(json))["sizes"][0]["trials"];
    ASSERT_GE(trials.size(), 1u);
    EXPECT_LT(trials.size(), 20u);
    double before_last = 0;
    for (std::size_t i = 0; i + 1 < trials.size(); ++i)
      before_last += trials[i]["build_s"].get<double>() + trials[i]["eval_s"].get<double>();
    EXPECT_LT(before_last, 10.0) << "seed " << seed << ": " << trials.size() << " trials";
  }
  // A spec whose parameters the recording lacks.
  auto bad = tunekit_cli({"tune", (fs::path(TUNEKIT_SOURCE_DIR) / "examples" / "matmul" / "matmul.yaml").string(),
                          "--replay", kCache, "--max-evals", "3", "-o", (dir / "b").string(), "--no-progress"});
  EXPECT_EQ(bad.exit_code, 1) << bad.output;
  EXPECT_TRUE(contains(bad.output, "conv_small.json.gz")) << bad.output;
}

// Trials replayed from one recording are not resumed from another of the
// same device: here the same cache, uncompressed, with one more byte.
TEST(TuneReplay, AnotherRecordingOfTheSameDeviceResumesNothing) {
  const fs::path dir = fresh_dir();
  ASSERT_EQ(std::system(("gzip -dc '" + kCache + "' > '" + (dir / "again.json").string() + "'").c_str()), 0);
  { std::ofstream(dir / "again.json", std::ios::app) << "\n"; }
  auto tune = [&](const std::string& recording) {
    return tunekit_cli(
        {"tune", kSpec, "--replay", recording, "--max-evals", "5", "-o", (dir / "out").string(), "--no-progress"});
  };
  auto r = tune(kCache);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  r = tune(kCache);
  EXPECT_TRUE(contains(r.output, "5 resumed from the store")) << r.output;
  r = tune((dir / "again.json").string());
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_FALSE(contains(r.output, "resumed")) << r.output;
}

TEST(TuneReplay, AFractionBudgetIsAShareOfTheValidConfigsRoundedUp) {
  const fs::path dir = fresh_dir();
  // The spec's search.max_fraction, which the flags replace.
  fs::copy_file(kData / "conv_small.cpp", dir / "conv_small.cpp");
  write_file(dir / "frac.yaml", read_file(kSpec) + "search: {max_fraction: 0.01}\n");
  auto trials = [&](const std::string& name, std::vector<std::string> budget, std::string spec = kSpec) {
    std::vector<std::string> args{"tune",
                                  spec,
                                  "--replay",
                                  kCache,
                                  "-o",
                                  (dir / name).string(),
                                  "--no-progress",
                                  "--output",
                                  "json",
                                  "--json",
                                  (dir / (name + ".json")).string()};
    args.insert(args.end(), budget.begin(), budget.end());
    auto r = tunekit_cli(args);
    EXPECT_EQ(r.exit_code, 0) << r.output;
    if (r.exit_code != 0) return std::size_t{0};
    return nlohmann::json::parse(read_file(dir / (name + ".json")))["sizes"][0]["trials"].size();
  };
  const std::size_t all = trials("all", {});  // no budget: every valid config
  ASSERT_GT(all, 200u);
  EXPECT_EQ(trials("one", {"--max-fraction", "0.01"}), (all + 99) / 100);
  EXPECT_EQ(trials("whole", {"--max-fraction", "1"}), all);
  EXPECT_EQ(trials("spec", {}, (dir / "frac.yaml").string()), (all + 99) / 100);
  EXPECT_EQ(trials("spec-evals", {"--max-evals", "7"}, (dir / "frac.yaml").string()), 7u);
  // The flag and --max-evals are one budget or the other.
  auto both = tunekit_cli({"tune", kSpec, "--replay", kCache, "--max-fraction", "0.1", "--max-evals", "5", "-o",
                           (dir / "both").string(), "--no-progress"});
  EXPECT_EQ(both.exit_code, 1) << both.output;
  EXPECT_TRUE(contains(both.output, "--max-fraction")) << both.output;
  for (const char* bad : {"0", "1.5", "-0.1"}) {
    auto r = tunekit_cli(
        {"tune", kSpec, "--replay", kCache, "--max-fraction", bad, "-o", (dir / "bad").string(), "--no-progress"});
    EXPECT_EQ(r.exit_code, 1) << bad << "\n" << r.output;
    EXPECT_TRUE(contains(r.output, "--max-fraction")) << r.output;
    EXPECT_TRUE(contains(r.output, "(0, 1]")) << r.output;
  }
  // A budget of more evaluations than the replayed space holds is refused,
  // as `tunekit replay` refuses it, where it was given: the flag or the
  // spec's key.
  const std::string over = std::to_string(all + 1);
  auto flag = tunekit_cli(
      {"tune", kSpec, "--replay", kCache, "--max-evals", over, "-o", (dir / "over").string(), "--no-progress"});
  EXPECT_EQ(flag.exit_code, 1) << flag.output;
  EXPECT_TRUE(
      contains(flag.output, "--max-evals: a budget of " + over + " evaluations: expected 1 to " + std::to_string(all)))
      << flag.output;
  write_file(dir / "over.yaml", read_file(kSpec) + "search: {max_evals: " + over + "}\n");
  auto key = tunekit_cli(
      {"tune", (dir / "over.yaml").string(), "--replay", kCache, "-o", (dir / "over").string(), "--no-progress"});
  EXPECT_EQ(key.exit_code, 1) << key.output;
  EXPECT_TRUE(contains(key.output, (dir / "over.yaml").string() + ":")) << key.output;
  EXPECT_TRUE(contains(key.output, "a budget of " + over + " evaluations")) << key.output;
  EXPECT_EQ(trials("exact", {"--max-evals", std::to_string(all)}), all);
}

TEST(TuneReplay, MaximisingAMetricSearchesAsMinimisingTime) {
  // The guided strategies model the logarithm of what they observe: a
  // maximised metric reaches them as its inverse, so maximising a constant
  // over the time proposes the same configs as minimising the time (before,
  // it reached them negated and the model read NaN). The early stop, which
  // a metric objective turns off, is off for the time too: a cut trial's
  // cost is its few samples' median, which the search would see instead.
  const fs::path dir = fresh_dir();
  fs::copy_file(kData / "conv_small.cpp", dir / "conv_small.cpp");
  write_file(dir / "rate.yaml",
             read_file(kSpec) + "metrics: {gpoints: \"4096 * 4096 / time_s / 1e9\"}\nobjective: {maximize: gpoints}\n");
  // Positive for configs under 1 ms only: the others cannot be placed.
  write_file(dir / "margin.yaml",
             read_file(kSpec) + "metrics: {margin: \"1000 - time_us\"}\nobjective: {maximize: margin}\n");
  auto tune = [&](const std::string& spec, const std::string& name, const std::string& seed) {
    auto r = tunekit_cli({"tune", spec, "--replay", kCache, "--max-evals", "30", "--seed", seed, "-o",
                          (dir / name).string(), "--no-progress", "--early-stop", "off", "--output", "json", "--json",
                          (dir / (name + ".json")).string()});
    EXPECT_EQ(r.exit_code, 0) << r.output;
    return r.exit_code == 0 ? nlohmann::json::parse(read_file(dir / (name + ".json"))) : nlohmann::json::object();
  };
  auto configs = [](const nlohmann::json& j) {
    std::vector<std::string> out;
    for (const auto& t : j["sizes"][0]["trials"]) out.push_back(t["config"].dump());
    return out;
  };
  for (const char* seed : {"1", "2", "3"}) {
    const auto by_time = tune(kSpec, std::string("time") + seed, seed);
    const auto by_rate = tune((dir / "rate.yaml").string(), std::string("rate") + seed, seed);
    ASSERT_EQ(configs(by_time).size(), 30u) << seed;
    EXPECT_EQ(configs(by_rate), configs(by_time)) << "seed " << seed;
    EXPECT_EQ(by_rate["sizes"][0]["best"]["config"], by_time["sizes"][0]["best"]["config"]) << seed;
  }
  const auto margin = tune((dir / "margin.yaml").string(), "margin", "1");
  std::string warnings = margin["warnings"].dump();
  EXPECT_TRUE(contains(warnings, "the objective margin was not a positive number")) << warnings;
  EXPECT_TRUE(contains(warnings, "took them as failed")) << warnings;
}

TEST(TuneReplay, ATuneWrittenAsT4ReplaysAsItsRecording) {
  // An exhaustive tune (replayed) written by the t4 writer is a recording of
  // its own: a search replayed on it proposes and finds what it does on the
  // cache the tune was replayed from.
  const fs::path dir = fresh_dir();
  auto tune = tunekit_cli({"tune", kSpec, "--replay", kCache, "--strategy", "exhaustive", "-o", dir.string(),
                           "--no-progress", "--output", "t4"});
  ASSERT_EQ(tune.exit_code, 0) << tune.output;
  const fs::path t4 = dir / "convolution.t4.json";
  ASSERT_TRUE(fs::exists(t4)) << tune.output;
  for (const char* seed : {"1", "2"}) {
    auto from_t4 = tunekit_cli({"replay", t4.string(), "--spec", kSpec, "--max-evals", "30", "--seed", seed, "--json"});
    auto from_cache = tunekit_cli({"replay", kCache, "--spec", kSpec, "--max-evals", "30", "--seed", seed, "--json"});
    ASSERT_EQ(from_t4.exit_code, 0) << from_t4.output;
    ASSERT_EQ(from_cache.exit_code, 0) << from_cache.output;
    const auto a = last_json(from_t4.output), b = last_json(from_cache.output);
    EXPECT_EQ(a["format"], "kernel_tuner_t4");
    EXPECT_EQ(a["trace_configs"], b["trace_configs"]) << seed;
    EXPECT_EQ(a["trace"], b["trace"]) << seed;
    EXPECT_EQ(a["optimum_time"], b["optimum_time"]);
  }
}

TEST(TuneReplay, AT4FileOfSeveralSizesReplaysSizeBySize) {
  // The t4 writer names each result's size and keeps the machine, so a tune
  // replayed from its file finds each size's recording and the constraints'
  // machine property, and proposes what the replay of the store does.
  const fs::path dir = fresh_dir();
  write_three_size_recording(dir);
  const std::string spec = (dir / "k.yaml").string();
  auto all = tunekit_cli({"tune", spec, "--replay", (dir / "recorded.db").string(), "--strategy", "exhaustive",
                          "--no-transfer", "-o", (dir / "all").string(), "--no-progress", "--output", "t4"});
  ASSERT_EQ(all.exit_code, 0) << all.output;
  auto configs = [&](const std::string& recording, const std::string& name) {
    auto r = tunekit_cli({"tune", spec, "--replay", recording, "--max-evals", "6", "--seed", "4", "-o",
                          (dir / name).string(), "--no-progress", "--output", "json", "--json",
                          (dir / (name + ".json")).string()});
    EXPECT_EQ(r.exit_code, 0) << r.output;
    std::vector<std::string> out;
    if (r.exit_code != 0) return out;
    const auto j = nlohmann::json::parse(read_file(dir / (name + ".json")));
    for (const auto& s : j["sizes"])
      for (const auto& t : s["trials"]) out.push_back(s["size"].dump() + t["config"].dump());
    return out;
  };
  const auto from_t4 = configs((dir / "all" / "k.t4.json").string(), "t4");
  EXPECT_EQ(from_t4.size(), 18u);
  EXPECT_EQ(from_t4, configs((dir / "recorded.db").string(), "db"));

  // Sizes the recording lacks are named before the first size is tuned (the
  // run ended at the first such size, with no report written).
  write_file(spec, read_file(spec).replace(read_file(spec).find("{M: 256}]"), 9, "{M: 256}, {M: 1000}, {M: 7}]"));
  auto r = tunekit_cli({"tune", spec, "--replay", (dir / "recorded.db").string(), "--max-evals", "6", "-o",
                        (dir / "missing").string(), "--no-progress"});
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_TRUE(contains(r.output, "it records no trials at 2 of the spec's sizes: M=1000; M=7 (it has: ")) << r.output;
  EXPECT_FALSE(fs::exists(dir / "missing" / "k.json")) << "a size was tuned";
  // A size at which no config is valid runs nothing, and needs no recording.
  r = tunekit_cli({"tune", spec, "--replay", (dir / "recorded.db").string(), "--max-evals", "6", "-o",
                   (dir / "empty").string(), "--no-progress", "--where", "M != 1000 and M != 7"});
  EXPECT_EQ(r.exit_code, 0) << r.output;
}

TEST(TuneReplay, AConfigTheRecordingLacksIsNamedBeforeAnySizeIsTuned) {
  // Found when the search proposed it, the run ended midway, so whether a
  // budgeted replay failed depended on its seed.
  const fs::path dir = fresh_dir();
  write_three_size_recording(dir, Config({{"BM", 32}, {"UNROLL", 2}}));
  const std::string spec = (dir / "k.yaml").string();
  for (const char* seed : {"1", "2", "3", "4", "5"}) {
    auto r = tunekit_cli({"tune", spec, "--replay", (dir / "recorded.db").string(), "--max-evals", "4", "--seed", seed,
                          "-o", (dir / seed).string(), "--no-progress"});
    EXPECT_EQ(r.exit_code, 1) << seed << r.output;
    EXPECT_TRUE(contains(r.output, (dir / "recorded.db").string() + ": it lacks {BM: 32, UNROLL: 2} at M=512, a "
                                                                    "config this tune may run"))
        << r.output;
    EXPECT_FALSE(fs::exists(dir / seed / "k.json")) << "a size was tuned";
  }
  // A space narrowed to what the recording holds replays.
  auto r = tunekit_cli({"tune", spec, "--replay", (dir / "recorded.db").string(), "--max-evals", "4", "--where",
                        "BM != 32", "-o", (dir / "narrow").string(), "--no-progress"});
  EXPECT_EQ(r.exit_code, 0) << r.output;
}

TEST(TuneReplay, LaterSizesStartFromTheNearestSizesBest) {
  const fs::path dir = fresh_dir();
  write_three_size_recording(dir);
  auto r = tunekit_cli({"tune", (dir / "k.yaml").string(), "--replay", (dir / "recorded.db").string(), "--max-evals",
                        "6", "-o", (dir / "out").string(), "--no-progress", "--output", "console,json", "--json",
                        (dir / "out.json").string()});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const auto j = nlohmann::json::parse(read_file(dir / "out.json"));
  ASSERT_EQ(j["sizes"].size(), 3u);
  EXPECT_EQ(j["sizes"][0]["transfer"], 0);  // the first size has nothing to learn from
  // M = 256 comes after 64 and 512: its nearest tuned sizes are 512 (log2
  // distance 1) and 64 (2); their fastest configs come first.
  const auto& third = j["sizes"][2];
  EXPECT_EQ(third["size"]["M"], 256);
  EXPECT_EQ(third["transfer"], 2);
  ASSERT_GE(third["trials"].size(), 2u);
  EXPECT_EQ(third["trials"][0]["origin"], "transfer");
  // The first transferred config is the fastest that M = 512's search measured.
  const nlohmann::json* fastest = nullptr;
  for (const auto& t : j["sizes"][1]["trials"])
    if (t["status"] == "ok" && (!fastest || t["time_us"] < (*fastest)["time_us"])) fastest = &t;
  ASSERT_NE(fastest, nullptr);
  EXPECT_EQ(third["trials"][0]["config"], (*fastest)["config"]);
  EXPECT_TRUE(contains(r.output, "transferred from the nearest tuned sizes")) << r.output;
  // --no-transfer: none.
  auto n = tunekit_cli({"tune", (dir / "k.yaml").string(), "--replay", (dir / "recorded.db").string(), "--max-evals",
                        "6", "--no-transfer", "-o", (dir / "n").string(), "--no-progress", "--output", "json", "--json",
                        (dir / "n.json").string()});
  ASSERT_EQ(n.exit_code, 0) << n.output;
  // Named: a range-for over a member of a temporary would read freed memory.
  const auto none = nlohmann::json::parse(read_file(dir / "n.json"));
  for (const auto& s : none["sizes"]) EXPECT_EQ(s["transfer"], 0);
}

// NaN (Python's json writes it) measures nothing either, and is said so
// alike: it counted as failed without a word.
TEST(ReplayCli, ATimeOfZeroOrBelowIsAFailedConfigWithAWarning) {
  const fs::path dir = fresh_dir();
  for (const auto& [fastest, shown] : std::vector<std::pair<std::string, std::string>>{
           {"0.0", "0"}, {"-1", "-1"}, {"NaN", "nan"}, {"-Infinity", "-inf"}}) {
    write_file(dir / "zero.json", tiny_cache(fastest));
    const std::string cache = (dir / "zero.json").string();
    auto r = tunekit_cli({"replay", cache, "--max-evals", "6"});
    ASSERT_EQ(r.exit_code, 0) << r.output;
    EXPECT_TRUE(contains(r.output, "warning: " + cache + ": cache entry \"4,0\" has time " + shown +
                                       " ms; a time of 0 or below, or NaN, measures nothing, so it counts as failed"))
        << r.output;
    EXPECT_TRUE(contains(r.output, "best:      1.5 ms {a: 2, b: 1}")) << r.output;
    EXPECT_TRUE(contains(r.output, "fraction of optimum 1.0000")) << r.output;
    // The warning is on stderr: --json's stdout is one JSON object.
    const auto j = nlohmann::json::parse(stdout_of({"replay", cache, "--max-evals", "6", "--json"}));
    EXPECT_EQ(j["optimum_time"], 1.5);
    EXPECT_EQ(j["failed"], 1);
  }
}

namespace {

// The spec whose space tiny_cache records (a: 1, 2, 4; b: 0, 1), with a
// kernel that does nothing: `tunekit tune --replay` runs it from the cache.
void write_tiny_spec(const fs::path& dir) {
  write_file(dir / "k.cpp", "extern \"C\" void k(float* y) { (void)y; }\n");
  write_file(dir / "tiny.yaml", R"(name: tiny
kernel: {source: k.cpp, entry: k}
arguments:
  - {name: y, type: f32, size: 4, role: out}
parameters: {a: [1, 2, 4], b: [0, 1]}
)");
}

}  // namespace

// `tunekit tune --replay` warns of a recorded time of 0 or below as
// `tunekit replay` does, in the same words.
TEST(TuneReplay, ATimeOfZeroOrBelowIsWarnedOfAsReplayWarns) {
  const fs::path dir = fresh_dir();
  write_file(dir / "zero.json", tiny_cache("0.0"));
  write_tiny_spec(dir);
  const std::string cache = (dir / "zero.json").string();
  const std::string warning = "warning: " + cache +
                              ": cache entry \"4,0\" has time 0 ms; a time of 0 or below, or NaN, measures nothing, so "
                              "it counts as failed";
  auto replayed = tunekit_cli({"replay", cache});
  ASSERT_EQ(replayed.exit_code, 0) << replayed.output;
  EXPECT_TRUE(contains(replayed.output, warning)) << replayed.output;
  auto tuned = tunekit_cli({"tune", (dir / "tiny.yaml").string(), "--replay", cache, "-o", (dir / "out").string(),
                            "--no-progress", "--output", "console"});
  ASSERT_EQ(tuned.exit_code, 0) << tuned.output;
  EXPECT_TRUE(contains(tuned.output, warning)) << tuned.output;
  EXPECT_TRUE(contains(tuned.output, "launch_error, {a: 4, b: 0} (time 0 ms, not a positive time)")) << tuned.output;
}

// A time budget over a cache that lacks its configs' recorded times would
// count each config as free and never end: `tunekit replay` and `tunekit
// tune --replay` alike refuse it before the search, naming the file and the
// first such config. Without a time budget the times are not needed.
TEST(ReplayCli, ATimeBudgetNeedsEveryConfigsRecordedTimes) {
  const fs::path dir = fresh_dir();
  write_file(dir / "untimed.json", tiny_cache("1.25"));
  write_tiny_spec(dir);
  const std::string cache = (dir / "untimed.json").string();
  const std::string refusal = cache +
                              ": {a: 1, b: 0} has no recorded compile_time, verification_time, "
                              "benchmark_time: a time budget counts each evaluation's recorded compile, "
                              "verification and benchmark times";
  auto replayed = tunekit_cli({"replay", cache, "--max-time", "10s"});
  EXPECT_EQ(replayed.exit_code, 1) << replayed.output;
  EXPECT_TRUE(contains(replayed.output, refusal)) << replayed.output;
  auto tuned = tunekit_cli({"tune", (dir / "tiny.yaml").string(), "--replay", cache, "--max-time", "10s", "-o",
                            (dir / "out").string(), "--no-progress", "--output", "console"});
  EXPECT_EQ(tuned.exit_code, 1) << tuned.output;
  EXPECT_TRUE(contains(tuned.output, refusal)) << tuned.output;
  auto counted = tunekit_cli({"replay", cache, "--max-evals", "3"});
  EXPECT_EQ(counted.exit_code, 0) << counted.output;
}

TEST(ReplayCli, WarnsOfAConstraintThatFailsToEvaluate) {
  // As `tunekit space` and `tunekit tune --replay` do: the configs where a
  // T1 condition divides by zero are dropped, and the user is told.
  const fs::path dir = fresh_dir();
  write_file(dir / "tiny.json", tiny_cache("1.25"));
  write_file(dir / "div.T1.json", tiny_t1({"a // b > 0"}));
  const std::vector<std::string> args{"replay", (dir / "tiny.json").string(), "--t1", (dir / "div.T1.json").string()};
  auto r = tunekit_cli(args);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "warning: "));
  EXPECT_TRUE(contains(r.output,
                       "constraint 'a // b > 0': division by zero in 'a // b', first at {a: 1, b: 0}; the "
                       "configs where it fails count as invalid"))
      << r.output;
  EXPECT_TRUE(contains(r.output, "space:     3 valid configs")) << r.output;
  std::vector<std::string> json = args;
  json.push_back("--json");
  const auto j = nlohmann::json::parse(stdout_of(json));
  EXPECT_EQ(j["space_size"], 3);
}

TEST(ReplayCli, RestrictionsThatLeaveNoConfigAreTheError) {
  const fs::path dir = fresh_dir();
  write_file(dir / "tiny.json", tiny_cache("1.25"));
  write_file(dir / "none.T1.json", tiny_t1({"a * b < 0"}));
  const std::string t1 = (dir / "none.T1.json").string();
  for (const std::vector<std::string>& budget : std::vector<std::vector<std::string>>{{"--max-fraction", "0.1"}, {}}) {
    std::vector<std::string> args{"replay", (dir / "tiny.json").string(), "--t1", t1};
    args.insert(args.end(), budget.begin(), budget.end());
    auto r = tunekit_cli(args);
    EXPECT_EQ(r.exit_code, 1) << r.output;
    EXPECT_TRUE(contains(r.output, "error: " + t1 +
                                       ": its restrictions leave no valid config of the 6 combinations of its "
                                       "parameters' values: there is nothing to replay"))
        << r.output;
    EXPECT_FALSE(contains(r.output, "--max-evals")) << r.output;
  }
  // A spec's constraints, at its size.
  write_two_kernel_recording(dir);
  std::string none = read_file(dir / "k.yaml");
  none.insert(none.find("default:"), "  - BM < 0\n");
  write_file(dir / "none.yaml", none);
  auto r = tunekit_cli({"replay", (dir / "recorded.db").string(), "--spec", (dir / "none.yaml").string()});
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_TRUE(contains(r.output,
                       "none.yaml: its constraints leave no valid config of the 6 combinations of its "
                       "parameters' values at M=64"))
      << r.output;
}

TEST(ReplayCli, ADatabaseReplaySaysWhatItHoldsAndTakesTheSpecsKernel) {
  const fs::path dir = fresh_dir();
  write_two_kernel_recording(dir);
  const std::string db = (dir / "recorded.db").string(), spec = (dir / "k.yaml").string();
  // Two kernels at the spec's size: the spec names its own.
  auto r = tunekit_cli({"replay", db, "--spec", spec, "--strategy", "exhaustive", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(last_json(r.output)["kernel"], "k");
  EXPECT_EQ(last_json(r.output)["space_size"], 5);
  // A filter that matches nothing: which one, and what the DB holds.
  const std::string holds =
      "; what it holds: kernel 'k' on 'cpu: recorded' at M=64; kernel 'other' on 'cpu: recorded' at M=64";
  struct Case {
    std::vector<std::string> args;
    std::string expect;
  };
  for (const Case& c : std::vector<Case>{{{"--kernel", "k", "--size", "N=5"}, "it holds no trials at N=5" + holds},
                                         {{"--kernel", "nope"}, "it holds no trials of kernel 'nope'" + holds},
                                         {{"--device", "nope"}, "it holds no trials on device 'nope'" + holds}}) {
    std::vector<std::string> args{"replay", db};
    args.insert(args.end(), c.args.begin(), c.args.end());
    auto bad = tunekit_cli(args);
    EXPECT_EQ(bad.exit_code, 1) << bad.output;
    EXPECT_TRUE(contains(bad.output, "error: " + db + ": " + c.expect)) << bad.output;
  }
  // --size is checked as `tune` and `space` check it: against the spec's
  // sizes, as a number, and once.
  for (const Case& c : std::vector<Case>{
           {{"--size", "M=[64,32]"}, "--size M=[64,32]: '[64,32]' is not a number"},
           {{"--size", "M=64,N=5"}, "--size N=5: the spec uses no size named 'N'"},
           {{"--size", "Q=1"}, "--size Q=1: the spec uses no size named 'Q'"},
           {{"--size", "M=64", "--size", "M=32"}, "--size M=32: 'M' is given twice (--size M=64 before)"}}) {
    std::vector<std::string> args{"replay", db, "--spec", spec};
    args.insert(args.end(), c.args.begin(), c.args.end());
    auto bad = tunekit_cli(args);
    EXPECT_EQ(bad.exit_code, 1) << bad.output;
    EXPECT_TRUE(contains(bad.output, "error: " + c.expect)) << bad.output;
  }
  // Without its spec, a tuned space's constraints are missing: --spec gives
  // them (a T1 file is Kernel Tuner's).
  auto bare = tunekit_cli({"replay", db, "--kernel", "k"});
  EXPECT_EQ(bare.exit_code, 1) << bare.output;
  EXPECT_TRUE(contains(bare.output, "give the spec it was tuned with, --spec")) << bare.output;
  EXPECT_FALSE(contains(bare.output, "T1")) << bare.output;
  // A spec given whose space is wider than the tune's: not told to give one.
  std::string wider = read_file(spec);
  wider.replace(wider.find("BM: [8, 16, 32]"), 15, "BM: [8, 16, 32, 4]");
  write_file(dir / "wider.yaml", wider);
  auto widened = tunekit_cli({"replay", db, "--spec", (dir / "wider.yaml").string()});
  EXPECT_EQ(widened.exit_code, 1) << widened.output;
  EXPECT_TRUE(contains(widened.output, "the spec's parameters or constraints changed since?")) << widened.output;
  EXPECT_FALSE(contains(widened.output, "--spec")) << widened.output;
}

// A T4 file written by a replayed tune carries the recording's compile and
// run times, not the replay's own microseconds: replayed in its turn, it
// costs what the recording it came from costs.
TEST(ReplayCli, AT4FileOfAReplayIsTheSameRecording) {
  const fs::path out = tunekit::testing::fresh_dir() / "out";
  auto r = tunekit_cli({"tune", kSpec, "--replay", kCache, "--strategy", "exhaustive", "--output", "t4", "-o",
                        out.string(), "--no-progress"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const std::string t4 = (out / "convolution.t4.json").string();
  ASSERT_TRUE(fs::exists(t4)) << r.output;
  auto replayed = [&](const std::string& recording) {
    auto run = tunekit_cli({"replay", recording, "--spec", kSpec, "--strategy", "random", "--max-evals", "30",
                            "--seed", "3", "--json"});
    EXPECT_EQ(run.exit_code, 0) << run.output;
    return last_json(run.output);
  };
  const auto original = replayed(kCache), again = replayed(t4);
  EXPECT_EQ(again["trace"], original["trace"]);
  EXPECT_NEAR(again["simulated_seconds"].get<double>(), original["simulated_seconds"].get<double>(),
              1e-3 * original["simulated_seconds"].get<double>());
  EXPECT_GT(original["simulated_seconds"].get<double>(), 1.0);  // recorded costs, not this machine's microseconds
}
