// Child processes under a hostile program (issue #22): one that prints
// without end, one that leaves a background process holding its output.
#include <gtest/gtest.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "core/detail/process.hpp"
#include "support/temp_dir.hpp"
#include "tunekit/stop.hpp"

extern char** environ;

using namespace tunekit;
using namespace std::chrono_literals;

// Item 15: output is kept up to a cap, and the timeout holds however much
// the program prints (`yes` never pauses, so a deadline checked only when
// the pipe is quiet was never reached).
TEST(Process, EndlessOutputIsCappedAndTheTimeoutHolds) {
  auto r = detail::run_process({"yes"}, 3s);
  EXPECT_TRUE(r.timed_out);
  EXPECT_GT(r.output_dropped, 0u);
  EXPECT_LE(r.output.size(), 2 * detail::kKeptOutputBytes + 200);
  EXPECT_NE(r.output.find("bytes of output not kept"), std::string::npos);
}

// A limit past what the clock counts (1e10 s) is no limit, not a deadline
// wrapped into the past that times the program out at once.
TEST(Process, ATimeoutTooLongForTheClockIsNoLimit) {
  const auto r = detail::run_process({"true"}, std::chrono::duration<double>(1e10));
  EXPECT_FALSE(r.timed_out);
  EXPECT_EQ(r.exit_code, 0);
}

// Item 17: a program that exits 0 and leaves a background process holding
// its output has ended: not a timeout, and the leftover is killed.
TEST(Process, ABackgroundProcessHoldingTheOutputDoesNotHoldTheRun) {
  auto r = detail::run_process({"sh", "-c", "sleep 600 & echo done"}, 120s);
  EXPECT_FALSE(r.timed_out);
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.output, "done\n");
}

namespace {

// The live processes whose command line holds `needle`.
std::vector<pid_t> running_with(const std::string& needle) {
  std::vector<pid_t> out;
  for (const auto& e : std::filesystem::directory_iterator("/proc")) {
    const std::string name = e.path().filename();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::ifstream cmdline(e.path() / "cmdline"), stat(e.path() / "stat");
    std::string text((std::istreambuf_iterator<char>(cmdline)), {}), st;
    std::getline(stat, st);
    const auto close = st.rfind(')');
    const bool zombie = close != std::string::npos && close + 2 < st.size() && st[close + 2] == 'Z';
    if (!zombie && text.find(needle) != std::string::npos) out.push_back(std::stoi(name));
  }
  return out;
}

// Waits for the processes of `needle` to end: a killed process runs on until
// its exit is scheduled. The limit is for a machine too busy to schedule
// them, far past what that takes.
bool all_ended(const std::string& needle) {
  for (int i = 0; i < 600 && !running_with(needle).empty(); ++i) std::this_thread::sleep_for(100ms);
  return running_with(needle).empty();
}

}  // namespace

// What a program leaves outside its process group ends with its run: in a
// group of its own (coreutils' `timeout` makes one) or in a session of its
// own (a daemon), whether the program exited or was killed at its timeout.
TEST(Process, WhatAProgramLeavesInAnotherGroupOrSessionEndsWithTheRun) {
  const std::string tag = "291." + std::to_string(::getpid());
  auto r = detail::run_process(
      {"sh", "-c",
       "setsid -f sleep " + tag + "1 >/dev/null 2>&1; timeout 600 sleep " + tag + "2 >/dev/null 2>&1 & echo done"},
      120s);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(r.output, "done\n");
  EXPECT_TRUE(all_ended(tag + "1")) << "the daemon outlived its run";
  EXPECT_TRUE(all_ended(tag + "2")) << "the process of another group outlived its run";
  r = detail::run_process({"sh", "-c", "timeout 600 sleep " + tag + "3 >/dev/null 2>&1 & sleep 600"}, 1s);
  EXPECT_TRUE(r.timed_out);
  EXPECT_TRUE(all_ended(tag + "3")) << "the process of another group outlived its timed-out run";
  // A program does not see the mark of the run that started this one (a
  // program that runs tunekit).
  ::setenv(std::string(detail::kRunMark).c_str(), "outer", 1);
  r = detail::run_process({"sh", "-c", "env | grep -c '^" + std::string(detail::kRunMark) + "='"}, 120s);
  ::unsetenv(std::string(detail::kRunMark).c_str());
  EXPECT_EQ(r.output, "1\n");
}

