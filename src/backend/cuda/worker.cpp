// The CUDA worker: one process per GPU. It loads cubins through the driver
// API, keeps the arguments on the device, verifies and times kernels with
// CUDA events. After a sticky error (an illegal address, a trap) the context
// is unusable, so the runner reports itself poisoned and the tuner starts a
// fresh worker; a hang is the tuner's to catch (it kills the worker).
#include <cmath>
#include <cstdio>
#include <fstream>
#include <list>
#include <sstream>
#include <utility>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "backend/cuda/detail/cuda_backend.hpp"
#include "backend/cuda/detail/driver.hpp"
#include "backend/cuda/detail/traits.hpp"
#include "evaluator/detail/host_data.hpp"
#include "evaluator/detail/worker.hpp"

namespace tunekit::cuda {

namespace {

// Kernels shorter than this are timed hot in batches replayed from a CUDA
// graph, so launch gaps and event resolution do not dominate.
constexpr double kShortKernelUs = 10.0;
// A batch lasts about this long.
constexpr double kBatchTargetUs = 200.0;
// Samples enqueued before one wait: about this much GPU time, at most
// kMaxGroup samples. Long groups keep the GPU under the steady load that
// triton.testing.do_bench times under: a ~5 us kernel measured with a wait
// after each sample ran 10% faster on an H200 (lab/probes/flush_probe.py).
constexpr double kGroupTargetUs = 20000.0;
constexpr std::size_t kMaxGroup = 512;
constexpr std::size_t kModuleCacheSize = 8;

// The worker's own kernels, as PTX, so the driver compiles them for any GPU
// and the worker needs no NVRTC.
//
// The L2 flush: ordinary 16-byte stores (cold) or loads (cold-read, p_read
// != 0) over a buffer larger than the L2, as a kernel (a driver memset may
// write with another cache policy and leave the kernel's data resident).
// Loading, it xors what it loads so the loads are not dropped, and stores
// only when the xor is a value it cannot be (the buffer holds one repeated
// word, whose four xored lanes give 0): its lines stay clean. Plain ld.global
// (not .nc), so they are allocated in the L2 like any load.
//
// tunekit_differ sets *p_flag when two buffers of p_bytes bytes differ
// anywhere (words, then the tail's bytes by one thread): the check after
// timing compares a call's outputs with the verified call's where they
// are, not by reading them back (64 MB of SGEMM output took ~10 ms a
// config).
constexpr const char* kWorkerPtx = R"(
.version 7.0
.target sm_70
.address_size 64
.visible .entry tunekit_flush(.param .u64 p_buf, .param .u64 p_n, .param .u32 p_value, .param .u32 p_read)
{
  .reg .pred %p<4>;
  .reg .b32 %r<12>;
  .reg .b64 %rd<9>;
  ld.param.u64 %rd1, [p_buf];
  ld.param.u64 %rd2, [p_n];
  ld.param.u32 %r1, [p_value];
  ld.param.u32 %r10, [p_read];
  setp.ne.u32 %p3, %r10, 0;
  cvta.to.global.u64 %rd1, %rd1;
  mov.u32 %r2, %ctaid.x;
  mov.u32 %r3, %ntid.x;
  mov.u32 %r4, %tid.x;
  mov.u32 %r5, %nctaid.x;
  mul.wide.u32 %rd3, %r2, %r3;
  cvt.u64.u32 %rd4, %r4;
  add.u64 %rd5, %rd3, %rd4;
  mul.wide.u32 %rd6, %r5, %r3;
  mov.u32 %r11, 0;
LOOP:
  setp.ge.u64 %p1, %rd5, %rd2;
  @%p1 bra DONE;
  shl.b64 %rd7, %rd5, 4;
  add.u64 %rd8, %rd1, %rd7;
  @%p3 bra LOAD;
  st.global.v4.u32 [%rd8], {%r1, %r1, %r1, %r1};
  bra NEXT;
LOAD:
  ld.global.v4.u32 {%r6, %r7, %r8, %r9}, [%rd8];
  xor.b32 %r11, %r11, %r6;
  xor.b32 %r11, %r11, %r7;
  xor.b32 %r11, %r11, %r8;
  xor.b32 %r11, %r11, %r9;
NEXT:
  add.u64 %rd5, %rd5, %rd6;
  bra LOOP;
DONE:
  @!%p3 bra END;
  setp.ne.u32 %p2, %r11, 0x9E3779B9;
  @%p2 bra END;
  st.global.u32 [%rd1], %r11;
END:
  ret;
}

.visible .entry tunekit_differ(.param .u64 p_a, .param .u64 p_b, .param .u64 p_bytes, .param .u64 p_flag)
{
  .reg .pred %p<4>;
  .reg .b32 %r<10>;
  .reg .b64 %rd<16>;
  ld.param.u64 %rd1, [p_a];
  ld.param.u64 %rd2, [p_b];
  ld.param.u64 %rd3, [p_bytes];
  ld.param.u64 %rd4, [p_flag];
  cvta.to.global.u64 %rd1, %rd1;
  cvta.to.global.u64 %rd2, %rd2;
  cvta.to.global.u64 %rd4, %rd4;
  shr.u64 %rd5, %rd3, 2;
  mov.u32 %r1, %ctaid.x;
  mov.u32 %r2, %ntid.x;
  mov.u32 %r3, %tid.x;
  mov.u32 %r4, %nctaid.x;
  mul.wide.u32 %rd6, %r1, %r2;
  cvt.u64.u32 %rd7, %r3;
  add.u64 %rd8, %rd6, %rd7;
  mov.u64 %rd15, %rd8;
  mul.wide.u32 %rd9, %r4, %r2;
  mov.u32 %r9, 0;
WORDS:
  setp.ge.u64 %p1, %rd8, %rd5;
  @%p1 bra TAIL;
  shl.b64 %rd10, %rd8, 2;
  add.u64 %rd11, %rd1, %rd10;
  add.u64 %rd12, %rd2, %rd10;
  ld.global.u32 %r5, [%rd11];
  ld.global.u32 %r6, [%rd12];
  xor.b32 %r7, %r5, %r6;
  or.b32 %r9, %r9, %r7;
  add.u64 %rd8, %rd8, %rd9;
  bra WORDS;
TAIL:
  setp.ne.u64 %p2, %rd15, 0;
  @%p2 bra FOUND;
  shl.b64 %rd10, %rd5, 2;
BYTES:
  setp.ge.u64 %p1, %rd10, %rd3;
  @%p1 bra FOUND;
  add.u64 %rd11, %rd1, %rd10;
  add.u64 %rd12, %rd2, %rd10;
  ld.global.u8 %r5, [%rd11];
  ld.global.u8 %r6, [%rd12];
  xor.b32 %r7, %r5, %r6;
  or.b32 %r9, %r9, %r7;
  add.u64 %rd10, %rd10, 1;
  bra BYTES;
FOUND:
  setp.eq.u32 %p3, %r9, 0;
  @%p3 bra SAME;
  mov.u32 %r8, 1;
  st.global.u32 [%rd4], %r8;
SAME:
  ret;
}
)";

// A failed driver call inside the sampling loop.
struct CudaFailure {
  CUresult code;
  std::string what;
};

TrialResult failure(Status status, std::string error) {
  TrialResult r;
  r.status = status;
  r.error = std::move(error);
  return r;
}

std::string read_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

class CudaRunner final : public tunekit::detail::KernelRunner {
 public:
  explicit CudaRunner(int ordinal) : d_(*driver()) {
    limits_ = query_device(d_, ordinal);
    check("cuDeviceGet", d_.cuDeviceGet(&device_, ordinal));
    check("cuDevicePrimaryCtxRetain", d_.cuDevicePrimaryCtxRetain(&context_, device_));
    check("cuCtxSetCurrent", d_.cuCtxSetCurrent(context_));
    // Everything (copies, memsets, launches, graph captures) goes through
    // this one stream, in order; it never waits on the legacy stream.
    check("cuStreamCreate", d_.cuStreamCreate(&stream_, kStreamNonBlocking));
    check("cuEventCreate", d_.cuEventCreate(&start_, kEventDefault));
    check("cuEventCreate", d_.cuEventCreate(&stop_, kEventDefault));
  }

