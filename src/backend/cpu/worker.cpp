#include <dlfcn.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <limits>
#include <map>
#include <memory>

#include "backend/cpu/detail/protocol.hpp"
#include "backend/cpu/detail/worker.hpp"
#include "evaluator/detail/host_data.hpp"

namespace tunekit::cpu {

namespace {

using json = nlohmann::json;
using LaunchFn = void (*)(void**);

struct FreeDeleter {
  void operator()(void* p) const { std::free(p); }
};

// A 64-byte aligned buffer (cache line and AVX-512 friendly).
struct Buffer {
  std::unique_ptr<std::byte, FreeDeleter> data;
  std::size_t bytes = 0;
  std::vector<std::byte> pristine;  // initial contents of in/inout buffers

  explicit Buffer(std::size_t n) : bytes(n) {
    const std::size_t rounded = std::max<std::size_t>(64, (n + 63) / 64 * 64);
    data.reset(static_cast<std::byte*>(std::aligned_alloc(64, rounded)));
    if (!data) throw std::bad_alloc();
  }
};

constexpr Microseconds kMinBatchTime{20.0};

bool is_output(Role r) { return r == Role::out || r == Role::inout; }

class Worker {
 public:
  json handle(const json& rq) {
    const std::string op = rq.at("op");
    if (op == "reference") return reference(rq);
    if (op == "trial") return trial(rq);
    return {{"status", "launch_error"}, {"error", "unknown op '" + op + "'"}};
  }

 private:
  LaunchFn load(const std::string& path, const std::string& symbol, std::string& error) {
    auto it = libs_.find(path);
    if (it == libs_.end()) {
      // RTLD_LOCAL: every variant defines the same symbols. Never dlclose:
      // unloading an OpenMP runtime with live threads crashes.
      void* h = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
      if (!h) {
        error = std::string("dlopen failed: ") + ::dlerror();
        return nullptr;
      }
      it = libs_.emplace(path, h).first;
    }
    auto fn = reinterpret_cast<LaunchFn>(::dlsym(it->second, symbol.c_str()));
    if (!fn) error = "symbol '" + symbol + "' not found in " + path;
    return fn;
  }

  // Allocates and fills the arguments; reused while the argument list and
  // seed stay the same (the common case: one problem size, many configs).
  void prepare(const json& args_json, std::uint64_t seed) {
    const std::string signature = args_json.dump() + "#" + std::to_string(seed);
    if (signature != signature_) {
      signature_ = signature;
      args_.clear();
      buffers_.clear();
      scalars_.assign(args_json.size(), 0);
      for (const auto& j : args_json) args_.push_back(argument_from_json(j));
      for (std::size_t i = 0; i < args_.size(); ++i) {
        const auto& a = args_[i];
        if (a.role == Role::scalar) {
          buffers_.emplace_back(0);
          scalars_[i] = detail::scalar_bits(a);
          continue;
        }
        Buffer& b = buffers_.emplace_back(a.count * size_of(a.type));
        detail::fill(b.data.get(), a, seed * 1000003ULL + i);
        if (a.role != Role::out) b.pristine.assign(b.data.get(), b.data.get() + b.bytes);
      }
    }
    // Every run starts from the same state: inputs restored, outputs poisoned.
    for (std::size_t i = 0; i < args_.size(); ++i) {
      const auto& a = args_[i];
      Buffer& b = buffers_[i];
      if (a.role == Role::out)
        detail::poison(b.data.get(), a.type, a.count);
      else if (a.role == Role::inout)
        std::memcpy(b.data.get(), b.pristine.data(), b.bytes);
    }
    pointers_.assign(args_.size(), nullptr);
    for (std::size_t i = 0; i < args_.size(); ++i)
      pointers_[i] = args_[i].role == Role::scalar ? static_cast<void*>(&scalars_[i]) : buffers_[i].data.get();
  }

  json reference(const json& rq) {
    std::string error;
    LaunchFn fn = load(rq.at("artifact"), rq.at("symbol"), error);
    if (!fn) return {{"status", "launch_error"}, {"error", error}};
    prepare(rq.at("args"), rq.at("seed"));
    fn(pointers_.data());
    const std::string tmp = rq.at("cache").get<std::string>() + ".tmp";
    {
      std::ofstream f(tmp, std::ios::binary);
      for (std::size_t i = 0; i < args_.size(); ++i)
        if (is_output(args_[i].role))
          f.write(reinterpret_cast<const char*>(buffers_[i].data.get()), static_cast<std::streamsize>(buffers_[i].bytes));
      if (!f) return {{"status", "launch_error"}, {"error", "cannot write " + tmp}};
    }
    std::rename(tmp.c_str(), rq.at("cache").get<std::string>().c_str());
    return {{"status", "ok"}};
  }