// A tuner killed with SIGKILL cannot end its program's run: the next
// tuner's first run does, knowing it by its mark, whose owner is gone (a
// pid that no longer runs, or runs a process started at another time). A
// run of a tuner still running is left alone.
TEST(Process, WhatARunOfATunerKilledLeftRunningEndsBeforeTheNextTunersRuns) {
  const std::string tag = "289." + std::to_string(::getpid());
  auto start_of = [](pid_t pid) {
    std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
    std::string text;
    std::getline(in, text);
    std::istringstream fields(text.substr(text.rfind(')') + 1));
    std::string field;
    for (int i = 3; i < 22; ++i) fields >> field;
    unsigned long long ticks = 0;
    fields >> ticks;
    return ticks;
  };
  auto spawn = [&](const std::string& mark, const std::string& seconds) {
    std::vector<std::string> env{std::string(detail::kRunMark) + "=" + mark, "PATH=/usr/bin:/bin"};
    std::vector<char*> envp;
    for (auto& e : env) envp.push_back(e.data());
    envp.push_back(nullptr);
    std::string sleep = "sleep", arg = seconds;
    char* argv[] = {sleep.data(), arg.data(), nullptr};
    pid_t pid = 0;
    EXPECT_EQ(::posix_spawnp(&pid, "sleep", nullptr, nullptr, argv, envp.data()), 0);
    return pid;
  };
  pid_t gone = 0;  // a pid that ran and ended
  {
    char t[] = "true";
    char* argv[] = {t, nullptr};
    ASSERT_EQ(::posix_spawnp(&gone, "true", nullptr, nullptr, argv, environ), 0);
    int status = 0;
    ::waitpid(gone, &status, 0);
  }
  // A tuner killed is a zombie until its parent reaps it (and PID 1 may not).
  pid_t zombie = 0;
  {
    char t[] = "true";
    char* argv[] = {t, nullptr};
    ASSERT_EQ(::posix_spawnp(&zombie, "true", nullptr, nullptr, argv, environ), 0);
    siginfo_t info{};
    ASSERT_EQ(::waitid(P_PID, static_cast<id_t>(zombie), &info, WEXITED | WNOWAIT), 0);  // ended, not reaped
  }
  const pid_t parent = ::getppid();
  const pid_t orphan = spawn(std::to_string(gone) + ".1.0", tag + "1");
  const pid_t of_zombie = spawn(std::to_string(zombie) + "." + std::to_string(start_of(zombie)) + ".0", tag + "4");
  const pid_t reused = spawn(std::to_string(parent) + "." + std::to_string(start_of(parent) + 1) + ".0", tag + "2");
  const pid_t alive = spawn(std::to_string(parent) + "." + std::to_string(start_of(parent)) + ".0", tag + "3");
  // Any tuner that starts meanwhile (a test beside this one) sweeps too, and
  // may end these first: what counts is that they end, by SIGKILL, and that
  // the run of a tuner still running does not.
  const auto killed = detail::kill_orphaned_runs();
  EXPECT_EQ(std::find(killed.begin(), killed.end(), alive), killed.end());
  int status = 0;
  EXPECT_EQ(::waitpid(orphan, &status, 0), orphan);
  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
  EXPECT_EQ(::waitpid(reused, &status, 0), reused);
  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
  EXPECT_EQ(::waitpid(of_zombie, &status, 0), of_zombie);
  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
  ::waitpid(zombie, &status, 0);
  EXPECT_EQ(::waitpid(alive, &status, WNOHANG), 0) << "the run of a tuner still running was ended";
  ::kill(alive, SIGKILL);
  ::waitpid(alive, &status, 0);
}

// A worker lives for many requests, each logging up to kLogBytesPerRequest:
// its log is rotated when a request starts, not only when a worker does
// (a run of 75 chatty configs on one worker left a 78 MB log).
TEST(Process, AWorkersLogIsRotatedWhenARequestStarts) {
  namespace fs = std::filesystem;
  const fs::path log = tunekit::testing::fresh_dir() / "worker.log";
  detail::Child child;
  child.start({"/bin/sh", "-c", "sleep 600"}, log);
  // As if earlier requests had logged that much.
  fs::resize_file(log, detail::Child::kLogRotateBytes + 1);
  child.mark_output();
  EXPECT_EQ(fs::file_size(log.string() + ".1"), detail::Child::kLogRotateBytes + 1);
  ASSERT_TRUE(fs::exists(log));
  EXPECT_EQ(fs::file_size(log), 0u);
  child.kill();
}

