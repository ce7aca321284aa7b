#include "evaluator/detail/worker_evaluator.hpp"

#include <signal.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <vector>

#include <fmt/format.h>

#include "core/detail/hash.hpp"
#include "core/detail/process.hpp"
#include "evaluator/detail/killed_from_outside.hpp"
#include "evaluator/detail/protocol.hpp"
#include "tunekit/stop.hpp"

namespace tunekit::detail {

namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

std::string& package_worker() {
  static std::string path;
  return path;
}

}  // namespace

const std::string& noted_package_worker() { return package_worker(); }

bool runs_from_build_tree() {
  std::error_code ec;
  const fs::path self = fs::read_symlink("/proc/self/exe", ec);
  const fs::path build = TUNEKIT_BUILD_DIR;
  return !ec && std::mismatch(build.begin(), build.end(), self.begin(), self.end()).first == build.end();
}

fs::path find_worker() {
  if (const char* env = std::getenv("TUNEKIT_WORKER"); env && *env) return env;
  std::error_code ec;
  const fs::path self = fs::read_symlink("/proc/self/exe", ec);
  std::vector<fs::path> candidates;
  if (!ec) {
    candidates.push_back(self.parent_path() / "tunekit-worker");
    candidates.push_back((self.parent_path() / TUNEKIT_WORKER_FROM_BIN).lexically_normal());
  }
  if (!package_worker().empty()) candidates.emplace_back(package_worker());
  candidates.emplace_back(TUNEKIT_INSTALL_WORKER_PATH);
  // The build tree's worker only for a program that runs from that tree: an
  // installed tunekit must never run another build's worker.
  if (runs_from_build_tree()) candidates.emplace_back(TUNEKIT_BUILD_WORKER_PATH);
  for (const fs::path& p : candidates)
    if (fs::is_regular_file(p, ec)) return p;
  std::string looked;
  for (const fs::path& p : candidates) looked += (looked.empty() ? "" : ", ") + p.string();
  throw std::runtime_error(
      "cannot find the tunekit-worker executable (looked for " + looked +
      "); set TUNEKIT_WORKER to its path (an installed one is PREFIX/libexec/tunekit/tunekit-worker)");
}

WorkerEvaluator::WorkerEvaluator(fs::path work_dir, std::vector<std::string> worker_args, std::uint64_t flush_bytes,
                                 bool rebuild)
    : work_dir_(fs::absolute(work_dir)),
      log_(fs::absolute(work_dir_) / "worker.log"),
      worker_args_(std::move(worker_args)),
      flush_bytes_(flush_bytes),
      rebuild_(rebuild) {
  fs::create_directories(work_dir_ / "reference");
  // A worker that died leaves a broken pipe; the write must fail, not kill us.
  ::signal(SIGPIPE, SIG_IGN);
}

std::unique_ptr<WorkerEvaluator> WorkerEvaluator::with_command(fs::path work_dir, std::vector<std::string> command,
                                                               std::uint64_t flush_bytes, bool rebuild) {
  auto e = std::make_unique<WorkerEvaluator>(std::move(work_dir), std::move(command), flush_bytes, rebuild);
  e->own_command_ = true;
  return e;
}

std::optional<TrialResult> WorkerEvaluator::ensure_worker() {
  if (worker_.running()) return std::nullopt;
  std::vector<std::string> argv;
  if (!own_command_) argv.push_back(find_worker().string());
  argv.insert(argv.end(), worker_args_.begin(), worker_args_.end());
  worker_.start(argv, log_);
  // A Python worker imports torch and Triton before it is ready: seconds,
  // more on a busy machine. None of that is the first trial's time.
  worker_.mark_output();
  const auto line = worker_.receive(kStartLimit, detail::Child::WhenStopped::give_up);
  std::optional<std::string> why;
  if (line) {
    why = not_ready(*line, worker_.token());
    if (!why) return std::nullopt;
  }
  TrialResult r;
  if (!line && stop_requested()) {
    r.interrupted = true;
  } else {
    r.status = Status::crash;
    r.fault = Fault::environment;
    if (why) r.error = "the worker sent " + *why;
    else if (worker_.seen_stopped())
      r.error = "the worker stopped (SIGSTOP, or a terminal's stop signal) before it was ready";
    else if (!worker_.closed()) r.error = fmt::format("the worker did not start within {:.3g} s", kStartLimit.count());
    else r.error = "the worker exited before it started: " + worker_.reap();
    if (std::string log = worker_.output(); !log.empty()) r.error += "\n" + log;
  }
  worker_.kill();
  return r;
}

