// Application-level tuning (kernel.language: command) from the command
// line: shell metacharacters stay literal, every failure is recorded and the
// run goes on, the msKPP results table is written, and the two msKPP matmul
// examples run as their READMEs say.
#include <gtest/gtest.h>

#include <regex>

#include "core/detail/process.hpp"
#include "core/detail/text.hpp"
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

// The one TUNEKIT_RESULTS_<14 digits>.csv in `dir`.
fs::path results_csv(const fs::path& dir) {
  fs::path found;
  int n = 0;
  for (const auto& e : fs::directory_iterator(dir))
    if (std::regex_match(e.path().filename().string(), std::regex(R"(TUNEKIT_RESULTS_\d{14}\.csv)"))) {
      found = e.path();
      ++n;
    }
  EXPECT_EQ(n, 1) << "TUNEKIT_RESULTS_*.csv files in " << dir;
  return found;
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::size_t begin = 0;
  while (begin < text.size()) {
    auto nl = text.find('\n', begin);
    out.push_back(text.substr(begin, nl - begin));
    if (nl == std::string::npos) break;
    begin = nl + 1;
  }
  return out;
}

}  // namespace

// A parameter value full of shell syntax reaches the build command and the
// program as one literal argv element each time, and nothing in it runs.
TEST(AppCommand, ShellMetacharactersStayLiteral) {
  const auto dir = fresh_dir();
  write_file(dir / "k.cpp", "int k;\n");
  // Each argument on its own line, bracketed: what the program received.
  write_file(dir / "build.sh", "for a in \"$@\"; do printf '[%s]\\n' \"$a\"; done > build_argv.txt\n");
  write_file(dir / "run.sh", "for a in \"$@\"; do printf '[%s]\\n' \"$a\"; done > run_argv.txt\necho 'time: 1'\n");
  const std::string p1 = (dir / "pwned1").string(), p2 = (dir / "pwned2").string(), p3 = (dir / "pwned3").string();
  const std::string value = "a b; echo PWNED $(touch " + p1 + ") \"q\" 'sq' `touch " + p2 + "` && touch " + p3 + " >x";
  std::string yaml_value = "'";  // YAML single-quoted: '' is a quote
  for (char c : value) yaml_value += c == '\'' ? std::string("''") : std::string(1, c);
  yaml_value += "'";
  write_file(dir / "app.yaml",
             "kernel: {source: k.cpp, language: command}\n"
             "parameters:\n  P: [" +
                 yaml_value +
                 "]\n"
                 "application:\n"
                 "  build: [bash, build.sh, '{P}']\n"
                 "  run: [bash, run.sh, '{P}', '--p={P}', '$HOME', '*']\n"
                 "  time: {regex: 'time: ([0-9.]+)'}\n"
                 "measure: {min_samples: 1, max_samples: 1}\n");
  // From another folder, with a relative --out-dir: the variant's paths
  // must still hold when the commands run in the spec's folder.
  fs::create_directories(dir / "elsewhere");
  auto r = detail::run_process(
      {tunekit_exe().string(), "tune", (dir / "app.yaml").string(), "--out-dir", "out", "--no-progress"}, 300s,
      dir / "elsewhere");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  // Shown quoted, as a value with blanks and quotes is wherever a config is printed.
  EXPECT_TRUE(contains(r.output, "No.1: 1.000 us, {P: " + detail::shown_value(Value(value)) + "}")) << r.output;
  EXPECT_EQ(read_file(dir / "build_argv.txt"), "[" + value + "]\n");
  EXPECT_EQ(read_file(dir / "run_argv.txt"), "[" + value + "]\n[--p=" + value + "]\n[$HOME]\n[*]\n");
  for (const auto& p : {p1, p2, p3}) EXPECT_FALSE(fs::exists(p)) << p << " was created: a shell ran";
  EXPECT_FALSE(fs::exists(dir / "x"));
  // The results table shows the argv quoted the way a shell would take it back.
  const std::string csv = read_file(results_csv(dir / "elsewhere" / "out"));
  EXPECT_TRUE(contains(csv, "'a b; echo PWNED $(touch ")) << csv;
  EXPECT_TRUE(contains(csv, "'\\''sq'\\''")) << csv;
}