// A stopped child is given up on only by a caller that asks (the worker
// evaluator, which can tell a stop from a hang): another (Triton's compile
// helper) reads an early end as its timeout, and would blame the config.
TEST(Process, AStoppedChildIsGivenUpOnOnlyWhereTheCallerAsks) {
  const auto log = tunekit::testing::fresh_dir() / "child.log";
  detail::Child child;
  // The child stops a process it forked: a stop in its tree, not only in it.
  child.start({"/bin/sh", "-c", "sh -c 'kill -STOP $$; sleep 600' & sleep 600"}, log);
  const auto waited = std::chrono::duration<double>(3 * detail::Child::kStopLook);
  EXPECT_FALSE(child.receive(waited));
  EXPECT_FALSE(child.seen_stopped());
  EXPECT_FALSE(child.receive(std::chrono::seconds(600), detail::Child::WhenStopped::give_up));
  EXPECT_TRUE(child.seen_stopped());
  child.kill();
}

// The wall time of `time: wall` (issue: every run 50 ms too long, in steps of
// 50 ms, so `sleep 0.05` ranked before `sleep 0.01`). run_process is tried
// as it is (a pidfd on Linux 5.3+) and as on an older kernel (a thread in
// waitpid()). Nothing here bounds a time from above by a constant: on a
// loaded machine any run may take long. Each bound is either one that holds
// whatever the load, or one against the same work timed independently.
namespace {

using Steady = std::chrono::steady_clock;
using Run = detail::ProcessResult (*)(const std::vector<std::string>&, std::chrono::duration<double>,
                                      const std::filesystem::path&);

struct Way {
  const char* name;
  Run run;
};
const Way kWays[] = {{"pidfd", &detail::run_process}, {"thread", &detail::run_process_without_pidfd}};

// What run_process reports, and the time around the call.
struct Timed {
  detail::ProcessResult r;
  std::chrono::duration<double> outer;
};
Timed timed(Run run, const std::vector<std::string>& argv, std::chrono::duration<double> timeout = 60s) {
  const auto t0 = Steady::now();
  auto r = run(argv, timeout, {});
  return {std::move(r), Steady::now() - t0};
}

// `argv` spawned and waited for without run_process: the same start and
// exit, the exit seen by a blocking waitpid().
std::chrono::duration<double> reference(const std::vector<std::string>& argv) {
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  const auto t0 = Steady::now();
  pid_t pid;
  if (posix_spawnp(&pid, args[0], nullptr, nullptr, args.data(), environ) != 0) {
    ADD_FAILURE() << "cannot start " << argv[0];
    return {};
  }
  int status;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return Steady::now() - t0;
}

}  // namespace

// What can be said whatever the load: the program's time lies within the
// call, and a sleep takes at least its duration.
TEST(Process, TheWallTimeLiesWithinTheCallAndCoversTheProgram) {
  for (const Way& way : kWays) {
    SCOPED_TRACE(way.name);
    for (const auto& [arg, at_least] : {std::pair{"0.02", 20ms}, std::pair{"0.05", 50ms}}) {
      SCOPED_TRACE(arg);
      const Timed t = timed(way.run, {"sleep", arg});
      ASSERT_EQ(t.r.exit_code, 0) << t.r.output;
      EXPECT_GE(t.r.wall, at_least);
      EXPECT_LE(t.r.wall, t.outer);
    }
  }
}

// The time is taken when the program exits, not when the run ends: here the
// run goes on reading the output for 200 ms after the exit (a background
// process holds it), and none of that is the program's time. Whatever the
// load, the call outlasts the reported time by that much.
TEST(Process, TheWallTimeEndsWhenTheProgramExitsNotWhenTheRunEnds) {
  for (const Way& way : kWays) {
    SCOPED_TRACE(way.name);
    const Timed t = timed(way.run, {"sh", "-c", "sleep 600 & exit 0"});
    ASSERT_FALSE(t.r.timed_out);
    EXPECT_EQ(t.r.exit_code, 0);
    EXPECT_GE(t.outer - t.r.wall, 200ms) << "wall " << t.r.wall.count() << " s, call " << t.outer.count() << " s";
  }
}

