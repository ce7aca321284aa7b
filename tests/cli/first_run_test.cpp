// What a new user meets on the first day (issue #20): a default that is not
// valid on this machine is explained, select offers an answer anyway, a
// narrowed run keeps the full run's files, `space` counts a configs list, a
// missing kernel entry is reported before anything runs, and the progress
// bar fits the terminal.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <set>

#include <nlohmann/json.hpp>

#include "core/detail/process.hpp"
#include "progress.hpp"
#include "support/cli.hpp"
#include "support/temp_dir.hpp"

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

// y = x of `n` elements (a number, or a size's name) over `extra` (YAML:
// parameters, constraints, default ...), three samples a config.
std::string write_spec(const fs::path& dir, const std::string& extra, const std::string& entry = "f",
                       const std::string& n = "256") {
  write_file(dir / "k.cpp",
             "extern \"C\" void f(const float* x, float* y, int n) { for (int i = 0; i < n; ++i) y[i] = x[i]; }\n");
  write_file(dir / "k.yaml", "kernel: {source: k.cpp, entry: " + entry + ", flags: [-O1]}\narguments:\n" +
                                 "  - {name: x, type: f32, size: " + n + "}\n" + "  - {name: y, type: f32, size: " + n +
                                 ", role: out}\n" + "  - {name: n, type: i32, value: " + n + "}\n" +
                                 "measure: {warmup: 0us, min_samples: 3, max_samples: 3}\n" + extra);
  return (dir / "k.yaml").string();
}

std::string machine(const fs::path& dir, std::int64_t l1d) {
  const auto file = dir / "machine.json";
  write_file(file, "{\"device\": \"simulated\", \"l1d_bytes\": " + std::to_string(l1d) + "}");
  return file.string();
}

const std::string kCacheSpace = R"(parameters: {TILE: [1024, 4096, 16384]}
constraints: ["l1d_bytes // 2 <= TILE <= l1d_bytes"]
default: {TILE: 4096}
)";

}  // namespace

TEST(FirstRun, ADefaultInvalidOnThisMachineIsExplained) {
  const auto dir = fresh_dir();
  const std::string spec = write_spec(dir, kCacheSpace);
  // 8 KiB of L1d: TILE = 4096 is valid. 32 KiB: it is not, and the tune says
  // which constraint and which machine property, then goes on.
  auto fine = tunekit_cli(
      {"tune", spec, "--out-dir", (dir / "a").string(), "--no-progress", "--properties", machine(dir, 8192)});
  EXPECT_EQ(fine.exit_code, 0) << fine.output;
  EXPECT_FALSE(contains(fine.output, "warning: the default")) << fine.output;
  EXPECT_TRUE(contains(fine.output, "default: No.1")) << fine.output;

  auto warned = tunekit_cli(
      {"tune", spec, "--out-dir", (dir / "b").string(), "--no-progress", "--properties", machine(dir, 32768)});
  EXPECT_EQ(warned.exit_code, 0) << warned.output;
  // Said where the default is written.
  EXPECT_TRUE(contains(warned.output, "warning: " + spec + ":")) << warned.output;
  EXPECT_TRUE(contains(warned.output,
                       ": the default {TILE: 4096} breaks the constraint `l1d_bytes // 2 <= TILE <= "
                       "l1d_bytes`"))
      << warned.output;
  EXPECT_TRUE(contains(warned.output, "the machine's l1d_bytes = 32768")) << warned.output;
  EXPECT_TRUE(contains(warned.output, "speedups are over the first valid config instead")) << warned.output;
  EXPECT_TRUE(contains(warned.output, "first valid config: No.1")) << warned.output;
  // The JSON keeps it.
  EXPECT_TRUE(contains(read_file(dir / "b" / "f.json"), ": the default {TILE: 4096} breaks the constraint"));

  // `space` says the same before anything runs.
  auto counted = tunekit_cli({"space", spec, "--properties", machine(dir, 32768)});
  EXPECT_EQ(counted.exit_code, 0) << counted.output;
  EXPECT_TRUE(contains(counted.output, "valid:       1\n")) << counted.output;
  EXPECT_TRUE(contains(counted.output, ": the default {TILE: 4096} breaks the constraint")) << counted.output;
}

