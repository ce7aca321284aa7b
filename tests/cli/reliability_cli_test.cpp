// The command line under hostile or careless use (issue #22): outputs that
// would replace the store, flags out of range, signals that stop a run, a
// space too large to list. Each test is one defect's regression test.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <thread>

#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <sqlite3.h>

#include "tunekit/cli.hpp"
#include "core/detail/process.hpp"
#include "support/cli.hpp"
#include "store/detail/whole_file_check.hpp"
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

// y = 2x over N, KIND 0..3 (KIND 3 hangs while `hang_mark` exists).
std::string write_spec(const fs::path& dir, const std::string& params = "{KIND: [0, 1, 2, 3]}",
                       const fs::path& hang_mark = {}) {
  write_file(dir / "k.cpp",
             "#include <unistd.h>\nextern \"C\" void f(const float* x, float* y, int n) {\n"
             "#if KIND == 3\n  if (access(\"" +
                 hang_mark.string() +
                 "\", F_OK) == 0) for (volatile int i = 0;;) ++i;\n#endif\n"
                 "  for (int i = 0; i < n; ++i) y[i] = 2 * x[i];\n}\n");
  write_file(dir / "k.yaml", R"(name: k
kernel: {source: k.cpp, entry: f, flags: [-O0]}
arguments:
  - {name: x, type: f32, size: N}
  - {name: y, type: f32, size: N, role: out}
  - {name: n, type: i32, value: N}
sizes: {N: 64}
parameters: )" + params + R"(
measure: {warmup: 0us, min_samples: 2, max_samples: 2, cache: hot, timeout: 300s, early_stop: off}
)");
  return (dir / "k.yaml").string();
}

// write_spec's kernel with KIND 0, 1 and 2, where 2 is the fastest by far:
// the others sleep 3 ms.
std::string write_kind_2_fastest(const fs::path& dir) {
  const std::string spec = write_spec(dir, "{KIND: [0, 1, 2]}");
  std::string text = tunekit::testing::read_file(dir / "k.cpp");
  text.replace(text.find("  for (int i = 0; i < n; ++i)"), 0, "#if KIND != 2\n  usleep(3000);\n#endif\n");
  write_file(dir / "k.cpp", text);
  return spec;
}

// A /proc/PID/stat file's text, or "" when the process is gone. A process
// that exits between the open and the read makes the read fail (ESRCH),
// which libstdc++ throws: on a busy machine processes come and go all the
// time.
std::string proc_stat(const fs::path& path) {
  try {
    std::ifstream f(path);
    return std::string((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  } catch (const std::exception&) {
    return {};
  }
}

// The process's state letter from /proc (R, S, Z ...), or 0 when it is gone.
char process_state(pid_t pid) {
  const std::string text = proc_stat("/proc/" + std::to_string(pid) + "/stat");
  auto close = text.rfind(')');
  return close == std::string::npos || close + 2 >= text.size() ? 0 : text[close + 2];
}

// The pid of a tunekit-worker whose parent is `parent`, once one runs.
pid_t wait_for_worker(pid_t parent, std::chrono::seconds limit) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < deadline) {
    std::error_code ec;
    for (fs::directory_iterator it("/proc", ec), end; !ec && it != end; it.increment(ec)) {
      const std::string name = it->path().filename().string();
      if (name.find_first_not_of("0123456789") != std::string::npos) continue;
      const std::string text = proc_stat(it->path() / "stat");
      auto open = text.find('('), close = text.rfind(')');
      if (open == std::string::npos || close == std::string::npos) continue;
      if (text.substr(open + 1, close - open - 1) != "tunekit-worker") continue;
      if (std::stol(text.substr(close + 4)) == parent) return std::stoi(name);
    }
    std::this_thread::sleep_for(100ms);
  }
  return -1;
}

pid_t spawn_tune(const std::vector<std::string>& args) {
  pid_t pid = fork();
  if (pid == 0) {
    int devnull = open("/dev/null", O_WRONLY);
    dup2(devnull, 1);
    dup2(devnull, 2);
    std::vector<char*> argv;
    for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    execv(argv[0], argv.data());
    _exit(127);
  }
  return pid;
}

bool gone_within(pid_t pid, std::chrono::seconds limit) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < deadline) {
    const char s = process_state(pid);
    if (s == 0 || s == 'Z' || s == 'X') return true;
    std::this_thread::sleep_for(50ms);
  }
  return false;
}

}  // namespace

// Item 1: an export pointed at the results database (or the spec) is
// refused before anything runs, and the database is left as it was.
TEST(ReliabilityCli, AnOutputPointedAtTheStoreOrTheSpecIsRefused) {
  const auto dir = fresh_dir();
  const std::string spec = write_spec(dir, "{KIND: [0]}");
  const std::string out = (dir / "out").string(), db = (dir / "out" / "tunekit.db").string();
  ASSERT_EQ(tunekit_cli({"tune", spec, "-o", out, "--no-progress"}).exit_code, 0);
  const auto before = fs::file_size(db);
  for (const char* flag : {"--csv", "--json", "--html"}) {
    auto r = tunekit_cli({"tune", spec, "-o", out, "--no-progress", flag, db});
    EXPECT_EQ(r.exit_code, 1) << flag << ": " << r.output;
    EXPECT_TRUE(contains(r.output, "the results database")) << r.output;
    r = tunekit_cli({"tune", spec, "-o", out, "--no-progress", flag, spec});
    EXPECT_EQ(r.exit_code, 1) << r.output;
    EXPECT_TRUE(contains(r.output, "is the spec")) << r.output;
  }
  // A store elsewhere (another run's) is recognised by its contents.
  fs::copy_file(db, dir / "other.db");
  auto r = tunekit_cli({"tune", spec, "-o", out, "--no-progress", "--csv", (dir / "other.db").string()});
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_TRUE(contains(r.output, "SQLite database")) << r.output;
  EXPECT_EQ(fs::file_size(db), before);
  EXPECT_EQ(Store(db).all().size(), 1u);
}

// An output path that cannot be a file (a folder, a path under a file) is
// refused at its flag before anything runs or is written, by `tune`, `emit`
// and `report` alike; before, `tune --csv DIR` ran the whole tune and then
// failed with "cannot write DIR: Success", and `emit` said it had written a
// header it could not write.
TEST(ReliabilityCli, AnOutputPathThatCannotBeWrittenIsRefusedAtItsFlag) {
  const auto dir = fresh_dir();
  const std::string spec = write_spec(dir, "{KIND: [0, 1]}");
  const std::string out = (dir / "out").string();
  write_file(dir / "plain", "not a folder");
  const std::string under_file = (dir / "plain" / "x.hpp").string();
  for (const char* flag : {"--csv", "--json", "--html"}) {
    auto r = tunekit_cli({"tune", spec, "-o", out, "--no-progress", flag, dir.string()});
    EXPECT_EQ(r.exit_code, 1) << flag << ": " << r.output;
    EXPECT_TRUE(contains(r.output, std::string(flag) + ": '" + dir.string() + "' is a folder")) << r.output;
    EXPECT_FALSE(contains(r.output, "No.1")) << r.output;  // refused before the run
  }
  ASSERT_EQ(tunekit_cli({"tune", spec, "-o", out, "--no-progress"}).exit_code, 0);
  auto folder = tunekit_cli({"emit", spec, "-o", out, "--header", dir.string()});
  EXPECT_EQ(folder.exit_code, 1) << folder.output;
  EXPECT_TRUE(contains(folder.output, "--header: '" + dir.string() + "' is a folder")) << folder.output;
  // Nothing is written when any one path is bad: the JSON would come first.
  auto under = tunekit_cli({"emit", spec, "-o", out, "--json", (dir / "p.json").string(), "--header", under_file});
  EXPECT_EQ(under.exit_code, 1) << under.output;
  EXPECT_TRUE(contains(under.output, "--header: '" + (dir / "plain").string() + "' is not a folder")) << under.output;
  EXPECT_FALSE(fs::exists(dir / "p.json"));
  auto page = tunekit_cli({"report", spec, "-o", out, "--html", under_file});
  EXPECT_EQ(page.exit_code, 1) << page.output;
  EXPECT_TRUE(contains(page.output, "--html: ")) << page.output;
  // A folder that cannot be created (not even by root, in /proc) is the
  // write's error, named by its flag, with no success line.
  auto proc = tunekit_cli({"emit", spec, "-o", out, "--header", "/proc/self/no/such.hpp"});
  EXPECT_EQ(proc.exit_code, 1) << proc.output;
  EXPECT_TRUE(contains(proc.output, "--header: ")) << proc.output;
  EXPECT_FALSE(contains(proc.output, "sizes (")) << proc.output;
  // A folder that refuses new files is found before the tune, not after it
  // (before, the whole tune ran and the error named no flag).
  auto unwritable = tunekit_cli({"tune", spec, "-o", out, "--no-progress", "--fresh", "--csv", "/proc/x.csv"});
  EXPECT_EQ(unwritable.exit_code, 1) << unwritable.output;
  EXPECT_TRUE(contains(unwritable.output, "--csv: '/proc/x.csv' cannot be written: /proc cannot hold a new file"))
      << unwritable.output;
  EXPECT_FALSE(contains(unwritable.output, "No.1")) << unwritable.output;
}

// --db naming a file that is not a results store is bad input at the flag
// (exit 1), for every command that reads one.
TEST(ReliabilityCli, ADatabaseFlagOnAnotherKindOfFileIsTheFlagsError) {
  const auto dir = fresh_dir();
  const std::string spec = write_spec(dir, "{KIND: [0]}");
  write_file(dir / "notes.txt", "these are not trials, but long enough to have an SQLite header's worth of bytes\n");
  const std::string db = (dir / "notes.txt").string();
  for (const char* command : {"select", "emit", "report"}) {
    auto r = tunekit_cli({command, spec, "--db", db, "-o", (dir / "out").string()});
    EXPECT_EQ(r.exit_code, 1) << command << ": " << r.output;
    EXPECT_TRUE(contains(r.output, "--db: cannot read " + db + " as a tunekit results database")) << r.output;
  }
  // `tune` too, before it builds anything: a text file, a folder, and the
  // spec's own output.db (named by the spec file).
  auto r = tunekit_cli({"tune", spec, "--db", db, "-o", (dir / "out").string(), "--no-progress"});
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_TRUE(contains(r.output, "--db: cannot tune into " + db + ": ")) << r.output;
  fs::create_directories(dir / "folder.db");
  r = tunekit_cli({"tune", spec, "--db", (dir / "folder.db").string(), "-o", (dir / "out").string()});
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_TRUE(contains(r.output, "--db: " + (dir / "folder.db").string() + " is a folder")) << r.output;
  // A device or a pipe, refused before SQLite would open it and leave its
  // journal beside it.
  ASSERT_EQ(::mkfifo((dir / "pipe.db").c_str(), 0600), 0);
  for (const fs::path& device : {fs::path("/dev/null"), dir / "pipe.db"}) {
    r = tunekit_cli({"tune", spec, "--db", device.string(), "-o", (dir / "out").string()});
    EXPECT_EQ(r.exit_code, 1) << r.output;
    EXPECT_TRUE(contains(r.output, "--db: " + device.string() + " is not a regular file")) << r.output;
  }
  write_file(spec, read_file(spec) + "output: {db: '" + db + "'}\n");
  r = tunekit_cli({"tune", spec, "-o", (dir / "out").string()});
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_TRUE(contains(r.output, spec + ": cannot tune into ")) << r.output;
  EXPECT_FALSE(fs::exists(dir / "out" / "cache")) << "something was built";
}

// An SQLite database with no table yet is one a tune makes its table in:
// another rank of an MPI tune creates the store as this one checks it (the
// MPI test met that race), or it was left empty.
TEST(ReliabilityCli, ATuneIntoADatabaseBeingCreatedGoesOn) {
  const auto dir = fresh_dir();
  const std::string spec = write_spec(dir, "{KIND: [0]}");
  const fs::path db = dir / "new.db";
  sqlite3* handle = nullptr;
  ASSERT_EQ(sqlite3_open(db.c_str(), &handle), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(handle, "PRAGMA journal_mode=WAL", nullptr, nullptr, nullptr), SQLITE_OK);  // the header
  sqlite3_close(handle);
  ASSERT_GT(fs::file_size(db), 0u);
  auto r = tunekit_cli({"tune", spec, "--db", db.string(), "-o", (dir / "out").string(), "--no-progress"});
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(Store(db).all().size(), 1u);
}

// --entry and --arg describe a bare source's call; given with a spec they
// would do nothing, so they are refused rather than ignored.
TEST(ReliabilityCli, CallFlagsWithASpecAreRefused) {
  const auto dir = fresh_dir();
  const std::string spec = write_spec(dir, "{KIND: [0]}");
  auto entry = tunekit_cli({"tune", spec, "--entry", "g", "--no-progress", "-o", (dir / "out").string()});
  EXPECT_EQ(entry.exit_code, 1) << entry.output;
  EXPECT_TRUE(contains(entry.output, "--entry: describes the call of a bare kernel source")) << entry.output;
  auto arg = tunekit_cli({"tune", spec, "--arg", "n:i32=4", "--no-progress", "-o", (dir / "out").string()});
  EXPECT_EQ(arg.exit_code, 1) << arg.output;
  EXPECT_TRUE(contains(arg.output, "--arg: describes the call")) << arg.output;
}