// The exit is seen when it happens, not at the next 50 ms poll. `sleep 0`
// reported 52 ms: it closes its output before it exits, and the run, having
// read the output's end, slept 50 ms in poll() before it looked at the exit
// again. Here the program closes its output, then runs 5 ms more. Each run
// is paired with the same program timed by a blocking waitpid(); in most
// pairs run_process is within 25 ms of it (before the fix, 45 ms over in
// each). A loaded machine slows both sides of a pair alike: it would have to
// slow more than half the run_process runs by 25 ms, and not their pairs,
// for this to fail.
TEST(Process, TheExitIsSeenWhenItHappensNotAtTheNextPoll) {
  const std::vector<std::string> argv = {"sh", "-c", "exec >&- 2>&-; sleep 0.005"};
  for (const Way& way : kWays) {
    SCOPED_TRACE(way.name);
    std::vector<double> over_ms;
    for (int i = 0; i < 11; ++i) {
      const auto ref = reference(argv);
      const Timed t = timed(way.run, argv);
      ASSERT_EQ(t.r.exit_code, 0) << t.r.output;
      EXPECT_GE(t.r.wall, 5ms);
      EXPECT_LE(t.r.wall, t.outer);
      over_ms.push_back(std::chrono::duration<double, std::milli>(t.r.wall - ref).count());
    }
    auto sorted = over_ms;
    std::sort(sorted.begin(), sorted.end());
    EXPECT_LT(sorted[sorted.size() / 2], 25.0)
        << "run_process's time less a blocking waitpid's, in ms, per run: " << ::testing::PrintToString(over_ms);
  }
}

// How the program ended comes through either way of waiting.
TEST(Process, ExitCodesSignalsAndTimeoutsEitherWay) {
  for (const Way& way : kWays) {
    SCOPED_TRACE(way.name);
    auto code = way.run({"sh", "-c", "echo hi; exit 3"}, 60s, {});
    EXPECT_EQ(code.exit_code, 3);
    EXPECT_EQ(code.signal, 0);
    EXPECT_EQ(code.output, "hi\n");
    auto sig = way.run({"sh", "-c", "kill -TERM $$"}, 60s, {});
    EXPECT_EQ(sig.signal, SIGTERM);
    const Timed slow = timed(way.run, {"sleep", "600"}, 300ms);
    EXPECT_TRUE(slow.r.timed_out);
    EXPECT_GE(slow.r.wall, 300ms);
    EXPECT_LT(slow.outer, 60s);
    auto bg = way.run({"sh", "-c", "sleep 600 & echo done"}, 120s, {});
    EXPECT_FALSE(bg.timed_out);
    EXPECT_EQ(bg.exit_code, 0);
    EXPECT_EQ(bg.output, "done\n");
  }
}

// The tuner ignores SIGXFSZ, so that its own writes past the file-size limit
// fail and are told; a compiler it runs gets the signal's default back, and
// ends by it as it would in a shell (which says so), not with a write error
// of its own words.
TEST(Process, AProgramGetsTheFileSizeSignalsDefaultBack) {
  struct sigaction ignore {
  }, before{};
  ignore.sa_handler = SIG_IGN;
  ASSERT_EQ(::sigaction(SIGXFSZ, &ignore, &before), 0);
  for (const Way& way : kWays) {
    SCOPED_TRACE(way.name);
    auto r = way.run({"sh", "-c", "kill -XFSZ $$; exit 0"}, 60s, {});
    EXPECT_EQ(r.signal, SIGXFSZ);
  }
  ::sigaction(SIGXFSZ, &before, nullptr);
}

// A stop request ends the wait for a program that would run for minutes.
TEST(Process, AStopRequestEndsTheRun) {
  for (const Way& way : kWays) {
    SCOPED_TRACE(way.name);
    std::thread stopper([] {
      std::this_thread::sleep_for(200ms);
      request_stop();
    });
    const Timed t = timed(way.run, {"sleep", "600"}, 600s);
    stopper.join();
    clear_stop();
    EXPECT_TRUE(t.r.interrupted);
    EXPECT_LT(t.outer, 300s);
  }
}