namespace {

// `tune` and `space` given --properties FILE both refuse it at the file,
// saying `said` after its name, before a store is made.
void expect_refused_by_tune_and_space(const fs::path& dir, const std::string& spec, const fs::path& file,
                                      const std::string& said) {
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"tune", spec, "--out-dir", (dir / "t").string(), "--no-progress", "--properties",
                                 file.string()},
        std::vector<std::string>{"space", spec, "--properties", file.string()}}) {
    const auto r = tunekit_cli(args);
    EXPECT_EQ(r.exit_code, 1) << args[0] << ": " << r.output;
    EXPECT_TRUE(contains(r.output, file.string() + said)) << args[0] << ": " << r.output;
  }
  EXPECT_FALSE(fs::exists(dir / "t" / "tunekit.db"));
}

}  // namespace

// A --properties key the spec does not read, a near miss of one it does
// read that the file lacks: the machine's own l1d_bytes would decide unseen.
// Keys nothing reads are otherwise fine (a devices listing has many).
TEST(FirstRun, AMisspeltPropertyIsRefusedAtItsFile) {
  const auto dir = fresh_dir();
  const std::string spec = write_spec(dir, kCacheSpace);
  const auto file = dir / "typo.json";
  write_file(file, R"({"device": "simulated", "l1d_byts": 8192, "cores": 4})");
  expect_refused_by_tune_and_space(dir, spec, file,
                                   ": property 'l1d_byts' is read by nothing in the spec; did you mean 'l1d_bytes'?");
  write_file(file, R"({"device": "simulated", "l1d_bytes": 8192, "l1d_byts": 1, "cores": 4})");
  EXPECT_EQ(tunekit_cli({"space", spec, "--properties", file.string()}).exit_code, 0);
}

// A --properties value of another type than this machine's (a string for a
// count) is refused at its file: every constraint comparing it would fail,
// and `space` counted no valid config without saying where the cause was.
TEST(FirstRun, APropertyOfTheWrongTypeIsRefusedAtItsFile) {
  const auto dir = fresh_dir();
  const std::string spec = write_spec(dir, kCacheSpace);
  const auto file = dir / "typed.json";
  write_file(file, R"({"device": "simulated", "l1d_bytes": "big", "cores": 4})");
  expect_refused_by_tune_and_space(dir, spec, file, ": property 'l1d_bytes' is the string \"big\"; expected a number");
}

// A --properties file stands for another machine: one that lacks a
// property the spec reads is refused, as `space` refuses it, rather than
// mixed with this machine's value.
TEST(FirstRun, APropertiesFileLackingARealPropertyIsRefused) {
  const auto dir = fresh_dir();
  const std::string spec = write_spec(dir, kCacheSpace);
  const auto file = dir / "partial.json";
  write_file(file, R"({"device": "simulated", "cores": 4})");
  const auto tune =
      tunekit_cli({"tune", spec, "--out-dir", (dir / "t").string(), "--no-progress", "--properties", file.string()});
  EXPECT_EQ(tune.exit_code, 1) << tune.output;
  EXPECT_TRUE(contains(tune.output, file.string() + ": the spec reads the machine property 'l1d_bytes', which this "
                                                    "file does not give"))
      << tune.output;
  EXPECT_FALSE(fs::exists(dir / "t" / "tunekit.db"));
  EXPECT_EQ(tunekit_cli({"space", spec, "--properties", file.string()}).exit_code, 1);
}