// Item 20: usage errors exit 1, as documented, and say what was wrong.
TEST(ReliabilityCli, UsageErrorsExitOneAndSayWhatIsWrong) {
  const auto dir = fresh_dir();
  const std::string spec = write_spec(dir, "{KIND: [0]}");
  auto r = tunekit_cli({"tnue", spec});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_TRUE(contains(r.output, "unknown subcommand 'tnue'")) << r.output;
  EXPECT_TRUE(contains(r.output, "did you mean 'tune'")) << r.output;
  EXPECT_FALSE(contains(r.output, "A subcommand is required")) << r.output;

  r = tunekit_cli({"tune", spec, "--no-such-flag"});
  EXPECT_EQ(r.exit_code, 1) << r.output;
  r = tunekit_cli({"tune"});
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_EQ(tunekit_cli({"--help"}).exit_code, 0);
  // No subcommand at all: the list of them, as --help gives it, and exit 1.
  r = tunekit_cli(std::vector<std::string>{});
  EXPECT_EQ(r.exit_code, 1) << r.output;
  for (const char* sub : {"tune", "space", "select", "emit", "rules-report", "report", "resolve", "replay"})
    EXPECT_TRUE(contains(r.output, std::string("\n  ") + sub + " ")) << sub << "\n" << r.output;
  EXPECT_TRUE(contains(r.output, "error: a subcommand is required")) << r.output;

  // Durations: a bad one is bad input (1, naming the flag), and so is zero.
  for (const char* bad : {"0", "0s", "abc", "-1s"}) {
    r = tunekit_cli({"tune", spec, "--no-progress", "--timeout", bad});
    EXPECT_EQ(r.exit_code, 1) << bad << ": " << r.output;
    EXPECT_TRUE(contains(r.output, "--timeout")) << r.output;
  }
  r = tunekit_cli({"tune", spec, "--no-progress", "--max-time", "soon"});
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_TRUE(contains(r.output, "--max-time")) << r.output;
  // A timeout that the spec's sampling cap (max_time, 2 s by default) would
  // reach: a working config would be killed as hung, its samples lost.
  r = tunekit_cli({"tune", spec, "--no-progress", "--timeout", "2s"});
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_TRUE(contains(r.output,
                       "--timeout: the warm-up (0 s) and the sampling cap, max_time (2 s), take 2 s, which does not "
                       "fit within the timeout (2 s) that bounds the whole trial: expected a timeout above 2 s, or a "
                       "shorter max_time (the spec's measure.warmup and measure.max_time)\n"))
      << r.output;
  // ... or that the warm-up would.
  std::string text = read_file(spec);
  text.replace(text.find("warmup: 0us"), 11, "warmup: 2s");
  write_file(spec, text);
  r = tunekit_cli({"tune", spec, "--no-progress", "--timeout", "3s"});
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_TRUE(contains(r.output, "--timeout: the warm-up (2 s) and the sampling cap, max_time (2 s), take 4 s"))
      << r.output;
}

// A config whose calls take 0.5 s, with a min_samples (50) that would outlast
// the 4 s timeout: measured on the samples there was time for, with a note,
// not killed as hung (all its samples were lost). A hung config is still a
// timeout, whose message names the setting.
TEST(ReliabilityCli, ASlowConfigIsMeasuredOnTheSamplesItsTimeoutLeavesAndAHungOneTimesOut) {
  const auto dir = fresh_dir();
  const fs::path hang_mark = dir / "HANG";
  write_file(hang_mark, "");
  const std::string spec = write_spec(dir, "{KIND: [4, 3]}", hang_mark);
  std::string text = read_file(dir / "k.cpp");
  text.replace(text.find("  for (int i = 0; i < n; ++i)"), 0, "#if KIND == 4\n  usleep(500000);\n#endif\n");
  write_file(dir / "k.cpp", text);
  text = read_file(spec);
  text.replace(text.find("min_samples: 2, max_samples: 2"), 30, "min_samples: 50, max_samples: 100, noise: 0");
  write_file(spec, text);
  // No confirmation: measuring the slow config again would triple the test's time.
  const auto r =
      tunekit_cli({"tune", spec, "-o", (dir / "out").string(), "--no-progress", "--timeout", "4s", "--confirm", "off"});
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(contains(r.output,
                       "timeout, {KIND: 3} (no result within 4 s (measure.timeout, --timeout; warm-up + "
                       "max_time: 2 s of it); worker killed)"))
      << r.output;
  Store store(dir / "out" / "tunekit.db");
  std::size_t seen = 0;
  for (const TrialRecord& t : store.all()) {
    if (t.config.at("KIND").as_int() != 4) continue;
    ++seen;
    EXPECT_EQ(t.status, Status::ok) << t.error;
    EXPECT_GE(t.samples.size(), 1u);
    EXPECT_LT(t.samples.size(), 50u);
    EXPECT_TRUE(contains(t.error, "sampling stopped after ")) << t.error;
    EXPECT_TRUE(contains(t.error,
                         " (min_samples 50) to answer within the trial's timeout (4 s: measure.timeout, "
                         "--timeout)"))
        << t.error;
  }
  EXPECT_EQ(seen, 1u);
}

// A name no parameter, size or machine property has, in an argument or
// the launch geometry, is the spec's error before any trial: not a
// launch error stored as every config's failure.
TEST(ReliabilityCli, AnUnknownNameInAnArgumentIsTheSpecsErrorNotTheConfigs) {
  const auto dir = fresh_dir();
  const std::string spec = write_spec(dir, "{KIND: [0, 1]}");
  std::string text = tunekit::testing::read_file(spec);
  const auto at = text.find("value: N}");
  ASSERT_NE(at, std::string::npos);
  text.replace(at, 9, "value: NN}");
  write_file(spec, text);
  const fs::path out = dir / "out";
  const auto tune = tunekit_cli({"tune", spec, "-o", out.string(), "--no-progress"});
  const auto space = tunekit_cli({"space", spec});
  for (const auto* r : {&tune, &space}) {
    EXPECT_EQ(r->exit_code, 1) << r->output;
    EXPECT_TRUE(contains(r->output, "k.yaml:6:")) << r->output;  // the argument's line
    EXPECT_TRUE(contains(r->output, "unknown name 'NN' in 'NN'; did you mean 'N'?")) << r->output;
  }
  EXPECT_TRUE(!fs::exists(out / "tunekit.db") || Store(out / "tunekit.db").all().empty());
}

// A misspelt flag is named, with the nearest flag of its command; a number
// flag says what it expected, and no value is wrapped, clamped or crashes.
TEST(ReliabilityCli, FlagErrorsNameTheFlagAndWhatWasExpected) {
  const auto dir = fresh_dir();
  const std::string spec = write_spec(dir, "{KIND: [0]}");
  auto r = tunekit_cli({"tune", spec, "--max-eval", "2"});
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_TRUE(contains(r.output, "unknown flag '--max-eval' of `tunekit tune`; did you mean '--max-evals'?"))
      << r.output;
  // Cut short: the flags it begins.
  r = tunekit_cli({"tune", spec, "--out", "x"});
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_TRUE(contains(r.output, "unknown flag '--out' of `tunekit tune`; did you mean '--output' or '--out-dir'?"))
      << r.output;
  // Kernel Tuner's name for what a flag does here, with - or _, names the flag.
  r = tunekit_cli({"tune", spec, "--strategy-options", "popsize=10"});
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_TRUE(contains(r.output,
                       "unknown flag '--strategy-options' of `tunekit tune`; Kernel Tuner's "
                       "strategy_options is '--option' here: NAME=VALUE, once per option"))
      << r.output;
  r = tunekit_cli({"replay", spec, "--time_limit", "10"});
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_TRUE(contains(r.output,
                       "unknown flag '--time_limit' of `tunekit replay`; Kernel Tuner's time_limit is "
                       "'--max-time' here: seconds, or a duration such as 90s or 5m"))
      << r.output;
  r = tunekit_cli({"select", spec, "--mod", "cover"});
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_TRUE(contains(r.output, "did you mean '--mode'?")) << r.output;
  // A short flag the command lacks is named without a guess: every short
  // flag is one letter from every other ('-j' is no typo of '-h').
  r = tunekit_cli({"select", spec, "-j", "2"});
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_TRUE(contains(r.output, "unknown flag '-j' of `tunekit select` (`tunekit select --help` lists its flags)"))
      << r.output;

  const std::vector<std::vector<std::string>> bad = {
      {"tune", spec, "--max-evals", "abc"},
      {"tune", spec, "--seed", "99999999999999999999999"},
      {"tune", spec, "--jobs", "-1"},
      {"tune", spec, "--atol", "abc"},
      {"select", spec, "--seed", "-1"},
      {"select", spec, "--mode", "cover", "--within", "-5"},
      {"emit", spec, "--mode", "cover", "--within", "nan"},
  };
  for (const auto& args : bad) {
    r = tunekit_cli(args);
    EXPECT_EQ(r.exit_code, 1) << args[2] << " " << args.back() << ": " << r.output;
    EXPECT_TRUE(contains(r.output, args[args.size() - 2] + ": ")) << r.output;
    EXPECT_TRUE(contains(r.output, "expected")) << r.output;
  }

  // Given twice, empty, or unknown to the command: said, not a silent choice.
  write_file(dir / "notes.txt", "no parameters here\n");
  const std::vector<std::pair<std::vector<std::string>, std::string>> refused = {
      {{"tune", spec, "--strategy", "genetic", "--option", "population=5", "--option", "population=6"},
       "'population' is given twice (--option population=5 and --option population=6)"},
      {{"tune", spec, "--strategy", ""}, "unknown strategy ''"},
      // A strategy of Kernel Tuner's that none here stands for says so.
      {{"tune", spec, "--strategy", "pso"}, "unknown strategy 'pso' (known: "},
      {{"tune", spec, "--strategy", "pso"},
       "; Kernel Tuner's pso has no counterpart here; 'auto', the default, is the "
       "strategy bench/search compares with Kernel Tuner's best"},
      // Under Kernel Tuner's name, its restart is Kernel Tuner's, not local's.
      {{"tune", spec, "--strategy", "mls", "--option", "restart=true"},
       "--option restart=true: option 'restart' of strategy 'mls' is Kernel Tuner's"},
      // The command line parser's own errors read as tunekit's.
      {{"select"}, "error: SPEC is required (`tunekit select --help` lists the flags)"},
      {{"emit", spec, "--header", "a.hpp", "--header", "b.hpp"},
       "error: --header: given more than once; give it once (`tunekit emit --help` lists the flags)"},
      // true is no number, though it reads as 1 where a flag is 0 or 1.
      {{"tune", spec, "--strategy", "genetic", "--option", "population=true"},
       "--option population=true: option 'population' of strategy 'genetic' must be integer in [2, 1000000], got "
       "true"},
      {{"tune", spec, "--strategy", "genetic", "--option", "mutation=false"},
       "option 'mutation' of strategy 'genetic' must be number"},
      {{"space", spec, "-s", "Q=1"}, "--size Q=1: the spec uses no size named 'Q'"},
      {{"space", (dir / "notes.txt").string()}, "no tunable parameter here"},
      // A source without %RANGE% lines has nothing to tune: not one empty config.
      {{"tune", (dir / "notes.txt").string(), "--entry", "f", "-s", "N=4"}, "no tunable parameter here"},
  };
  for (const auto& [args, message] : refused) {
    r = tunekit_cli(args);
    EXPECT_EQ(r.exit_code, 1) << r.output;
    EXPECT_TRUE(contains(r.output, message)) << message << "\n" << r.output;
  }

  // An output folder that is a file: the flag, not a filesystem exception.
  write_file(dir / "afile", "x\n");
  r = tunekit_cli({"tune", spec, "--no-progress", "-o", (dir / "afile").string()});
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_TRUE(contains(r.output, "--out-dir " + (dir / "afile").string() + ": is a file; expected a folder"))
      << r.output;
}

// A store keeps every size a spec was tuned at, those of earlier -a flags
// too: select and emit answer for the sizes -s and -a make, as tune's make
// them, and a flag that makes none the store holds is refused, naming what
// it holds.
TEST(ReliabilityCli, SelectAndEmitAnswerForTheSizesTheirFlagsMake) {
  const auto dir = fresh_dir();
  const std::string spec = write_spec(dir, "{KIND: [0, 1]}");
  const std::string out = (dir / "out").string();
  ASSERT_EQ(tunekit_cli({"tune", spec, "--no-progress", "-o", out, "-a", "N=[64,128,256]"}).exit_code, 0);
  auto r = tunekit_cli({"select", spec, "-o", out});
  EXPECT_TRUE(contains(r.output, "3 sizes")) << r.output;
  r = tunekit_cli({"select", spec, "-o", out, "-s", "N=128"});
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "1 size, ")) << r.output;
  EXPECT_TRUE(contains(r.output, "{N: 128}")) << r.output;
  r = tunekit_cli({"select", spec, "-o", out, "-a", "N=[64,256]"});
  EXPECT_TRUE(contains(r.output, "2 sizes")) << r.output;
  r = tunekit_cli({"emit", spec, "-o", out, "-s", "N=256", "--json", (dir / "p.json").string(), "--header",
                   (dir / "p.hpp").string()});
  EXPECT_EQ(r.exit_code, 0) << r.output;
  const auto policy = nlohmann::json::parse(read_file(dir / "p.json"));
  ASSERT_EQ(policy["entries"].size(), 1u) << policy.dump();
  EXPECT_EQ(policy["entries"][0]["size"]["N"], 256);
  r = tunekit_cli({"select", spec, "-o", out, "-s", "N=999"});
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_TRUE(contains(r.output,
                       "--size N=999: the store holds no trials of this spec at the sizes the flags "
                       "make; it holds {N: 128}, {N: 256}, {N: 64}"))
      << r.output;
}