  json verify(const std::string& cache, const Tolerance& tol) {
    std::ifstream f(cache, std::ios::binary);
    Verification total;
    total.checked = true;
    for (std::size_t i = 0; i < args_.size(); ++i) {
      if (!is_output(args_[i].role)) continue;
      std::vector<std::byte> expected(buffers_[i].bytes);
      f.read(reinterpret_cast<char*>(expected.data()), static_cast<std::streamsize>(expected.size()));
      if (!f) return {{"checked", false}, {"passed", false}, {"max_abs_diff", nullptr}, {"max_rel_err", nullptr},
                      {"detail", "reference outputs unreadable: " + cache}};
      Verification v = compare_outputs(args_[i].type, buffers_[i].data.get(), expected.data(), args_[i].count, tol,
                                       args_[i].name);
      total.max_abs_diff = std::max(total.max_abs_diff, v.max_abs_diff);
      total.max_rel_err = std::max(total.max_rel_err, v.max_rel_err);
      if (!v.passed && total.passed) {
        total.passed = false;
        total.detail = v.detail;
      }
    }
    return {{"checked", true},
            {"passed", total.passed},
            {"max_abs_diff", finite_or_null(total.max_abs_diff)},
            {"max_rel_err", finite_or_null(total.max_rel_err)},
            {"detail", total.detail}};
  }

  json trial(const json& rq) {
    std::string error;
    LaunchFn fn = load(rq.at("artifact"), rq.at("symbol"), error);
    if (!fn) return {{"status", "launch_error"}, {"error", error}};
    prepare(rq.at("args"), rq.at("seed"));
    json answer{{"status", "ok"}};
    if (!rq.at("reference").is_null()) {
      fn(pointers_.data());
      const Tolerance tol{rq.at("atol").get<double>(), rq.at("rtol").get<double>()};
      json v = verify(rq.at("reference").get<std::string>(), tol);
      answer["verification"] = v;
      if (!v.at("passed").get<bool>()) {
        // A wrong variant is not worth timing.
        answer["status"] = "wrong_result";
        answer["error"] = v.value("detail", std::string("outputs differ from the reference"));
        return answer;
      }
    }
    const MeasureSettings ms = measure_from_json(rq.at("measure"));
    const std::size_t flush_bytes = rq.at("flush_bytes").get<std::size_t>();
    if (flush_.size() != flush_bytes) flush_.assign(flush_bytes, 0);
    auto flush = [&] {
      // Writing a buffer larger than the last-level cache evicts the
      // kernel's data, so each sample starts cold, as a first call would.
      for (std::size_t i = 0; i < flush_.size(); i += 64) flush_[i] = static_cast<char>(flush_[i] + 1);
    };
    // A call much shorter than the clock's overhead is timed in batches
    // (hot cache only: a cold sample must start from a flushed cache).
    std::size_t reps = 1;
    auto time_reps = [&](std::size_t n) {
      const auto t0 = std::chrono::steady_clock::now();
      for (std::size_t i = 0; i < n; ++i) fn(pointers_.data());
      const auto t1 = std::chrono::steady_clock::now();
      return std::chrono::duration_cast<Microseconds>(t1 - t0);
    };
    if (ms.cache == CacheMode::hot)
      while (reps < (1u << 20) && time_reps(reps) < kMinBatchTime) reps *= 2;
    auto sample = [&] { return time_reps(reps) / static_cast<double>(reps); };
    std::vector<double> us;
    double busy_us = 0;
    for (auto d : collect_samples(ms, flush, sample)) {
      us.push_back(d.count());
      busy_us += d.count() * static_cast<double>(reps);
    }
    answer["busy_us"] = busy_us;
    answer["samples_us"] = us;
    answer["calls_per_sample"] = reps;
    return answer;
  }

  std::map<std::string, void*> libs_;
  std::string signature_;
  std::vector<ResolvedArgument> args_;
  std::vector<Buffer> buffers_;
  std::vector<std::uint64_t> scalars_;
  std::vector<void*> pointers_;
  std::vector<char> flush_;
};

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

int run_worker(int in_fd, int out_fd) {
  Worker worker;
  std::string pending, line;
  while (read_line(in_fd, pending, line)) {
    json answer;
    try {
      answer = worker.handle(json::parse(line));
    } catch (const std::exception& e) {
      // A C++ exception escaping the kernel, or a malformed request.
      answer = {{"status", "launch_error"}, {"error", std::string("exception: ") + e.what()}};
    }
    std::fflush(stdout);
    if (!write_all(out_fd, answer.dump() + "\n")) return 1;
  }
  return 0;
}

}  // namespace tunekit::cpu