  bool poisoned() const override { return poisoned_; }

  std::optional<TrialResult> load(const tunekit::detail::WorkerRequest& rq) override {
    inputs_restored_ = false;  // a new request: its first verified call restores the inputs
    first_kept_ = false;
    if (poisoned_) return failure(Status::launch_error, "the CUDA context is lost: " + sticky_);
    launch_ = rq.launch;
    if (auto why = check_geometry(limits_, launch_)) return failure(Status::resource_limit, *why);
    if (launch_.clustered() && !d_.cuLaunchKernelEx)
      return failure(Status::launch_error, "the CUDA driver lacks cuLaunchKernelEx, which a cluster launch needs");
    const std::string path = rq.artifact.path.string();
    auto it = modules_.begin();
    while (it != modules_.end() && it->path != path) ++it;
    if (it == modules_.end()) {
      const std::string image = read_file(path);
      if (image.empty()) return failure(Status::launch_error, "cannot read the cubin " + path);
      CUmodule m = nullptr;
      if (CUresult r = d_.cuModuleLoadData(&m, image.data()); r != CUDA_SUCCESS)
        return fail_call("cuModuleLoadData", r);
      std::string symbol = rq.entry;
      if (auto side = read_sidecar(sidecar_path(rq.artifact.path))) symbol = side->lowered;
      modules_.push_front({path, m, symbol});
      if (modules_.size() > kModuleCacheSize) {
        d_.cuModuleUnload(modules_.back().module);
        modules_.pop_back();
      }
      it = modules_.begin();
    }
    CUfunction f = nullptr;
    if (CUresult r = d_.cuModuleGetFunction(&f, it->module, it->symbol.c_str()); r != CUDA_SUCCESS)
      return failure(Status::launch_error,
                     fmt::format("kernel '{}' ({}) not found in the cubin: {}", rq.entry, it->symbol, describe(r)));
    FunctionResources res;
    d_.cuFuncGetAttribute(&res.registers, kFuncNumRegs, f);
    d_.cuFuncGetAttribute(&res.static_shared, kFuncSharedSizeBytes, f);
    d_.cuFuncGetAttribute(&res.local_bytes, kFuncLocalSizeBytes, f);
    d_.cuFuncGetAttribute(&res.max_threads_per_block, kFuncMaxThreadsPerBlock, f);
    if (auto why = check_resources(res, limits_, launch_)) return failure(Status::resource_limit, *why);
    // Past 48 KiB a block's dynamic shared memory must be asked for.
    if (launch_.shared_memory + static_cast<std::uint64_t>(res.static_shared) > kDefaultDynamicSharedLimit)
      if (CUresult r =
              d_.cuFuncSetAttribute(f, kFuncMaxDynamicSharedSizeBytes, static_cast<int>(launch_.shared_memory));
          r != CUDA_SUCCESS)
        return failure(Status::resource_limit, fmt::format("{} bytes of dynamic shared memory refused: {}",
                                                           launch_.shared_memory, describe(r)));
    if (launch_.cluster[0] * launch_.cluster[1] * launch_.cluster[2] > kMaxPortableClusterBlocks)
      if (CUresult r = d_.cuFuncSetAttribute(f, kFuncNonPortableClusterSizeAllowed, 1); r != CUDA_SUCCESS)
        return failure(Status::resource_limit,
                       fmt::format("a non-portable cluster size refused for this kernel: {}", describe(r)));
    function_ = f;
    module_ = it->module;
    return std::nullopt;
  }

