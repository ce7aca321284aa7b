// A trial whose worker a signal from outside ended (the OOM killer's, a
// user's): measured again at once, and killed again, the config's own
// failure rather than the machine's, so that no resume measures it again.
#include <gtest/gtest.h>

#include <signal.h>

#include <vector>

#include "evaluator/detail/killed_from_outside.hpp"
#include "support/temp_dir.hpp"

using namespace tunekit;
using namespace tunekit::detail;
namespace fs = std::filesystem;
using tunekit::testing::fresh_dir;
using tunekit::testing::write_file;

namespace {

TrialResult ok() {
  TrialResult r;
  r.samples = {Microseconds(5.0)};
  return r;
}

TrialResult killed() {
  TrialResult r;
  r.status = Status::crash;
  r.fault = Fault::environment;
  r.error = "worker killed by SIGKILL (Killed) (a signal from outside the kernel, such as the OOM killer's)\nits log";
  return r;
}

// Attempts that end as `plan` says, in turn: 0 ran to the end, else the
// signal that killed it.
struct Planned {
  std::vector<int> plan;
  std::size_t made = 0;
  Attempt attempt() {
    return [this](int& killed_by) {
      killed_by = plan.at(made++);
      return killed_by ? killed() : ok();
    };
  }
};

std::function<std::optional<std::uint64_t>()> counts(std::vector<std::optional<std::uint64_t>> values) {
  return [values, at = std::size_t{0}]() mutable { return values.at(at++); };
}

}  // namespace

TEST(KilledFromOutside, OnceIsMeasuredAgainAtOnceAndCostsTheConfigNothing) {
  Planned once{{SIGKILL, 0}};
  const TrialResult r = measure_unless_killed_twice(once.attempt(), "worker", counts({0, 1}));
  EXPECT_EQ(once.made, 2u);
  EXPECT_EQ(r.status, Status::ok);
  EXPECT_EQ(r.fault, Fault::none);
  // Yet it happened: the trial's note and its count say so.
  EXPECT_EQ(r.killed_from_outside_by, SIGKILL);
  EXPECT_EQ(r.error, "worker killed from outside (SIGKILL); measured again on a fresh worker");

  Planned never{{0}};
  const TrialResult quiet = measure_unless_killed_twice(never.attempt(), "worker", counts({}));
  EXPECT_EQ(quiet.status, Status::ok);
  EXPECT_EQ(quiet.killed_from_outside_by, 0);
  EXPECT_EQ(quiet.error, "");
  EXPECT_EQ(never.made, 1u);
}

// Cut short as slower on the fresh worker, the trial is counted as killed
// and measured again, and its line (slower_reason) says so as an ok one's.
TEST(KilledFromOutside, OnceAndThenSlowerKeepsTheNote) {
  std::size_t made = 0;
  const TrialResult r = measure_unless_killed_twice(
      [&](int& killed_by) {
        killed_by = made++ == 0 ? SIGKILL : 0;
        if (killed_by) return killed();
        TrialResult cut = ok();
        cut.status = Status::slower;
        return cut;
      },
      "run", counts({0, 0}));
  EXPECT_EQ(r.status, Status::slower);
  EXPECT_EQ(r.killed_from_outside_by, SIGKILL);
  EXPECT_EQ(r.error, "run killed from outside (SIGKILL); measured again on a fresh run");
}

TEST(KilledFromOutside, TwiceInARowIsTheConfigsFailure) {
  Planned twice{{SIGKILL, SIGKILL}};
  const TrialResult r = measure_unless_killed_twice(twice.attempt(), "worker", counts({std::nullopt, std::nullopt}));
  EXPECT_EQ(twice.made, 2u);
  EXPECT_EQ(r.status, Status::crash);
  EXPECT_EQ(r.fault, Fault::config);
  EXPECT_EQ(r.error.rfind("worker killed by SIGKILL twice in a row: the config's own doing, taken to be memory use "
                          "past a limit",
                          0),
            0u)
      << r.error;
  EXPECT_NE(r.error.find("--retry-failed measures it again"), std::string::npos) << r.error;
  EXPECT_NE(r.error.find("\nthe second time: worker killed by SIGKILL"), std::string::npos) << r.error;
}