// Item 26: counts, seeds and tolerances out of range are refused at the flag
// instead of meaning "unlimited" or wrapping around.
TEST(ReliabilityCli, OutOfRangeNumbersAreRefusedAtTheFlag) {
  const auto dir = fresh_dir();
  const std::string spec = write_spec(dir, "{KIND: [0]}");
  const std::vector<std::vector<std::string>> cases = {
      {"--max-evals", "0"}, {"--max-evals", "-1"}, {"--seed", "-1"},          {"--atol", "-1"},
      {"--rtol", "-0.5"},   {"--atol", "nan"},     {"--jobs", "99999999999"},  // past `unsigned`: once CLI11's "Could
                                                                               // not convert"
  };
  for (const auto& c : cases) {
    auto r = tunekit_cli({"tune", spec, "--no-progress", "-o", (dir / "out").string(), c[0], c[1]});
    EXPECT_EQ(r.exit_code, 1) << c[0] << " " << c[1] << ": " << r.output;
    EXPECT_TRUE(contains(r.output, c[0])) << r.output;
  }
  EXPECT_FALSE(fs::exists(dir / "out" / "tunekit.db"));
}

// Items 20 and 25: a malformed or unknown size on the command line is
// refused at the flag, not later at a line of the spec; a name the spec
// never uses would tune the same work twice.
TEST(ReliabilityCli, SizeFlagsAreCheckedAtTheFlag) {
  const auto dir = fresh_dir();
  const std::string spec = write_spec(dir, "{KIND: [0]}");
  struct Case {
    std::vector<std::string> flag;
    std::string said;
  };
  for (const Case& c : std::vector<Case>{
           {{"-a", "N=[1,2"}, "-a N=[1,2"},
           {{"-a", "N[pow3]=[1:2]"},
            "-a N[pow3]=[1:2]: unknown modifier '[pow3]' after 'N' (the one there is: [pow2])"},
           {{"-a", "Q=[1,2]"}, "no size named 'Q'"},
           // The later flag replaced the earlier one in silence.
           {{"-a", "N[pow2]=[6:8]", "-a", "N=[1:3]"},
            "-a N=[1:3]: size 'N' is given twice (by -a N[pow2]=[6:8] before)"},
           {{"--size", "N=64", "-a", "N=[1:3]"}, "-a N=[1:3]: size 'N' is given twice (by --size N=64 before)"},
           {{"--size", "NN=4"}, "did you mean 'N'"},
           {{"-a", "KIND=[1]"}, "is a parameter"},
           {{"--size", "N"}, "expected NAME=VALUE"},
           {{"--size", "N="}, "--size N=: bad assignment 'N=': the value is missing"},
       }) {
    std::vector<std::string> args{"tune", spec, "--no-progress", "-o", (dir / "out").string()};
    args.insert(args.end(), c.flag.begin(), c.flag.end());
    auto r = tunekit_cli(args);
    EXPECT_EQ(r.exit_code, 1) << c.flag[1] << ": " << r.output;
    EXPECT_TRUE(contains(r.output, c.said)) << r.output;
    EXPECT_FALSE(contains(r.output, "k.yaml:")) << r.output;
  }
}

// -s sets its name in every size of the spec: sizes that then differ in
// nothing are one size, tuned once; those that still differ stay apart.
TEST(ReliabilityCli, ASizeFlagTunesEachDistinctSizeOnce) {
  const auto dir = fresh_dir();
  write_spec(dir, "{KIND: [0]}");
  write_file(dir / "sizes.yaml", R"(name: k
kernel: {source: k.cpp, entry: f, flags: [-O0]}
arguments:
  - {name: x, type: f32, size: N * M}
  - {name: y, type: f32, size: N * M, role: out}
  - {name: n, type: i32, value: N * M}
sizes: [{N: 64, M: 1}, {N: 128, M: 1}, {N: 64, M: 2}]
parameters: {KIND: [0]}
measure: {warmup: 0us, min_samples: 2, max_samples: 2, cache: hot, early_stop: off}
)");
  struct Case {
    std::string flag;
    std::vector<std::string> sizes;  // as the JSON has them, in order
  };
  for (const Case& c : std::vector<Case>{{"N=32", {R"({"M":1,"N":32})", R"({"M":2,"N":32})"}},
                                         {"M=1", {R"({"M":1,"N":64})", R"({"M":1,"N":128})"}}}) {
    const fs::path out = dir / ("out-" + c.flag);
    auto r = tunekit_cli({"tune", (dir / "sizes.yaml").string(), "-s", c.flag, "--no-progress", "-o", out.string(),
                          "--output", "json", "--json", (out / "k.json").string()});
    ASSERT_EQ(r.exit_code, 0) << c.flag << ": " << r.output;
    const auto j = nlohmann::json::parse(read_file(out / "k.json"));  // named: the loop reads a member of it
    std::vector<std::string> sizes;
    for (const auto& s : j["sizes"]) sizes.push_back(s["size"].dump());
    EXPECT_EQ(sizes, c.sizes) << c.flag;
  }
}

// A machine property that the constraints read is no size: -s refuses it
// at the flag and points at --properties, and a mistyped size is offered
// the spec's sizes without it; a size the spec names like a property is a
// size.
TEST(ReliabilityCli, ASizeFlagRefusesAMachineProperty) {
  const auto dir = fresh_dir();
  const std::string spec = write_spec(dir, "{KIND: [0]}\nconstraints: [KIND * 4 <= l1d_bytes]");
  const std::string out = (dir / "out").string();
  for (const std::string command : {"tune", "space"}) {
    std::vector<std::string> args{command, spec, "-s", "l1d_bytes=100"};
    if (command == "tune") args.insert(args.end(), {"-o", out, "--no-progress"});
    auto r = tunekit_cli(args);
    EXPECT_EQ(r.exit_code, 1) << command << ": " << r.output;
    EXPECT_TRUE(contains(r.output, "--size l1d_bytes=100: 'l1d_bytes' is a property of the machine")) << r.output;
    EXPECT_TRUE(contains(r.output, "--properties FILE")) << r.output;
  }
  auto typo = tunekit_cli({"tune", spec, "-s", "l1d_byte=100", "-o", out, "--no-progress"});
  EXPECT_EQ(typo.exit_code, 1) << typo.output;
  EXPECT_TRUE(contains(typo.output, "--size l1d_byte=100: the spec uses no size named 'l1d_byte' (its sizes: N)"))
      << typo.output;

  write_file(dir / "cores.yaml", R"(name: k
kernel: {source: k.cpp, entry: f, flags: [-O0]}
arguments:
  - {name: x, type: f32, size: N}
  - {name: y, type: f32, size: N, role: out}
  - {name: n, type: i32, value: N}
sizes: {N: 64, cores: 2}
parameters: {KIND: [0, 1]}
constraints: [KIND < cores]
measure: {warmup: 0us, min_samples: 2, max_samples: 2, cache: hot, early_stop: off}
)");
  auto declared = tunekit_cli({"space", (dir / "cores.yaml").string(), "-s", "cores=1"});
  EXPECT_EQ(declared.exit_code, 0) << declared.output;
  EXPECT_TRUE(contains(declared.output, "valid:       1")) << declared.output;
}

// A compiler or flags given on the command line that cannot build are
// named as such, not as the reference's failure; a value or an argument
// given twice is refused, not deduplicated; a namespace that is no C++ name
// is refused, not rewritten; a --seed filter that matches nothing is named.
TEST(ReliabilityCli, BuildSettingsRepeatsAndFiltersAreNamedWhereTheyWereGiven) {
  const auto dir = fresh_dir();
  const std::string spec = write_spec(dir, "{KIND: [0]}");
  const std::string out = (dir / "out").string();
  write_file(dir / "ranged.cpp", "// %RANGE% KIND kind 0:1:1\n" + read_file(dir / "k.cpp"));
  struct Case {
    std::vector<std::string> args;
    std::string said;
    int exit_code;
  };
  for (const Case& c : std::vector<Case>{
           {{"tune", spec, "--compiler", "tunekit-no-such-cc"},
            "--compiler: the compiler 'tunekit-no-such-cc' cannot build here",
            1},
           {{"tune", spec, "--flags=-ftunekit-no-such-flag"},
            "(with the flags '-ftunekit-no-such-flag' of --flags)",
            3},
           {{"tune", spec, "-a", "N=[8,16,8]"}, "-a N=[8,16,8]: duplicate value 8 in 'N' (also at index 0)", 1},
           {{"tune", (dir / "ranged.cpp").string(), "--entry", "f", "--size", "N=8", "--arg", "x:f32:N", "--arg",
             "y:f32:N::out", "--arg", "x:f32:N"},
            "--arg x:f32:N: argument 'x' is given twice",
            1},
           // A reference named by the flag is blamed on the flag, not on the
           // spec's line.
           {{"tune", spec, "--reference", "tunekit_no_such_fn"},
            "--reference tunekit_no_such_fn: reference 'tunekit_no_such_fn' does not appear in",
            1},
           // Nothing to compare with the reference the flag names (the
           // output's role left out): refused, not every trial "verified".
           {{"tune", (dir / "ranged.cpp").string(), "--entry", "f", "--size", "N=8", "--arg", "x:f32:N", "--arg",
             "y:f32:N", "--reference", "default"},
            "--reference default: gives outputs to compare with, but no argument has role out or inout",
            1},
           // An out buffer starts as NaN: a fill given to it would never be
           // seen, as a spec's `role: out` with a fill is refused.
           {{"tune", (dir / "ranged.cpp").string(), "--entry", "f", "--size", "N=8", "--arg", "x:f32:N", "--arg",
             "y:f32:N:1.0:out"},
            "--arg y:f32:N:1.0:out: fill '1.0' of an out buffer, which starts as NaN",
            1},
       }) {
    std::vector<std::string> args = c.args;
    args.insert(args.end(), {"--no-progress", "-o", out});
    const auto r = tunekit_cli(args);
    EXPECT_EQ(r.exit_code, c.exit_code) << r.output;
    EXPECT_TRUE(contains(r.output, c.said)) << c.said << "\n" << r.output;
  }

  ASSERT_EQ(tunekit_cli({"tune", spec, "--no-progress", "-o", out}).exit_code, 0);
  const std::string db = out + "/tunekit.db";
  auto r = tunekit_cli({"emit", spec, "--db", db, "-o", out, "--namespace", "my ns"});
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_TRUE(contains(r.output, "--namespace: 'my ns' is not an identifier")) << r.output;
  r = tunekit_cli({"emit", spec, "--db", db, "-o", out, "--namespace", "lab::tuned"});
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(contains(tunekit::testing::read_file(out + "/k_policy.hpp"), "namespace lab::tuned {"));
  // Flags that shape an output not asked for, or name no file, are refused
  // at the flag rather than ignored.
  for (const auto& [args, said] : std::vector<std::pair<std::vector<std::string>, std::string>>{
           {{"--vllm-dtype", "fp8_w8a8"}, "--vllm-dtype: shapes the files of --vllm FOLDER, which is not given"},
           {{"--vllm-batch", "T"}, "--vllm-batch: shapes the files of --vllm FOLDER, which is not given"},
           {{"--vllm", out + "/v", "--vllm-dtype", "../x"},
            "--vllm-dtype: '../x' is not a dtype vLLM names its fused-MoE files by"},
           {{"--header", ""}, "--header: expected a path, got an empty one"},
           {{"--triton-configs", out + "/c.py"},
            "--triton-configs: writes configs for a Triton kernel; the spec's kernel has language: c++"},
           {{"--vllm", out + "/v"},
            "--vllm: writes configs for a Triton kernel; the spec's kernel has language: c++"}}) {
    std::vector<std::string> emit{"emit", spec, "--db", db, "-o", out};
    emit.insert(emit.end(), args.begin(), args.end());
    r = tunekit_cli(emit);
    EXPECT_EQ(r.exit_code, 1) << r.output;
    EXPECT_TRUE(contains(r.output, said)) << said << "\n" << r.output;
  }
  r = tunekit_cli({"select", spec, "--db", db, "--seed", "7"});
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_TRUE(contains(r.output, "--seed: the database " + db +
                                     " has no trials of this spec with --seed 7; it has "
                                     "the spec's own (leave out --seed 7)"))
      << r.output;
  r = tunekit_cli({"report", "--db", db, "--seed", "7"});
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_TRUE(contains(r.output, "--seed: picks the trials of a spec tuned with that setting: give the SPEC too"))
      << r.output;
}

