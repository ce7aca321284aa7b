// What a resume may trust, and what one misbehaving kernel may cost: the
// regression tests of issue #22 that run the whole loop. Each plants the
// fault for real (a kernel that kills its worker, a compiler that meets a
// full disk, a kernel that hangs) and checks what is stored and what a rerun
// does with it.
#include <gtest/gtest.h>

#include <fmt/ranges.h>

#include <fmt/format.h>

#include <unistd.h>

#include <csignal>
#include <fstream>
#include <map>
#include <sstream>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "support/cli.hpp"
#include "support/temp_dir.hpp"
#include "tunekit/report.hpp"
#include "tunekit/stop.hpp"
#include "tunekit/store.hpp"
#include "tunekit/tuner.hpp"

using namespace tunekit;
using tunekit::testing::contains;
using tunekit::testing::fresh_dir;
using tunekit::testing::write_file;
namespace fs = std::filesystem;

namespace {

// KIND 0 and 4 compute y = 2x. While the file MARK exists, KIND 1 kills its
// worker with SIGKILL (as the OOM killer would), KIND 2 aborts, KIND 5
// hangs. KIND 3 changes the worker's directory; KIND 6 writes a line to
// every descriptor it can; KIND 7 prints 16 MiB a call. KIND 8 starts a
// daemon (fork, setsid, fork again) that sleeps for ever and writes its pid
// and start time to MARK.strays; KIND 9 does that too, then hangs; KIND 10
// computes y = 0 while a process listed there runs; KIND 16 sends SIGTERM
// to its worker's keeper, and KIND 17 kills its worker with SIGKILL, once
// each: the first call that finds MARK.once removes it. (The start time
// tells a daemon from a later process given its pid: pids are reused.)
std::string kernel(const fs::path& mark) {
  return R"(#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <sys/wait.h>
#include <unistd.h>
static bool marked() { return access(")" +
         mark.string() + R"(", F_OK) == 0; }
static bool once() { return std::remove(")" +
         mark.string() + R"(.once") == 0; }
static const char* strays = ")" +
         mark.string() + R"(.strays";
// A process's start time (field 22 of /proc/PID/stat) when it runs (is no
// zombie), else 0.
static unsigned long long running_since(int pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string text((std::istreambuf_iterator<char>(stat)), std::istreambuf_iterator<char>());
  const auto close = text.rfind(')');
  if (close == std::string::npos || close + 2 >= text.size() || text[close + 2] == 'Z') return 0;
  std::istringstream fields(text.substr(close + 2));
  std::string field;
  for (int i = 3; i < 22; ++i) fields >> field;
  unsigned long long since = 0;
  fields >> since;
  return since;
}
static void start_daemon() {
  int ready[2];
  if (pipe(ready) != 0) std::abort();
  const pid_t middle = fork();
  if (middle == 0) {
    setsid();
    if (fork() == 0) {
      FILE* f = std::fopen(strays, "a");
      std::fprintf(f, "%d %llu\n", getpid(), running_since(getpid()));
      std::fclose(f);
      if (write(ready[1], "x", 1) != 1) _exit(1);
      for (;;) pause();
    }
    char c;
    _exit(read(ready[0], &c, 1) == 1 ? 0 : 1);
  }
  waitpid(middle, nullptr, 0);
  close(ready[0]);
  close(ready[1]);
}
static bool a_stray_runs() {
  std::ifstream list(strays);
  int pid;
  unsigned long long since;
  while (list >> pid >> since)
    if (running_since(pid) == since) return true;
  return false;
}
// The reference: kills its worker (SIGKILL, from outside as far as the
// tuner can tell) the first time it runs while MARK.ref exists.
extern "C" void scale_ref(const float* x, float* y, int n) {
  if (std::remove(")" +
         mark.string() + R"(.ref") == 0) kill(getpid(), SIGKILL);
  for (int i = 0; i < n; ++i) y[i] = 2 * x[i];
}
extern "C" void scale(const float* x, float* y, int n) {
#if KIND == 1
  if (marked()) kill(getpid(), SIGKILL);
#elif KIND == 2
  if (marked()) std::abort();
#elif KIND == 3
  if (chdir("/") != 0) std::abort();
#elif KIND == 5
  if (marked()) for (volatile int i = 0;;) ++i;
#elif KIND == 6
  for (int fd = 3; fd < 1024; ++fd) { ssize_t w = write(fd, "garbage\n", 8); (void)w; }
#elif KIND == 7
  static char line[4096];
  std::memset(line, 'x', sizeof line);
  for (int i = 0; i < 4096; ++i) fwrite(line, 1, sizeof line, stdout);
#elif KIND == 8
  start_daemon();
#elif KIND == 9
  if (marked()) {
    start_daemon();
    for (volatile int i = 0;;) ++i;
  }
#elif KIND == 16
  // SIGTERM to the worker's top process (the keeper, the server's parent),
  // the one a user picks out of ps; only when that is the worker.
  std::ifstream comm("/proc/" + std::to_string(getppid()) + "/comm");
  std::string parent;
  comm >> parent;
  if (parent == "tunekit-worker" && once()) {
    kill(getppid(), SIGTERM);
    pause();
  }
#elif KIND == 17
  if (once()) kill(getpid(), SIGKILL);
#elif KIND == 10
  if (a_stray_runs()) {
    for (int i = 0; i < n; ++i) y[i] = 0;
    return;
  }
#endif
  for (int i = 0; i < n; ++i) y[i] = 2 * x[i];
}
)";
}

