#include <signal.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>

#include <fmt/format.h>

#include "backend/cpu/detail/cpu_backend.hpp"
#include "backend/cpu/detail/protocol.hpp"
#include "core/detail/hash.hpp"

namespace tunekit::cpu {

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

CpuEvaluator::CpuEvaluator(fs::path work_dir, std::uint64_t flush_bytes)
    : work_dir_(std::move(work_dir)), log_(work_dir_ / "worker.log"), flush_bytes_(flush_bytes) {
  fs::create_directories(work_dir_ / "reference");
  // A worker that died leaves a broken pipe; the write must fail, not kill us.
  ::signal(SIGPIPE, SIG_IGN);
}

void CpuEvaluator::ensure_worker() {
  if (!worker_.running()) worker_.start({find_worker().string()}, log_);
}

std::string CpuEvaluator::log_since(std::uintmax_t offset) const {
  std::ifstream f(log_, std::ios::binary);
  f.seekg(static_cast<std::streamoff>(offset));
  std::string text((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  if (text.size() > 2000) text = "..." + text.substr(text.size() - 2000);
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
  return text;
}

namespace {

json arguments_json(const std::vector<ResolvedArgument>& args) {
  json a = json::array();
  for (const auto& arg : args) a.push_back(to_json(arg));
  return a;
}

std::uintmax_t file_size_or_zero(const fs::path& p) {
  std::error_code ec;
  auto n = fs::file_size(p, ec);
  return ec ? 0 : n;
}

}  // namespace

// The reference outputs depend on the reference build, the inputs (argument
// shapes, fills, seed) and nothing else, so they are computed once and kept
// on disk: a restarted worker, or a rerun, reads them back.
fs::path CpuEvaluator::prepare_reference(const TrialRequest& rq) {
  const json args = arguments_json(rq.arguments);
  const std::string key = detail::Hasher().add(rq.reference->hash).add(args.dump()).add(rq.seed).hex();
  const fs::path cache = work_dir_ / "reference" / (key + ".bin");
  if (fs::exists(cache)) return cache;
  ensure_worker();
  const auto log_offset = file_size_or_zero(log_);
  json req{{"op", "reference"}, {"artifact", rq.reference->path.string()}, {"symbol", kLaunchSymbol},
           {"args", args},      {"seed", rq.seed},                           {"cache", cache.string()}};
  // The reference may be a slow naive kernel: give it ten trial timeouts.
  const auto limit = rq.measure.timeout * 10;
  if (worker_.send(req.dump()))
    if (auto line = worker_.receive(limit)) {
      json ans = json::parse(*line);
      if (ans.at("status") == "ok") return cache;
      throw std::runtime_error("the reference failed: " + ans.value("error", std::string("unknown error")));
    }
  const bool hung = !worker_.closed();
  std::string why = hung ? fmt::format("did not finish within {:.0f} s", limit.count()) : worker_.reap();
  worker_.kill();
  std::string log = log_since(log_offset);
  throw std::runtime_error("the reference run " + why + (log.empty() ? "" : ":\n" + log));
}

TrialResult CpuEvaluator::evaluate(const TrialRequest& rq) {
  TrialResult r;
  std::optional<fs::path> reference;
  if (rq.reference) reference = prepare_reference(rq);

  ensure_worker();
  const auto log_offset = file_size_or_zero(log_);
  json req{{"op", "trial"},
           {"artifact", rq.artifact.path.string()},
           {"symbol", kLaunchSymbol},
           {"args", arguments_json(rq.arguments)},
           {"seed", rq.seed},
           {"reference", reference ? json(reference->string()) : json(nullptr)},
           {"atol", rq.tolerance.atol},
           {"rtol", rq.tolerance.rtol},
           {"measure", to_json(rq.measure)},
           {"flush_bytes", flush_bytes_}};
  std::optional<std::string> line;
  if (worker_.send(req.dump())) line = worker_.receive(rq.measure.timeout);
  if (!line) {
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
  const json ans = json::parse(*line);
  r.status = status_from_string(ans.at("status").get<std::string>()).value_or(Status::launch_error);
  r.error = ans.value("error", std::string());
  if (ans.contains("verification")) {
    const auto& v = ans["verification"];
    r.verification.checked = v.at("checked").get<bool>();
    r.verification.passed = v.at("passed").get<bool>();
    r.verification.max_abs_diff = number_or_inf(v.at("max_abs_diff"));
    r.verification.max_rel_err = number_or_inf(v.at("max_rel_err"));
    r.verification.detail = v.value("detail", std::string());
  }
  for (double us : ans.value("samples_us", std::vector<double>{})) r.samples.emplace_back(us);
  r.stats = summarize(r.samples);
  r.device_busy = Microseconds(ans.value("busy_us", 0.0));
  return r;
}

}  // namespace tunekit::cpu
