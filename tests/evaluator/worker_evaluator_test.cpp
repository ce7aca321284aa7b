// The tuner's side of a worker process, with stand-in workers (bash
// scripts that speak the protocol): a worker's start is never charged to its
// first trial, and a worker that cannot start is the environment's failure,
// not the config's.
#include <gtest/gtest.h>

#include <signal.h>

#include <chrono>
#include <fstream>
#include <iterator>
#include <thread>

#include "evaluator/detail/protocol.hpp"
#include "evaluator/detail/worker_evaluator.hpp"
#include "support/temp_dir.hpp"

using namespace tunekit;
using namespace tunekit::detail;
namespace fs = std::filesystem;

namespace {

// A worker that waits `delay` seconds, says it is ready, and answers each
// request with an ok result of one 5 us sample.
std::vector<std::string> slow_starting_worker(const fs::path& dir, int delay) {
  WorkerAnswer a;
  a.result.status = Status::ok;
  a.result.samples = {Microseconds(5.0)};
  a.result.stats.median = Microseconds(5.0);
  tunekit::testing::write_file(dir / "answer.json", to_json(a).dump() + "\n");
  tunekit::testing::write_file(dir / "worker.sh", "sleep " + std::to_string(delay) +
                                                      "\n"
                                                      "printf '%s {\"ready\": true}\\n' \"$TUNEKIT_REPLY_TOKEN\" >&4\n"
                                                      "while read -r line <&3; do\n"
                                                      "  printf '%s %s\\n' \"$TUNEKIT_REPLY_TOKEN\" \"$(cat " +
                                                      (dir / "answer.json").string() + ")\" >&4\n"
                                                      "done\n");
  return {"/bin/bash", (dir / "worker.sh").string()};
}

TrialRequest request(Seconds timeout) {
  TrialRequest rq;
  rq.measure.timeout = timeout;
  return rq;
}

}  // namespace

// The worker takes longer to start than a trial may take: the trial is
// still ok, as the start is waited for apart (a Python worker importing
// torch on a busy machine).
TEST(WorkerEvaluator, ASlowStartIsNotTheFirstTrialsTimeout) {
  const fs::path dir = tunekit::testing::fresh_dir();
  auto e = WorkerEvaluator::with_command(dir / "work", slow_starting_worker(dir, 20), 0);
  const TrialResult r = e->evaluate(request(Seconds(15)));
  EXPECT_EQ(r.status, Status::ok) << r.error;
  ASSERT_EQ(r.samples.size(), 1u);
  EXPECT_DOUBLE_EQ(r.samples[0].count(), 5.0);
}

TEST(WorkerEvaluator, AWorkerThatCannotStartIsTheEnvironmentsFailure) {
  const fs::path dir = tunekit::testing::fresh_dir();
  tunekit::testing::write_file(dir / "exits.sh", "echo 'no device here' >&2\nexit 3\n");
  auto e = WorkerEvaluator::with_command(dir / "work", {"/bin/bash", (dir / "exits.sh").string()}, 0);
  TrialResult r = e->evaluate(request(Seconds(60)));
  EXPECT_EQ(r.status, Status::crash);
  EXPECT_EQ(r.fault, Fault::environment);
  EXPECT_NE(r.error.find("the worker exited before it started: exited with code 3"), std::string::npos) << r.error;
  EXPECT_NE(r.error.find("no device here"), std::string::npos) << r.error;

  // Something other than the ready line first: the same.
  tunekit::testing::write_file(dir / "talks.sh", "printf '%s hello\\n' \"$TUNEKIT_REPLY_TOKEN\" >&4\nsleep 600\n");
  e = WorkerEvaluator::with_command(dir / "work2", {"/bin/bash", (dir / "talks.sh").string()}, 0);
  r = e->evaluate(request(Seconds(60)));
  EXPECT_EQ(r.status, Status::crash);
  EXPECT_EQ(r.fault, Fault::environment);
  EXPECT_NE(r.error.find("the worker sent a malformed reply"), std::string::npos) << r.error;
}

namespace {

// slow_starting_worker's answers, from a worker that first runs `before`
// (bash) on each request.
std::vector<std::string> answering_worker(const fs::path& dir, const std::string& before) {
  WorkerAnswer a;
  a.result.status = Status::ok;
  a.result.samples = {Microseconds(5.0)};
  a.result.stats.median = Microseconds(5.0);
  tunekit::testing::write_file(dir / "answer.json", to_json(a).dump() + "\n");
  tunekit::testing::write_file(dir / "worker.sh",
                               "echo $$ >> " + (dir / "pids").string() +
                                   "\n"
                                   "printf '%s {\"ready\": true}\\n' \"$TUNEKIT_REPLY_TOKEN\" >&4\n"
                                   "while read -r line <&3; do\n" +
                                   before + "\n  printf '%s %s\\n' \"$TUNEKIT_REPLY_TOKEN\" \"$(cat " +
                                   (dir / "answer.json").string() + ")\" >&4\ndone\n");
  return {"/bin/bash", (dir / "worker.sh").string()};
}

// Whether process `pid` has ended (a zombie has: its pipes are closed).
bool ended(int pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const auto close = text.rfind(')');
  return close == std::string::npos || close + 2 >= text.size() || text[close + 2] == 'Z';
}

}  // namespace