// Generous time limits: a busy machine must not turn a correct config into
// a timeout. Only the tests about timeouts lower them, around a real hang.
// No early stop: a noisy machine must not cut a re-measured config short.
std::string spec_text(const std::string& kinds, const std::string& extra = "") {
  return R"(name: faults
kernel: {source: k.cpp, entry: scale, flags: [-O1]}
arguments:
  - {name: x, type: f32, size: N}
  - {name: y, type: f32, size: N, role: out}
  - {name: n, type: i32, value: N}
sizes: {N: 256}
parameters: {KIND: )" +
         kinds + R"(}
measure: {warmup: 0ms, min_samples: 2, max_samples: 3, max_time: 50ms, cache: hot, timeout: 120s, early_stop: off}
tolerance: {atol: 1e-6, rtol: 0}
)" + extra;
}

struct Fixture {
  fs::path dir = fresh_dir();
  fs::path mark = dir / "MARK";
  TuneOptions options;

  Fixture(const std::string& kinds, const std::string& extra = "") {
    write_file(dir / "k.cpp", kernel(mark));
    write_file(dir / "k.yaml", spec_text(kinds, extra));
    write_file(mark, "");
    options.out_dir = dir / "out";
  }
  Spec spec() const { return load_spec(dir / "k.yaml"); }
  void clear_mark() const { fs::remove(mark); }
};

std::map<std::int64_t, TrialRecord> by_kind(const TuneReport& r) {
  std::map<std::int64_t, TrialRecord> out;
  for (const auto& t : r.all_trials()) out[t.config.at("KIND").as_int()] = t;
  return out;
}

// A tune of `spec`: each trial's status in order, and how many were resumed.
std::pair<std::string, std::size_t> statuses_of(const fs::path& spec, const TuneOptions& options) {
  const TuneReport r = tune(load_spec(spec), options);
  std::string out;
  for (const auto& t : r.all_trials()) out += std::string(to_string(t.status)) + " ";
  return {out, r.resumed};
}

}  // namespace

// Item 3: a worker killed from outside is the environment's doing (the OOM
// killer's, a user's): the config is measured again at once, on a fresh
// worker, and costs nothing. Killed again there, it is the config's own
// failure (memory use past a limit kills it every time), which a resume
// trusts instead of measuring it again on every run; --retry-failed
// measures it again.
TEST(Reliability, AWorkerKilledFromOutsideIsMeasuredAgain) {
  Fixture f("[0, 17]", "default: {KIND: 0}\n");
  write_file(f.mark.string() + ".once", "");
  const TuneReport report = tune(f.spec(), f.options);
  auto first = by_kind(report);
  EXPECT_FALSE(fs::exists(f.mark.string() + ".once"));  // it did kill its worker
  EXPECT_EQ(first[17].status, Status::ok) << first[17].error;
  EXPECT_EQ(first[0].status, Status::ok) << first[0].error;
  // Measured again, but not silently: the trial's line, the summary and the
  // JSON say so.
  const std::string note = "worker killed from outside (SIGKILL); measured again on a fresh worker";
  EXPECT_EQ(first[17].error, note);
  EXPECT_EQ(first[0].error, "");
  EXPECT_TRUE(contains(format_trial_line(2, first[17], columns_of(report)), ", " + note))
      << format_trial_line(2, first[17], columns_of(report));
  EXPECT_EQ(report.measured_again_after_kill, 1u);
  EXPECT_TRUE(contains(format_summary(report),
                       "2 trials: 2 ok; 1 trial's worker killed from outside, measured again on a fresh one"))
      << format_summary(report);
  const auto json = nlohmann::json::parse(format_json(report));
  EXPECT_EQ(json["measured_again_after_kill"], 1);
  EXPECT_EQ(json["retried"], 0);
}

TEST(Reliability, AConfigWhoseWorkerIsKilledTwiceInARowIsItsOwnFailure) {
  Fixture f("[0, 1]", "default: {KIND: 0}\n");
  const Spec spec = f.spec();
  auto first = by_kind(tune(spec, f.options));
  EXPECT_EQ(first[1].status, Status::crash) << first[1].error;
  EXPECT_EQ(first[1].fault, Fault::config);
  EXPECT_TRUE(contains(first[1].error, "worker killed by SIGKILL twice in a row: the config's own doing"))
      << first[1].error;
  EXPECT_TRUE(contains(first[1].error, "--retry-failed measures it again")) << first[1].error;
  EXPECT_EQ(first[0].status, Status::ok);

  f.clear_mark();
  TuneReport second = tune(spec, f.options);
  EXPECT_EQ(second.resumed, 2u);
  EXPECT_EQ(second.retried, 0u);
  EXPECT_EQ(by_kind(second)[1].status, Status::crash);

  TuneOptions retry = f.options;
  retry.retry_failed = true;
  TuneReport third = tune(spec, retry);
  EXPECT_EQ(third.retried, 1u);
  EXPECT_EQ(by_kind(third)[1].status, Status::ok);
  EXPECT_EQ(
      Store(third.db).find(third.spec_hash, third.device, {{"N", Value(256)}}, Config({{"KIND", Value(1)}}))->status,
      Status::ok);
}