// `space` and `resolve` refuse a parameter named like a machine property,
// as `tune` does: else they would count and resolve with the parameter's
// value where the machine's belongs.
TEST(ReliabilityCli, APropertysNameIsNoParametersInAnyCommand) {
  const auto dir = fresh_dir();
  const std::string spec = write_spec(dir, "{KIND: [0, 1], cores: [1, 2]}");
  for (const std::vector<std::string>& command : {std::vector<std::string>{"space", spec},
                                                  {"resolve", spec, "--config", "KIND=0,cores=2"},
                                                  {"tune", spec, "--no-progress", "-o", (dir / "out").string()}}) {
    const auto r = tunekit_cli(command);
    EXPECT_EQ(r.exit_code, 1) << command[0] << ": " << r.output;
    EXPECT_TRUE(contains(r.output, spec + ":8:28: parameter")) << command[0] << ": " << r.output;
    EXPECT_TRUE(contains(r.output, "parameter 'cores' has the name of a property of the machine")) << r.output;
  }
}

// `report SPEC` writes again the page the tune wrote: at the spec's
// output.html, and with the sizes that ran nothing listed, as the tune's was.
TEST(ReliabilityCli, AReportOfASpecRewritesTheTunesPageWithItsStoppedSizes) {
  const auto dir = fresh_dir();
  const std::string spec = write_spec(dir, "{KIND: [0, 1]}");
  std::string text = read_file(spec);
  text.replace(text.find("sizes: {N: 64}"), 14, "sizes: [{N: 64}, {N: 16}]\nconstraints: [KIND * 32 + 32 < N]");
  const fs::path page = dir / "custom.html";
  write_file(spec, text + "output: {html: '" + page.string() + "'}\n");
  const std::string out = (dir / "out").string();
  ASSERT_EQ(tunekit_cli({"tune", spec, "--no-progress", "-o", out}).exit_code, 0);
  ASSERT_TRUE(contains(read_file(page), "Size N = 16 ran nothing")) << read_file(page);
  fs::remove(page);
  const auto r = tunekit_cli({"report", spec, "-o", out});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "report: " + page.string())) << r.output;
  ASSERT_TRUE(fs::exists(page)) << r.output;
  EXPECT_TRUE(contains(read_file(page), "Size N = 16 ran nothing")) << read_file(page);
  EXPECT_TRUE(contains(read_file(page), "no config is valid at this size")) << read_file(page);
  EXPECT_FALSE(fs::exists(dir / "out" / "k.html"));
}

// A reference entry the source does not have is named at its line in the
// spec, not only as a build that failed.
TEST(ReliabilityCli, AReferenceEntryTheSourceLacksIsNamedWhereTheSpecGivesIt) {
  const auto dir = fresh_dir();
  const std::string spec = write_spec(dir, "{KIND: [0, 1]}");
  write_file(spec, tunekit::testing::read_file(spec) + "reference: {entry: f_naiv}\n");
  const auto r = tunekit_cli({"tune", spec, "--no-progress", "-o", (dir / "out").string()});
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_TRUE(contains(r.output, spec + ":10:20: reference")) << r.output;
  EXPECT_TRUE(contains(r.output, "reference 'f_naiv' does not appear in k.cpp, and")) << r.output;
  // A typo of a name the source has is hinted.
  std::string text = tunekit::testing::read_file(spec);
  text.replace(text.find("f_naiv"), 6, "acess");
  write_file(spec, text);
  const auto typo = tunekit_cli({"tune", spec, "--no-progress", "-o", (dir / "out").string()});
  EXPECT_TRUE(contains(typo.output, "reference 'acess' does not appear in k.cpp (did you mean 'access'?)"))
      << typo.output;
}

// A flag the compiler refuses fails every build: the error is the flag's,
// at the spec's kernel.flags, not the first build's that met it.
TEST(ReliabilityCli, AFlagTheCompilerRefusesIsLocatedAtTheFlags) {
  const auto dir = fresh_dir();
  const std::string spec = write_spec(dir, "{KIND: [0, 1]}");
  std::string text = tunekit::testing::read_file(spec);
  text.replace(text.find("[-O0]"), 5, "[-O0, -fno-such-option-anywhere]");
  write_file(spec, text + "reference: {entry: f}\n");
  const auto r = tunekit_cli({"tune", spec, "--no-progress", "-o", (dir / "out").string()});
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_TRUE(contains(r.output, spec + ":2:42: the flag '-fno-such-option-anywhere' is refused by the compiler"))
      << r.output;
}

// A default outside its lists is warned about and the first valid config is
// the baseline; a reference function in the kernel's source is built with
// that config's values, not with the default's, which the source's own
// checks refuse.
TEST(ReliabilityCli, ADefaultOutsideItsListsDoesNotBreakTheReferenceBuild) {
  const auto dir = fresh_dir();
  const std::string spec = write_spec(dir, "{KIND: [0, 1]}");
  write_file(
      dir / "k.cpp",
      "static_assert(KIND != 5, \"KIND 5 is not a kind\");\n"
      "extern \"C\" void f(const float* x, float* y, int n) { for (int i = 0; i < n; ++i) y[i] = 2 * x[i]; }\n"
      "extern \"C\" void g(const float* x, float* y, int n) { for (int i = 0; i < n; ++i) y[i] = x[i] + x[i]; }\n");
  write_file(spec, tunekit::testing::read_file(spec) + "default: {KIND: 5}\nreference: {entry: g}\n");
  const auto r = tunekit_cli({"tune", spec, "--no-progress", "-o", (dir / "out").string()});
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "the default {KIND: 5} is outside its lists")) << r.output;
  EXPECT_FALSE(contains(r.output, "does not build")) << r.output;
  EXPECT_TRUE(contains(r.output, "2 trials: 2 ok")) << r.output;
}

// Item 16: an axis grid too large to hold is refused before it is built.
TEST(ReliabilityCli, AHugeAxisGridIsRefused) {
  const auto dir = fresh_dir();
  std::string spec = write_spec(dir, "{KIND: [0]}");
  std::string text = tunekit::testing::read_file(spec);
  text.replace(text.find("sizes: {N: 64}"), 14, "sizes: {N: 64, M: 1}");
  text.replace(text.find("value: N}"), 9, "value: N * M}");
  write_file(spec, text);
  auto r = tunekit_cli({"tune", spec, "--no-progress", "-a", "N=[1:1000000]", "-a", "M=[1:1000000]"});
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_TRUE(contains(r.output, "more than 100000 sizes")) << r.output;
  EXPECT_FALSE(contains(r.output, "bad_alloc")) << r.output;
}

// Item 7: SIGTERM (and Ctrl-C's SIGINT) stop a run whose kernel hangs: the
// trials done are stored, the worker dies with its tuner, the exit status
// says which signal. SIGKILL leaves the tuner no say: the worker dies by its
// parent-death signal.
TEST(ReliabilityCli, ASignalStopsTheRunAndTheWorkerDiesWithItsTuner) {
  // SIGINT twice at once is one stop (`timeout` signals the child, then its
  // process group), not the second signal that ends the process at once.
  for (const auto& [sig, times] : {std::pair{SIGTERM, 1}, {SIGINT, 1}, {SIGINT, 2}, {SIGKILL, 1}}) {
    const auto dir = fresh_dir("." + std::to_string(sig) + "x" + std::to_string(times));
    const fs::path mark = dir / "HANG";
    write_file(mark, "");
    const std::string spec = write_spec(dir, "{KIND: [0, 3]}", mark);
    const std::string db = (dir / "out" / "tunekit.db").string();
    pid_t tuner = spawn_tune(
        {tunekit_exe().string(), "tune", spec, "-o", (dir / "out").string(), "--no-progress", "--timeout", "300s"});
    ASSERT_GT(tuner, 0);
    // KIND 0 (the baseline) runs first, then KIND 3 hangs: wait for its
    // trial in the store, then for the hang.
    const pid_t worker = wait_for_worker(tuner, 120s);
    ASSERT_GT(worker, 0);
    const auto deadline = std::chrono::steady_clock::now() + 120s;
    while (std::chrono::steady_clock::now() < deadline) {
      try {  // the tuner may be creating the file
        if (fs::exists(db) && Store(db, Store::Access::read_only).all().size() == 1) break;
      } catch (const std::exception&) {
      }
      std::this_thread::sleep_for(100ms);
    }
    std::this_thread::sleep_for(500ms);
    for (int i = 0; i < times; ++i) ASSERT_EQ(::kill(tuner, sig), 0);
    int status = 0;
    ASSERT_EQ(::waitpid(tuner, &status, 0), tuner);
    if (sig == SIGKILL) {
      EXPECT_TRUE(WIFSIGNALED(status));
    } else {
      ASSERT_TRUE(WIFEXITED(status)) << status;
      EXPECT_EQ(WEXITSTATUS(status), 128 + sig);
    }
    EXPECT_TRUE(gone_within(worker, 30s)) << "the worker of a tuner stopped by signal " << sig << " still runs";
    // What was done is stored; the hanging trial is not (it is no one's verdict).
    const auto trials = Store(db).all();
    ASSERT_EQ(trials.size(), 1u) << sig;
    EXPECT_EQ(trials[0].config.at("KIND"), Value(0));
    EXPECT_EQ(trials[0].status, Status::ok);
  }
}

// Item 10: exhaustive search over 10^12 configs with --max-evals 2 runs two
// trials in little memory: nothing materialises the space. The command runs
// in a child process of its own (cli::run), which reports its own peak
// resident memory: the worker's and the compiler's are theirs, not the
// tuner's.
TEST(ReliabilityCli, AHugeSpaceWithASmallBudgetStaysSmall) {
  const auto dir = fresh_dir();
  std::string values = "\"0:999:1\"";
  const std::string spec =
      write_spec(dir, "{A: " + values + ", B: " + values + ", C: " + values + ", D: " + values + "}");
  int report[2];
  ASSERT_EQ(::pipe(report), 0);
  pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    ::close(report[0]);
    int devnull = open("/dev/null", O_WRONLY);
    dup2(devnull, 1);
    const std::string out = (dir / "out").string();
    std::vector<std::string> args{"tunekit",       "tune",        spec, "-o",         out,
                                  "--no-progress", "--max-evals", "2",  "--strategy", "exhaustive"};
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    const int rc = tunekit::cli::run(static_cast<int>(args.size()), argv.data());
    rusage self{};
    ::getrusage(RUSAGE_SELF, &self);
    const long kib = self.ru_maxrss;
    [[maybe_unused]] auto w = ::write(report[1], &kib, sizeof kib);
    _exit(rc);
  }
  ::close(report[1]);
  long peak_kib = -1;
  ASSERT_EQ(::read(report[0], &peak_kib, sizeof peak_kib), static_cast<ssize_t>(sizeof peak_kib));
  ::close(report[0]);
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
  EXPECT_GT(peak_kib, 0);
  EXPECT_LT(peak_kib, 500 * 1024) << "the tuner's peak RSS in KiB";  // the space's list would take terabytes
  EXPECT_EQ(Store(dir / "out" / "tunekit.db").all().size(), 2u);
}

// A tune under a file-size limit (ulimit -f) that the store's files outgrow
// stops with a message naming the limit and how to resume, exit 2, and
// blames no config: SIGXFSZ ended it without a word. The limit is set in a
// child of the test's own, which then runs the tunekit executable.
// A $TMPDIR that names no folder is said as the setting it is, with what it
// should be (std::filesystem::temp_directory_path's "filesystem error:
// temp_directory_path: Not a directory" named neither).
TEST(ReliabilityCli, ATmpdirThatIsNoFolderIsNamed) {
  const auto dir = fresh_dir();
  const std::string spec = write_spec(dir);
  write_file(dir / "a-file", "");
  auto r = tunekit::detail::run_process(
      {"env", "TMPDIR=" + (dir / "a-file").string(), tunekit_exe().string(), "space", spec}, std::chrono::seconds(300));
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_TRUE(contains(r.output, "error: $TMPDIR: '" + (dir / "a-file").string() +
                                     "' (it is not a folder): expected the folder for temporary files; point TMPDIR "
                                     "at one, or unset it for /tmp"))
      << r.output;
  r = tunekit::detail::run_process({"env", "TMPDIR=" + (dir / "gone").string(), tunekit_exe().string(), "space", spec},
                                   std::chrono::seconds(300));
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_TRUE(contains(r.output, "error: $TMPDIR: '" + (dir / "gone").string() + "' (no such folder)")) << r.output;
}