// Trials tuned under two machines' properties (--properties simulates one
// under this device's name) make no one policy: its constraints hold for
// one machine, so emit and select refuse, naming the properties that
// differ; report, which shows trials side by side, goes on.
TEST(FirstRun, APolicyOfTrialsFromTwoMachinesIsRefused) {
  const auto dir = fresh_dir();
  const std::string spec = write_spec(dir, R"(parameters: {TILE: [1024, 4096, 16384]}
constraints: ["l1d_bytes // 2 <= TILE <= l1d_bytes"]
)",
                                      "f", "N"),
                    out = (dir / "o").string();
  write_file(dir / "small.json", R"({"device": "simulated", "l1d_bytes": 8192})");
  write_file(dir / "large.json", R"({"device": "simulated", "l1d_bytes": 16384})");
  for (const auto& [n, machine] : {std::pair{"N=64", "small.json"}, std::pair{"N=128", "large.json"}}) {
    const auto r =
        tunekit_cli({"tune", spec, "-s", n, "--properties", (dir / machine).string(), "-o", out, "--no-progress"});
    ASSERT_EQ(r.exit_code, 0) << r.output;
  }
  for (const char* command : {"emit", "select"}) {
    const auto r = tunekit_cli({command, spec, "-o", out});
    EXPECT_EQ(r.exit_code, 1) << command << ": " << r.output;
    EXPECT_TRUE(contains(r.output, "under 2 sets of machine properties (l1d_bytes 8192 or 16384)"))
        << command << ": " << r.output;
  }
  EXPECT_FALSE(fs::exists(dir / "o" / "k_policy.hpp"));
  EXPECT_EQ(tunekit_cli({"report", spec, "-o", out}).exit_code, 0);
}

// A policy finds an untuned size's config by its numeric distance to the
// tuned ones: a string size axis is bad input to emit (it was exit 2, an
// "other error"), while select lists the configs.
TEST(FirstRun, EmitRefusesAStringSizeAxisAsBadInput) {
  const auto dir = fresh_dir();
  const std::string spec = write_spec(dir, R"(sizes: {grid: {n: [64], layout: [row, col]}}
parameters: {U: [1]}
)",
                                      "f", "n"),
                    out = (dir / "o").string();
  const auto tune = tunekit_cli({"tune", spec, "-o", out, "--no-progress"});
  ASSERT_EQ(tune.exit_code, 0) << tune.output;
  EXPECT_EQ(tunekit_cli({"select", spec, "-o", out}).exit_code, 0);
  const auto emit = tunekit_cli({"emit", spec, "-o", out});
  EXPECT_EQ(emit.exit_code, 1) << emit.output;
  EXPECT_TRUE(contains(emit.output, spec + ": size 'layout' has string values")) << emit.output;
}

TEST(FirstRun, SelectAllSizesSaysWhyAndOffersTheBestValidEverywhere) {
  const auto dir = fresh_dir();
  // At N = 1 the default TILE = 16384 is not valid (TILE <= N * 4096).
  const std::string spec = write_spec(dir, R"(sizes: [{N: 1}, {N: 4}]
parameters: {TILE: [1024, 4096, 16384]}
constraints: ["TILE <= N * 4096"]
default: {TILE: 16384}
)");
  const std::string out = (dir / "out").string();
  auto tuned = tunekit_cli({"tune", spec, "--out-dir", out, "--no-progress"});
  ASSERT_EQ(tuned.exit_code, 0) << tuned.output;
  auto r = tunekit_cli({"select", spec, "--mode", "all-sizes", "--out-dir", out});
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(
      contains(r.output,
               "no config for all sizes against the default: the default {TILE: 16384} did not run "
               "correctly at 1 of 2 sizes: {N: 1} (not run there: not valid there, left out by a --where, or not "
               "reached within a budget)"))
      << r.output;
  EXPECT_TRUE(contains(r.output, "best config valid at every size: {TILE: ")) << r.output;
  auto emitted = tunekit_cli({"emit", spec, "--mode", "all-sizes", "--out-dir", out});
  EXPECT_EQ(emitted.exit_code, 0) << emitted.output;
  EXPECT_TRUE(contains(emitted.output, "against each size's best")) << emitted.output;

  // Each size measured only at a config the other size never ran: nothing
  // to answer with, and select and emit both say so with status 3.
  const std::string apart = (dir / "apart").string();
  tuned = tunekit_cli({"tune", spec, "--out-dir", apart, "--no-progress", "--where",
                       "(N == 1 and TILE == 1024) or (N == 4 and TILE == 4096)"});
  ASSERT_EQ(tuned.exit_code, 0) << tuned.output;
  for (const char* command : {"select", "emit"}) {
    r = tunekit_cli({command, spec, "--mode", "all-sizes", "--out-dir", apart});
    EXPECT_EQ(r.exit_code, 3) << command << ": " << r.output;
    EXPECT_TRUE(contains(r.output, "no config ran correctly at all 2 sizes")) << command << ": " << r.output;
  }
  EXPECT_FALSE(fs::exists(fs::path(apart) / "k_policy.hpp"));
}

