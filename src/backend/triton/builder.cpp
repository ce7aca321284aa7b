// The Triton builder: a pool of Python compile helpers (one per build job),
// each a long-lived `python3 -m tunekit_triton compile-server` that imports
// torch and triton once and then compiles one variant per request into the
// device's Triton cache. Builds are keyed by what decides the binary: the
// source, the entry, the config, the constexprs the size fixes and the
// scalar arguments' values (Triton specialises on them).
#include <fstream>
#include <string_view>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "backend/triton/detail/triton_backend.hpp"
#include "core/detail/cores.hpp"
#include "core/detail/hash.hpp"
#include "evaluator/detail/protocol.hpp"
#include "tunekit/stop.hpp"

namespace tunekit::triton {

namespace fs = std::filesystem;
using json = nlohmann::json;
using Clock = std::chrono::steady_clock;

namespace {

// The compile helper's "resources" (registers, spills, shared_memory,
// num_warps, threads): its whole counts, kept with the trial.
KernelResources resources_of(const json& answer) {
  KernelResources out;
  if (const auto it = answer.find("resources"); it != answer.end() && it->is_object())
    for (const auto& [name, count] : it->items())
      if (count.is_number_integer()) out[name] = count.get<std::int64_t>();
  return out;
}

json value_json(const Value& v) {
  if (v.is_int()) return v.as_int();
  if (v.is_string()) return v.str();
  return v.to_double();
}

std::string read_file(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
}

}  // namespace

TritonBuilder::TritonBuilder(fs::path dir, fs::path triton_cache, PythonSetup py, MachineInfo machine, const Spec* spec,
                             bool rebuild, unsigned jobs, int device)
    : dir_(std::move(dir)),
      triton_cache_(std::move(triton_cache)),
      py_(std::move(py)),
      machine_(std::move(machine)),
      spec_(spec),
      rebuild_(rebuild),
      max_helpers_(jobs ? jobs : detail::usable_cores()),
      device_(device) {
  fs::create_directories(dir_);
  fs::create_directories(triton_cache_);
}

TritonBuilder::~TritonBuilder() {
  for (auto& h : idle_) h->kill();
}

std::unique_ptr<detail::Child> TritonBuilder::acquire() {
  std::unique_lock lock(mutex_);
  available_.wait(lock, [&] { return !idle_.empty() || live_ < max_helpers_; });
  if (!idle_.empty()) {
    auto h = std::move(idle_.back());
    idle_.pop_back();
    return h;
  }
  ++live_;
  lock.unlock();
  auto h = std::make_unique<detail::Child>();
  try {
    h->start(
        python_command(py_, {"compile-server", "--device", std::to_string(device_), "--cache", triton_cache_.string()}),
        dir_ / fmt::format("compile-helper-{}.log", reinterpret_cast<std::uintptr_t>(h.get()) % 100000));
  } catch (...) {
    std::lock_guard relock(mutex_);
    --live_;
    available_.notify_one();
    throw;
  }
  return h;
}

void TritonBuilder::release(std::unique_ptr<detail::Child> helper) {
  std::lock_guard lock(mutex_);
  if (helper && helper->running() && !helper->closed()) idle_.push_back(std::move(helper));
  else --live_;
  available_.notify_one();
}

BuildResult TritonBuilder::build_reference(const BuildInput& in, BuildResult r) {
  json d;
  if (in.compiler == "reference:torch") d = {{"kind", "torch"}, {"expression", in.entry}};
  else d = {{"kind", "python"}, {"source", fs::absolute(in.source_name).string()}, {"entry", in.entry}};
  const fs::path file = dir_ / ("reference-" + detail::Hasher().add(d.dump()).add(in.source).hex() + ".json");
  std::ofstream(file) << d.dump(1) << "\n";
  r.artifact = {file, file.stem().string()};
  return r;
}

BuildResult TritonBuilder::build(const BuildInput& in) {
  BuildResult r;
  if (in.compiler.rfind("reference:", 0) == 0) return build_reference(in, std::move(r));

  Bindings env = machine_.properties;
  for (const auto& [k, v] : in.size) env[k] = v;
  for (const auto& [k, v] : in.config) env[k] = v;
  json config = json::object();
  for (const auto& [k, v] : in.config) config[k] = value_json(v);
  json args = json::array();
  try {
    if (spec_)
      for (const auto& c : spec_->kernel.constexprs) config[c.name] = value_json(c.value.evaluate(env));
    for (const auto& a : resolve_arguments(in.arguments, env))
      if (a.passed) args.push_back(detail::to_json(a));
  } catch (const std::exception& e) {
    r.status = Status::compile_error;
    r.log = std::string("cannot resolve the arguments for this variant: ") + e.what();
    return r;
  }
  json limits = json::object();
  for (const char* k : {"shared_memory_per_block_optin", "registers_per_block", "max_threads_per_block"})
    if (auto it = machine_.properties.find(k); it != machine_.properties.end()) limits[k] = value_json(it->second);
  json rq{{"op", "compile"},   {"source", fs::absolute(in.source_name).string()},
          {"entry", in.entry}, {"config", config},
          {"args", args},      {"limits", limits}};
  if (spec_ && spec_->kernel.max_spills) rq["max_spills"] = *spec_->kernel.max_spills;
  // Scalars' values matter only through Triton's specialisation, but the
  // whole request is the key: simple, and never too coarse.
  const std::string key = detail::Hasher().add(in.hash()).add(rq.dump()).hex();
  const fs::path descriptor = dir_ / (key + ".json");
  const fs::path outcome = dir_ / (key + ".outcome.json");
  rq["descriptor"] = descriptor.string();
  r.artifact = {descriptor, key};
  {
    std::lock_guard lock(mutex_);
    const bool fresh = !rebuild_ || built_.count(key);
    if (fresh && fs::exists(outcome)) {
      try {
        json o = json::parse(read_file(outcome));
        r.status = status_from_string(o.value("status", "compile_error")).value_or(Status::compile_error);
        r.log = o.value("error", "");
        r.resources = resources_of(o);
        r.cached = true;
        if (r.status != Status::ok || fs::exists(descriptor)) return r;
      } catch (const std::exception&) {
      }
    }
  }

  const auto t0 = Clock::now();
  std::unique_ptr<detail::Child> helper;
  std::optional<std::string> line;
  std::string helper_token;  // what its answers start with
  std::string failure;
  bool stopped = false;
  try {
    helper = acquire();
  } catch (const std::exception& e) {
    r.status = Status::compile_error;
    r.log = std::string("cannot start the compile helper: ") + e.what();
    return r;  // acquire() gave its slot back
  }
  try {
    helper_token = helper->token();
    helper->mark_output();
    // A compile that takes longer than kernel.build_timeout (Triton's
    // default: 10 minutes) is taken for a hang: its helper is killed.
    if (helper->send(rq.dump())) line = helper->receive(in.timeout);
    if (!line) {
      // receive() gives up at the limit, or at once when the run is
      // stopped (Ctrl-C): the latter is no fault of the config's.
      stopped = stop_requested() && !helper->closed();
      failure = helper->closed() ? "the compile helper died (" + helper->reap() + ")"
                : stopped        ? std::string("the Triton compile was interrupted: the run was stopped")
                                 : fmt::format(
                                       "the Triton compile timed out after {:g} s (kernel.build_timeout); "
                                              "its helper was killed",
                                       in.timeout.count());
      // What it printed for this variant: an LLVM or ptxas abort says why
      // there, and nowhere else.
      if (std::string said = helper->output(); !said.empty()) failure += "; its output:\n" + said;
      helper->kill();
      helper.reset();
    }
  } catch (const std::exception& e) {
    failure = std::string("the compile helper failed: ") + e.what();
    helper.reset();
  }
  release(std::move(helper));
  r.time = Clock::now() - t0;
  json answer;
  if (line) {
    try {
      std::string_view text = *line;
      const std::string prefix = helper_token + ' ';
      if (!helper_token.empty() && !text.starts_with(prefix)) throw std::runtime_error("no token");
      answer = json::parse(text.substr(helper_token.empty() ? 0 : prefix.size()));
    } catch (const std::exception& e) {
      failure = "the compile helper answered something unreadable: " + line->substr(0, 200);
    }
  }
  if (!failure.empty()) {
    r.status = Status::compile_error;
    if (stopped) r.fault = Fault::environment;  // built again on the next run
    r.log = failure;
    return r;  // not cached: a helper that died may not die again
  }
  r.status = status_from_string(answer.value("status", "compile_error")).value_or(Status::compile_error);
  r.log = answer.value("error", "");
  r.resources = resources_of(answer);
  {
    std::lock_guard lock(mutex_);
    built_.insert(key);
    std::ofstream(outcome) << json{{"status", std::string(to_string(r.status))},
                                   {"error", answer.value("error", "")},
                                   {"resources", answer.value("resources", json::object())}}
                                  .dump()
                           << "\n";
  }
  return r;
}

}  // namespace tunekit::triton