  Seconds take_busy() override { return std::exchange(pending_busy_, Seconds(0)); }

  std::optional<TrialResult> run_once(const tunekit::detail::WorkerRequest& rq, tunekit::detail::HostArguments& args,
                                      bool) override {
    if (auto failed = call(rq, args)) return failed;
    if (rq.op != tunekit::detail::WorkerRequest::Op::reference) keep_first_outputs(args);
    return read_outputs(args);
  }

  Again run_again(const tunekit::detail::WorkerRequest& rq, tunekit::detail::HostArguments& args) override {
    if (auto failed = call(rq, args)) return {failed, false};
    if (first_kept_ && outputs_as_first(args)) return {std::nullopt, true};
    return {read_outputs(args), false};
  }

  // One verified call: inputs restored, outputs poisoned, the kernel run to
  // its end.
  std::optional<TrialResult> call(const tunekit::detail::WorkerRequest& rq, tunekit::detail::HostArguments& args) {
    if (auto failed = upload(rq, args, true)) return failed;
    // A reference that used a map it was given zeroed fails: say why.
    auto noted = [&](std::optional<TrialResult> failed) {
      if (failed && !skipped_maps_.empty()) failed->error += " (passed zeroed: " + skipped_maps_ + ")";
      return failed;
    };
    float ms = 0;
    CUresult r = d_.cuEventRecord(start_, stream_);
    if (r == CUDA_SUCCESS) r = launch(stream_);
    if (r != CUDA_SUCCESS) return noted(fail_call(launch_name(), r));
    d_.cuEventRecord(stop_, stream_);
    if (r = d_.cuEventSynchronize(stop_); r != CUDA_SUCCESS) return noted(fail_call("the kernel", r));
    if (d_.cuEventElapsedTime(&ms, start_, stop_) == CUDA_SUCCESS) pending_busy_ += Microseconds(1000.0 * ms);
    return std::nullopt;
  }

  // The verified call's outputs, copied beside them on the device (ordered
  // before the read-back that follows), for outputs_as_first. Without room
  // for them the check after timing reads its outputs back instead.
  void keep_first_outputs(const tunekit::detail::HostArguments& args) {
    first_kept_ = false;
    for (std::size_t i = 0; i < args.size(); ++i) {
      if (!args.is_output(i) || args.bytes(i) == 0) continue;
      if (!spare(firsts_[i], args.bytes(i)) ||
          d_.cuMemcpyDtoDAsync(firsts_[i].ptr, buffers_[i], args.bytes(i), stream_) != CUDA_SUCCESS)
        return;
    }
    first_kept_ = true;
  }

  // Whether every output is bitwise what the verified call wrote; false
  // also when the device cannot tell (the outputs are then read back).
  bool outputs_as_first(const tunekit::detail::HostArguments& args) {
    std::vector<Span> spans;
    for (std::size_t i = 0; i < args.size(); ++i)
      if (args.is_output(i) && args.bytes(i) > 0) spans.push_back({buffers_[i], firsts_[i].ptr, args.bytes(i)});
    return same_bits(spans);
  }

  struct Span {
    CUdeviceptr a, b;
    unsigned long long bytes;
  };

  // Whether each pair of device buffers holds the same bits; false also
  // when the device cannot tell.
  bool same_bits(std::vector<Span> spans) {
    if (load_own_kernels() != CUDA_SUCCESS) return false;
    if (!differs_ && d_.cuMemAlloc(&differs_, sizeof(unsigned)) != CUDA_SUCCESS) {
      differs_ = 0;
      return false;
    }
    if (d_.cuMemsetD32Async(differs_, 0, 1, stream_) != CUDA_SUCCESS) return false;
    const unsigned blocks = static_cast<unsigned>(std::max(1, limits_.sm_count) * 4);
    for (Span& s : spans) {
      void* params[] = {&s.a, &s.b, &s.bytes, &differs_};
      if (d_.cuLaunchKernel(differ_fn_, blocks, 1, 1, 512, 1, 1, 0, stream_, params, nullptr) != CUDA_SUCCESS)
        return false;
    }
    unsigned differs = 1;
    if (d_.cuMemcpyDtoHAsync(&differs, differs_, sizeof differs, stream_) != CUDA_SUCCESS ||
        d_.cuStreamSynchronize(stream_) != CUDA_SUCCESS)
      return false;
    return differs == 0;
  }