// The OOM killer's count rising while the second worker ran and died says
// whose the kill was: the config's memory use.
TEST(KilledFromOutside, TwiceWithAnOomKillCountedIsTheConfigsResourceLimit) {
  Planned twice{{SIGKILL, SIGKILL}};
  const TrialResult r = measure_unless_killed_twice(twice.attempt(), "run", counts({7, 8}));
  EXPECT_EQ(r.status, Status::resource_limit);
  EXPECT_EQ(r.fault, Fault::config);
  EXPECT_NE(r.error.find("memory use past the limit (the OOM killer counted a kill meanwhile)"), std::string::npos)
      << r.error;

  Planned unchanged{{SIGKILL, SIGKILL}};
  EXPECT_EQ(measure_unless_killed_twice(unchanged.attempt(), "run", counts({7, 7})).status, Status::crash);
}

// A kill (the OOM killer's) and then a stop, or a stop and then a kill, is
// not one thing seen twice: the config is blamed for neither, and the next
// run measures it again.
TEST(KilledFromOutside, AKillAndAStopBlameNothing) {
  for (const auto& plan : {std::vector<int>{SIGKILL, SIGSTOP}, std::vector<int>{SIGSTOP, SIGKILL}}) {
    Planned mixed{plan};
    const TrialResult r = measure_unless_killed_twice(mixed.attempt(), "worker", counts({0, 1}));
    EXPECT_EQ(mixed.made, 2u);
    EXPECT_EQ(r.status, Status::crash);
    EXPECT_EQ(r.fault, Fault::environment) << r.error;
    const std::string said = plan[0] == SIGKILL ? "worker killed by SIGKILL from outside, then the fresh worker "
                                                  "stopped by SIGSTOP: not the same thing twice"
                                                : "worker stopped by SIGSTOP from outside, then the fresh worker "
                                                  "killed by SIGKILL: not the same thing twice";
    EXPECT_EQ(r.error.rfind(said, 0), 0u) << r.error;
  }
}

// A stop asked for during the second attempt says nothing about the config.
TEST(KilledFromOutside, AStopDuringTheSecondAttemptBlamesNothing) {
  bool second = false;
  const TrialResult r = measure_unless_killed_twice(
      [&](int& killed_by) {
        TrialResult t = killed();
        killed_by = SIGKILL;
        t.interrupted = second;
        second = true;
        return t;
      },
      "worker", counts({0, 1}));
  EXPECT_TRUE(r.interrupted);
  EXPECT_EQ(r.fault, Fault::environment);
}

// The count is the cgroup's (v2, else v1) where it keeps one, else the
// machine's.
TEST(KilledFromOutside, TheOomKillCountIsTheCgroupsElseTheMachines) {
  const auto dir = fresh_dir();
  write_file(dir / "proc" / "self" / "cgroup", "0::/user.slice/tune.scope\n");
  write_file(dir / "cgroup" / "user.slice" / "tune.scope" / "memory.events",
             "low 0\nhigh 0\nmax 12\noom 3\noom_kill 2\noom_group_kill 0\n");
  write_file(dir / "proc" / "vmstat", "nr_free_pages 1000\noom_kill 40\n");
  EXPECT_EQ(oom_kill_count(dir / "proc", dir / "cgroup"), std::optional<std::uint64_t>(2));
  write_file(dir / "proc" / "self" / "cgroup", "0::/\n");  // the root group keeps no memory.events
  EXPECT_EQ(oom_kill_count(dir / "proc", dir / "cgroup"), std::optional<std::uint64_t>(40));
  write_file(dir / "proc" / "self" / "cgroup", "5:devices:/\n4:memory,hugetlb:/docker/abc\n0::/\n");
  write_file(dir / "cgroup" / "memory" / "docker" / "abc" / "memory.oom_control",
             "oom_kill_disable 0\nunder_oom 0\noom_kill 5\n");
  EXPECT_EQ(oom_kill_count(dir / "proc", dir / "cgroup"), std::optional<std::uint64_t>(5));
  fs::remove(dir / "cgroup" / "memory" / "docker" / "abc" / "memory.oom_control");
  fs::remove(dir / "proc" / "vmstat");
  EXPECT_EQ(oom_kill_count(dir / "proc", dir / "cgroup"), std::nullopt);
}