TEST(FirstRun, ANarrowedRunKeepsTheFullRunsFiles) {
  const auto dir = fresh_dir();
  const std::string spec = write_spec(dir, "parameters: {A: [1, 2, 3], B: [1, 2]}\n");
  const auto out = dir / "out";
  auto full = tunekit_cli({"tune", spec, "--out-dir", out.string(), "--no-progress"});
  ASSERT_EQ(full.exit_code, 0) << full.output;
  // Files are named by the spec's name, here its entry.
  const std::string csv = read_file(out / "f.csv"), json = read_file(out / "f.json");
  auto narrow =
      tunekit_cli({"tune", spec, "--out-dir", out.string(), "--no-progress", "--where", "B == 2", "--where", "A < 3"});
  ASSERT_EQ(narrow.exit_code, 0) << narrow.output;
  EXPECT_EQ(read_file(out / "f.csv"), csv);
  EXPECT_EQ(read_file(out / "f.json"), json);
  for (const char* ext : {".csv", ".json", ".html"})
    EXPECT_TRUE(fs::exists(out / (std::string("f.where-B_2_and_A_lt_3") + ext))) << ext << "\n" << narrow.output;
  EXPECT_TRUE(contains(narrow.output, "f.where-B_2_and_A_lt_3.csv")) << narrow.output;
  // Another filter over the same names writes its own files: the first
  // narrowed run's stay as they were.
  const std::string narrow_json = read_file(out / "f.where-B_2_and_A_lt_3.json");
  auto other =
      tunekit_cli({"tune", spec, "--out-dir", out.string(), "--no-progress", "--where", "B == 2", "--where", "A > 3"});
  ASSERT_EQ(other.exit_code, 3) << other.output;  // nothing valid: A is at most 3
  auto wider =
      tunekit_cli({"tune", spec, "--out-dir", out.string(), "--no-progress", "--where", "B == 2", "--where", "A >= 2"});
  ASSERT_EQ(wider.exit_code, 0) << wider.output;
  EXPECT_TRUE(fs::exists(out / "f.where-B_2_and_A_ge_2.json")) << wider.output;
  EXPECT_EQ(read_file(out / "f.where-B_2_and_A_lt_3.json"), narrow_json);
  // An operator the name has no word for, or a long filter, adds a hash of
  // the whole filter.
  auto product = tunekit_cli({"tune", spec, "--out-dir", out.string(), "--no-progress", "--where", "A * B == 2"});
  ASSERT_EQ(product.exit_code, 0) << product.output;
  auto sum = tunekit_cli({"tune", spec, "--out-dir", out.string(), "--no-progress", "--where", "A + B == 2"});
  ASSERT_EQ(sum.exit_code, 0) << sum.output;
  std::set<std::string> hashed;
  for (const auto& e : fs::directory_iterator(out)) {
    const std::string name = e.path().filename().string();
    if (name.rfind("f.where-A_B_2-", 0) == 0 && e.path().extension() == ".json") hashed.insert(name);
  }
  EXPECT_EQ(hashed.size(), 2u) << product.output << sum.output;
}