TEST(ReliabilityCli, AStoreOutgrowingTheFileSizeLimitStopsTheRunAndSaysSo) {
  const auto dir = fresh_dir();
  const std::string spec = write_spec(dir, "{KIND: \"0:39:1\"}");
  const std::string out = (dir / "out").string();
  int pipe_fds[2];
  ASSERT_EQ(::pipe(pipe_fds), 0);
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    ::close(pipe_fds[0]);
    dup2(pipe_fds[1], 1);
    dup2(pipe_fds[1], 2);
    // Room for the WAL index (32 KiB) and a build, not for 40 trials.
    const rlimit limit{64 * 1024, 64 * 1024};
    ::setrlimit(RLIMIT_FSIZE, &limit);
    const std::string exe = tunekit_exe().string();
    std::vector<std::string> args{exe, "tune", spec, "-o", out, "--no-progress", "-j", "1", "--confirm", "off"};
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    execv(argv[0], argv.data());
    _exit(127);
  }
  ::close(pipe_fds[1]);
  std::string output;
  char buffer[4096];
  for (ssize_t n; (n = ::read(pipe_fds[0], buffer, sizeof buffer)) > 0;) output.append(buffer, n);
  ::close(pipe_fds[0]);
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status)) << "ended by signal " << (WIFSIGNALED(status) ? WTERMSIG(status) : 0) << "\n"
                                 << output;
  EXPECT_EQ(WEXITSTATUS(status), 2) << output;
  EXPECT_TRUE(contains(output, "cannot store a trial")) << output;
  EXPECT_TRUE(contains(output, "this process may write files of at most 65536 bytes: ulimit -f")) << output;
  EXPECT_TRUE(contains(output, "run the same command to resume")) << output;

  const auto kept = Store(dir / "out" / "tunekit.db").all();
  ASSERT_FALSE(kept.empty());
  EXPECT_LT(kept.size(), 40u);
  for (const auto& t : kept) EXPECT_EQ(t.status, Status::ok) << t.config.str() << ": " << t.error;
  // The trials measured are on the console, as a run that ends well prints
  // them, and the count kept comes before the error.
  EXPECT_TRUE(contains(output, "No.1: ")) << output;
  EXPECT_TRUE(contains(output, "No." + std::to_string(kept.size()) + ": ")) << output;
  EXPECT_FALSE(contains(output, "No." + std::to_string(kept.size() + 1) + ": ")) << output;
  const std::string stored = fmt::format("the run ended on the error below after storing {} trial{} (above) in ",
                                         kept.size(), kept.size() == 1 ? "" : "s");
  EXPECT_TRUE(contains(output, stored)) << output;
  EXPECT_LT(output.find(stored), output.find("error: results store")) << output;
  auto resumed = tunekit_cli({"tune", spec, "-o", out, "--no-progress", "--confirm", "off"});
  EXPECT_EQ(resumed.exit_code, 0) << resumed.output;
  EXPECT_TRUE(contains(resumed.output, std::to_string(kept.size()) + " resumed from the store")) << resumed.output;
}

// The commands that only read the store leave no -wal or -shm file beside
// it (a read-only SQLite connection keeps them); a tune's own connection
// removes them as it closes.
TEST(ReliabilityCli, ReadingCommandsLeaveNoWalFilesBehind) {
  const auto dir = fresh_dir();
  const std::string spec = write_spec(dir, "{KIND: [0, 1]}");
  const std::string out = (dir / "out").string();
  auto leftovers = [&] {
    std::vector<std::string> found;
    for (const char* suffix : {"-wal", "-shm"})
      if (fs::exists(dir / "out" / (std::string("tunekit.db") + suffix))) found.push_back(suffix);
    return found;
  };
  ASSERT_EQ(tunekit_cli({"tune", spec, "-o", out, "--no-progress"}).exit_code, 0);
  ASSERT_EQ(leftovers(), std::vector<std::string>{});
  for (const std::string command : {"select", "emit", "report", "rules-report"}) {
    auto r = tunekit_cli({command, spec, "-o", out});
    EXPECT_TRUE(r.exit_code == 0 || (command == "rules-report" && r.exit_code == 3)) << command << ": " << r.output;
    EXPECT_EQ(leftovers(), std::vector<std::string>{}) << command;
  }
}

// Item 21: `report` and `select` read a database on storage they cannot
// write. As root the test drops to an unprivileged user, for whom a folder
// of root's (0555) with the database (0444) is read-only storage; the
// programs and the spec are copied there, so that user can reach them.
TEST(ReliabilityCli, ReportAndSelectReadAReadOnlyDatabase) {
  const auto dir = fresh_dir();
  const std::string spec = write_spec(dir, "{KIND: [0, 1]}");
  ASSERT_EQ(tunekit_cli({"tune", spec, "-o", (dir / "out").string(), "--no-progress"}).exit_code, 0);
  char pattern[] = "/tmp/tunekit-ro-XXXXXX";
  ASSERT_NE(::mkdtemp(pattern), nullptr);
  const fs::path ro = pattern;
  for (const auto& e : fs::directory_iterator(dir / "out"))
    if (e.path().filename().string().rfind("tunekit.db", 0) == 0) fs::copy_file(e.path(), ro / e.path().filename());
  for (const char* f : {"k.yaml", "k.cpp"}) fs::copy_file(dir / f, ro / f);
  for (const auto& exe : {tunekit_exe(), tunekit_exe().parent_path() / "tunekit-worker"})
    fs::copy_file(exe, ro / exe.filename());
  for (const auto& e : fs::directory_iterator(ro)) fs::permissions(e.path(), fs::perms(0555));
  fs::permissions(ro, fs::perms(0555));

  for (const std::string command : {"select", "report"}) {
    pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      if (::geteuid() == 0 && (::setgid(65534) != 0 || ::setuid(65534) != 0)) _exit(100);
      int devnull = open("/dev/null", O_WRONLY);
      dup2(devnull, 1);
      dup2(devnull, 2);
      const std::string exe = (ro / "tunekit").string(), db = (ro / "tunekit.db").string(),
                        spec_copy = (ro / "k.yaml").string(), html = ro.string() + ".html";
      if (command == "select")
        execl(exe.c_str(), exe.c_str(), "select", spec_copy.c_str(), "--db", db.c_str(), nullptr);
      else execl(exe.c_str(), exe.c_str(), "report", "--db", db.c_str(), "--html", html.c_str(), nullptr);
      _exit(127);
    }
    int status = 0;
    ASSERT_EQ(::waitpid(pid, &status, 0), pid);
    ASSERT_TRUE(WIFEXITED(status));
    EXPECT_EQ(WEXITSTATUS(status), 0) << command;
  }
  EXPECT_TRUE(fs::exists(ro.string() + ".html"));
  fs::remove(ro.string() + ".html");
  fs::permissions(ro, fs::perms(0755));
  fs::remove_all(ro);
}

// An output folder or a database the user may not write is bad input at
// its flag (exit 1), before anything runs: not SQLite's "unable to open
// database file" as another error (exit 2). As root the test drops to an
// unprivileged user, for whom root's 0555 folders are read-only.
TEST(ReliabilityCli, AnOutputFolderOrDatabaseThatCannotBeWrittenIsRefusedAtItsFlag) {
  char pattern[] = "/tmp/tunekit-ro-XXXXXX";
  ASSERT_NE(::mkdtemp(pattern), nullptr);
  const fs::path ro = pattern;
  const std::string spec = write_spec(ro, "{KIND: [0]}");
  for (const auto& exe : {tunekit_exe(), tunekit_exe().parent_path() / "tunekit-worker"})
    fs::copy_file(exe, ro / exe.filename());
  fs::create_directories(ro / "out");
  for (const auto& e : fs::directory_iterator(ro)) fs::permissions(e.path(), fs::perms(0555));
  fs::permissions(ro, fs::perms(0555));
  const fs::path log = fs::path(pattern).string() + ".log";

  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"-o", (ro / "out").string()}, "--out-dir " + (ro / "out").string() + ": cannot write into this folder: "},
      {{"-o", fresh_dir().string(), "--db", (ro / "tunekit.db").string()},
       "--db: cannot tune into " + (ro / "tunekit.db").string() + ": its folder is not writable ("},
  };
  for (const auto& [flags, message] : cases) {
    const fs::path writable_out = flags[1];
    if (flags.size() > 2) fs::permissions(writable_out, fs::perms(0777));
    pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      if (::geteuid() == 0 && (::setgid(65534) != 0 || ::setuid(65534) != 0)) _exit(100);
      int out = open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0666);
      dup2(out, 1);
      dup2(out, 2);
      const std::string exe = (ro / "tunekit").string();
      std::vector<std::string> args{exe, "tune", spec, "--no-progress"};
      args.insert(args.end(), flags.begin(), flags.end());
      std::vector<char*> argv;
      for (auto& a : args) argv.push_back(a.data());
      argv.push_back(nullptr);
      execv(argv[0], argv.data());
      _exit(127);
    }
    int status = 0;
    ASSERT_EQ(::waitpid(pid, &status, 0), pid);
    ASSERT_TRUE(WIFEXITED(status));
    const std::string output = read_file(log);
    EXPECT_EQ(WEXITSTATUS(status), 1) << output;
    EXPECT_TRUE(contains(output, message)) << message << "\n" << output;
  }
  fs::remove(log);
  fs::permissions(ro, fs::perms(0755));
  fs::remove_all(ro);
}

// No file a command writes may replace what it read (the spec, a source,
// the results store), another of its outputs, or a file of another kind
// (emit's policy over a tune's report, a tune's report over emit's policy):
// each is refused at its flag, before anything is written.
TEST(ReliabilityCli, NoOutputReplacesAnInputOrAnotherOutput) {
  const auto dir = fresh_dir();
  const std::string spec = write_spec(dir, "{KIND: [0, 1]}");
  const std::string out = (dir / "out").string();
  ASSERT_EQ(tunekit_cli({"tune", spec, "--no-progress", "-o", out}).exit_code, 0);
  const std::string source = (dir / "k.cpp").string(), db = out + "/tunekit.db";
  const std::string spec_text = read_file(spec), source_text = read_file(source);
  // The tune's own reports, a file emit wrote as another kind, and a
  // hand-written header: emit replaces only a file of the kind it writes.
  ASSERT_EQ(tunekit_cli({"emit", spec, "-o", out}).exit_code, 0);
  const std::string report = out + "/k.json", csv = out + "/k.csv", mine = (dir / "mine.hpp").string();
  write_file(mine, "#pragma once\nconstexpr int kTile = 64;  // by hand\n");
  const std::string report_text = read_file(report), csv_text = read_file(csv), mine_text = read_file(mine);
  const std::string policy_json = out + "/k_policy.json", policy_header = out + "/k_policy.hpp";
  const std::string policy_json_text = read_file(policy_json), policy_header_text = read_file(policy_header);
  const std::vector<std::pair<std::vector<std::string>, std::string>> refused = {
      {{"emit", spec, "-o", out, "--json", report}, "--json: '" + report + "' exists and is not a policy JSON"},
      {{"emit", spec, "-o", out, "--python", csv}, "--python: '" + csv + "' exists and is not a Python policy module"},
      {{"emit", spec, "-o", out, "--header", mine}, "--header: '" + mine + "' exists and is not a policy header"},
      {{"emit", spec, "-o", out, "--header", out + "/k_policy.json"},
       "--header: '" + out + "/k_policy.json' exists and is not a policy header"},
      {{"emit", spec, "-o", out, "--header", spec}, "--header: '" + spec + "' is the spec"},
      {{"emit", spec, "-o", out, "--python", source}, "--python: '" + source + "' is the kernel's source"},
      {{"emit", spec, "-o", out, "--json", db}, "--json: '" + db + "' is the results database"},
      {{"report", spec, "-o", out, "--html", source}, "--html: '" + source + "' is the kernel's source"},
      {{"space", spec, "--write", spec}, "--write: '" + spec + "' is the spec"},
      {{"space", spec, "--write", db}, "--write: '" + db + "' is an SQLite database"},
      {{"emit", spec, "-o", out, "--header", out + "/same", "--json", out + "/same"},
       "--json: '" + out + "/same' is also where --header writes"},
      {{"tune", spec, "--no-progress", "-o", out, "--csv", out + "/same", "--json", out + "/same"},
       "--json: '" + out + "/same' is also where --csv writes"},
      // "-" is standard output to other tools: not a file named so here.
      {{"tune", spec, "--no-progress", "-o", out, "--csv", "-"}, "--csv: '-' would be a file named '-'"},
      {{"emit", spec, "-o", out, "--header", "-"}, "--header: '-' would be a file named '-'"},
      // A policy emit wrote is no tune's report either.
      {{"tune", spec, "--no-progress", "-o", out, "--json", policy_json},
       "--json: '" + policy_json + "' exists and is a policy JSON as tunekit emit writes one"},
      {{"tune", spec, "--no-progress", "-o", out, "--csv", policy_header},
       "--csv: '" + policy_header + "' exists and is a policy header as tunekit emit writes one"},
      {{"report", spec, "-o", out, "--html", policy_header},
       "--html: '" + policy_header + "' exists and is a policy header as tunekit emit writes one"},
  };
  for (const auto& [args, said] : refused) {
    const auto r = tunekit_cli(args);
    EXPECT_EQ(r.exit_code, 1) << r.output;
    EXPECT_TRUE(contains(r.output, said)) << said << "\n" << r.output;
  }
  EXPECT_EQ(read_file(spec), spec_text);
  EXPECT_EQ(read_file(source), source_text);
  EXPECT_EQ(read_file(report), report_text);
  EXPECT_EQ(read_file(csv), csv_text);
  EXPECT_EQ(read_file(mine), mine_text);
  EXPECT_EQ(read_file(policy_json), policy_json_text);
  EXPECT_EQ(read_file(policy_header), policy_header_text);
  // Its own files, each command writes again.
  EXPECT_EQ(tunekit_cli({"tune", spec, "--no-progress", "-o", out, "--json", report, "--csv", csv}).exit_code, 0);
  EXPECT_EQ(tunekit_cli({"emit", spec, "-o", out, "--python", out + "/k_policy.py"}).exit_code, 0);
  EXPECT_EQ(tunekit_cli({"emit", spec, "-o", out, "--python", out + "/k_policy.py"}).exit_code, 0);
  EXPECT_FALSE(fs::exists(out + "/same"));
  EXPECT_FALSE(fs::exists("-"));
  EXPECT_EQ(tunekit_cli({"select", spec, "-o", out}).exit_code, 0);  // the store is whole
}