// A SIGTERM to the worker's top process (its keeper) ends the server with
// it: the environment's doing, measured again at once, not the config's
// crash (the keeper exited 0, which read as the kernel's).
TEST(Reliability, AWorkersKeeperTerminatedFromOutsideIsTheEnvironments) {
  Fixture f("[0, 16]", "default: {KIND: 0}\n");
  write_file(f.mark.string() + ".once", "");
  auto first = by_kind(tune(f.spec(), f.options));
  EXPECT_FALSE(fs::exists(f.mark.string() + ".once"));  // it did terminate its keeper
  EXPECT_EQ(first[16].status, Status::ok) << first[16].error;
  EXPECT_EQ(first[0].status, Status::ok) << first[0].error;
}

// Item 4: a build that meets a full disk is not the config's fault. The
// compiler here writes its output to /dev/full while the mark exists, so the
// "No space left on device" comes from the kernel, as on a full disk.
TEST(Reliability, ABuildOnAFullDiskIsBuiltAgain) {
  Fixture f("[0, 4]", "default: {KIND: 0}\n");
  write_file(f.dir / "cc.sh", "#!/bin/sh\ncase \"$*\" in *KIND=4*) [ -e '" + f.mark.string() +
                                  "' ] && exec c++ \"$@\" -o /dev/full;; esac\nexec c++ \"$@\"\n");
  fs::permissions(f.dir / "cc.sh", fs::perms::owner_all);
  Spec spec = f.spec();
  spec.kernel.compiler = (f.dir / "cc.sh").string();
  auto first = by_kind(tune(spec, f.options));
  EXPECT_EQ(first[4].status, Status::compile_error);
  EXPECT_EQ(first[4].fault, Fault::environment) << first[4].error;
  EXPECT_TRUE(contains(first[4].error, "No space left on device")) << first[4].error;

  f.clear_mark();
  auto second = by_kind(tune(spec, f.options));
  EXPECT_EQ(second[4].status, Status::ok) << second[4].error;
}

// Item 5: a stored timeout belongs to the timeout it ran under. The same
// or a shorter limit reuses it; a longer --timeout measures it again. The
// hang is real.
TEST(Reliability, ATimeoutIsMeasuredAgainUnderALongerTimeout) {
  Fixture f("[5]", "reference: none\n");
  Spec spec = f.spec();
  spec.measure.timeout = Seconds(2);
  auto first = by_kind(tune(spec, f.options));
  EXPECT_EQ(first[5].status, Status::timeout);
  EXPECT_EQ(first[5].fault, Fault::config);
  EXPECT_TRUE(contains(first[5].settings, "timeout=2s")) << first[5].settings;

  f.clear_mark();
  TuneReport same = tune(spec, f.options);  // the same settings: the stored timeout stands
  EXPECT_EQ(same.resumed, 1u);
  EXPECT_EQ(by_kind(same)[5].status, Status::timeout);

  // A shorter limit: it would run out sooner, so the timeout stands (the
  // hang is gone now: measured again, it would be ok).
  spec.measure.timeout = Seconds(1);
  TuneReport shorter = tune(spec, f.options);
  EXPECT_EQ(shorter.resumed, 1u);
  EXPECT_EQ(by_kind(shorter)[5].status, Status::timeout);

  spec.measure.timeout = Seconds(120);
  TuneReport longer = tune(spec, f.options);
  EXPECT_EQ(longer.resumed, 0u);
  EXPECT_EQ(longer.retried, 1u);
  EXPECT_EQ(by_kind(longer)[5].status, Status::ok);
}

// --retry-failed measures every stored failure again (a config's own too)
// and keeps the good trials as they are.
TEST(Reliability, RetryFailedMeasuresFailuresAgainAndKeepsGoodTrials) {
  Fixture f("[0, 2]", "default: {KIND: 0}\n");
  Spec spec = f.spec();
  spec.measure.confirm = 0;  // which would measure the good trial again beside the retried one
  auto first = by_kind(tune(spec, f.options));
  EXPECT_EQ(first[2].status, Status::crash);  // SIGABRT: the config's own
  EXPECT_EQ(first[2].fault, Fault::config);

  f.clear_mark();
  TuneReport resumed = tune(spec, f.options);
  EXPECT_EQ(resumed.resumed, 2u);
  EXPECT_EQ(by_kind(resumed)[2].status, Status::crash);

  // A crash depends on no setting: under another --timeout it stands too
  // (the abort is no longer planted: measured again, it would be ok).
  Spec other = spec;
  other.measure.timeout = Seconds(300);
  TuneReport under_other = tune(other, f.options);
  EXPECT_EQ(under_other.resumed, 2u);
  EXPECT_EQ(by_kind(under_other)[2].status, Status::crash);

  TuneOptions retry = f.options;
  retry.retry_failed = true;
  TuneReport retried = tune(spec, retry);
  EXPECT_EQ(retried.resumed, 1u);
  EXPECT_EQ(retried.retried, 1u);
  auto after = by_kind(retried);
  EXPECT_EQ(after[2].status, Status::ok);
  EXPECT_EQ(after[0].id, first[0].id);
  EXPECT_EQ(after[0].created_at, first[0].created_at);
  EXPECT_EQ(after[0].samples, first[0].samples);
}