// One run meets every failure mode, records each with its status, keeps
// going, and writes TUNEKIT_RESULTS_<time>.csv beside the usual outputs.
TEST(AppCommand, FailuresAreRecordedAndTheRunGoesOn) {
  const auto dir = fresh_dir();
  write_file(dir / "k.cpp", "// KIND comes in through the commands\n");
  write_file(dir / "build.sh",
             "if [ \"$1\" = build_fails ]; then echo 'error: no such header' >&2; exit 1; fi\n"
             "echo \"$1\" > \"$2\"\n");
  write_file(dir / "run.sh", R"(kind=$(cat "$1")
case $kind in
  fast) echo '{"result": {"ms": 0.25}}' ;;
  slow) echo 'progress...'; echo '{"result": {"ms": 2}}' ;;
  crash) echo 'checking' ; exit 4 ;;
  segv) kill -SEGV $$ ;;
  hang) sleep 600 ;;
  notime) echo 'done' ;;
esac
)");
  write_file(dir / "app.yaml", R"(name: planted_app
kernel: {source: k.cpp, language: command}
sizes: {N: 10}
parameters:
  KIND: [slow, build_fails, crash, segv, hang, notime, fast]
application:
  build: [bash, build.sh, "{KIND}", "{dir}/kind.txt"]
  run: [bash, run.sh, "{dir}/kind.txt", "{N}"]
  time: {json: result.ms, unit: ms}
  warmup: 0
  run_timeout: 30s
measure: {min_samples: 2, max_samples: 2}
)");
  const std::string out = (dir / "out").string();
  auto r = tunekit_cli({"tune", (dir / "app.yaml").string(), "--out-dir", out, "--no-progress"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "No.1: 2000.000 us, {KIND: slow}")) << r.output;
  EXPECT_TRUE(contains(r.output,
                       "No.2: compile_error, {KIND: build_fails} (build command exited with code 1: "
                       "error: no such header)"))
      << r.output;
  EXPECT_TRUE(contains(r.output, "No.3: crash, {KIND: crash} (run exited with code 4: checking)")) << r.output;
  EXPECT_TRUE(contains(r.output, "No.4: crash, {KIND: segv} (run killed by SIGSEGV")) << r.output;
  EXPECT_TRUE(contains(r.output, "No.5: timeout, {KIND: hang} (run timed out after 30 s; killed)")) << r.output;
  EXPECT_TRUE(contains(r.output, "No.6: launch_error, {KIND: notime} (no time in the output: the JSON output") ||
              contains(r.output, "No.6: launch_error, {KIND: notime} (no time in the output: the output holds no JSON"))
      << r.output;
  EXPECT_TRUE(contains(r.output, "No.7: 250.000 us, {KIND: fast}")) << r.output;
  EXPECT_TRUE(contains(r.output, "best: No.7 250.000 us {KIND: fast}")) << r.output;
  EXPECT_TRUE(contains(r.output, "speedup over first valid config: 8.00x")) << r.output;

  const fs::path csv_file = results_csv(out);
  EXPECT_TRUE(contains(r.output, csv_file.string())) << r.output;  // listed under "results:"
  const auto rows = lines_of(read_file(csv_file));
  ASSERT_EQ(rows.size(), 8u) << read_file(csv_file);
  EXPECT_EQ(rows[0], "No.,Config,Duration(us),Args");
  EXPECT_TRUE(std::regex_match(rows[1], std::regex(R"(1,\{KIND: slow\},2000\.000,bash run\.sh /\S+/kind\.txt 10)")))
      << rows[1];
  EXPECT_EQ(rows[2], "2,{KIND: build_fails},compile_error,");  // never ran
  EXPECT_TRUE(contains(rows[3], "3,{KIND: crash},crash,bash run.sh ")) << rows[3];
  EXPECT_TRUE(contains(rows[5], "5,{KIND: hang},timeout,bash run.sh ")) << rows[5];
  EXPECT_TRUE(contains(rows[7], "7,{KIND: fast},250.000,bash run.sh ")) << rows[7];

  // The store has every trial; a rerun resumes them instead of rebuilding.
  Store store(dir / "out" / "tunekit.db");
  EXPECT_EQ(store.all().size(), 7u);
  auto again = tunekit_cli({"tune", (dir / "app.yaml").string(), "--out-dir", out, "--no-progress"});
  ASSERT_EQ(again.exit_code, 0) << again.output;
  EXPECT_TRUE(contains(again.output, "7 resumed from the store")) << again.output;
  EXPECT_TRUE(contains(again.output, "best: No.7 250.000 us {KIND: fast}")) << again.output;
}