// A size where no config ran correctly has no entry: select and emit say so,
// instead of listing the other sizes as if it had been tuned. --within, a
// setting of cover only, is refused with another mode.
TEST(FirstRun, SelectSaysWhichSizesNothingRanAtAndRefusesAStrayWithin) {
  const auto dir = fresh_dir();
  write_file(dir / "k.cpp",
             "extern \"C\" void f(const float* x, float* y, int n) { for (int i = 0; i < n; ++i) y[i] = x[i] + (n == "
             "3); }\nextern \"C\" void ref(const float* x, float* y, int n) { for (int i = 0; i < n; ++i) y[i] = "
             "x[i]; }\n");
  write_file(dir / "k.yaml", R"(kernel: {source: k.cpp, entry: f, flags: [-O1]}
arguments:
  - {name: x, type: f32, size: N}
  - {name: y, type: f32, size: N, role: out}
  - {name: n, type: i32, value: N}
sizes: [{N: 64}, {N: 3}]
parameters: {A: [1, 2]}
reference: {entry: ref}
measure: {warmup: 0us, min_samples: 3, max_samples: 3}
)");
  const std::string spec = (dir / "k.yaml").string(), out = (dir / "out").string();
  auto tuned = tunekit_cli({"tune", spec, "--out-dir", out, "--no-progress"});
  ASSERT_EQ(tuned.exit_code, 0) << tuned.output;
  for (const char* command : {"select", "emit"}) {
    auto r = tunekit_cli({command, spec, "--out-dir", out});
    EXPECT_EQ(r.exit_code, 0) << r.output;
    EXPECT_TRUE(contains(r.output, "note: no config ran correctly at {N: 3}: it has no entry")) << r.output;
  }
  auto within = tunekit_cli({"select", spec, "--out-dir", out, "--within", "10"});
  EXPECT_EQ(within.exit_code, 1) << within.output;
  EXPECT_TRUE(contains(within.output, "--within: sets the tolerance of --mode cover, but the mode is per-size"))
      << within.output;
  EXPECT_EQ(tunekit_cli({"select", spec, "--out-dir", out, "--mode", "cover", "--within", "10"}).exit_code, 0);
}

