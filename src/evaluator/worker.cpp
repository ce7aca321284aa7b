#include "evaluator/detail/worker.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>

#include "evaluator/detail/channel.hpp"
#include "evaluator/detail/keeper.hpp"

namespace tunekit::detail {

namespace {

bool read_line(int fd, std::string& pending, std::string& line) {
  for (;;) {
    if (auto nl = pending.find('\n'); nl != std::string::npos) {
      line = pending.substr(0, nl);
      pending.erase(0, nl + 1);
      return true;
    }
    char buf[65536];
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    pending.append(buf, static_cast<std::size_t>(n));
  }
}

bool write_all(int fd, const std::string& s) {
  std::size_t off = 0;
  while (off < s.size()) {
    ssize_t n = ::write(fd, s.data() + off, s.size() - off);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    off += static_cast<std::size_t>(n);
  }
  return true;
}

}  // namespace

std::optional<std::string> cuda_only_feature(const WorkerRequest& rq, std::string_view backend) {
  for (const auto& a : rq.arguments)
    if (a.role == Role::tensor_map)
      return "argument '" + a.name + "' is a tensor map, which only the cuda backend supports (not " +
             std::string(backend) + ")";
  if (rq.launch.clustered())
    return "a thread-block cluster launch needs the cuda backend (not " + std::string(backend) + ")";
  return std::nullopt;
}

void take_sampling(TrialResult& result, Sampling sampled, const MeasureSettings& settings) {
  if (sampled.cut_short) result.status = Status::slower;
  result.error = out_of_time_note(sampled, settings);
  result.samples = std::move(sampled.samples);
}

namespace {

WorkerAnswer answer_request(KernelRunner& runner, HostArguments& args, const WorkerRequest& rq) {
  WorkerAnswer answer;
  TrialResult& result = answer.result;
  auto fail = [&](TrialResult r) {
    answer.result = std::move(r);
    answer.restart = runner.poisoned();
    return answer;
  };
  bool changed = false;
  try {
    changed = args.prepare(rq.arguments, rq.seed);
  } catch (const AllocationError& e) {
    // The machine's memory at the moment, not the kernel: the config is
    // tried again later. A buffer no retry can allocate here is the
    // config's (or its size's): stored, and a reference's ends the size.
    TrialResult r;
    r.status = Status::resource_limit;
    r.fault = e.never_fits ? Fault::config : Fault::environment;
    r.error = e.what();
    return fail(std::move(r));
  }
  if (auto failed = runner.load(rq)) return fail(std::move(*failed));

  // A kernel that wrote outside a buffer is wrong whatever its outputs hold:
  // the bytes it changed may be another buffer's, or the allocator's. So is
  // a config that wrote into an input: its outputs were checked against the
  // reference's from the inputs as generated, but its timed calls computed
  // from others. (A reference's own outputs come from its one call, and a
  // default config that is the reference is checked as a trial too.) Where
  // nothing is compared (reference: none, or a buffer written left as `in`
  // in a timing-only tune) a write into an input is not looked for: there
  // were no outputs it could make wrong, and the run says nothing was
  // verified.
  const bool inputs_matter = rq.op == WorkerRequest::Op::trial && !rq.reference_file.empty();
  auto wrote_where_it_must_not = [&](TrialResult& r, std::string prefix) {
    std::string damage = args.damaged_guard();
    if (damage.empty() && inputs_matter) damage = args.written_input();
    if (damage.empty()) return false;
    r.status = Status::wrong_result;
    r.error = std::move(prefix) + damage;
    r.verification = {};  // its outputs' differences, if any, are not the reason
    r.samples.clear();    // a wrong config has no time
    r.stats = {};
    return true;
  };

  if (rq.op == WorkerRequest::Op::reference) {
    if (auto failed = runner.run_once(rq, args, changed)) return fail(std::move(*failed));
    if (wrote_where_it_must_not(result, "the reference ")) return answer;
    // A NaN is an element the reference did not write (outputs start as
    // NaN), or one no config could be checked against.
    if (std::string bad = args.nan_output(); !bad.empty()) {
      result.status = Status::wrong_result;
      result.error = "the reference's " + bad;
      return answer;
    }
    if (std::string error = args.save_outputs(rq.reference_file); !error.empty()) {
      // The outputs are right; the disk is full or cannot be written.
      result.status = Status::launch_error;
      result.fault = Fault::environment;
      result.error = "the reference's outputs could not be kept: " + error;
    }
    return answer;
  }

  if (!rq.reference_file.empty()) {
    if (auto failed = runner.run_once(rq, args, changed)) return fail(std::move(*failed));
    if (wrote_where_it_must_not(result, "")) return answer;
    const auto t0 = std::chrono::steady_clock::now();
    result.verification = args.verify(rq.reference_file, rq.tolerance);
    result.verify = std::chrono::steady_clock::now() - t0;
    if (!result.verification.passed) {
      // A wrong variant is not worth timing.
      result.status = Status::wrong_result;
      result.error = result.verification.detail;
      return answer;
    }
  }
  const TrialResult verified = std::move(result);
  result = runner.time(rq, args);
  result.verification = verified.verification;
  result.verify = verified.verify;
  answer.restart = runner.poisoned();
  // A kernel may write outside a buffer on a later call only (state kept
  // between calls), and where nothing is verified it had no checked call.
  if (wrote_where_it_must_not(result, "in its timed calls, ")) return answer;
  // The first call's outputs were right; a kernel whose result changes from
  // call to call (a race between threads, state kept between calls) is
  // wrong too. One more call after the timed ones, into outputs poisoned
  // again: the last timed call's outputs would still hold the first call's
  // right answer from a kernel that stops working after it (a flag that
  // skips the work), which was then timed as nearly empty. Only where every
  // call starts from the same inputs, and not for a loser cut short.
  if (!rq.reference_file.empty() && result.status == Status::ok && args.calls_repeat()) {
    args.reset();
    KernelRunner::Again called = runner.run_again(rq, args);
    if (called.failed) return fail(std::move(*called.failed));
    if (wrote_where_it_must_not(result, "on a call after its timed ones, ")) return answer;
    const auto t0 = std::chrono::steady_clock::now();
    const Verification again = called.same ? verified.verification : args.verify(rq.reference_file, rq.tolerance);
    result.verify += std::chrono::steady_clock::now() - t0;
    if (!again.passed) {
      result.status = Status::wrong_result;
      result.verification = again;
      result.error =
          "right on its first call, wrong on a call after its timed ones (its result changes from call to "
          "call: a race, or state kept between calls): " +
          again.detail;
      result.samples.clear();  // a wrong config has no time
      result.stats = {};
    }
  }
  return answer;
}

}  // namespace

WorkerAnswer handle_request(KernelRunner& runner, HostArguments& args, const WorkerRequest& rq) {
  WorkerAnswer answer = answer_request(runner, args, rq);
  // Every call of the request is its trial's busy time, the check's after
  // the timed ones too, not the next trial's.
  answer.result.device_busy += runner.take_busy();
  return answer;
}

int serve(int in_fd, int out_fd, KernelRunner& runner) {
  const int home = ::open(".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  HostArguments args;
  args.watch_inputs(runner.kernel_writes_host_arguments());
  if (!write_all(out_fd, ready_line(reply_token()) + "\n")) return 1;
  std::string pending, line;
  while (read_line(in_fd, pending, line)) {
    // The tuner's clock for the trial runs from about now: sampling must
    // leave room for the answer before it kills the worker.
    const auto arrived = std::chrono::steady_clock::now();
    WorkerAnswer answer;
    try {
      WorkerRequest rq = request_from_json(nlohmann::json::parse(line));
      rq.measure.answer_by =
          arrived + std::chrono::duration_cast<std::chrono::steady_clock::duration>(rq.measure.timeout);
      answer = handle_request(runner, args, rq);
    } catch (const std::exception& e) {
      // A C++ exception escaping a kernel, or a malformed request.
      answer.result.status = Status::launch_error;
      answer.result.error = std::string("exception: ") + e.what();
      answer.restart = runner.poisoned();
    }
    std::fflush(stdout);
    std::fflush(stderr);
    end_strays();
    // Whatever a kernel did to the process's directory, the next request
    // starts where the worker started (paths in requests are absolute, but a
    // kernel's own relative paths are not).
    if (home >= 0 && ::fchdir(home) != 0) answer.restart = true;
    const std::string& token = reply_token();
    if (!write_all(out_fd, (token.empty() ? "" : token + " ") +
                               to_json(answer).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n"))
      return 1;
    if (answer.restart) return 0;
  }
  return 0;
}

}  // namespace tunekit::detail