// The same refusals for files the spec's `output:` names point at its key's
// line and column, not at a flag nobody gave; a word YAML 1.1 reads as a
// boolean is no file name; and a name too long for a file system is said
// as such, not as two outputs in one file.
TEST(ReliabilityCli, AnOutputTheSpecNamesIsRefusedWhereTheSpecNamesIt) {
  const auto dir = fresh_dir();
  const std::string spec = write_spec(dir, "{KIND: [0, 1]}");
  const std::string out = (dir / "out").string(), text = read_file(spec);
  const std::string long_name(300, 'a');
  const std::vector<std::pair<std::string, std::string>> refused = {
      {"output: {csv: x.out, json: x.out}\n", "k.yaml:10:28: 'x.out' is also where output.csv writes"},
      {"output: {html: '" + (dir / "k.cpp").string() + "'}\n",
       "k.yaml:10:17: '" + (dir / "k.cpp").string() + "' is the kernel's source"},
      {"output: {csv: yes}\n", "k.yaml:10:15: 'output.csv': 'yes' is no file name here"},
      {"output: {csv: " + long_name + ".csv}\n", "has a name of 304 bytes; a file system takes at most 255"},
  };
  for (const auto& [output, said] : refused) {
    write_file(spec, text + output);
    const auto r = tunekit_cli({"tune", spec, "--no-progress", "-o", out});
    EXPECT_EQ(r.exit_code, 1) << r.output;
    EXPECT_TRUE(contains(r.output, said)) << said << "\n" << r.output;
  }
  // False as YAML writes it, and off, switch a writer off, as `false` does.
  for (const std::string off : {"False", "off"}) {
    write_file(spec, text + "output: {csv: " + off + "}\n");
    const auto r = tunekit_cli({"tune", spec, "--no-progress", "-o", out});
    EXPECT_EQ(r.exit_code, 0) << r.output;
    EXPECT_FALSE(fs::exists(dir / off)) << off;
  }
  EXPECT_FALSE(fs::exists(dir / "x.out"));
}

// A metric that cannot be computed for trials that ran correctly (a
// division by zero) is named with why, where it is written, and a size
// whose objective it is says that, not that no trial ran correctly.
TEST(ReliabilityCli, AMetricWithoutAValueSaysWhy) {
  const auto dir = fresh_dir();
  const std::string spec = write_spec(dir, "{KIND: [0, 1]}");
  write_file(spec, read_file(spec) + "metrics: {g: \"N / (time_s - time_s)\"}\nobjective: {maximize: g}\n");
  const auto r = tunekit_cli({"tune", spec, "--no-progress", "-o", (dir / "out").string()});
  EXPECT_EQ(r.exit_code, 3) << r.output;
  EXPECT_TRUE(contains(r.output, "k.yaml:10:15: the metric 'g' has no value at {KIND: 0}: ")) << r.output;
  EXPECT_TRUE(contains(r.output, "division by zero")) << r.output;
  EXPECT_TRUE(contains(r.output,
                       "no config named: the objective g has no value at any of the 2 trials that ran "
                       "correctly"))
      << r.output;
  EXPECT_FALSE(contains(r.output, "none of the 2 trials ran correctly")) << r.output;
}

// --fresh after an edit the hashes cannot see (a header included through a
// macro) measures anew against reference outputs computed anew: the ones
// kept on disk are of the old code, and every config failed against them.
TEST(ReliabilityCli, FreshComputesTheReferenceAgain) {
  const auto dir = fresh_dir();
  write_file(dir / "h.h", "static float scale(float v) { return v * 2.0f; }\n");
  write_file(dir / "k.cpp",
             "#define HEADER \"h.h\"\n#include HEADER\n"
             "extern \"C\" void f(const float* x, float* y, int n) {\n"
             "  for (int i = 0; i < n; i += U) for (int j = 0; j < U; ++j) y[i + j] = scale(x[i + j]);\n}\n"
             "extern \"C\" void f_ref(const float* x, float* y, int n) {\n"
             "  for (int i = 0; i < n; ++i) y[i] = scale(x[i]);\n}\n");
  write_file(dir / "k.yaml", R"(name: k
kernel: {source: k.cpp, entry: f, flags: [-O1]}
arguments:
  - {name: x, type: f32, size: 64}
  - {name: y, type: f32, size: 64, role: out}
  - {name: n, type: i32, value: 64}
parameters: {U: [1, 2]}
reference: {entry: f_ref}
measure: {warmup: 0us, min_samples: 2, max_samples: 2, cache: hot, early_stop: off, confirm: off}
)");
  const std::string spec = (dir / "k.yaml").string(), out = (dir / "out").string();
  ASSERT_EQ(tunekit_cli({"tune", spec, "--no-progress", "-o", out}).exit_code, 0);
  write_file(dir / "h.h", "static float scale(float v) { return v * 3.0f; }\n");
  const auto r = tunekit_cli({"tune", spec, "--no-progress", "-o", out, "--fresh"});
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "2 trials: 2 ok")) << r.output;
  EXPECT_FALSE(contains(r.output, "wrong_result")) << r.output;
}

// A size the time budget left unsearched says why, on the console and in
// the JSON, as any size that ran nothing does.
TEST(ReliabilityCli, ASizeTheTimeBudgetLeftUnsearchedSaysWhy) {
  const auto dir = fresh_dir();
  const std::string spec = write_spec(dir, "{KIND: [0, 1]}");
  const auto r = tunekit_cli(
      {"tune", spec, "--no-progress", "-o", (dir / "out").string(), "-a", "N=[64,128]", "--max-time", "1us"});
  EXPECT_EQ(r.exit_code, 3) << r.output;
  EXPECT_TRUE(contains(r.output,
                       "stopped: the time budget (1e-06 s: search.max_time, --max-time) ran out before "
                       "this size"))
      << r.output;
  // The first size is where it ran out (the warning names it); the second
  // was never searched.
  EXPECT_TRUE(contains(r.output, "ran out at size N=64")) << r.output;
  const auto json = nlohmann::json::parse(read_file(dir / "out" / "k.json"));
  EXPECT_TRUE(contains(json.at("sizes").at(1).at("stopped").get<std::string>(), "ran out before this size"))
      << json.at("sizes").dump();
}

// A size with no valid config says so, and no more: no warning that its
// speedups are over a first valid config it does not have.
TEST(ReliabilityCli, ASizeWithNoValidConfigIsNotWarnedOfItsDefault) {
  const auto dir = fresh_dir();
  std::string spec = write_spec(dir, "{KIND: [0, 1]}");
  write_file(spec, read_file(spec) + "constraints: [\"KIND < N\"]\ndefault: {KIND: 1}\n");
  const auto r = tunekit_cli(
      {"tune", spec, "--no-progress", "-o", (dir / "out").string(), "-a", "N=[0,64]", "--early-stop", "off"});
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "stopped: no config is valid at this size")) << r.output;
  EXPECT_FALSE(contains(r.output, "speedups are over the first valid config instead")) << r.output;
}

// A size at which an argument made from the size alone cannot be made is
// the size's error, at the argument, before anything is built; not a
// launch_error stored for every config.
TEST(ReliabilityCli, ASizeNoArgumentCanTakeIsBadInput) {
  const auto dir = fresh_dir();
  const std::string spec = write_spec(dir, "{KIND: [0, 1]}");
  const std::string out = (dir / "out").string();
  for (const auto& [flag, said] : std::vector<std::pair<std::string, std::string>>{
           {"N=-5", "k.yaml:4:32: at size N=-5: size of argument 'x' is negative (-5)"},
           {"N=1.5", "k.yaml:4:32: at size N=1.5: expected an integer from 'N', got 1.5"}}) {
    const auto r = tunekit_cli({"tune", spec, "--no-progress", "-o", out, "-s", flag});
    EXPECT_EQ(r.exit_code, 1) << r.output;
    EXPECT_TRUE(contains(r.output, said)) << said << "\n" << r.output;
  }
  EXPECT_FALSE(fs::exists(out + "/tunekit.db") && !Store(out + "/tunekit.db").all().empty());
}

// A spec that lists its configs runs them in order: a strategy flag would
// be ignored, so it is refused.
TEST(ReliabilityCli, AStrategyForAListOfConfigsIsRefused) {
  const auto dir = fresh_dir();
  const std::string spec = write_spec(dir, "{KIND: [0, 1]}");
  write_file(spec, read_file(spec) + "configs: [{KIND: 1}, {KIND: 0}]\n");
  for (const auto& flag :
       std::vector<std::vector<std::string>>{{"--strategy", "random"}, {"--option", "population=4"}}) {
    std::vector<std::string> args{"tune", spec, "--no-progress", "-o", (dir / "out").string()};
    args.insert(args.end(), flag.begin(), flag.end());
    const auto r = tunekit_cli(args);
    EXPECT_EQ(r.exit_code, 1) << r.output;
    EXPECT_TRUE(contains(r.output, flag[0] + ": the spec lists its configs (configs:)")) << r.output;
  }
}