  std::optional<TrialResult> read_outputs(tunekit::detail::HostArguments& args) {
    CUresult r = CUDA_SUCCESS;
    for (std::size_t i = 0; i < args.size(); ++i)
      if (args.is_output(i) && args.bytes(i) > 0)
        if (r = d_.cuMemcpyDtoHAsync(args.data(i), buffers_[i], args.bytes(i), stream_); r != CUDA_SUCCESS)
          return fail_call("cuMemcpyDtoH", r);
    if (r = d_.cuStreamSynchronize(stream_); r != CUDA_SUCCESS) return fail_call("cuMemcpyDtoH", r);
    return std::nullopt;
  }

  TrialResult time(const tunekit::detail::WorkerRequest& rq, tunekit::detail::HostArguments& args) override {
    if (auto failed = upload(rq, args, false)) return *failed;
    TrialResult result;
    const CacheMode mode = rq.measure.cache;
    const bool cold = is_cold(mode) && rq.flush_bytes > 0;
    if (cold) {
      if (auto failed = ensure_flush(rq.flush_bytes, mode)) return *failed;
    }
    try {
      // A few launches to learn the kernel's length (the first one may load
      // the function lazily): short kernels timed hot are replayed from a
      // graph in batches.
      std::size_t batch = 1;
      if (!cold) {
        Microseconds once = time_launches(1);
        result.device_busy += once;
        for (int i = 0; i < 3; ++i) {
          const Microseconds t = time_launches(1);
          result.device_busy += t;
          once = std::min(once, t);
        }
        if (once.count() < kShortKernelUs)
          batch = static_cast<std::size_t>(std::clamp(kBatchTargetUs / std::max(once.count(), 0.5), 2.0, 1000.0));
      }
      GraphGuard graph{d_};
      if (batch > 1) capture(batch, graph);
      // Samples are enqueued in groups, back to back (flush, event, kernel,
      // event), as triton.testing.do_bench does, and read after one wait:
      // the GPU never idles between the samples of a group, and the host
      // waits once per group. A group is about kGroupTargetUs of GPU work.
      std::vector<Microseconds> group;
      std::size_t next = 0, group_size = 1;
      // A group holds no more samples than the measurement will take before
      // its next decision (an early stop judges a loser on a few samples).
      auto sample = [&](std::size_t at_most) -> Microseconds {
        if (next == group.size()) {
          const std::size_t n = std::clamp<std::size_t>(at_most, 1, group_size);
          ensure_events(n);
          for (std::size_t i = 0; i < n; ++i) {
            if (cold) {
              flush(mode);
              result.flush += Microseconds(flush_us_);  // as timed once for this mode (ensure_flush)
            }
            check_async("cuEventRecord", d_.cuEventRecord(starts_[i], stream_));
            if (batch > 1) check_async("cuGraphLaunch", d_.cuGraphLaunch(graph.exec, stream_));
            else check_async(launch_name(), launch(stream_));
            check_async("cuEventRecord", d_.cuEventRecord(stops_[i], stream_));
          }
          check_async("the kernel", d_.cuEventSynchronize(stops_[n - 1]));
          group.clear();
          for (std::size_t i = 0; i < n; ++i) {
            float ms = 0;
            check_async("cuEventElapsedTime", d_.cuEventElapsedTime(&ms, starts_[i], stops_[i]));
            group.push_back(Microseconds(1000.0 * static_cast<double>(ms)));
            result.device_busy += group.back();
          }
          next = 0;
          const double per_sample = group.back().count() + (cold ? flush_us_ : 0.0);
          group_size = static_cast<std::size_t>(
              std::clamp(kGroupTargetUs / std::max(per_sample, 1.0), 1.0, static_cast<double>(kMaxGroup)));
        }
        return group[next++] / static_cast<double>(batch);
      };
      Sampling sampled = collect_samples(rq.measure, {}, sample);
      tunekit::detail::take_sampling(result, std::move(sampled), rq.measure);
    } catch (const CudaFailure& f) {
      TrialResult r = *fail_call(f.what, f.code);
      r.device_busy = result.device_busy;
      return r;
    }
    result.stats = summarize(result.samples);
    return result;
  }

 private:
  struct Module {
    std::string path;
    CUmodule module;
    std::string symbol;
  };
  struct GraphGuard {
    const Driver& d;
    CUgraph graph = nullptr;
    CUgraphExec exec = nullptr;
    ~GraphGuard() {
      if (exec) d.cuGraphExecDestroy(exec);
      if (graph) d.cuGraphDestroy(graph);
    }
  };

  void check(const char* what, CUresult r) {
    if (r != CUDA_SUCCESS) throw std::runtime_error(fmt::format("{}: {}", what, describe(r)));
  }
  void check_async(const std::string& what, CUresult r) {
    if (r != CUDA_SUCCESS) throw CudaFailure{r, what};
  }

  // A failed call as a trial result; a sticky error poisons the worker.
  std::optional<TrialResult> fail_call(const std::string& what, CUresult r) {
    const std::string text = describe(r);
    if (is_sticky(r)) {
      poisoned_ = true;
      sticky_ = text;
    }
    const Status s = status_of_failed_call(r);
    return failure(s, fmt::format("{}: {}{}", what, text,
                                  s == Status::timeout ? " (the driver's watchdog stops a kernel that runs for seconds "
                                                         "on a GPU that drives a display)"
                                                       : ""));
  }

  // A buffer the device's memory cannot hold now is the machine's state
  // (another process holds the memory), as a host allocation is: the config
  // is measured again later, not blamed. A buffer the config sizes may be
  // too big for the device on its own: the config's. A launch that runs out
  // of memory (its local memory) stays the config's (fail_call).
  std::optional<TrialResult> fail_allocation(const std::string& what, CUresult r, bool sized_by_config = false) {
    auto failed = fail_call(what, r);
    if (failed && r == CUDA_ERROR_OUT_OF_MEMORY) {
      failed->status = Status::resource_limit;
      failed->fault = sized_by_config ? Fault::config : Fault::environment;
    }
    return failed;
  }

