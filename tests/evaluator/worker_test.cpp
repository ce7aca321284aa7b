// handle_request with a stub runner (no device): the order of a trial's
// calls, and which trial a call's device time belongs to.
#include <gtest/gtest.h>

#include <cstring>

#include "evaluator/detail/host_arguments.hpp"
#include "evaluator/detail/protocol.hpp"
#include "evaluator/detail/worker.hpp"
#include "support/temp_dir.hpp"

using namespace tunekit;
using namespace tunekit::detail;

namespace {

// Each call outside time() keeps the device 5 us, as the CUDA runner's
// events time it; time() reports its own 1 us of samples.
class StubRunner final : public KernelRunner {
 public:
  std::optional<TrialResult> load(const WorkerRequest&) override { return std::nullopt; }
  std::optional<TrialResult> run_once(const WorkerRequest&, HostArguments& args, bool) override {
    for (std::size_t i = 0; i < args.size(); ++i)
      if (args.is_output(i)) {
        auto* y = static_cast<float*>(args.data(i));
        for (std::size_t k = 0; k < args.bytes(i) / sizeof(float); ++k) y[k] = 1.0f;
      }
    pending_ += Microseconds(5);
    return std::nullopt;
  }
  TrialResult time(const WorkerRequest&, HostArguments&) override {
    TrialResult r;
    r.samples = {Microseconds(1)};
    r.stats = summarize(r.samples);
    r.device_busy = Microseconds(1);
    return r;
  }
  Seconds take_busy() override { return std::exchange(pending_, Seconds(0)); }

 private:
  Seconds pending_{0};
};

}  // namespace

TEST(Worker, EveryCallOfARequestIsItsOwnTrialsBusyTime) {
  const auto dir = tunekit::testing::fresh_dir();
  StubRunner runner;
  HostArguments args;
  ResolvedArgument y;
  y.name = "y";
  y.role = Role::out;
  y.count = 4;
  WorkerRequest rq;
  rq.arguments = {y};
  rq.op = WorkerRequest::Op::reference;
  rq.reference_file = (dir / "ref.bin").string();
  ASSERT_EQ(handle_request(runner, args, rq).result.status, Status::ok);

  rq.op = WorkerRequest::Op::trial;
  const WorkerAnswer first = handle_request(runner, args, rq);
  ASSERT_EQ(first.result.status, Status::ok) << first.result.error;
  // The verified call, the timed samples, and the call after them.
  EXPECT_DOUBLE_EQ(Microseconds(first.result.device_busy).count(), 5 + 1 + 5);
  const WorkerAnswer second = handle_request(runner, args, rq);
  EXPECT_DOUBLE_EQ(Microseconds(second.result.device_busy).count(), 11);  // none of the first trial's
}

namespace {

// A CPU kernel that writes one element past its output's end: on its
// `bad_call`-th call (1, the checked call; 2, a timed one; 3, the call after
// the timed ones), and right otherwise.
class WritesPastTheEnd final : public KernelRunner {
 public:
  explicit WritesPastTheEnd(int bad_call) : bad_call_(bad_call) {}
  std::optional<TrialResult> load(const WorkerRequest&) override { return std::nullopt; }
  std::optional<TrialResult> run_once(const WorkerRequest&, HostArguments& args, bool) override {
    call(args);
    return std::nullopt;
  }
  TrialResult time(const WorkerRequest&, HostArguments& args) override {
    call(args);
    TrialResult r;
    r.samples = {Microseconds(1)};
    r.stats = summarize(r.samples);
    return r;
  }
  bool kernel_writes_host_arguments() const override { return true; }

 private:
  void call(HostArguments& args) {
    auto* y = static_cast<float*>(args.data(0));
    for (std::size_t k = 0; k < 10; ++k) y[k] = 1.0f;
    if (++calls_ == bad_call_) y[10] = 1.0f;
  }
  int bad_call_, calls_ = 0;
};

}  // namespace

