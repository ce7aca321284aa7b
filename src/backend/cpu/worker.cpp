#include <dlfcn.h>

#include <chrono>
#include <map>

#include "backend/cpu/detail/cache.hpp"
#include "backend/cpu/detail/cpu_backend.hpp"
#include "evaluator/detail/worker.hpp"

namespace tunekit::cpu {

namespace {

using LaunchFn = void (*)(void**);

// A call much shorter than the clock's overhead is timed in batches of
// calls lasting at least this long (hot cache only).
constexpr Microseconds kMinBatchTime{20.0};

class CpuRunner final : public detail::KernelRunner {
 public:
  std::optional<TrialResult> load(const detail::WorkerRequest& rq) override {
    if (auto why = detail::cuda_only_feature(rq, "cpu")) return failure(*why);
    const std::string path = rq.artifact.path.string();
    auto it = libs_.find(path);
    if (it == libs_.end()) {
      // RTLD_LOCAL: every variant defines the same symbols. Never dlclose:
      // unloading an OpenMP runtime with live threads crashes.
      void* h = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
      if (!h) return failure(std::string("dlopen failed: ") + ::dlerror());
      it = libs_.emplace(path, h).first;
    }
    fn_ = reinterpret_cast<LaunchFn>(::dlsym(it->second, kLaunchSymbol));
    if (!fn_) return failure(std::string("symbol '") + kLaunchSymbol + "' not found in " + path);
    return std::nullopt;
  }

  bool kernel_writes_host_arguments() const override { return true; }

  std::optional<TrialResult> run_once(const detail::WorkerRequest&, detail::HostArguments& args, bool) override {
    auto p = args.pointers();
    fn_(p.data());
    return std::nullopt;
  }

  TrialResult time(const detail::WorkerRequest& rq, detail::HostArguments& args) override {
    auto pointers = args.pointers();
    // Cold: what the kernel touched is evicted from every cache before each
    // sample, its buffers line by line (coherent across cores, dirty lines
    // written back untimed), so each sample reads its data from memory as a
    // first call would, and pays for no write-back of someone else's lines:
    // cold and cold-read are the same here. The cost follows the kernel's
    // footprint, not a last-level cache size that a VM may report wrongly.
    // Where the processor has no such instruction, a buffer the backend
    // sized (flush_bytes) is overwritten (cold) or read (cold-read) instead.
    const bool read = rq.measure.cache == CacheMode::cold_read;
    const bool by_line = !eviction_instruction().empty();
    if (!by_line && flush_.size() != rq.flush_bytes) flush_.assign(rq.flush_bytes, 0);
    Seconds flushing{0};
    auto flush = [&] {
      const auto t0 = std::chrono::steady_clock::now();
      if (by_line) {
        for (std::size_t i = 0; i < args.size(); ++i)
          if (args.is_buffer(i)) evict_lines(args.data(i), args.bytes(i));
      } else if (read) {
        unsigned char sum = 0;
        for (std::size_t i = 0; i < flush_.size(); i += 64) sum = static_cast<unsigned char>(sum + flush_[i]);
        flush_sink_ = sum;  // volatile: the loads cannot be dropped
      } else {
        for (std::size_t i = 0; i < flush_.size(); i += 64) flush_[i] = static_cast<char>(flush_[i] + 1);
      }
      flushing += std::chrono::steady_clock::now() - t0;
    };
    std::size_t reps = 1;
    auto time_reps = [&](std::size_t n) {
      const auto t0 = std::chrono::steady_clock::now();
      for (std::size_t i = 0; i < n; ++i) fn_(pointers.data());
      const auto t1 = std::chrono::steady_clock::now();
      return std::chrono::duration_cast<Microseconds>(t1 - t0);
    };
    // A cold sample must start from a flushed cache, so only hot timing
    // batches calls.
    if (rq.measure.cache == CacheMode::hot)
      while (reps < (1u << 20) && time_reps(reps) < kMinBatchTime) reps *= 2;
    TrialResult r;
    Sampling sampled = collect_samples(rq.measure, flush, [&] { return time_reps(reps) / static_cast<double>(reps); });
    detail::take_sampling(r, std::move(sampled), rq.measure);
    for (auto d : r.samples) r.device_busy += d * static_cast<double>(reps);
    r.stats = summarize(r.samples);
    r.flush = flushing;
    return r;
  }

 private:
  static TrialResult failure(std::string error) {
    TrialResult r;
    r.status = Status::launch_error;
    r.error = std::move(error);
    return r;
  }

  std::map<std::string, void*> libs_;
  LaunchFn fn_ = nullptr;
  std::vector<char> flush_;
  volatile unsigned char flush_sink_ = 0;
};

}  // namespace

int run_worker(int in_fd, int out_fd, int /*device: the CPU is one device*/) {
  CpuRunner runner;
  return detail::serve(in_fd, out_fd, runner);
}

}  // namespace tunekit::cpu