// A run that measures less than an earlier one says when the store holds a
// faster config than it found; `select` picks that one.
TEST(ReliabilityCli, ASmallerRerunSaysTheStoreHoldsAFasterConfig) {
  const auto dir = fresh_dir();
  const std::string spec = write_kind_2_fastest(dir);
  const std::string out = (dir / "out").string();
  auto r = tunekit_cli({"tune", spec, "--no-progress", "-o", out});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  ASSERT_TRUE(contains(r.output, "best: No.3")) << r.output;  // KIND 2
  EXPECT_FALSE(contains(r.output, "an earlier run stored")) << r.output;
  r = tunekit_cli({"tune", spec, "--no-progress", "-o", out, "--where", "KIND != 2"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_FALSE(contains(r.output, "an earlier run stored")) << r.output;  // KIND 2 is outside this run's space
  r = tunekit_cli({"tune", spec, "--no-progress", "-o", out, "--max-evals", "1"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(contains(r.output,
                       "warning: at size N=64, an earlier run stored a faster config than this run found: "
                       "{KIND: 2}"))
      << r.output;
}

// Runs SQL on a store, as a user (or a bug) might have left it.
void run_sql(const fs::path& db, const std::string& sql) {
  sqlite3* handle = nullptr;
  ASSERT_EQ(sqlite3_open(db.c_str(), &handle), SQLITE_OK);
  EXPECT_EQ(sqlite3_exec(handle, sql.c_str(), nullptr, nullptr, nullptr), SQLITE_OK) << sqlite3_errmsg(handle);
  sqlite3_close(handle);
}

// `select` and `emit` read every stored trial, so a run that measured less
// than the store holds says when they will name another config than its
// best: under --fresh too, and when the config they name is slower but was
// confirmed by an earlier run. `select` then names what the warning says.
TEST(ReliabilityCli, ATuneSaysWhenSelectWillNameAnotherConfigThanItsBest) {
  const auto dir = fresh_dir();
  const std::string spec = write_kind_2_fastest(dir);
  const std::string out = (dir / "out").string();
  const fs::path db = dir / "out" / "tunekit.db";
  ASSERT_EQ(tunekit_cli({"tune", spec, "--no-progress", "-o", out}).exit_code, 0);
  auto r = tunekit_cli({"tune", spec, "--no-progress", "-o", out, "--fresh", "--max-evals", "1"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "best: No.1")) << r.output;  // KIND 0, the only config measured
  EXPECT_TRUE(contains(r.output,
                       "warning: at size N=64, an earlier run stored a faster config than this run found: "
                       "{KIND: 2}"))
      << r.output;
  EXPECT_TRUE(contains(tunekit_cli({"select", spec, "-o", out}).output, "{KIND: 2}"));

  // KIND 2 confirmed but (as stored) slower than this run's one measurement.
  run_sql(db, "UPDATE trials SET median_us = 1e6, confirmed = (config_key = 'KIND=2')");
  r = tunekit_cli({"tune", spec, "--no-progress", "-o", out, "--fresh", "--max-evals", "1"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(contains(r.output,
                       "warning: at size N=64, `tunekit select` and `tunekit emit` name {KIND: 2} at "
                       "1000000.000 us, which an earlier run confirmed (measured again side by side), not "
                       "this run's best, {KIND: 0}"))
      << r.output;
  const auto chosen = tunekit_cli({"select", spec, "-o", out});
  EXPECT_TRUE(contains(chosen.output, "{KIND: 2}")) << chosen.output;

  // A narrower run whose confirmation outranks the full run's best, which
  // was measured once (--confirm off), says that select's answer changed.
  const auto dir2 = fresh_dir();
  const std::string spec2 = write_kind_2_fastest(dir2);
  const std::string out2 = (dir2 / "out").string();
  ASSERT_EQ(tunekit_cli({"tune", spec2, "--no-progress", "-o", out2, "--confirm", "off"}).exit_code, 0);
  r = tunekit_cli({"tune", spec2, "--no-progress", "-o", out2, "--where", "KIND != 2"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "`tunekit select` and `tunekit emit` now name {KIND: ")) << r.output;
  EXPECT_TRUE(contains(r.output, "confirmed by this run, instead of {KIND: 2} at ")) << r.output;
}

// Resuming a finished tune measures nothing, even where its fastest trial
// is not one of its confirmed ones (a confirmation the machine's drift
// left so): else each resume confirmed again, and could name another best.
TEST(ReliabilityCli, ResumingATuneWhoseFastestIsUnconfirmedMeasuresNothing) {
  const auto dir = fresh_dir();
  const std::string spec = write_kind_2_fastest(dir);
  const std::string out = (dir / "out").string();
  const fs::path db = dir / "out" / "tunekit.db";
  ASSERT_EQ(tunekit_cli({"tune", spec, "--no-progress", "-o", out}).exit_code, 0);
  run_sql(db, "UPDATE trials SET confirmed = 0, median_us = 1 WHERE config_key = 'KIND=1'");
  const auto samples = [&] {
    std::vector<std::size_t> n;
    for (const auto& t : Store(db).all()) n.push_back(t.samples.size());
    return n;
  };
  const auto before = samples();
  auto r = tunekit_cli({"tune", spec, "--no-progress", "-o", out});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(samples(), before) << r.output;
  EXPECT_TRUE(contains(r.output, "best: No.3")) << r.output;  // KIND 2, the fastest confirmed
}

// The policy commands read the trials a tune stored under its input seed and
// cache mode: without the same flags they find none, and say which flag.
TEST(ReliabilityCli, APolicyCommandNamesTheFlagATuneRanWith) {
  const auto dir = fresh_dir();
  const std::string spec = write_spec(dir, "{KIND: [0, 1]}");
  const std::string hot = (dir / "hot").string(), seeded = (dir / "seeded").string();
  ASSERT_EQ(tunekit_cli({"tune", spec, "--no-progress", "-o", hot, "--cache", "cold"}).exit_code, 0);
  ASSERT_EQ(tunekit_cli({"tune", spec, "--no-progress", "-o", seeded, "--seed", "7"}).exit_code, 0);
  auto r = tunekit_cli({"emit", spec, "-o", hot});
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_TRUE(contains(r.output, "its trials of 'k' were timed with --cache cold; give that here too")) << r.output;
  r = tunekit_cli({"select", spec, "-o", seeded});
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_TRUE(contains(r.output,
                       "but 2 trials of 'k': tuned with another input seed, or with flags that make "
                       "another kernel of it (give the tune's --seed, --flags"))
      << r.output;
  // The toolchain is part of the kernel: the message names this machine's.
  EXPECT_TRUE(contains(r.output, "or with another toolchain than this machine's (")) << r.output;
  EXPECT_EQ(tunekit_cli({"select", spec, "-o", seeded, "--seed", "7"}).exit_code, 0);
}

// select and emit choose among the configs the spec allows as it is now:
// a narrower parameter list or a new constraint resumes what the space still
// holds (spec_hash() leaves them out), and what it no longer holds is not
// shipped.
TEST(ReliabilityCli, APolicyLeavesOutConfigsTheSpecNoLongerAllows) {
  const auto dir = fresh_dir();
  const std::string spec = write_kind_2_fastest(dir);
  const std::string out = (dir / "out").string();
  ASSERT_EQ(tunekit_cli({"tune", spec, "--no-progress", "-o", out}).exit_code, 0);
  auto r = tunekit_cli({"select", spec, "-o", out});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "{KIND: 2}")) << r.output;

  const std::string full = read_file(spec);
  std::string fewer_values = full;
  fewer_values.replace(fewer_values.find("KIND: [0, 1, 2]"), 15, "KIND: [0, 1]");
  for (const std::string& narrowed : {fewer_values, full + "constraints: ['KIND < 2']\n"}) {
    write_file(spec, narrowed);
    r = tunekit_cli({"select", spec, "-o", out});
    ASSERT_EQ(r.exit_code, 0) << r.output;
    EXPECT_FALSE(contains(r.output, "{KIND: 2}")) << narrowed << "\n" << r.output;
    EXPECT_TRUE(contains(r.output, "note: 1 of the 3 stored trials of this spec are left out")) << r.output;
    r = tunekit_cli({"emit", spec, "-o", out});
    ASSERT_EQ(r.exit_code, 0) << r.output;
    EXPECT_FALSE(contains(read_file(out + "/k_policy.json"), "\"KIND\": 2")) << narrowed;
  }
}

// Two specs that differ only in their name share their stored rows (spec_hash
// leaves the name out, so that a renamed spec resumes). Each row's label is
// whichever stored it last, but a report read through one spec names them
// all as that spec.
TEST(ReliabilityCli, ASpecRenamedIntoTheSameStoreReportsItsTrialsUnderItsOwnName) {
  const auto dir = fresh_dir();
  const std::string spec = write_spec(dir, "{KIND: [0, 1, 2]}");
  std::string renamed_text = read_file(spec);
  renamed_text.replace(renamed_text.find("name: k"), 7, "name: renamed");
  const std::string renamed = (dir / "renamed.yaml").string();
  write_file(renamed, renamed_text);
  const std::string out = (dir / "out").string();
  auto r = tunekit_cli({"tune", spec, "--no-progress", "-o", out, "--where", "KIND < 2"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  r = tunekit_cli({"tune", renamed, "--no-progress", "-o", out});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "resumed")) << r.output;
  EXPECT_FALSE(contains(read_file(out + "/renamed.html"), "k &mdash;"));
  EXPECT_TRUE(contains(read_file(out + "/renamed.html"), "renamed &mdash;"));

  // The renamed spec stored KIND 2 and rewrote nothing else; `k` reads all
  // three as its own.
  r = tunekit_cli({"report", spec, "-o", out});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(contains(r.output, ": 3 trials")) << r.output;
  EXPECT_FALSE(contains(r.output, "renamed")) << r.output;
  EXPECT_FALSE(contains(read_file(out + "/k.html"), "renamed &mdash;"));

  // The whole store's page keeps the size's three trials together, under
  // both names, with one best (grouped by name, it split them in two): a
  // trial takes the name of the spec that stored it last.
  run_sql(dir / "out" / "tunekit.db", "UPDATE trials SET kernel = 'k' WHERE config_key = 'KIND=0'");
  r = tunekit_cli({"report", "--db", out + "/tunekit.db", "--html", (dir / "all.html").string()});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "k / renamed on ")) << r.output;
  EXPECT_TRUE(contains(r.output, ": 3 trials")) << r.output;
}

// A budget spent before the default came up (its seeds first) says why the
// summary has no speedup, instead of leaving the line out.
TEST(ReliabilityCli, ADefaultTheBudgetDidNotReachIsSaidNotMeasured) {
  const auto dir = fresh_dir();
  const std::string spec = write_spec(dir, "{KIND: [0, 1, 2]}");
  write_file(spec, read_file(spec) + "default: {KIND: 0}\nsearch:\n  seeds: [{KIND: 1}, {KIND: 2}]\n");
  auto r = tunekit_cli({"tune", spec, "--no-progress", "-o", (dir / "out").string(), "--max-evals", "2"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "seeds (search.seeds): No.1 to No.2")) << r.output;
  EXPECT_TRUE(contains(r.output, "default: not measured within the budget")) << r.output;
  EXPECT_FALSE(contains(r.output, "speedup over default")) << r.output;
}

// `space` counts one size and `resolve` works out one config: a name given
// twice would have its first value silently replaced by the second.
TEST(ReliabilityCli, ANameGivenTwiceWhereOneValueIsTakenIsRefused) {
  const auto dir = fresh_dir();
  const std::string spec = write_spec(dir, "{KIND: [0, 1]}");
  auto r = tunekit_cli({"space", spec, "-s", "N=5", "-s", "N=6"});
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_TRUE(contains(r.output, "--size N=6: 'N' is given twice (--size N=5 before)")) << r.output;
  r = tunekit_cli({"resolve", spec, "-s", "N=5,N=6"});
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_TRUE(contains(r.output, "--size N=6: 'N' is given twice (--size N=5 before)")) << r.output;
  r = tunekit_cli({"resolve", spec, "-c", "KIND=0,KIND=1"});
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_TRUE(contains(r.output, "--config KIND=1: 'KIND' is given twice")) << r.output;
}

// A store holding a spec's results on two devices: a policy is one device's,
// so select and emit ask which (they mixed the two, size by size, with the
// first trial's machine properties); --device picks one.
TEST(ReliabilityCli, APolicyIsOneDevicesAndAStoreOfTwoAsksWhich) {
  const auto dir = fresh_dir();
  const std::string spec = write_kind_2_fastest(dir);
  const std::string out = (dir / "out").string();
  ASSERT_EQ(tunekit_cli({"tune", spec, "--no-progress", "-o", out}).exit_code, 0);
  std::string here;
  {
    Store store(dir / "out" / "tunekit.db");
    for (TrialRecord t : store.all()) {
      here = t.device;
      t.device = "gpu: elsewhere";
      // There, KIND 0 is the fastest by far.
      const double us = t.config.at("KIND") == Value(0) ? 1.0 : 1000.0;
      t.stats.median = t.stats.min = t.stats.max = t.stats.mean = Microseconds(us);
      t.samples.assign(t.samples.size(), Microseconds(us));
      t.confirmed = false;  // not this device's confirmation, which names the fastest confirmed config
      store.put(t);
    }
  }
  for (const char* command : {"select", "emit"}) {
    auto r = tunekit_cli({command, spec, "-o", out});
    EXPECT_EQ(r.exit_code, 1) << command << ": " << r.output;
    EXPECT_TRUE(contains(r.output, "results on 2 devices")) << r.output;
    EXPECT_TRUE(contains(r.output, "pick one with --device")) << r.output;
  }
  auto r = tunekit_cli({"select", spec, "-o", out, "--device", "gpu: elsewhere"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "{KIND: 0}")) << r.output;
  r = tunekit_cli({"select", spec, "-o", out, "--device", here});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "{KIND: 2}")) << r.output;
  r = tunekit_cli({"select", spec, "-o", out, "--device", "gpu: elsewher"});
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_TRUE(contains(r.output, "did you mean 'gpu: elsewhere'")) << r.output;
  // The report lays the devices side by side.
  EXPECT_EQ(tunekit_cli({"report", spec, "-o", out}).exit_code, 0);
}

// In a log (not a terminal) an error is its own first line, with no blank
// line above it: that one is for a progress bar drawn in place.
TEST(ReliabilityCli, AnErrorInALogStartsItsLine) {
  const auto dir = fresh_dir();
  write_file(dir / "bad.yaml", "kernel: a: b\n");
  auto r = tunekit_cli({"tune", (dir / "bad.yaml").string()});
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_EQ(r.output.rfind("error: ", 0), 0u) << r.output;
}

// A tune run again with a looser tolerance leaves the first run's failures
// beside its successes; `select` and `emit` without it read the failures,
// and say that trials which ran correctly are there under other settings.
TEST(ReliabilityCli, NothingToSelectNamesTrialsThatRanCorrectlyUnderOtherSettings) {
  const auto dir = fresh_dir();
  write_file(dir / "k.cpp",
             "extern \"C\" void f(float* y, int n) { for (int i = 0; i < n; ++i) y[i] = 1 + 1e-4f * KIND; }\n"
             "extern \"C\" void f_ref(float* y, int n) { for (int i = 0; i < n; ++i) y[i] = 1; }\n");
  write_file(dir / "k.yaml", R"(name: k
kernel: {source: k.cpp, entry: f, flags: [-O0]}
arguments:
  - {name: y, type: f32, size: 64, role: out}
  - {name: n, type: i32, value: 64}
parameters: {KIND: [1, 2]}
reference: {entry: f_ref}
measure: {warmup: 0us, min_samples: 1, max_samples: 1, cache: hot, early_stop: off, confirm: off}
)");
  const std::string spec = (dir / "k.yaml").string(), out = (dir / "out").string();
  auto strict = tunekit_cli({"tune", spec, "-o", out, "--no-progress"});
  ASSERT_EQ(strict.exit_code, 3) << strict.output;
  EXPECT_TRUE(contains(strict.output, "every one differs from the reference by at most")) << strict.output;
  ASSERT_EQ(tunekit_cli({"tune", spec, "-o", out, "--no-progress", "--atol", "1e-3"}).exit_code, 0);
  for (const char* command : {"select", "emit"}) {
    auto r = tunekit_cli({command, spec, "-o", out});
    EXPECT_EQ(r.exit_code, 3) << r.output;
    EXPECT_TRUE(contains(r.output, "the database holds 2 trials of 'k' that ran correctly under other settings"))
        << command << ": " << r.output;
  }
  EXPECT_EQ(tunekit_cli({"select", spec, "-o", out, "--atol", "1e-3"}).exit_code, 0);
}

