// A busy machine: other processes hold every core while a config is
// measured. Every sample is then equally slow, so the spread looks low;
// what says so is how long the worker's threads waited for a CPU, which the
// report names. The load is one spinning process per core and one more, so
// that on any machine the worker's thread shares a core most of the time;
// the assertion is on the report, never on a time.
#include <gtest/gtest.h>
#include <sched.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <vector>

#include <nlohmann/json.hpp>

#include "support/temp_dir.hpp"
#include "tunekit/report.hpp"
#include "tunekit/tuner.hpp"

using namespace tunekit;
using tunekit::testing::fresh_dir;
using tunekit::testing::write_file;

namespace {

// A call spins for SPIN_US of CPU time.
const char* kKernel = R"(
#include <time.h>
extern "C" void spin(float* y) {
  timespec start{}, now{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &start);
  do {
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
  } while ((now.tv_sec - start.tv_sec) * 1000000L + (now.tv_nsec - start.tv_nsec) / 1000 < SPIN_US);
  y[0] = 1;
}
)";

const char* kSpec = R"(name: spin
kernel: {source: spin.cpp, entry: spin, flags: [-O1]}
arguments:
  - {name: y, type: f32, size: 1, role: out}
parameters:
  SPIN_US: [20000, 30000]
reference: none
measure: {warmup: 0us, min_samples: 5, max_samples: 5, max_time: 60s, cache: hot, early_stop: off, confirm: 0,
          timeout: 600s}
)";

// Spinning processes, ended (and reaped) when it goes.
class Load {
 public:
  explicit Load(std::size_t processes) {
    for (std::size_t i = 0; i < processes; ++i) {
      const pid_t pid = ::fork();
      if (pid == 0) {
        for (volatile unsigned long n = 0;;) n = n + 1;
      }
      if (pid > 0) pids_.push_back(pid);
    }
  }
  ~Load() {
    for (pid_t pid : pids_) ::kill(pid, SIGKILL);
    for (pid_t pid : pids_) ::waitpid(pid, nullptr, 0);
  }

 private:
  std::vector<pid_t> pids_;
};

std::size_t usable_cpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (::sched_getaffinity(0, sizeof set, &set) != 0) return 1;
  return static_cast<std::size_t>(CPU_COUNT(&set));
}

}  // namespace

TEST(BusyMachine, TrialsMeasuredWhileOtherProcessesHoldTheCoresAreNamed) {
  if (::access("/proc/self/schedstat", R_OK) != 0) GTEST_SKIP() << "the kernel keeps no run-queue times (schedstat)";
  const auto dir = fresh_dir();
  write_file(dir / "spin.cpp", kKernel);
  write_file(dir / "spin.yaml", kSpec);
  const Spec spec = load_spec(dir / "spin.yaml");
  TuneOptions opt;
  opt.out_dir = dir / "out";
  TuneReport report;
  {
    const Load load(usable_cpus() + 1);
    report = tune(spec, opt);
  }
  const SizeReport& s = report.sizes.at(0);
  ASSERT_EQ(s.trials.size(), 2u);
  const std::vector<std::size_t> busy = s.measured_on_a_busy_machine();
  ASSERT_FALSE(busy.empty()) << format_summary(report);
  for (const std::size_t i : busy) {
    EXPECT_LT(i, s.trials.size());
    EXPECT_GE(s.trials[i].cpu_wait_share, kBusyCpuWait);
    EXPECT_LE(s.trials[i].cpu_wait_share, 1.0);
  }
  EXPECT_NE(format_summary(report).find("busy machine: "), std::string::npos) << format_summary(report);
  const auto json = nlohmann::json::parse(format_json(report));
  EXPECT_EQ(json["sizes"][0]["waited_for_cpu"].size(), busy.size());

  // A resume reuses the stored trials, and with them what they waited: their
  // times are as inflated as when they were measured, so the report still
  // names them, though this run measured nothing on a busy machine.
  const TuneReport resumed = tune(spec, opt);
  EXPECT_EQ(resumed.resumed, 2u);
  EXPECT_EQ(resumed.sizes.at(0).measured_on_a_busy_machine(), busy) << format_summary(resumed);
  EXPECT_NE(format_summary(resumed).find("busy machine: "), std::string::npos) << format_summary(resumed);
  EXPECT_EQ(nlohmann::json::parse(format_json(resumed))["sizes"][0]["waited_for_cpu"].size(), busy.size());
}