// A policy made from part of a size's valid configs (a budget, a --where,
// a tune stopped early) says how much was measured; a whole tune says
// nothing.
TEST(FirstRun, SelectAndEmitSayWhereOnlyPartOfTheSpaceWasMeasured) {
  const auto dir = fresh_dir();
  const std::string spec = write_spec(dir, "sizes: [{N: 64}, {N: 32}]\nparameters: {A: [1, 2, 3, 4]}\n");
  const std::string out = (dir / "out").string();
  ASSERT_EQ(tunekit_cli({"tune", spec, "--out-dir", out, "--no-progress", "-a", "N=64", "--max-evals", "2"}).exit_code,
            0);
  ASSERT_EQ(tunekit_cli({"tune", spec, "--out-dir", out, "--no-progress", "-a", "N=32"}).exit_code, 0);
  for (const char* command : {"select", "emit", "report"}) {
    auto r = tunekit_cli({command, spec, "--out-dir", out});
    EXPECT_EQ(r.exit_code, 0) << r.output;
    EXPECT_TRUE(contains(r.output, "note: at 1 size, part of the valid configs was measured ({N: 64}: 2 of 4)"))
        << r.output;
  }
  // report's page says it at the top, as a tune's page says it of a size
  // the run stopped part way.
  const std::string page = read_file(out + "/f.html");
  EXPECT_TRUE(contains(page, "Size N = 64: its best is the best of the 2 of its 4 valid configs measured (a budget"))
      << page;
  EXPECT_FALSE(contains(page, "Size N = 32: its best")) << page;
  // The one config for all sizes is chosen from those too.
  auto all = tunekit_cli({"select", spec, "--out-dir", out, "--mode", "all-sizes"});
  EXPECT_EQ(all.exit_code, 0) << all.output;
  EXPECT_TRUE(contains(all.output,
                       "note: at 1 size, part of the valid configs was measured ({N: 64}: 2 of 4); the config for "
                       "all sizes was chosen from those only"))
      << all.output;
  // The files emit writes say it too, at that size's entry.
  const std::string header = out + "/f_policy.hpp", json = out + "/f_policy.json", python = out + "/f_policy.py";
  auto emitted = tunekit_cli({"emit", spec, "--out-dir", out, "--python", python});
  ASSERT_EQ(emitted.exit_code, 0) << emitted.output;
  EXPECT_TRUE(contains(read_file(header), "    {64},  // tuned in part: 2 of 4 valid configs measured\n"))
      << read_file(header);
  EXPECT_TRUE(contains(read_file(header), "// 1 of the 2 tuned sizes were tuned in part")) << read_file(header);
  EXPECT_TRUE(contains(read_file(python), "),  # tuned in part: 2 of 4 valid configs measured\n")) << read_file(python);
  for (const auto& e : nlohmann::json::parse(read_file(json))["entries"])
    if (e["size"]["N"] == 64) EXPECT_EQ(e["tuned_in_part"], (nlohmann::json{{"measured", 2}, {"valid", 4}}));
    else EXPECT_FALSE(e.contains("tuned_in_part")) << e.dump();

  ASSERT_EQ(tunekit_cli({"tune", spec, "--out-dir", out, "--no-progress", "-a", "N=64"}).exit_code, 0);
  auto r = tunekit_cli({"select", spec, "--out-dir", out});
  EXPECT_FALSE(contains(r.output, "part of the valid configs")) << r.output;
  ASSERT_EQ(tunekit_cli({"emit", spec, "--out-dir", out, "--python", python}).exit_code, 0);
  for (const auto& file : {header, json, python}) EXPECT_FALSE(contains(read_file(file), "tuned in part")) << file;

  // Many sizes: the note names ten and counts the rest, on one line.
  ASSERT_EQ(
      tunekit_cli({"tune", spec, "--out-dir", out, "--no-progress", "-a", "N=[1:12]", "--max-evals", "1"}).exit_code,
      0);
  r = tunekit_cli({"select", spec, "--out-dir", out});
  EXPECT_TRUE(contains(r.output, "note: at 12 sizes, part of the valid configs was measured ({N: 1}: 1 of 4, "))
      << r.output;
  EXPECT_TRUE(contains(r.output, "{N: 10}: 1 of 4, and 2 more)")) << r.output;
}

TEST(FirstRun, SpaceCountsTheConfigsAList) {
  const auto dir = fresh_dir();
  const std::string spec = write_spec(dir, R"(parameters: {A: [1, 2, 3, 4], B: [1, 2, 3]}
constraints: ["A != B"]
configs:
  - {A: 1, B: 2}
  - {A: 2, B: 2}
  - {A: 4, B: 1}
)");
  auto r = tunekit_cli({"space", spec});
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "cartesian:   12\n")) << r.output;
  EXPECT_TRUE(contains(r.output, "listed:      3")) << r.output;
  EXPECT_TRUE(contains(r.output, "valid:       2 (of the listed configs)")) << r.output;
  auto j = tunekit_cli({"space", spec, "--json"});
  const auto parsed = nlohmann::json::parse(j.output);
  EXPECT_EQ(parsed.at("valid"), 2) << j.output;
  EXPECT_EQ(parsed.at("listed"), 3) << j.output;
}

TEST(FirstRun, AMissingEntryIsReportedBeforeTheBuildsWithTheCompilersLine) {
  const auto dir = fresh_dir();
  const std::string spec = write_spec(dir, "parameters: {A: [1, 2, 3]}\n", "fx");
  auto r = tunekit_cli({"tune", spec, "--out-dir", (dir / "out").string(), "--no-progress"});
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_TRUE(contains(r.output,
                       "k.yaml:1:32: kernel.entry 'fx' does not appear in k.cpp (did you mean 'f'?), and the "
                       "compiler says:"))
      << r.output;
  EXPECT_TRUE(contains(r.output, "fx")) << r.output;
  // The compiler's line is in tunekit's call, not past the end of k.cpp.
  EXPECT_TRUE(contains(r.output, "<tunekit: the call of fx>:")) << r.output;
  EXPECT_FALSE(contains(r.output, "No.1")) << "nothing is tuned: " << r.output;
}