// A spec named K.YAML (or a T1 file T1.JSON) is a spec, as k.yaml is: it
// was taken for a kernel source, and refused for having no %RANGE% lines.
TEST(ReliabilityCli, ASpecIsKnownByItsExtensionInAnyCase) {
  const auto dir = fresh_dir();
  fs::copy_file(write_spec(dir), dir / "K.YAML");
  auto r = tunekit_cli({"space", (dir / "K.YAML").string()});
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "cartesian:   4\n")) << r.output;
  EXPECT_FALSE(contains(r.output, "no tunable parameter here")) << r.output;
}

// A string value holding a line break (a size's, a config's) is shown
// quoted and escaped where tunekit prints it for a reader: it broke the
// line it was printed in.
TEST(ReliabilityCli, AValueWithALineBreakIsShownEscaped) {
  const auto dir = fresh_dir();
  const std::string spec = write_spec(dir);
  std::string text = read_file(spec);
  text.replace(text.find("sizes: {N: 64}"), 14, "sizes: {N: 64, MODE: \"a\\nb\"}");
  write_file(spec, text);
  auto r = tunekit_cli({"space", spec});
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "size:        {MODE: 'a\\nb', N: 64}\n")) << r.output;
}

// The string "64" and the number 64 are shown apart wherever a config is
// printed for a reader: the tune's lines, select's, a warning's values and
// resolve's error. They printed alike, and `A == 64` looked true of A = 64.
TEST(ReliabilityCli, AStringThatReadsAsANumberIsShownQuoted) {
  const auto dir = fresh_dir();
  write_file(dir / "k.cpp", "// A and B come in through the commands\n");
  write_file(dir / "app.yaml", R"(kernel: {source: k.cpp, language: command}
parameters:
  A: ['64', '128', 256]
  B: [64]
default: {A: '64', B: 64}
constraints: ["A != 256"]
application:
  build: [bash, -c, 'true']
  run: [bash, -c, 'echo time: 1']
  time: {regex: 'time: ([0-9.]+)'}
measure: {min_samples: 1, max_samples: 1}
)");
  const std::string spec = (dir / "app.yaml").string(), out = (dir / "out").string();
  auto tune = tunekit_cli({"tune", spec, "-o", out, "--no-progress"});
  ASSERT_EQ(tune.exit_code, 0) << tune.output;
  EXPECT_TRUE(contains(tune.output, "No.1: 1.000 us, {A: '64', B: 64}\n")) << tune.output;
  auto select = tunekit_cli({"select", spec, "-o", out});
  EXPECT_EQ(select.exit_code, 0) << select.output;
  EXPECT_TRUE(contains(select.output, "{}: {A: '64', B: 64} 1.000 us")) << select.output;
  // The JSON keeps the types as they are.
  auto emit = tunekit_cli({"emit", spec, "-o", out});
  ASSERT_EQ(emit.exit_code, 0) << emit.output;
  const auto policy = nlohmann::json::parse(read_file(dir / "out" / "k_policy.json"));
  EXPECT_EQ(policy["entries"][0]["config"]["A"], "64");
  EXPECT_EQ(policy["entries"][0]["config"]["B"], 64);

  std::string text = read_file(spec);
  text.replace(text.find("A != 256"), 8, "A == 64 or A == 256");
  write_file(spec, text);
  auto space = tunekit_cli({"space", spec});
  EXPECT_TRUE(contains(space.output,
                       "the default {A: '64', B: 64} breaks the constraint `A == 64 or A == 256` "
                       "(" +
                           spec + ":6:16) with A = '64'"))
      << space.output;
  auto resolve = tunekit_cli({"resolve", spec, "--config", "A=64,B=64"});
  EXPECT_EQ(resolve.exit_code, 1) << resolve.output;
  EXPECT_TRUE(contains(resolve.output, "A=64 is not one of its values ('64', '128', 256)")) << resolve.output;
}

// `tunekit space` reads a T1 file as `tunekit tune` does (load_t1, one
// function): a misspelt KernelSpecification key, which tune refused, was
// taken by space without a word.
TEST(ReliabilityCli, SpaceRefusesAMisspeltT1KeyAsTuneDoes) {
  const auto dir = fresh_dir();
  write_file(dir / "k.cu", "__global__ void k(float* x) {}\n");
  write_file(dir / "t1.json", R"({
  "ConfigurationSpace": {"TuningParameters": [{"Name": "block_size_x", "Type": "int", "Values": "[32, 64]"}]},
  "KernelSpecification": {"Language": "CUDA", "KernelName": "k", "KernelFile": "k.cu", "ProblemSize": [1024],
    "LocalSzie": {"X": "block_size_x"},
    "Arguments": [{"Name": "x", "Type": "float", "MemoryType": "Vector", "Size": "ProblemSize[0]"}]}
})");
  const std::string expected =
      (dir / "t1.json").string() +
      ":4:5: unknown key \"LocalSzie\" in KernelSpecification (known: Device, Language, CompilerOptions, Profiling, "
      "KernelName, KernelFile, GlobalSizeType, SharedMemory, SimulationInput, GlobalSize, LocalSize, Arguments, "
      "ReferenceArguments, BenchmarkName, ProblemSize, GridDivX, GridDivY, GridDivZ, Stream, Misc); did you mean "
      "\"LocalSize\"?";
  const std::string t1 = (dir / "t1.json").string();
  for (const auto& args : {std::vector<std::string>{"space", t1}, {"tune", t1, "-o", (dir / "out").string()}}) {
    auto r = tunekit_cli(args);
    EXPECT_EQ(r.exit_code, 1) << args[0] << ": " << r.output;
    EXPECT_TRUE(contains(r.output, expected)) << args[0] << ": " << r.output;
  }
}

// A tune reads its store's whole file once to check it (about half a second
// for a 150 MB store): tune's check of the store before the tune, whose
// verdict the tuner's own open takes, not a second read. Counted in a child
// that runs the CLI in its own process. A damaged store is still refused at
// that check, with the message every command gives.
TEST(ReliabilityCli, ATuneChecksItsStoreWholeOnce) {
  const auto dir = fresh_dir();
  const std::string spec = write_spec(dir, "{KIND: [0, 1]}");
  const std::string out = (dir / "out").string(), db = out + "/tunekit.db";
  ASSERT_EQ(tunekit_cli({"tune", spec, "--no-progress", "-o", out}).exit_code, 0);
  int report[2];
  ASSERT_EQ(::pipe(report), 0);
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    ::close(report[0]);
    const int devnull = open("/dev/null", O_WRONLY);
    dup2(devnull, 1);
    std::vector<std::string> args{"tunekit", "tune", spec, "-o", out, "--no-progress"};
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    // This process's earlier tests opened stores too.
    const std::uint64_t before = detail::store_whole_file_checks();
    const int rc = tunekit::cli::run(static_cast<int>(args.size()), argv.data());
    const std::uint64_t checks = detail::store_whole_file_checks() - before;
    [[maybe_unused]] auto w = ::write(report[1], &checks, sizeof checks);
    _exit(rc);
  }
  ::close(report[1]);
  std::uint64_t checks = 0;
  ASSERT_EQ(::read(report[0], &checks, sizeof checks), static_cast<ssize_t>(sizeof checks));
  ::close(report[0]);
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
  EXPECT_EQ(checks, 1u);

  // Bits flipped in the keys of the trials' index, as a bad disk block
  // would: its page's header and cell pointers stay whole.
  std::int64_t page_size = 0, index_root = 0;
  {
    sqlite3* handle = nullptr;
    ASSERT_EQ(sqlite3_open(db.c_str(), &handle), SQLITE_OK);
    sqlite3_stmt* st = nullptr;
    ASSERT_EQ(sqlite3_prepare_v2(handle, "SELECT rootpage FROM sqlite_master WHERE name = 'sqlite_autoindex_trials_1'",
                                 -1, &st, nullptr),
              SQLITE_OK);
    ASSERT_EQ(sqlite3_step(st), SQLITE_ROW);
    index_root = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    ASSERT_EQ(sqlite3_prepare_v2(handle, "PRAGMA page_size", -1, &st, nullptr), SQLITE_OK);
    ASSERT_EQ(sqlite3_step(st), SQLITE_ROW);
    page_size = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    sqlite3_close(handle);
  }
  {
    std::fstream f(db, std::ios::in | std::ios::out | std::ios::binary);
    const std::streamoff start = (index_root - 1) * page_size;
    for (std::streamoff at = start + page_size / 2; at < start + page_size; at += 31) {
      f.seekg(at);
      const int byte = f.get();
      f.seekp(at);
      f.put(static_cast<char>(byte ^ 0x5a));
    }
  }
  const auto r = tunekit_cli({"tune", spec, "--no-progress", "-o", out});
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_TRUE(contains(r.output, "--out-dir: cannot tune into " + db + ": ")) << r.output;
  EXPECT_TRUE(contains(r.output, "SQLite's check of the file finds: ")) << r.output;
  EXPECT_TRUE(contains(r.output, "the file is damaged, and tunekit reads nothing from it: move " + db + " aside"))
      << r.output;
}

// A machine that fails every config (here a compiler that cannot run a part
// of itself, as gcc half-way through an upgrade) ends the run after ten in
// a row, saying why, rather than go through the whole space; configs that
// get their own verdict between such failures keep the run going.
TEST(ReliabilityCli, AMachineThatFailsConfigAfterConfigEndsTheRun) {
  const auto dir = fresh_dir();
  std::string spec = write_spec(dir, "{KIND: \"0:29:1\"}");
  std::string text = read_file(spec);
  text.replace(text.find("flags: [-O0]"), 0, "compiler: tk-cc, ");
  text += "reference: none\n";
  write_file(spec, text);
  // tk-cc builds KIND 0, 5, 10, ... (a config's own verdict) and fails the
  // rest as a compiler missing its cc1plus does.
  const fs::path bin = dir / "bin";
  write_file(bin / "tk-cc", R"(#!/bin/sh
case "$1" in --version|-dumpmachine) exec c++ "$@";; esac
for a in "$@"; do case "$a" in -DKIND=*[05]) exec c++ "$@";; esac; done
echo "c++: fatal error: cannot execute 'cc1plus': execvp: No such file or directory" >&2
exit 1
)");
  fs::permissions(bin / "tk-cc", fs::perms::owner_all);
  const char* path = std::getenv("PATH");
  auto tune = [&](const std::string& out) {
    return detail::run_process({"env", "PATH=" + bin.string() + ":" + (path ? path : ""), tunekit_exe().string(),
                                "tune", spec, "-o", out, "--no-progress", "--confirm", "off"},
                               std::chrono::seconds(600));
  };
  const auto trials_in = [](const fs::path& db) {
    sqlite3* h = nullptr;
    EXPECT_EQ(sqlite3_open(db.c_str(), &h), SQLITE_OK);
    sqlite3_stmt* st = nullptr;
    sqlite3_prepare_v2(h, "SELECT count(*) FROM trials", -1, &st, nullptr);
    const int n = sqlite3_step(st) == SQLITE_ROW ? sqlite3_column_int(st, 0) : -1;
    sqlite3_finalize(st);
    sqlite3_close(h);
    return n;
  };

  const auto mixed = tune((dir / "mixed").string());
  EXPECT_EQ(mixed.exit_code, 0) << mixed.output;
  EXPECT_TRUE(contains(mixed.output, "30 trials: 6 ok")) << mixed.output;

  write_file(bin / "tk-cc", R"(#!/bin/sh
case "$1" in --version|-dumpmachine) exec c++ "$@";; esac
echo "c++: fatal error: cannot execute 'cc1plus': execvp: No such file or directory" >&2
exit 1
)");
  const auto broken = tune((dir / "broken").string());
  EXPECT_EQ(broken.exit_code, 2) << broken.output;
  EXPECT_TRUE(contains(broken.output, "the last 10 configs measured all failed for a reason of the machine's"))
      << broken.output;
  EXPECT_TRUE(contains(broken.output, "execvp: No such file or directory); they are stored")) << broken.output;
  EXPECT_TRUE(contains(broken.output,
                       "run the same command to resume (or add --keep-going to go on past such "
                       "failures)"))
      << broken.output;
  EXPECT_EQ(trials_in(dir / "broken" / "tunekit.db"), 10);

  // --keep-going goes through the whole space: every config is the
  // machine's failure, so no best (exit 3), and every one is stored.
  const auto kept_going = detail::run_process(
      {"env", "PATH=" + bin.string() + ":" + (path ? path : ""), tunekit_exe().string(), "tune", spec, "-o",
       (dir / "kept-going").string(), "--no-progress", "--confirm", "off", "--keep-going"},
      std::chrono::seconds(600));
  EXPECT_EQ(kept_going.exit_code, 3) << kept_going.output;
  EXPECT_FALSE(contains(kept_going.output, "the last 10 configs measured")) << kept_going.output;
  EXPECT_EQ(trials_in(dir / "kept-going" / "tunekit.db"), 30);
}