  // A cluster launch goes through cuLaunchKernelEx (which stream capture
  // records like any launch), everything else through cuLaunchKernel.
  CUresult launch(CUstream s) {
    const auto& g = launch_.grid;
    const auto& b = launch_.block;
    if (launch_.clustered()) {
      CUlaunchAttribute attr{};
      attr.id = kLaunchAttributeClusterDimension;
      attr.value.clusterDim.x = static_cast<unsigned>(launch_.cluster[0]);
      attr.value.clusterDim.y = static_cast<unsigned>(launch_.cluster[1]);
      attr.value.clusterDim.z = static_cast<unsigned>(launch_.cluster[2]);
      CUlaunchConfig config{};
      config.gridDimX = static_cast<unsigned>(g[0]);
      config.gridDimY = static_cast<unsigned>(g[1]);
      config.gridDimZ = static_cast<unsigned>(g[2]);
      config.blockDimX = static_cast<unsigned>(b[0]);
      config.blockDimY = static_cast<unsigned>(b[1]);
      config.blockDimZ = static_cast<unsigned>(b[2]);
      config.sharedMemBytes = static_cast<unsigned>(launch_.shared_memory);
      config.hStream = s;
      config.attrs = &attr;
      config.numAttrs = 1;
      return d_.cuLaunchKernelEx(&config, function_, params_.data(), nullptr);
    }
    return d_.cuLaunchKernel(function_, static_cast<unsigned>(g[0]), static_cast<unsigned>(g[1]),
                             static_cast<unsigned>(g[2]), static_cast<unsigned>(b[0]), static_cast<unsigned>(b[1]),
                             static_cast<unsigned>(b[2]), static_cast<unsigned>(launch_.shared_memory), s,
                             params_.data(), nullptr);
  }

  const char* launch_name() const { return launch_.clustered() ? "cuLaunchKernelEx (cluster)" : "cuLaunchKernel"; }

  // `n` launches between two events; throws CudaFailure.
  Microseconds time_launches(std::size_t n) {
    check_async("cuEventRecord", d_.cuEventRecord(start_, stream_));
    for (std::size_t i = 0; i < n; ++i) check_async(launch_name(), launch(stream_));
    check_async("cuEventRecord", d_.cuEventRecord(stop_, stream_));
    return elapsed();
  }

  Microseconds time_graph(CUgraphExec exec) {
    check_async("cuEventRecord", d_.cuEventRecord(start_, stream_));
    check_async("cuGraphLaunch", d_.cuGraphLaunch(exec, stream_));
    check_async("cuEventRecord", d_.cuEventRecord(stop_, stream_));
    return elapsed();
  }

  Microseconds elapsed() {
    check_async("the kernel", d_.cuEventSynchronize(stop_));
    float ms = 0;
    check_async("cuEventElapsedTime", d_.cuEventElapsedTime(&ms, start_, stop_));
    return Microseconds(1000.0 * static_cast<double>(ms));
  }

  void capture(std::size_t n, GraphGuard& g) {
    check_async("cuStreamBeginCapture", d_.cuStreamBeginCapture(stream_, kStreamCaptureModeThreadLocal));
    CUresult launched = CUDA_SUCCESS;
    for (std::size_t i = 0; i < n && launched == CUDA_SUCCESS; ++i) launched = launch(stream_);
    const CUresult ended = d_.cuStreamEndCapture(stream_, &g.graph);
    check_async(std::string(launch_name()) + " (capture)", launched);
    check_async("cuStreamEndCapture", ended);
    check_async("cuGraphInstantiate", d_.cuGraphInstantiateWithFlags(&g.exec, g.graph, 0));
  }

  void flush(CacheMode mode) {
    unsigned long long n16 = flush_bytes_ / 16;
    unsigned value = ++flush_value_;  // the stores' value (unused by a read flush)
    unsigned read = mode == CacheMode::cold_read ? 1u : 0u;
    void* params[] = {&flush_, &n16, &value, &read};
    const unsigned blocks = static_cast<unsigned>(std::max(1, limits_.sm_count) * 4);
    check_async("the L2 flush", d_.cuLaunchKernel(flush_fn_, blocks, 1, 1, 512, 1, 1, 0, stream_, params, nullptr));
  }

  void ensure_events(std::size_t n) {
    while (starts_.size() < n) {
      CUevent a = nullptr, b = nullptr;
      check_async("cuEventCreate", d_.cuEventCreate(&a, kEventDefault));
      check_async("cuEventCreate", d_.cuEventCreate(&b, kEventDefault));
      starts_.push_back(a);
      stops_.push_back(b);
    }
  }

  CUresult load_own_kernels() {
    if (!own_module_)
      if (CUresult r = d_.cuModuleLoadData(&own_module_, kWorkerPtx); r != CUDA_SUCCESS) {
        own_module_ = nullptr;
        return r;
      }
    if (!flush_fn_)
      if (CUresult r = d_.cuModuleGetFunction(&flush_fn_, own_module_, "tunekit_flush"); r != CUDA_SUCCESS) return r;
    if (!differ_fn_)
      if (CUresult r = d_.cuModuleGetFunction(&differ_fn_, own_module_, "tunekit_differ"); r != CUDA_SUCCESS) return r;
    return CUDA_SUCCESS;
  }