// A retry stopped while its trial runs measured nothing again, and does not
// say it did.
TEST(Reliability, AStoppedRetryCountsNoRetriedTrial) {
  Fixture f("[0, 2]", "default: {KIND: 0}\n");
  Spec spec = f.spec();
  spec.measure.confirm = 0;
  ASSERT_EQ(by_kind(tune(spec, f.options))[2].status, Status::crash);
  TuneOptions retry = f.options;
  retry.retry_failed = true;
  const TuneReport stopped = tune(spec, retry, [](const ProgressEvent& e) {
    if (contains(e.current, "measuring {KIND: 2}")) request_stop();
  });
  clear_stop();
  EXPECT_TRUE(stopped.interrupted);
  EXPECT_EQ(stopped.retried, 0u);
  EXPECT_EQ(by_kind(tune(spec, f.options))[2].status, Status::crash);  // the stored failure stands
}

// Item 2: a config that a run's extra constraint (--where) excludes from a
// `configs:` list is reported invalid but not stored, so a full run later
// measures it, and an earlier measurement is never replaced by 'invalid'.
TEST(Reliability, ConfigsExcludedByWhereAreNotStored) {
  Fixture f("[0, 4]", "configs: [{KIND: 0}, {KIND: 4}]\n");
  Spec narrowed = f.spec();
  narrowed.constraints.push_back(Expression::parse("KIND != 4", {"--where KIND != 4"}));
  auto first = by_kind(tune(narrowed, f.options));
  EXPECT_EQ(first[4].status, Status::invalid);
  EXPECT_EQ(first[0].status, Status::ok);
  TuneReport full = tune(f.spec(), f.options);
  EXPECT_EQ(by_kind(full)[4].status, Status::ok);
  // And the other way round: the measured trial survives a narrowed run.
  (void)tune(narrowed, f.options);
  EXPECT_EQ(Store(full.db).find(full.spec_hash, full.device, {{"N", Value(256)}}, Config({{"KIND", Value(4)}}))->status,
            Status::ok);
}

// Item 6: a kernel that changes the shared worker's directory costs nothing
// to the configs after it, even with a relative output folder.
TEST(Reliability, AKernelThatChangesDirectoryLeavesLaterConfigsAlone) {
  Fixture f("[3, 0, 4]", "default: {KIND: 3}\n");
  const Spec spec = f.spec();
  const fs::path was = fs::current_path();
  fs::current_path(f.dir);
  TuneOptions relative;
  relative.out_dir = "out";
  TuneReport report;
  try {
    report = tune(spec, relative);
  } catch (...) {
    fs::current_path(was);
    throw;
  }
  fs::current_path(was);
  for (const auto& [kind, t] : by_kind(report)) EXPECT_EQ(t.status, Status::ok) << kind << ": " << t.error;
  EXPECT_EQ(by_kind(report).size(), 3u);
}

// Item 8: a kernel that writes to every descriptor it can reaches the reply
// channel only through its hidden descriptor, and then fails its own config
// (the line lacks the worker's token); the run goes on, and so does a rerun.
TEST(Reliability, AKernelWritingOnTheReplyChannelFailsOnlyItsConfig) {
  Fixture f("[0, 6, 4]", "default: {KIND: 0}\n");
  const Spec spec = f.spec();
  for (int run = 0; run < 2; ++run) {
    auto t = by_kind(tune(spec, f.options));
    EXPECT_EQ(t[0].status, Status::ok);
    EXPECT_EQ(t[4].status, Status::ok) << t[4].error;
    EXPECT_EQ(t[6].status, Status::launch_error);
    EXPECT_TRUE(contains(t[6].error, "not the worker's")) << t[6].error;
  }
}

// Item 14: a reference that crashes ends its size, with a message naming
// the config, and the other sizes go on.
TEST(Reliability, AReferenceThatCrashesEndsOnlyItsSizeAndIsNamed) {
  Fixture f("[0, 2]", "default: {KIND: 2}\nreference: default\n");
  std::string text = spec_text("[0, 2]", "default: {KIND: 2}\nreference: default\n");
  text.replace(text.find("sizes: {N: 256}"), 15, "sizes: [{N: 256}, {N: 512}]");
  write_file(f.dir / "k.yaml", text);
  Spec spec = f.spec();
  // KIND 2 aborts at N=256 only.
  write_file(f.dir / "k.cpp",
             "#include <cstdlib>\nextern \"C\" void scale(const float* x, float* y, int n) {\n"
             "#if KIND == 2\n  if (n == 256) std::abort();\n#endif\n"
             "  for (int i = 0; i < n; ++i) y[i] = 2 * x[i];\n}\n");
  TuneReport report = tune(spec, f.options);
  ASSERT_EQ(report.sizes.size(), 2u);
  EXPECT_TRUE(contains(report.sizes[0].error, "the default config {KIND: 2}")) << report.sizes[0].error;
  EXPECT_TRUE(contains(report.sizes[0].error, "crash")) << report.sizes[0].error;
  EXPECT_FALSE(report.sizes[0].best);
  EXPECT_TRUE(report.sizes[1].error.empty());
  EXPECT_TRUE(report.sizes[1].best);
  // Every report says why, the JSON's "stopped" too; the warnings do not
  // repeat it.
  EXPECT_TRUE(contains(nlohmann::json::parse(format_json(report))["sizes"][0]["stopped"].get<std::string>(), "crash"));
  for (const auto& w : report.warnings) EXPECT_FALSE(contains(w, "the default config {KIND: 2}")) << w;
}

