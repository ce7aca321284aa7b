#include "evaluator/detail/worker_evaluator.hpp"

#include <signal.h>

#include <cstdlib>
#include <fstream>

#include <fmt/format.h>

#include "core/detail/hash.hpp"
#include "evaluator/detail/protocol.hpp"

namespace tunekit::detail {

namespace fs = std::filesystem;
using json = nlohmann::json;

fs::path find_worker() {
  if (const char* env = std::getenv("TUNEKIT_WORKER"); env && *env) return env;
  std::error_code ec;
  const fs::path self = fs::read_symlink("/proc/self/exe", ec);
  if (!ec && fs::exists(self.parent_path() / "tunekit-worker")) return self.parent_path() / "tunekit-worker";
  for (const char* p : {TUNEKIT_BUILD_WORKER_PATH, TUNEKIT_INSTALL_WORKER_PATH})
    if (fs::exists(p)) return p;
  throw std::runtime_error("cannot find the tunekit-worker executable; set TUNEKIT_WORKER");
}

WorkerEvaluator::WorkerEvaluator(fs::path work_dir, std::vector<std::string> worker_args, std::uint64_t flush_bytes)
    : work_dir_(std::move(work_dir)),
      log_(work_dir_ / "worker.log"),
      worker_args_(std::move(worker_args)),
      flush_bytes_(flush_bytes) {
  fs::create_directories(work_dir_ / "reference");
  // A worker that died leaves a broken pipe; the write must fail, not kill us.
  ::signal(SIGPIPE, SIG_IGN);
}

std::unique_ptr<WorkerEvaluator> WorkerEvaluator::with_command(fs::path work_dir, std::vector<std::string> command,
                                                               std::uint64_t flush_bytes) {
  auto e = std::make_unique<WorkerEvaluator>(std::move(work_dir), std::move(command), flush_bytes);
  e->own_command_ = true;
  return e;
}

void WorkerEvaluator::ensure_worker() {
  if (worker_.running()) return;
  if (own_command_) {
    worker_.start(worker_args_, log_);
    return;
  }
  std::vector<std::string> argv{find_worker().string()};
  argv.insert(argv.end(), worker_args_.begin(), worker_args_.end());
  worker_.start(argv, log_);
}

std::string WorkerEvaluator::log_since(std::uintmax_t offset) const {
  std::ifstream f(log_, std::ios::binary);
  f.seekg(static_cast<std::streamoff>(offset));
  std::string text((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  if (text.size() > 2000) text = "..." + text.substr(text.size() - 2000);
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
  return text;
}

namespace {

std::uintmax_t file_size_or_zero(const fs::path& p) {
  std::error_code ec;
  auto n = fs::file_size(p, ec);
  return ec ? 0 : n;
}

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

}  // namespace

// The reference outputs depend on the reference build, its launch and the
// inputs (argument shapes, fills, seed) and nothing else, so they are
// computed once and kept on disk: a restarted worker, or a rerun, reads them.
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
  if (fs::exists(cache)) return cache;
  w.reference_file = cache.string();
  ensure_worker();
  const auto log_offset = file_size_or_zero(log_);
  // The reference may be a slow naive kernel: give it ten trial timeouts.
  const auto limit = rq.measure.timeout * 10;
  if (worker_.send(to_json(w).dump()))
    if (auto line = worker_.receive(limit)) {
      WorkerAnswer a = answer_from_json(json::parse(*line));
      if (a.restart) worker_.kill();
      if (a.result.status == Status::ok) return cache;
      throw std::runtime_error("the reference failed (" + std::string(to_string(a.result.status)) + "): " + a.result.error);
    }
  const bool hung = !worker_.closed();
  std::string why = hung ? fmt::format("did not finish within {:.0f} s", limit.count()) : worker_.reap();
  worker_.kill();
  std::string log = log_since(log_offset);
  throw std::runtime_error("the reference run " + why + (log.empty() ? "" : ":\n" + log));
}

TrialResult WorkerEvaluator::evaluate(const TrialRequest& rq) {
  WorkerRequest w = make_request(rq, flush_bytes_);
  if (rq.reference) w.reference_file = prepare_reference(rq).string();
  ensure_worker();
  const auto log_offset = file_size_or_zero(log_);
  std::optional<std::string> line;
  if (worker_.send(to_json(w).dump())) line = worker_.receive(rq.measure.timeout);
  if (!line) {
    TrialResult r;
    if (!worker_.closed()) {
      r.status = Status::timeout;
      r.error = fmt::format("no result within {:.3g} s; worker killed", rq.measure.timeout.count());
      worker_.kill();
    } else {
      r.status = Status::crash;
      r.error = "worker " + worker_.reap();
    }
    if (std::string log = log_since(log_offset); !log.empty()) r.error += "\n" + log;
    return r;
  }
  WorkerAnswer a = answer_from_json(json::parse(*line));
  if (a.restart) worker_.kill();
  return a.result;
}

}  // namespace tunekit::detail