namespace {

WorkerRequest make_request(const TrialRequest& rq, std::uint64_t flush_bytes) {
  WorkerRequest w;
  w.artifact = rq.artifact;
  w.entry = rq.entry;
  w.launch = rq.launch;
  w.arguments = rq.arguments;
  w.tolerance = rq.tolerance;
  w.measure = rq.measure;
  w.seed = rq.seed;
  w.flush_bytes = flush_bytes;
  return w;
}

// The settings behind a trial's time limit, for its timeout's message (the
// console keeps its first 100 characters): the timeout's names, and how much
// of it the warm-up and max_time take when that is half or more, so that a
// slow config is told from a hung one.
std::string trial_limit(const MeasureSettings& m) {
  const Seconds sampling = m.warmup + m.max_time;
  if (sampling < m.timeout / 2) return "measure.timeout, --timeout";
  return fmt::format("measure.timeout, --timeout; warm-up + max_time: {:g} s of it", sampling.count());
}

}  // namespace

// The reference outputs depend on the reference build, its launch and the
// inputs (argument shapes, fills, seed) and nothing else, so they are
// computed once and kept on disk: a restarted worker, or a rerun, reads them
// (a rerun with --fresh computes them again).
fs::path WorkerEvaluator::prepare_reference(const TrialRequest& rq) {
  WorkerRequest w = make_request(rq, flush_bytes_);
  w.op = WorkerRequest::Op::reference;
  w.artifact = rq.reference->artifact;
  if (!rq.reference->entry.empty()) w.entry = rq.reference->entry;
  w.launch = rq.reference->launch.value_or(rq.launch);
  // The reference gets the trial's argument list; its tensor maps, when it
  // has its own, are those of its config (a default-config reference reads
  // tiles of its own box).
  for (auto& a : w.arguments)
    for (const auto& own : rq.reference->tensor_maps)
      if (a.role == Role::tensor_map && own.name == a.name) a = own;
  json key = to_json(w);
  key.erase("measure");
  const fs::path cache = work_dir_ / "reference" / (Hasher().add(key.dump()).hex() + ".bin");
  if (fs::exists(cache) && (!rebuild_ || computed_.count(cache))) return cache;
  w.reference_file = cache.string();
  // The reference may be a slow naive kernel: give it ten trial timeouts.
  const auto limit = rq.measure.timeout * 10;
  TrialResult r = exchange(to_json(w).dump(), limit, "10 x measure.timeout, --timeout, for a reference");
  if (r.interrupted) return {};
  if (r.status == Status::ok) {
    computed_.insert(cache);
    return cache;
  }
  throw ReferenceError(r.status, r.error, r.fault == Fault::none ? Fault::config : r.fault);
}