// Item 18: a reference whose outputs hold NaN is refused; no config is
// judged against it.
TEST(Reliability, AReferenceThatOutputsNaNIsRefused) {
  Fixture f("[0]", "reference: {entry: nan_ref}\n");
  write_file(f.dir / "k.cpp",
             "#include <cmath>\nextern \"C\" void scale(const float* x, float* y, int n) {\n"
             "  for (int i = 0; i < n; ++i) y[i] = 2 * x[i];\n}\n"
             "extern \"C\" void nan_ref(const float* x, float* y, int n) {\n"
             "  for (int i = 0; i < n; ++i) y[i] = i == 3 ? NAN : 2 * x[i];\n}\n");
  TuneReport report = tune(f.spec(), f.options);
  ASSERT_EQ(report.sizes.size(), 1u);
  EXPECT_TRUE(contains(report.sizes[0].error, "output 'y' has nan at element 3")) << report.sizes[0].error;
  EXPECT_TRUE(contains(report.sizes[0].error, "the reference function 'nan_ref'")) << report.sizes[0].error;
  EXPECT_FALSE(report.sizes[0].best);
}

// An infinity is a reference's right answer (log 0, a masked score): the
// config that writes it passes, one that writes a number there does not.
TEST(Reliability, AReferenceWithAnInfinityVerifiesTheConfigsThatMatchIt) {
  Fixture f("[0, 1]", "reference: {entry: inf_ref}\n");
  write_file(f.dir / "k.cpp",
             "#include <cmath>\nextern \"C\" void scale(const float* x, float* y, int n) {\n"
             "  for (int i = 0; i < n; ++i) y[i] = i == 3 ? (KIND == 0 ? -INFINITY : 0.0f) : 2 * x[i];\n}\n"
             "extern \"C\" void inf_ref(const float* x, float* y, int n) {\n"
             "  for (int i = 0; i < n; ++i) y[i] = i == 3 ? -INFINITY : 2 * x[i];\n}\n");
  TuneReport report = tune(f.spec(), f.options);
  ASSERT_EQ(report.sizes.size(), 1u);
  EXPECT_EQ(report.sizes[0].error, "");
  EXPECT_EQ(by_kind(report)[0].status, Status::ok) << by_kind(report)[0].error;
  EXPECT_EQ(by_kind(report)[1].status, Status::wrong_result);
}

// Item 15: what a kernel prints goes to the worker's log up to a cap per
// trial; 16 MiB a call cost neither the log nor the tuner's memory.
TEST(Reliability, KernelOutputKeptInTheLogIsCapped) {
  Fixture f("[7]", "reference: none\n");
  TuneReport report = tune(f.spec(), f.options);
  EXPECT_EQ(by_kind(report)[7].status, Status::ok);
  fs::path log;
  for (const auto& e : fs::recursive_directory_iterator(f.options.out_dir))
    if (e.path().filename() == "worker.log") log = e.path();
  ASSERT_FALSE(log.empty());
  EXPECT_LT(fs::file_size(log), 2u << 20);
  EXPECT_NE(tunekit::testing::read_file(log).find("more bytes of output not kept"), std::string::npos);
}

// Item 19: a constraint that fails to evaluate is reported once, with its
// location and the first values that hit it, not silently taken as false.
TEST(Reliability, AConstraintThatFailsToEvaluateIsReported) {
  Fixture f("[0, 1, 4]", "constraints: ['4 % KIND == 0']\ndefault: {KIND: 4}\n");
  TuneReport report = tune(f.spec(), f.options);
  // Once: the other warnings a busy machine may add (noise) are not about it.
  std::vector<std::string> about;
  for (const auto& w : report.warnings)
    if (contains(w, "4 % KIND == 0")) about.push_back(w);
  ASSERT_EQ(about.size(), 1u) << fmt::format("{}", fmt::join(report.warnings, "\n"));
  EXPECT_TRUE(contains(about[0], "k.yaml:")) << about[0];
  EXPECT_TRUE(contains(about[0], "modulo by zero") || contains(about[0], "division by zero")) << about[0];
  EXPECT_TRUE(contains(about[0], "{KIND: 0}")) << about[0];
}

// Item 23: a default config that the constraints exclude at a size is said,
// not dropped in silence.
TEST(Reliability, ADefaultOutsideTheSpaceIsWarned) {
  Fixture f("[0, 4]", "constraints: ['KIND != 4']\ndefault: {KIND: 4}\n");
  TuneReport report = tune(f.spec(), f.options);
  ASSERT_FALSE(report.warnings.empty());
  EXPECT_TRUE(contains(report.warnings[0], "the default {KIND: 4} breaks the constraint `KIND != 4`"))
      << report.warnings[0];
}

// Item 24: a scalar its type cannot hold is refused, naming the argument,
// instead of reaching the kernel wrapped around. Made from no parameter, it
// fails at every config: the spec's error, before anything is built; one a
// parameter makes is that config's failure.
TEST(Reliability, AScalarOutOfItsTypesRangeFailsNamingTheArgument) {
  Fixture f("[0]", "reference: none\n");
  // The scalar n given `value`, made from no parameter: the spec's error.
  auto expect_spec_error = [&](const std::string& value, const std::string& message) {
    std::string text = spec_text("[0]", "reference: none\n");
    text.replace(text.find("value: N}"), 9, "value: " + value + "}");
    write_file(f.dir / "k.yaml", text);
    try {
      (void)tune(f.spec(), f.options);
      ADD_FAILURE() << "expected an InputError for " << value;
    } catch (const InputError& e) {
      EXPECT_TRUE(contains(e.what(), "k.yaml:")) << e.what();
      EXPECT_TRUE(contains(e.what(), message)) << e.what();
    }
  };
  expect_spec_error("4294967312", "argument 'n' = 4294967312 does not fit its type i32");
  EXPECT_TRUE(Store(f.options.out_dir / "tunekit.db").all().empty());

  std::string text = spec_text("[0, 1]", "reference: none\n");
  text.replace(text.find("value: N}"), 9, "value: N + KIND * 4294967312}");
  write_file(f.dir / "k.yaml", text);
  auto t = by_kind(tune(f.spec(), f.options));
  EXPECT_EQ(t[0].status, Status::ok) << t[0].error;
  EXPECT_EQ(t[1].status, Status::launch_error);
  EXPECT_TRUE(contains(t[1].error, "does not fit its type i32")) << t[1].error;

  // Nor is a fraction cut off: N / 3 is true division.
  expect_spec_error("N / 3", "is not a whole number, which its type i32 needs");
}