  // The flush buffer, and the length of the mode's flush (it sizes the
  // groups of samples): timed again when the size or the mode changes.
  std::optional<TrialResult> ensure_flush(std::uint64_t bytes, CacheMode mode) {
    bytes = bytes / 16 * 16;
    if (CUresult r = load_own_kernels(); r != CUDA_SUCCESS) return fail_call("loading the L2 flush kernel", r);
    if (flush_bytes_ == bytes && flush_timed_ == mode) return std::nullopt;
    flush_timed_.reset();
    try {
      if (flush_bytes_ != bytes) {
        if (flush_) d_.cuMemFree(flush_);
        flush_ = 0;
        flush_bytes_ = 0;
        if (CUresult r = allocate(&flush_, bytes); r != CUDA_SUCCESS)
          return fail_allocation("cuMemAlloc (L2 flush)", r);
        flush_bytes_ = bytes;
        flush(CacheMode::cold);  // written once: the read flush reads no uninitialised memory
      }
      flush(mode);  // the first launch may load the function
      check_async("cuEventRecord", d_.cuEventRecord(start_, stream_));
      flush(mode);
      check_async("cuEventRecord", d_.cuEventRecord(stop_, stream_));
      flush_us_ = elapsed().count();
      flush_timed_ = mode;
    } catch (const CudaFailure& f) {
      return fail_call(f.what, f.code);
    }
    return std::nullopt;
  }

  // Device copies of the arguments, per buffer: (re)allocated when its size
  // changes, an input copied when the host generated it anew (version),
  // inout buffers restored and outputs poisoned before a verified run. So a
  // config that resizes only a scratch buffer moves nothing else. Tensor
  // maps are encoded anew on every call (a host-side call, before any
  // timing): they depend on the config's box, and on where their buffer is.
  std::optional<TrialResult> upload(const tunekit::detail::WorkerRequest& rq, tunekit::detail::HostArguments& args,
                                    bool for_verification) {
    if (buffers_.size() != args.size()) release_buffers();
    buffers_.resize(args.size(), 0);
    capacity_.resize(args.size(), 0);
    uploaded_.resize(args.size(), 0);
    pristines_.resize(args.size());
    firsts_.resize(args.size());
    for (std::size_t i = 0; i < args.size(); ++i) {
      const std::size_t need =
          args.is_buffer(i) && args.argument(i).passed ? std::max<std::size_t>(args.bytes(i), 256) : 0;
      if (capacity_[i] == need) continue;
      if (buffers_[i]) d_.cuMemFree(buffers_[i]);
      buffers_[i] = 0;
      capacity_[i] = 0;
      uploaded_[i] = 0;
      if (need == 0) continue;
      if (CUresult r = allocate(&buffers_[i], need); r != CUDA_SUCCESS) {
        release_buffers();
        return fail_allocation(fmt::format("cuMemAlloc({} bytes for '{}')", args.bytes(i), args.argument(i).name), r,
                               args.argument(i).sized_by_config);
      }
      capacity_[i] = need;
    }
    params_.clear();
    maps_.resize(args.size());  // never resized while params_ points into it
    for (std::size_t i = 0; i < args.size(); ++i) {
      if (args.argument(i).constant_memory)
        if (auto failed = copy_to_symbol(args, i)) return failed;
      if (!args.argument(i).passed) continue;  // not a parameter of the kernel
      params_.push_back(args.is_buffer(i)       ? static_cast<void*>(&buffers_[i])
                        : args.is_tensor_map(i) ? static_cast<void*>(&maps_[i])
                                                : args.scalar(i));
    }
    if (auto failed = encode_tensor_maps(args, rq.op == tunekit::detail::WorkerRequest::Op::reference)) return failed;
    // An input is restored before a request's first verified call too: a
    // config that wrote into its device copy (a bug, or a write past its
    // output's end) would leave every later config of this worker computing
    // from other data, failing as wrong_result by no fault of its own.
    // (OpenCL writes every buffer each time.) The check after timing finds
    // them as the timed calls left them. Whether an input changed is told
    // on the device, against a copy made as it was copied in: copying it in
    // again from the host's pageable memory took ~10 ms a config (128 MB of
    // SGEMM inputs). The copy is never restored from: a stray write may
    // have hit it too, and then it differs, and the host's copy is used.
    const bool check_inputs = for_verification && !inputs_restored_;
    std::vector<std::size_t> unchecked;  // inputs to copy in from the host unless found as copied
    for (std::size_t i = 0; i < args.size(); ++i) {
      if (!args.is_buffer(i) || args.bytes(i) == 0 || !args.argument(i).passed) continue;
      const Role role = args.argument(i).role;
      const bool stale = uploaded_[i] != args.version(i);
      if (starts_as_generated(role) && !stale && check_inputs) {
        unchecked.push_back(i);
      } else if ((starts_as_generated(role) && stale) || (role == Role::inout && (stale || for_verification))) {
        if (auto failed = copy_in(args, i)) return failed;
      } else if (tunekit::detail::starts_poisoned(role) && for_verification) {
        if (CUresult r = poison(i, args); r != CUDA_SUCCESS) return fail_call("poisoning an output", r);
      }
    }
    if (!unchecked.empty() && !inputs_as_copied(args, unchecked))
      for (std::size_t i : unchecked)
        if (auto failed = copy_in(args, i)) return failed;
    inputs_restored_ = inputs_restored_ || for_verification;
    return std::nullopt;
  }