TrialResult WorkerEvaluator::exchange(const std::string& request, Seconds limit, std::string_view limit_is) {
  killed_by_ = 0;
  if (auto failed = ensure_worker()) return *failed;
  worker_.mark_output();
  std::optional<std::string> line;
  bool sent = worker_.send(request);
  if (!sent) {
    // The worker ended before the request reached it (killed while it
    // waited between trials): the config has not run, and a fresh worker
    // takes it.
    worker_.kill();
    if (auto failed = ensure_worker()) return *failed;
    worker_.mark_output();
    sent = worker_.send(request);
  }
  // What the worker's threads ran and waited for a CPU while it served the
  // request (the machine's load, which the samples' spread does not show
  // when every sample is equally slow).
  const auto cpu_before = sent ? detail::cpu_times_of_tree(worker_.pid()) : std::nullopt;
  if (sent) line = worker_.receive(limit, detail::Child::WhenStopped::give_up);
  TrialResult r;
  if (!line) {
    if (stop_requested()) {
      worker_.kill();
      r.interrupted = true;
      return r;
    }
    if (!sent) {
      r.status = Status::crash;
      r.fault = Fault::environment;
      r.error = "two workers in a row ended before they read the request";
      worker_.kill();
    } else if (worker_.seen_stopped()) {
      // A stop lasts until a SIGCONT, so the rest of the timeout would be
      // waited out on every run. Whose stop it was cannot be told from here
      // (a kernel's raise(SIGSTOP) and a user's kill -STOP look alike): as
      // a kill from outside, it is measured again at once on a fresh
      // worker, and a stop there too is the config's own.
      r.status = Status::crash;
      r.fault = Fault::environment;
      killed_by_ = SIGSTOP;
      r.error = "worker stopped (SIGSTOP, or a terminal's stop signal) before it answered; worker ended";
      worker_.kill();
    } else if (!worker_.closed()) {
      r.status = Status::timeout;
      r.error = fmt::format("no result within {:.3g} s ({}); worker killed", limit.count(), limit_is);
      if (detail::any_stopped(worker_.pid(), detail::Stopped::or_traced)) {
        // A stopped process runs nothing: the time ran out on the machine,
        // not on the config.
        r.fault = Fault::environment;
        r.error += " (it was stopped from outside, by SIGSTOP or a debugger)";
      }
      worker_.kill();
    } else {
      r.status = Status::crash;
      r.error = "worker " + worker_.reap();
      if (detail::signal_from_outside(worker_.last_signal())) {
        killed_by_ = worker_.last_signal();
        r.fault = Fault::environment;
        r.error += " (a signal from outside the kernel, such as the OOM killer's)";
      }
    }
    if (std::string log = worker_.output(); !log.empty()) r.error += "\n" + log;
    return r;
  }
  auto parsed = parse_answer(*line, worker_.token());
  if (auto* why = std::get_if<std::string>(&parsed)) {
    // Only the worker writes on its channel; whatever else arrived there
    // (a kernel that found the descriptor) fails this config, and a fresh
    // worker serves the next.
    worker_.kill();
    r.status = Status::launch_error;
    r.error = "the worker sent " + *why;
    if (std::string log = worker_.output(); !log.empty()) r.error += "\n" + log;
    return r;
  }
  WorkerAnswer a = std::get<WorkerAnswer>(std::move(parsed));
  if (const auto cpu_after = cpu_before ? detail::cpu_times_of_tree(worker_.pid()) : std::nullopt) {
    const auto ran = cpu_after->ran - cpu_before->ran, waited = cpu_after->waited - cpu_before->waited;
    // Under a millisecond in all is a wake-up's latency or two, which a
    // trial of a fraction of a millisecond shows as a large share: no sign
    // of a busy machine (the share would name quiet tiny trials).
    if (ran.count() > 0 && waited >= std::chrono::milliseconds(1))
      a.result.cpu_wait_share = std::chrono::duration<double>(waited) / std::chrono::duration<double>(ran + waited);
  }
  if (a.restart) worker_.kill();
  return a.result;
}

TrialResult WorkerEvaluator::evaluate(const TrialRequest& rq) {
  WorkerRequest w = make_request(rq, flush_bytes_);
  if (rq.reference) {
    w.reference_file = prepare_reference(rq).string();
    if (stop_requested()) {
      TrialResult r;
      r.interrupted = true;
      return r;
    }
  }
  const std::string request = to_json(w).dump();
  return measure_unless_killed_twice(
      [&](int& killed_by) {
        TrialResult r = exchange(request, rq.measure.timeout, trial_limit(rq.measure));
        killed_by = killed_by_;
        return r;
      },
      "worker");
}

}  // namespace tunekit::detail

namespace tunekit {

bool note_package_worker(const char* path) {
  detail::package_worker() = path ? path : "";
  return true;
}

}  // namespace tunekit