// Item 28: a parameter named like a machine property would replace it.
TEST(Reliability, AParameterNamedLikeAMachinePropertyIsAnError) {
  Fixture f("[0]");
  std::string text = spec_text("[0]");
  text.replace(text.find("{KIND: [0]}"), 11, "{KIND: [0], cores: [1, 2]}");
  write_file(f.dir / "k.yaml", text);
  try {
    (void)tune(f.spec(), f.options);
    FAIL() << "expected an InputError";
  } catch (const InputError& e) {
    EXPECT_TRUE(contains(e.what(), "parameter 'cores' has the name of a property of the machine")) << e.what();
    EXPECT_TRUE(contains(e.what(), "k.yaml:")) << e.what();
  }
}

// Item 12: two tuners sharing one output folder (and build cache) build the
// same variants side by side; each renames its own files into place.
TEST(Reliability, TwoTunersShareABuildCache) {
  Fixture f("[0, 4, 10, 11, 12, 13, 14, 15]", "default: {KIND: 0}\n");
  const Spec spec = f.spec();
  TuneOptions a = f.options, b = f.options;
  b.out_dir = f.dir / "out";  // the same cache; each its own store
  Spec other = spec;
  other.output.db = f.dir / "other.db";
  TuneReport ra, rb;
  std::string failed;
  std::thread t([&] {
    try {
      ra = tune(spec, a);
    } catch (const std::exception& e) {
      failed = e.what();
    }
  });
  rb = tune(other, b);
  t.join();
  EXPECT_EQ(failed, "");
  EXPECT_EQ(ra.all_trials().size(), 8u);
  for (const auto* r : {&ra, &rb})
    for (const auto& [kind, trial] : by_kind(*r)) EXPECT_EQ(trial.status, Status::ok) << kind << ": " << trial.error;
}

// Item 27: an application that reports a time of 0 has measured nothing; it
// fails instead of winning.
TEST(Reliability, AnApplicationReportingZeroTimeDoesNotWin) {
  const auto dir = fresh_dir();
  write_file(dir / "k.cpp", "int k;\n");
  write_file(dir / "app.yaml",
             "name: app\nkernel: {source: k.cpp, language: command}\n"
             "parameters: {P: [0, 3]}\n"
             "application:\n  run: [sh, -c, 'echo time: {P}']\n"
             "  time: {regex: 'time: ([0-9.]+)'}\n"
             "measure: {min_samples: 1, max_samples: 1, timeout: 120s}\n");
  TuneOptions options;
  options.out_dir = dir / "out";
  std::map<std::int64_t, TrialRecord> t;
  for (const auto& r : tune(load_spec(dir / "app.yaml"), options).all_trials()) t[r.config.at("P").as_int()] = r;
  EXPECT_EQ(t[0].status, Status::launch_error);
  EXPECT_TRUE(contains(t[0].error, "not a positive number")) << t[0].error;
  EXPECT_EQ(t[3].status, Status::ok);
}

// Item 17: a run that exits 0 but leaves a background process holding its
// output is over when it exits: it is not a timeout, and the leftover dies.
TEST(Reliability, AnApplicationLeavingABackgroundProcessIsNotATimeout) {
  const auto dir = fresh_dir();
  write_file(dir / "k.cpp", "int k;\n");
  write_file(dir / "app.yaml",
             "name: app\nkernel: {source: k.cpp, language: command}\n"
             "parameters: {P: [1]}\n"
             "application:\n  build: [sh, -c, 'sleep 600 & echo built']\n"
             "  run: [sh, -c, 'sleep 600 & echo time: {P}']\n"
             "  time: {regex: 'time: ([0-9.]+)'}\n  run_timeout: 60s\n  build_timeout: 60s\n"
             "measure: {min_samples: 1, max_samples: 1}\n");
  TuneOptions options;
  options.out_dir = dir / "out";
  const auto trials = tune(load_spec(dir / "app.yaml"), options).all_trials();
  ASSERT_EQ(trials.size(), 1u);
  EXPECT_EQ(trials[0].status, Status::ok) << trials[0].error;
}