  // An argument in constant memory (`memory: constant`) into the loaded
  // module's __constant__ symbol of its name, before every call: each
  // variant's module has a symbol of its own, and a copy of at most 64 KiB
  // costs nothing beside a call.
  std::optional<TrialResult> copy_to_symbol(tunekit::detail::HostArguments& args, std::size_t i) {
    const std::string& name = args.argument(i).name;
    CUdeviceptr symbol = 0;
    std::size_t size = 0;
    if (CUresult r = d_.cuModuleGetGlobal(&symbol, &size, module_, name.c_str()); r != CUDA_SUCCESS)
      return failure(Status::launch_error,
                     fmt::format("argument '{}' is in constant memory, but the kernel's module has no __constant__ "
                                 "symbol '{}' (declare it at namespace scope, outside any namespace): {}",
                                 name, name, describe(r)));
    if (size < args.bytes(i))
      return failure(Status::launch_error,
                     fmt::format("argument '{}' is {} bytes, but the kernel's __constant__ symbol '{}' holds {}", name,
                                 args.bytes(i), name, size));
    if (CUresult r = d_.cuMemcpyHtoDAsync(symbol, args.data(i), args.bytes(i), stream_); r != CUDA_SUCCESS)
      return fail_call("cuMemcpyHtoD (constant memory)", r);
    return std::nullopt;
  }

  // Copies argument i in from the host, and an input beside it on the
  // device, to tell later whether a config wrote into it.
  std::optional<TrialResult> copy_in(tunekit::detail::HostArguments& args, std::size_t i) {
    const std::size_t bytes = args.bytes(i);
    // Pageable memory: staged before the call returns, so the host buffer
    // may change afterwards; ordered before the launch.
    if (CUresult r = d_.cuMemcpyHtoDAsync(buffers_[i], args.data(i), bytes, stream_); r != CUDA_SUCCESS)
      return fail_call("cuMemcpyHtoD", r);
    uploaded_[i] = args.version(i);
    Spare& copy = pristines_[i];
    copy.version = 0;
    if (starts_as_generated(args.argument(i).role) && spare(copy, bytes) &&
        d_.cuMemcpyDtoDAsync(copy.ptr, buffers_[i], bytes, stream_) == CUDA_SUCCESS)
      copy.version = args.version(i);
    return std::nullopt;
  }

  // Whether each of `inputs` is bitwise as it was copied in; false also
  // when the device cannot tell.
  bool inputs_as_copied(const tunekit::detail::HostArguments& args, const std::vector<std::size_t>& inputs) {
    std::vector<Span> spans;
    for (std::size_t i : inputs) {
      if (!pristines_[i].ptr || pristines_[i].version != args.version(i)) return false;
      spans.push_back({buffers_[i], pristines_[i].ptr, args.bytes(i)});
    }
    return same_bits(spans);
  }

  // Each tensor map, checked, then encoded over its buffer's device copy.
  // For a reference run (`lenient`) a map that cannot be encoded is passed
  // zeroed instead: a naive reference ignores its maps, and each trial then
  // gets the map's failure as its own status (were the reference to use
  // it, it would fail, and its error says why).
  std::optional<TrialResult> encode_tensor_maps(tunekit::detail::HostArguments& args, bool lenient) {
    skipped_maps_.clear();
    for (std::size_t i = 0; i < args.size(); ++i) {
      if (!args.is_tensor_map(i)) continue;
      maps_[i] = CUtensorMap{};
      if (auto failed = encode_tensor_map(args, i)) {
        if (!lenient) return failed;
        maps_[i] = CUtensorMap{};  // a failed encode may have written part of it
        skipped_maps_ += (skipped_maps_.empty() ? "" : "; ") + failed->error;
      }
    }
    return std::nullopt;
  }

  std::optional<TrialResult> encode_tensor_map(tunekit::detail::HostArguments& args, std::size_t i) {
    const ResolvedArgument& a = args.argument(i);
    if (!a.tensor_map) return failure(Status::launch_error, fmt::format("tensor map '{}' has no description", a.name));
    const ResolvedTensorMap& m = *a.tensor_map;
    std::size_t of = 0;
    while (of < args.size() && !(args.is_buffer(of) && args.argument(of).name == m.of)) ++of;
    if (of == args.size())
      return failure(Status::launch_error,
                     fmt::format("tensor map '{}': 'of' names no buffer argument ('{}')", a.name, m.of));
    if (limits_.cc_major < 9)
      return failure(Status::resource_limit,
                     fmt::format("tensor map '{}': TMA needs compute capability 9.0; the device has {}.{}", a.name,
                                 limits_.cc_major, limits_.cc_minor));
    const ElementType type = args.argument(of).type;
    if (auto problem = check_tensor_map(a.name, m, type, args.argument(of).count))
      return failure(problem->status, problem->why);
    if (!d_.cuTensorMapEncodeTiled)
      return failure(Status::launch_error,
                     "the CUDA driver lacks cuTensorMapEncodeTiled (CUDA 12.0 on), which tensor maps need");
    const TensorMapEncoding e = tensor_map_encoding(m, type);
    if (CUresult r = d_.cuTensorMapEncodeTiled(&maps_[i], e.data_type, e.rank, reinterpret_cast<void*>(buffers_[of]),
                                               e.dims.data(), e.strides.data(), e.box.data(), e.element_strides.data(),
                                               kTensorMapInterleaveNone, e.swizzle, e.l2_promotion, e.oob_fill);
        r != CUDA_SUCCESS)
      return failure(Status::launch_error,
                     fmt::format("cuTensorMapEncodeTiled for tensor map '{}' (of '{}', {}, dims [{}], box [{}], "
                                 "swizzle {}): {}",
                                 a.name, m.of, to_string(type), fmt::join(m.dims, ", "), fmt::join(m.box, ", "),
                                 m.swizzle, describe(r)));
    return std::nullopt;
  }