TEST(FirstRun, ANoisyKernelIsFlaggedAndTheRunWarns) {
  const auto dir = fresh_dir();
  // Alternately 1 ms and 3 ms: a median no sample count pins to 2%.
  write_file(dir / "k.cpp", R"(#include <unistd.h>
extern "C" void f(float* y) { static int calls = 0; usleep(++calls % 2 ? 1000 : 3000); y[0] = 1; }
)");
  write_file(dir / "k.yaml", R"(kernel: {source: k.cpp, entry: f, flags: [-O1]}
arguments: [{name: y, type: f32, size: 1, role: out}]
parameters: {A: [1, 2]}
reference: none
measure: {warmup: 0us, min_samples: 10, max_samples: 10, noise: 0.02}
)");
  auto r = tunekit_cli({"tune", (dir / "k.yaml").string(), "--out-dir", (dir / "out").string(), "--no-progress"});
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "% over the 2% target, min ")) << r.output;
  EXPECT_TRUE(contains(r.output, "warning: 2 of 2 configs missed the noise target (2.0%")) << r.output;
  // Cold, the default: the summary says what flushing took.
  EXPECT_TRUE(contains(r.output, "s flushing caches")) << r.output;
  const std::string csv = read_file(dir / "out" / "f.csv");
  EXPECT_TRUE(contains(csv, ",true,")) << csv;  // MissedNoiseTarget
}

TEST(ProgressBar, FitsTheTerminal) {
  ProgressEvent e;
  e.done = 37;
  e.total = 126;
  e.elapsed = Seconds(75);
  e.best = Microseconds(1324.197);
  e.current = "measuring {MR: 4, NR: 16, KC: 256, MC: 96, NC: 256, UNROLL: 1, LOOP_ORDER: 0, PAR: 1}";
  const std::string wide = cli::progress_line(e, 200);
  EXPECT_TRUE(contains(wide, "[########--------------------] 37/126  29%")) << wide;
  EXPECT_TRUE(contains(wide, "best 1324.197 us")) << wide;
  EXPECT_TRUE(contains(wide, "measuring {MR: 4")) << wide;
  for (std::size_t columns : {200u, 120u, 80u, 60u, 40u, 30u, 20u}) {
    const std::string line = cli::progress_line(e, columns);
    EXPECT_LE(line.size(), columns - 1) << columns << ": " << line;
    EXPECT_TRUE(contains(line, "37/126")) << columns << ": " << line;
  }
  // 80 columns: the bar, the counts, the times and the best; what is
  // happening fills the rest.
  const std::string eighty = cli::progress_line(e, 80);
  EXPECT_TRUE(contains(eighty, "best 1324.197 us")) << eighty;
  EXPECT_TRUE(contains(cli::progress_line(e, 60), "ETA")) << cli::progress_line(e, 60);
  // 89 trials to go at 75 s / 37 each is 3:00; a time budget with 30 s left ends
  // the run sooner, and the ETA says that.
  EXPECT_TRUE(contains(wide, "ETA 3:00")) << wide;
  e.time_left = Seconds(30);
  EXPECT_TRUE(contains(cli::progress_line(e, 200), "ETA 0:30")) << cli::progress_line(e, 200);
}