// What a command kernel's flags mean: --timeout bounds its runs even where
// the spec sets run_timeout; --atol, --rtol and --reference, which compare
// nothing here, and a size named like a variant path are refused; a time
// lost in the middle of a long output is said to be lost.
TEST(AppCommand, FlagsThatApplyAndFlagsThatDoNot) {
  const auto dir = fresh_dir();
  write_file(dir / "k.cpp", "// KIND comes in through the commands\n");
  write_file(dir / "run.sh", R"(case $1 in
  hang) sleep 600 ;;
  chatty) for i in $(seq 40000); do echo "chatter line $i chatter chatter chatter"; done
          echo 'time: 5'
          for i in $(seq 40000); do echo "chatter line $i chatter chatter chatter"; done ;;
  *) echo 'time: 1' ;;
esac
)");
  write_file(dir / "app.yaml", R"(kernel: {source: k.cpp, language: command}
parameters:
  KIND: [fine, hang, chatty]
application:
  run: [bash, run.sh, "{KIND}"]
  time: {regex: 'time: ([0-9.]+)'}
  warmup: 0
  run_timeout: 120s
measure: {min_samples: 1, max_samples: 1}
)");
  const std::string spec = (dir / "app.yaml").string(), out = (dir / "out").string();
  auto r = tunekit_cli({"tune", spec, "--out-dir", out, "--no-progress", "--timeout", "2s"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "No.2: timeout, {KIND: hang} (run timed out after 2 s; killed)")) << r.output;
  bool said = false;
  for (const auto& t : Store(dir / "out" / "tunekit.db").all())
    said = said || contains(t.error, "bytes in the middle were not kept, only the first and the last 1 MiB");
  EXPECT_TRUE(said) << r.output;
  for (const char* flag : {"--atol", "--rtol", "--reference"}) {
    auto refused = tunekit_cli({"tune", spec, "--out-dir", out, "--no-progress", flag, "1"});
    EXPECT_EQ(refused.exit_code, 1) << flag << ": " << refused.output;
    EXPECT_TRUE(contains(refused.output, std::string(flag) + ": does not apply to a command kernel")) << refused.output;
  }
  auto size = tunekit_cli({"tune", spec, "--out-dir", out, "--no-progress", "-s", "binary=7"});
  EXPECT_EQ(size.exit_code, 1) << size.output;
  EXPECT_TRUE(contains(size.output, "the spec uses no size named 'binary'")) << size.output;
}