// A worker killed while it waits between two trials: the next request cannot
// be sent. The config has not run; a fresh worker runs it (it was stored as
// the config's timeout, "no result within 10 s", after 0.1 ms).
TEST(WorkerEvaluator, AWorkerGoneBetweenTrialsIsReplacedBeforeTheNextRuns) {
  const fs::path dir = tunekit::testing::fresh_dir();
  auto e = WorkerEvaluator::with_command(dir / "work", answering_worker(dir, ""), 0);
  ASSERT_EQ(e->evaluate(request(Seconds(60))).status, Status::ok);
  int first = 0;
  std::ifstream(dir / "pids") >> first;
  ASSERT_GT(first, 0);
  ASSERT_EQ(::kill(first, SIGKILL), 0);
  while (!ended(first)) std::this_thread::sleep_for(std::chrono::milliseconds(10));

  const TrialResult r = e->evaluate(request(Seconds(60)));
  EXPECT_EQ(r.status, Status::ok) << r.error;
  std::ifstream pids(dir / "pids");
  int count = 0;
  for (int pid; pids >> pid;) ++count;
  EXPECT_EQ(count, 2);
}

// A worker stopped from outside (SIGSTOP) runs nothing: its timeout is the
// environment's, not the config's.
TEST(WorkerEvaluator, AStoppedWorkersTimeoutIsTheEnvironments) {
  const fs::path dir = tunekit::testing::fresh_dir();
  auto e = WorkerEvaluator::with_command(dir / "work", answering_worker(dir, "  kill -STOP $$"), 0);
  const TrialResult r = e->evaluate(request(Seconds(1)));
  EXPECT_EQ(r.status, Status::timeout);
  EXPECT_EQ(r.fault, Fault::environment);
  EXPECT_NE(r.error.find("stopped from outside"), std::string::npos) << r.error;
}

// A worker seen stopped is not waited for to its timeout: a stop lasts until
// a SIGCONT, which nothing sends. Once is taken for a stop from outside and
// measured again at once on a fresh worker; stopped there too, it is the
// config's own doing (a raise(SIGSTOP) left in a kernel), not measured again,
// and waited for again, on every resume.
TEST(WorkerEvaluator, AWorkerThatStopsItselfTwiceInARowIsTheConfigsFailure) {
  const fs::path dir = tunekit::testing::fresh_dir();
  auto e = WorkerEvaluator::with_command(dir / "work", answering_worker(dir, "  kill -STOP $$"), 0);
  const TrialResult r = e->evaluate(request(Seconds(600)));
  EXPECT_EQ(r.status, Status::crash);
  EXPECT_EQ(r.fault, Fault::config);
  EXPECT_EQ(r.error.rfind("the config stopped its worker twice in a row (SIGSTOP", 0), 0u) << r.error;
  EXPECT_NE(r.error.find("taken to be its own doing (a raise(SIGSTOP) left in"), std::string::npos) << r.error;
  EXPECT_NE(r.error.find("--retry-failed measures it again"), std::string::npos) << r.error;
  std::ifstream pids(dir / "pids");
  int count = 0;
  for (int pid; pids >> pid;) ++count;
  EXPECT_EQ(count, 2);
}

// Stopped before it is ready: said so, not as a start that took too long.
TEST(WorkerEvaluator, AWorkerStoppedBeforeItIsReadyIsSaidSo) {
  const fs::path dir = tunekit::testing::fresh_dir();
  tunekit::testing::write_file(dir / "stops.sh", "kill -STOP $$\n");
  auto e = WorkerEvaluator::with_command(dir / "work", {"/bin/bash", (dir / "stops.sh").string()}, 0);
  const TrialResult r = e->evaluate(request(Seconds(60)));
  EXPECT_EQ(r.status, Status::crash);
  EXPECT_EQ(r.fault, Fault::environment);
  EXPECT_EQ(r.error, "the worker stopped (SIGSTOP, or a terminal's stop signal) before it was ready") << r.error;
}

TEST(WorkerEvaluator, AWorkerStoppedOnceIsMeasuredAgainOnAFreshOne) {
  const fs::path dir = tunekit::testing::fresh_dir();
  const std::string mark = (dir / "stop-once").string();
  tunekit::testing::write_file(mark, "");
  auto e = WorkerEvaluator::with_command(
      dir / "work", answering_worker(dir, "  if [ -e '" + mark + "' ]; then rm '" + mark + "'; kill -STOP $$; fi"), 0);
  const TrialResult r = e->evaluate(request(Seconds(600)));
  EXPECT_EQ(r.status, Status::ok) << r.error;
  EXPECT_EQ(r.killed_from_outside_by, SIGSTOP);
  EXPECT_EQ(r.error, "worker stopped from outside (SIGSTOP); measured again on a fresh worker");
}

// A hung config is still the config's timeout: the message names the setting
// to change, and says how much of it the warm-up and max_time take when that
// is half or more (a slow config then reads apart from a hung one).
TEST(WorkerEvaluator, AHungTrialsTimeoutNamesTheSettingAndWhatSamplingTakes) {
  const fs::path dir = tunekit::testing::fresh_dir();
  auto e = WorkerEvaluator::with_command(dir / "work", answering_worker(dir, "  sleep 600"), 0);
  TrialRequest rq = request(Seconds(1));
  rq.measure.warmup = Microseconds(0);
  rq.measure.max_time = Seconds(0.1);
  TrialResult r = e->evaluate(rq);
  EXPECT_EQ(r.status, Status::timeout);
  EXPECT_EQ(r.fault, Fault::none);
  EXPECT_EQ(r.error, "no result within 1 s (measure.timeout, --timeout); worker killed");

  rq.measure.max_time = Seconds(0.75);
  r = e->evaluate(rq);
  EXPECT_EQ(r.status, Status::timeout);
  EXPECT_EQ(r.error,
            "no result within 1 s (measure.timeout, --timeout; warm-up + max_time: 0.75 s of it); worker killed");
}