  // The host's poison pattern (NaN, 0xA5 bytes), written on the device.
  CUresult poison(std::size_t i, tunekit::detail::HostArguments& args) {
    const auto& a = args.argument(i);
    const std::size_t size = size_of(a.type);
    std::uint64_t pattern = 0;
    tunekit::detail::poison(&pattern, a.type, 1);
    CUresult r;
    if (size == 1) r = d_.cuMemsetD8Async(buffers_[i], static_cast<unsigned char>(pattern), a.count, stream_);
    else if (size == 2) r = d_.cuMemsetD16Async(buffers_[i], static_cast<unsigned short>(pattern), a.count, stream_);
    else if (size == 4) r = d_.cuMemsetD32Async(buffers_[i], static_cast<unsigned>(pattern), a.count, stream_);
    else
      r = d_.cuMemcpyHtoDAsync(buffers_[i], args.data(i), args.bytes(i), stream_);  // the host copy is poisoned already
    return r;
  }

  void release_buffers() {
    release_spares();
    for (CUdeviceptr p : buffers_)
      if (p) d_.cuMemFree(p);
    buffers_.clear();
    capacity_.clear();
    uploaded_.clear();
    pristines_.clear();
    firsts_.clear();
  }

  // Device memory the worker can do without (the inputs' pristine copies,
  // the verified call's outputs): given back when a buffer the kernel needs
  // finds no room.
  struct Spare {
    CUdeviceptr ptr = 0;
    std::size_t bytes = 0;
    std::uint64_t version = 0;  // pristine copies: the host version it holds; 0: none
  };

  // Makes `s` hold at least `bytes`; false without room for it.
  bool spare(Spare& s, std::size_t bytes) {
    if (s.ptr && s.bytes >= bytes) return true;
    if (s.ptr) d_.cuMemFree(s.ptr);
    s = {};
    if (d_.cuMemAlloc(&s.ptr, bytes) != CUDA_SUCCESS) {
      s.ptr = 0;
      return false;
    }
    s.bytes = bytes;
    return true;
  }

  bool release_spares() {
    bool any = false;
    for (auto* spares : {&pristines_, &firsts_})
      for (Spare& s : *spares) {
        if (s.ptr) d_.cuMemFree(s.ptr);
        any = any || s.ptr;
        s = {};
      }
    first_kept_ = false;
    return any;
  }

  // cuMemAlloc, with the spare memory given back first when the device has
  // no room otherwise.
  CUresult allocate(CUdeviceptr* p, std::size_t bytes) {
    CUresult r = d_.cuMemAlloc(p, bytes);
    if (r == CUDA_ERROR_OUT_OF_MEMORY && release_spares()) r = d_.cuMemAlloc(p, bytes);
    return r;
  }

  const Driver& d_;
  DeviceLimits limits_;
  CUdevice device_ = 0;
  CUcontext context_ = nullptr;
  CUstream stream_ = nullptr;
  CUevent start_ = nullptr, stop_ = nullptr;
  std::list<Module> modules_;
  CUfunction function_ = nullptr;
  CUmodule module_ = nullptr;  // function_'s
  LaunchGeometry launch_;
  std::vector<CUdeviceptr> buffers_;
  std::vector<void*> params_;
  std::vector<CUtensorMap> maps_;        // one slot per argument; the tensor maps' params_ point here
  std::string skipped_maps_;             // reference runs: the maps passed zeroed, and why
  std::vector<std::size_t> capacity_;    // bytes allocated per argument
  std::vector<std::uint64_t> uploaded_;  // the host version each device copy holds
  CUdeviceptr flush_ = 0;
  std::uint64_t flush_bytes_ = 0;
  double flush_us_ = 0;
  std::vector<CUevent> starts_, stops_;
  CUmodule own_module_ = nullptr;
  CUfunction flush_fn_ = nullptr;
  CUfunction differ_fn_ = nullptr;
  std::optional<CacheMode> flush_timed_;  // the mode flush_us_ was timed with
  unsigned flush_value_ = 0;
  Seconds pending_busy_{0};  // the calls outside time() since take_busy()
  bool poisoned_ = false;
  bool inputs_restored_ = false;  // this request's inputs were restored for a verified call
  std::vector<Spare> pristines_;  // per argument: an input as copied in, to tell whether a config wrote into it
  std::vector<Spare> firsts_;     // per argument: an output as the verified call wrote it
  bool first_kept_ = false;       // firsts_ holds this request's verified call's outputs
  CUdeviceptr differs_ = 0;       // tunekit_differ's flag
  std::string sticky_;
};

}  // namespace

int run_worker(int in_fd, int out_fd, int device) {
  if (!driver()) {
    std::fprintf(stderr, "tunekit-worker cuda: %s\n", driver_unavailable_reason().c_str());
    return 2;
  }
  try {
    CudaRunner runner(device);
    return tunekit::detail::serve(in_fd, out_fd, runner);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "tunekit-worker cuda: %s\n", e.what());
    return 2;
  }
}

}  // namespace tunekit::cuda