// The msKPP basic-matmul walkthrough on the CPU backend: twelve explicit
// L1/L0 tile configs against the `// tunable` lines of the source.
TEST(AppExamples, MsKppMatmulOnTheCpu) {
  const auto dir = fresh_dir();
  const fs::path spec = fs::path(TUNEKIT_SOURCE_DIR) / "examples" / "mskpp_matmul" / "matmul.yaml";
  const auto t0 = std::chrono::steady_clock::now();
  auto r = tunekit_cli({"tune", spec.string(), "--out-dir", (dir / "out").string(), "--no-progress"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  for (int i = 1; i <= 12; ++i)
    EXPECT_TRUE(
        std::regex_search(r.output, std::regex("No\\." + std::to_string(i) +
                                               R"(: [0-9.]+ us, \{L1TileShape: 'GemmShape<\d+, \d+, \d+>', )"
                                               R"(L0_TILE: 'using L0TileShape = GemmShape<\d+, \d+, \d+>;'\})")))
        << "No." << i << "\n"
        << r.output;
  EXPECT_FALSE(contains(r.output, "No.13:")) << r.output;
  EXPECT_TRUE(std::regex_search(r.output, std::regex(R"(best: No\.\d+ [0-9.]+ us \{L1TileShape: 'GemmShape<)")))
      << r.output;
  EXPECT_TRUE(contains(r.output, "12 trials: 12 ok")) << r.output;
  EXPECT_TRUE(std::regex_search(r.output, std::regex(R"(verification: max abs diff .*: within (atol|rtol))")))
      << r.output;  // checked against matmul_naive
  std::cout << r.output << "took " << std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count()
            << " s\n";
}

// The same kernel tuned at application level: build.sh compiles each
// variant into a program that prints its time.
TEST(AppExamples, MsKppMatmulApplicationLevel) {
  const auto dir = fresh_dir();
  const fs::path spec = fs::path(TUNEKIT_SOURCE_DIR) / "examples" / "mskpp_matmul_app" / "matmul_app.yaml";
  const auto t0 = std::chrono::steady_clock::now();
  auto r = tunekit_cli({"tune", spec.string(), "--out-dir", (dir / "out").string(), "--no-progress"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  for (int i = 1; i <= 12; ++i)
    EXPECT_TRUE(std::regex_search(
        r.output, std::regex("No\\." + std::to_string(i) + R"(: [0-9.]+ us, \{L1TileShape: 'GemmShape<)")))
        << "No." << i << "\n"
        << r.output;
  EXPECT_TRUE(contains(r.output, "12 trials: 12 ok")) << r.output;
  EXPECT_TRUE(std::regex_search(r.output, std::regex(R"(best: No\.\d+ [0-9.]+ us \{L1TileShape: 'GemmShape<)")))
      << r.output;
  const fs::path csv_file = results_csv(dir / "out");
  const auto rows = lines_of(read_file(csv_file));
  ASSERT_EQ(rows.size(), 13u) << read_file(csv_file);
  EXPECT_EQ(rows[0], "No.,Config,Duration(us),Args");
  for (std::size_t i = 1; i < rows.size(); ++i)
    EXPECT_TRUE(std::regex_match(
        rows[i],
        std::regex(std::to_string(i) + R"(,"\{L1TileShape: 'GemmShape<[^"]+>;'\}",[0-9.]+,/\S+/app 512 512 512 3)")))
        << rows[i];
  // Nothing was written into the example's folder.
  for (const auto& e : fs::directory_iterator(spec.parent_path()))
    EXPECT_TRUE(e.path().filename() == "main.cpp" || e.path().filename() == "build.sh" ||
                e.path().filename() == "matmul_app.yaml" || e.path().filename() == "README.md")
        << e.path();
  std::cout << r.output << "took " << std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count()
            << " s\n";
}

// A program run killed from outside while a config is measured again to
// confirm it is run again, and the warning says a program's run was killed,
// not a worker (a command kernel has none).
TEST(AppCommand, AProgramKilledWhileConfirmingIsSaidToBeARun) {
  const auto dir = fresh_dir();
  write_file(dir / "k.cpp", "int k;\n");
  write_file(dir / "build.sh", "true\n");
  // Counts its runs; the run numbered in kill_at kills itself, as the OOM
  // killer would.
  write_file(dir / "run.sh",
             "n=$(( $(cat runs 2>/dev/null || echo 0) + 1 )); echo $n > runs\n"
             "if [ -f kill_at ] && [ \"$n\" = \"$(cat kill_at)\" ]; then kill -9 $$; fi\necho 'time: 5'\n");
  write_file(dir / "app.yaml",
             "kernel: {source: k.cpp, language: command}\n"
             "parameters: {P: [1, 2]}\n"
             "application:\n  build: [bash, build.sh]\n  run: [bash, run.sh, '{P}']\n"
             "  time: {regex: 'time: ([0-9.]+)'}\n"
             "measure: {min_samples: 1, max_samples: 1, early_stop: off, confirm: 2}\n");
  auto tune = [&] {
    fs::remove(dir / "runs");
    return detail::run_process(
        {tunekit_exe().string(), "tune", (dir / "app.yaml").string(), "--out-dir", "out", "--no-progress", "--fresh"},
        300s, dir);
  };
  auto r = tune();
  ASSERT_EQ(r.exit_code, 0) << r.output;
  ASSERT_TRUE(contains(r.output, "confirmed:")) << r.output;
  // The last run is the last config's confirmation.
  write_file(dir / "kill_at", read_file(dir / "runs"));
  r = tune();
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(contains(r.output,
                       "(measured again to confirm it): its program's run was killed from outside "
                       "(SIGKILL); run again"))
      << r.output;
  EXPECT_TRUE(contains(r.output, "1 trial's program run killed from outside, run again")) << r.output;
  EXPECT_FALSE(contains(r.output, "worker")) << r.output;
}