// A compiler whose log is mostly warnings (here 200 KB of a wrapper's, ahead
// of the compiler's own): the stored log is capped, and keeps the error.
TEST(Reliability, ACompileErrorAfterMegabytesOfWarningsIsKept) {
  const fs::path dir = fresh_dir();
  write_file(dir / "noisy.sh", "#!/bin/sh\n"
                               "i=0; while [ $i -lt 4000 ]; do\n"
                               "  echo 'k.cpp:1:1: warning: this line says nothing of use at all, 50 bytes' >&2\n"
                               "  i=$((i + 1)); done\n"
                               "exec c++ \"$@\"\n");
  fs::permissions(dir / "noisy.sh", fs::perms::owner_all);
  write_file(dir / "k.cpp", "#if KIND == 1\n#error planted failure\n#endif\n"
                            "extern \"C\" void f(const float* x, float* y, int n) {\n"
                            "  for (int i = 0; i < n; ++i) y[i] = 2 * x[i];\n}\n");
  write_file(dir / "k.yaml", "name: k\nkernel: {source: k.cpp, entry: f, compiler: " + (dir / "noisy.sh").string() +
                                 ", flags: [-O1]}\n" + R"(arguments:
  - {name: x, type: f32, size: 64, fill: random}
  - {name: y, type: f32, size: 64, role: out}
  - {name: n, type: i32, value: 64}
parameters: {KIND: [0, 1]}
default: {KIND: 0}
measure: {warmup: 0us, min_samples: 2, max_samples: 2, cache: hot, confirm: 0}
)");
  TuneOptions options;
  options.out_dir = dir / "out";
  const TuneReport r = tune(load_spec(dir / "k.yaml"), options);
  bool seen = false;
  for (const auto& t : r.all_trials())
    if (t.config.at("KIND").as_int() == 1) {
      seen = true;
      EXPECT_EQ(t.status, Status::compile_error);
      EXPECT_NE(t.error.find("#error planted failure"), std::string::npos) << t.error.substr(0, 300);
      EXPECT_LT(t.error.size(), 9000u);
    }
  EXPECT_TRUE(seen);
}

// An include folder in the spec's flags is the spec folder's, as its source
// is, wherever tunekit runs (the tests run in the build folder); the headers
// found there, included with <NAME> too, are part of the kernel.
TEST(Reliability, AHeaderInAnIncludeFolderOfTheFlagsIsFoundAndPartOfIt) {
  const fs::path dir = fresh_dir();
  write_file(dir / "inc" / "lib" / "factor.hpp", "#include \"two.hpp\"\ninline float factor() { return two(); }\n");
  write_file(dir / "inc" / "lib" / "two.hpp", "inline float two() { return 2.0f; }\n");
  write_file(dir / "src" / "k.cpp", "#include <lib/factor.hpp>\n"
                                    "extern \"C\" void f(const float* x, float* y, int n) {\n"
                                    "  for (int i = 0; i < n; ++i) y[i] = factor() * x[i] + KIND * 0;\n}\n"
                                    "extern \"C\" void ref(const float* x, float* y, int n) {\n"
                                    "  for (int i = 0; i < n; ++i) y[i] = 2 * x[i];\n}\n");
  write_file(dir / "k.yaml", R"(name: k
kernel: {source: src/k.cpp, entry: f, flags: [-O1, -I, inc]}
arguments:
  - {name: x, type: f32, size: 64, fill: random}
  - {name: y, type: f32, size: 64, role: out}
  - {name: n, type: i32, value: 64}
parameters: {KIND: [0, 1]}
reference: {entry: ref}
measure: {warmup: 0us, min_samples: 2, max_samples: 2, cache: hot, confirm: 0}
)");
  ASSERT_NE(fs::current_path(), dir);
  TuneOptions options;
  options.out_dir = dir / "out";
  auto statuses = [&] { return statuses_of(dir / "k.yaml", options); };
  EXPECT_EQ(statuses(), (std::pair<std::string, std::size_t>{"ok ok ", 0}));
  write_file(dir / "inc" / "lib" / "two.hpp", "inline float two() { return 3.0f; }\n");
  EXPECT_EQ(statuses(), (std::pair<std::string, std::size_t>{"wrong_result wrong_result ", 0}));
  write_file(dir / "inc" / "lib" / "two.hpp", "inline float two() { return 2.0f; }\n");
  EXPECT_EQ(statuses(), (std::pair<std::string, std::size_t>{"ok ok ", 2}));
}

// A kernel's own header (#include "NAME" beside it) is part of the kernel:
// it is found without an -I flag, an edit to it measures the configs anew
// (the stale trials are not resumed, the stale builds not served), and
// undoing the edit resumes the first trials.
TEST(Reliability, AKernelsOwnHeaderIsPartOfIt) {
  const fs::path dir = fresh_dir();
  write_file(dir / "factor.hpp", "inline float factor() { return 2.0f; }\n");
  write_file(dir / "k.cpp", "#include \"factor.hpp\"\n"
                            "extern \"C\" void f(const float* x, float* y, int n) {\n"
                            "  for (int i = 0; i < n; ++i) y[i] = factor() * x[i] + KIND * 0;\n}\n"
                            "extern \"C\" void ref(const float* x, float* y, int n) {\n"
                            "  for (int i = 0; i < n; ++i) y[i] = 2 * x[i];\n}\n");
  write_file(dir / "k.yaml", R"(name: k
kernel: {source: k.cpp, entry: f, flags: [-O1]}
arguments:
  - {name: x, type: f32, size: 64, fill: random}
  - {name: y, type: f32, size: 64, role: out}
  - {name: n, type: i32, value: 64}
parameters: {KIND: [0, 1]}
reference: {entry: ref}
measure: {warmup: 0us, min_samples: 2, max_samples: 2, cache: hot, confirm: 0}
)");
  TuneOptions options;
  options.out_dir = dir / "out";
  auto statuses = [&] { return statuses_of(dir / "k.yaml", options); };
  EXPECT_EQ(statuses(), (std::pair<std::string, std::size_t>{"ok ok ", 0}));
  write_file(dir / "factor.hpp", "inline float factor() { return 3.0f; }\n");
  EXPECT_EQ(statuses(), (std::pair<std::string, std::size_t>{"wrong_result wrong_result ", 0}));
  write_file(dir / "factor.hpp", "inline float factor() { return 2.0f; }\n");
  EXPECT_EQ(statuses(), (std::pair<std::string, std::size_t>{"ok ok ", 2}));
}