// Under a time budget the total is the most that may run (with no budget of
// evaluations, every config), not what will: the line says "of at most",
// never "24/108", and the bar and the share follow the clock when it is
// further along than the count.
TEST(ProgressBar, UnderATimeBudgetTheTotalIsTheMostThatMayRun) {
  ProgressEvent e;
  e.done = 24;
  e.total = 108;
  e.elapsed = Seconds(45);
  e.time_left = Seconds(15);
  e.time_bounded = true;
  const std::string wide = cli::progress_line(e, 200);
  EXPECT_TRUE(contains(wide, "[#####################-------] 24 of at most 108  75%  elapsed 0:45  ETA 0:15")) << wide;
  EXPECT_FALSE(contains(wide, "24/108")) << wide;
  for (std::size_t columns : {200u, 120u, 80u, 60u, 40u, 30u, 20u})
    EXPECT_LE(cli::progress_line(e, columns).size(), columns - 1) << columns << ": " << cli::progress_line(e, columns);
  e.time_left = Seconds(0);
  EXPECT_TRUE(contains(cli::progress_line(e, 200), "24 of at most 108 100%  elapsed 0:45  ETA 0:00"))
      << cli::progress_line(e, 200);
  // A replay's budget counts its own clock (no time left on the wall
  // clock): the count alone fills the bar, and the total is still a bound.
  e.time_left.reset();
  EXPECT_TRUE(contains(cli::progress_line(e, 200), "24 of at most 108  22%")) << cli::progress_line(e, 200);
}

// `tunekit tune --max-time` in a log: its progress lines call the space's
// size the most that may run; --max-evals alone is a count that is reached.
TEST(ProgressBar, TuneUnderMaxTimeSaysItsTotalIsABound) {
  const auto dir = fresh_dir();
  const std::string spec = write_spec(dir, "parameters: {A: [1, 2, 3, 4]}\nreference: none\n");
  auto timed = tunekit_cli({"tune", spec, "--out-dir", (dir / "a").string(), "--max-time", "10m"});
  EXPECT_EQ(timed.exit_code, 0) << timed.output;
  EXPECT_TRUE(contains(timed.output, "] 0 of at most 4   0%")) << timed.output;
  EXPECT_FALSE(contains(timed.output, " 0/4 ")) << timed.output;
  auto counted = tunekit_cli({"tune", spec, "--out-dir", (dir / "b").string(), "--max-evals", "2"});
  EXPECT_EQ(counted.exit_code, 0) << counted.output;
  EXPECT_TRUE(contains(counted.output, "] 2/2 100%")) << counted.output;
  EXPECT_FALSE(contains(counted.output, "at most")) << counted.output;
}

// In a log (not a terminal), the line that reaches the total is printed
// once, however many events follow it (confirming, a rank's size ending).
TEST(ProgressBar, ALogGetsTheFinalCountOnce) {
  std::FILE* log = std::tmpfile();
  ASSERT_NE(log, nullptr);
  {
    cli::ProgressBar bar(log);
    ProgressEvent e;
    e.total = 3;
    for (std::size_t done : {0u, 1u, 2u, 3u, 3u, 3u}) {
      e.done = done;
      bar.update(e);
    }
    bar.finish();
  }
  std::rewind(log);
  std::string text;
  for (int c; (c = std::fgetc(log)) != EOF;) text += static_cast<char>(c);
  std::fclose(log);
  // The first event (no line yet) and the total; the others within 5 s.
  EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 2) << text;
  EXPECT_TRUE(contains(text, " 0/3 ")) << text;
  EXPECT_TRUE(contains(text, " 3/3 ")) << text;
}

// Arguments that disagree with the entry's parameters fail tunekit's call of
// it for every config: bad input at the entry (exit 1), as it is when a
// reference function is built first, not a size stopped with empty outputs
// (exit 3).
TEST(FirstRun, ArgumentsThatDoNotMatchTheEntryAreTheSpecsError) {
  const auto dir = fresh_dir();
  const std::string spec = write_spec(dir, "parameters: {A: [1, 2]}\n");
  std::string text = tunekit::testing::read_file(dir / "k.yaml");
  text.erase(text.find("  - {name: n, type: i32, value: 256}\n"), 37);
  write_file(dir / "k.yaml", text);
  auto r = tunekit_cli({"tune", spec, "--out-dir", (dir / "out").string(), "--no-progress"});
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_TRUE(contains(r.output,
                       "k.yaml:1:32: the call of 'f' with the spec's arguments does not compile: the "
                       "arguments do not match its parameters"))
      << r.output;
  EXPECT_FALSE(contains(r.output, "No.1")) << r.output;
}