TEST(Worker, AKernelThatWritesPastItsOutputIsAWrongResultThatSaysWhere) {
  const auto dir = tunekit::testing::fresh_dir();
  ResolvedArgument y;
  y.name = "y";
  y.role = Role::out;
  y.count = 10;
  WorkerRequest rq;
  rq.arguments = {y};
  rq.reference_file = (dir / "ref.bin").string();
  {
    WritesPastTheEnd right(0);
    HostArguments args;
    rq.op = WorkerRequest::Op::reference;
    ASSERT_EQ(handle_request(right, args, rq).result.status, Status::ok);
  }
  rq.op = WorkerRequest::Op::trial;
  const std::string where = "wrote past the end of output 'y' (10 elements of f32): element [10] changed";
  const std::string when[] = {"", "in its timed calls, ", "on a call after its timed ones, "};
  for (int bad_call = 1; bad_call <= 3; ++bad_call) {
    WritesPastTheEnd runner(bad_call);
    HostArguments args;
    const WorkerAnswer a = handle_request(runner, args, rq);
    EXPECT_EQ(a.result.status, Status::wrong_result) << "call " << bad_call;
    EXPECT_EQ(a.result.error, when[bad_call - 1] + where);
    EXPECT_TRUE(a.result.samples.empty());
  }
  // The reference's own is said as such.
  WritesPastTheEnd wrong_reference(1);
  HostArguments args;
  rq.op = WorkerRequest::Op::reference;
  const WorkerAnswer a = handle_request(wrong_reference, args, rq);
  EXPECT_EQ(a.result.status, Status::wrong_result);
  EXPECT_EQ(a.result.error, "the reference " + where);
}

namespace {

// A CPU kernel that doubles input x into output y, writes its workspace w
// on every call, and on its `bad_call`-th call (1, the checked call; 2, a
// timed one; 3, the call after the timed ones) also writes x[3].
class WritesIntoItsInput final : public KernelRunner {
 public:
  explicit WritesIntoItsInput(int bad_call) : bad_call_(bad_call) {}
  std::optional<TrialResult> load(const WorkerRequest&) override { return std::nullopt; }
  std::optional<TrialResult> run_once(const WorkerRequest&, HostArguments& args, bool) override {
    call(args);
    return std::nullopt;
  }
  TrialResult time(const WorkerRequest&, HostArguments& args) override {
    call(args);
    TrialResult r;
    r.samples = {Microseconds(1)};
    r.stats = summarize(r.samples);
    return r;
  }
  bool kernel_writes_host_arguments() const override { return true; }

 private:
  void call(HostArguments& args) {
    auto* x = static_cast<float*>(args.data(0));
    auto* w = static_cast<float*>(args.data(1));
    auto* y = static_cast<float*>(args.data(2));
    for (std::size_t k = 0; k < 10; ++k) {
      w[k] = 2 * x[k];
      y[k] = w[k];
    }
    if (++calls_ == bad_call_) x[3] = 5;
  }
  int bad_call_, calls_ = 0;
};

std::vector<ResolvedArgument> input_workspace_output() {
  ResolvedArgument x, w, y;
  x.name = "x";
  x.fill = Fill::constant;  // told as float's 0.1, not its double's 0.10000000149011612
  x.fill_value = 0.1;
  w.name = "w";
  w.role = Role::scratch;
  w.fill = Fill::zeros;
  y.name = "y";
  y.role = Role::out;
  for (auto* a : {&x, &w, &y}) a->count = 10;
  return {x, w, y};
}

}  // namespace

// Its timed calls computed from another input, and the check after them
// passed on the inputs restored before it: the config was ok, and could be
// named best. A workspace declared `scratch` is written freely.
TEST(Worker, AKernelThatWritesIntoAnInputIsAWrongResultThatSaysWhere) {
  const auto dir = tunekit::testing::fresh_dir();
  WorkerRequest rq;
  rq.arguments = input_workspace_output();
  rq.reference_file = (dir / "ref.bin").string();
  {
    WritesIntoItsInput right(0);
    HostArguments args;
    args.watch_inputs(true);
    rq.op = WorkerRequest::Op::reference;
    ASSERT_EQ(handle_request(right, args, rq).result.status, Status::ok);
  }
  rq.op = WorkerRequest::Op::trial;
  {
    WritesIntoItsInput right(0);
    HostArguments args;
    args.watch_inputs(true);
    const WorkerAnswer a = handle_request(right, args, rq);
    EXPECT_EQ(a.result.status, Status::ok) << a.result.error;
  }
  const std::string what =
      "wrote into input 'x', which it may only read: element [3] changed from 0.1 to 5 (1 of its 10 elements of f32 "
      "changed), so its later calls computed from other inputs; a buffer the kernel writes is declared 'role: out' "
      "(an output) or 'role: scratch' (a workspace)";
  const std::string when[] = {"", "in its timed calls, ", "on a call after its timed ones, "};
  for (int bad_call = 1; bad_call <= 3; ++bad_call) {
    WritesIntoItsInput runner(bad_call);
    HostArguments args;
    args.watch_inputs(true);
    const WorkerAnswer a = handle_request(runner, args, rq);
    EXPECT_EQ(a.result.status, Status::wrong_result) << "call " << bad_call;
    EXPECT_EQ(a.result.error, when[bad_call - 1] + what);
    EXPECT_TRUE(a.result.samples.empty());
  }
}