namespace {

// As the kernel's running_since: a process's start time while it runs (is
// no zombie), else 0.
unsigned long long running_since(int pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string text((std::istreambuf_iterator<char>(stat)), std::istreambuf_iterator<char>());
  const auto close = text.rfind(')');
  if (close == std::string::npos || close + 2 >= text.size() || text[close + 2] == 'Z') return 0;
  std::istringstream fields(text.substr(close + 2));
  std::string field;
  for (int i = 3; i < 22; ++i) fields >> field;
  unsigned long long since = 0;
  fields >> since;
  return since;
}

// The processes a kernel listed in MARK.strays that still run (zombies do
// not: a daemon killed after its keeper died waits for init to reap it; nor
// does a later process given a listed pid). Kills them, so that a failing
// test leaves none behind.
std::vector<int> running_strays(const fs::path& mark) {
  std::vector<int> running;
  std::ifstream list(mark.string() + ".strays");
  int pid;
  unsigned long long since;
  while (list >> pid >> since) {
    if (running_since(pid) != since) continue;
    running.push_back(pid);
    ::kill(pid, SIGKILL);
  }
  return running;
}

}  // namespace

// A kernel that starts a daemon (a process of its own session, out of reach
// of a kill of the worker's process group) does not leave it running: it
// ends with the trial that started it, before the next one runs (KIND 10
// fails its verification while one runs), and none outlives the tune.
TEST(Reliability, ADaemonAKernelStartsEndsWithItsTrial) {
  Fixture f("[8, 10]", "default: {KIND: 8}\n");
  const auto trials = by_kind(tune(f.spec(), f.options));
  EXPECT_EQ(trials.at(8).status, Status::ok) << trials.at(8).error;
  EXPECT_EQ(trials.at(10).status, Status::ok) << trials.at(10).error;
  ASSERT_TRUE(fs::exists(f.mark.string() + ".strays"));
  EXPECT_EQ(running_strays(f.mark), std::vector<int>{});
}

// A kernel that starts a daemon and then hangs: the worker killed at the
// timeout takes the daemon with it.
TEST(Reliability, ADaemonOfAKernelKilledAtItsTimeoutDiesWithIt) {
  Fixture f("[9]", "reference: none\n");
  Spec spec = f.spec();
  spec.measure.timeout = Seconds(2);
  EXPECT_EQ(by_kind(tune(spec, f.options)).at(9).status, Status::timeout);
  ASSERT_TRUE(fs::exists(f.mark.string() + ".strays"));
  EXPECT_EQ(running_strays(f.mark), std::vector<int>{});
}

// A reference whose worker is killed from outside (the OOM killer) is
// computed again, once, before its size is given up.
TEST(Reliability, AReferenceKilledFromOutsideIsComputedAgain) {
  Fixture f("[0, 4]", "reference: {entry: scale_ref}\n");
  write_file(f.mark.string() + ".ref", "");
  const TuneReport report = tune(f.spec(), f.options);
  const auto trials = by_kind(report);
  ASSERT_EQ(trials.size(), 2u) << fmt::format("{}", fmt::join(report.warnings, "\n"));
  for (const auto& [kind, t] : trials) EXPECT_EQ(t.status, Status::ok) << kind << ": " << t.error;
  EXPECT_FALSE(fs::exists(f.mark.string() + ".ref"));
  bool said = false;
  for (const auto& w : report.warnings)
    said = said || contains(w, "the reference's run failed for a reason of the machine's, not the kernel's");
  EXPECT_TRUE(said) << fmt::format("{}", fmt::join(report.warnings, "\n"));
}

// A config that fails while it is measured again to confirm it failed under
// that run's settings (a shorter timeout): it is stored with them, so a run
// under the first run's settings measures it again rather than trusting a
// timeout that was never theirs.
TEST(Reliability, AFailureWhileConfirmingIsStoredUnderTheSettingsItHappenedUnder) {
  Fixture f("[0, 5]", "default: {KIND: 0}\nreference: none\n");
  f.clear_mark();
  Spec spec = f.spec();
  spec.measure.confirm = 0;
  spec.measure.early_stop = 0;
  spec.measure.timeout = Seconds(120);
  ASSERT_EQ(by_kind(tune(spec, f.options))[5].status, Status::ok);

  write_file(f.mark, "");  // KIND 5 hangs from now on
  Spec confirming = spec;
  confirming.measure.confirm = 2;
  confirming.measure.timeout = Seconds(2);
  const auto second = by_kind(tune(confirming, f.options));
  EXPECT_EQ(second.at(5).status, Status::timeout);
  EXPECT_TRUE(contains(second.at(5).settings, "timeout=2s")) << second.at(5).settings;

  f.clear_mark();
  EXPECT_EQ(by_kind(tune(spec, f.options)).at(5).status, Status::ok);
}
