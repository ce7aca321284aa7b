// The OpenCL worker: loads program binaries, mirrors the host arguments in
// device buffers, and times launches with profiling events.
#include <list>

#include <fmt/format.h>

#include "backend/opencl/detail/traits.hpp"
#include "backend/opencl/detail/opencl.hpp"
#include "evaluator/detail/worker.hpp"

namespace tunekit::opencl {

namespace {

// Programs kept loaded at once: the reference and recent variants.
constexpr std::size_t kMaxPrograms = 8;

// An OpenCL call that failed, with its code, so the caller can tell a bad
// launch from a broken context.
struct ClFailure : std::runtime_error {
  ClFailure(cl_int code, const std::string& what) : std::runtime_error(what + ": " + error_name(code)), code(code) {}
  cl_int code;
};

void ok(cl_int code, const std::string& what) {
  if (code != CL_SUCCESS) throw ClFailure(code, what);
}

TrialResult failure(Status status, std::string error) {
  TrialResult r;
  r.status = status;
  r.error = std::move(error);
  return r;
}

class OpenClRunner final : public detail::KernelRunner {
 public:
  explicit OpenClRunner(int device) : device_index_(device) {}

  ~OpenClRunner() override {
    // A broken queue may block on release; the process is ending anyway.
    if (poisoned_ || !ctx_) return;
    const ClApi& cl = api();
    for (auto& p : programs_) release(p);
    for (cl_mem m : mems_)
      if (m) cl.clReleaseMemObject(m);
    if (flush_) cl.clReleaseMemObject(flush_);
    if (queue_) cl.clReleaseCommandQueue(queue_);
  }

  std::optional<TrialResult> load(const detail::WorkerRequest& rq) override {
    if (auto why = detail::cuda_only_feature(rq, "opencl")) return failure(Status::launch_error, *why);
    if (!init()) return failure(Status::launch_error, init_error_);
    try {
      // The artifact's own entry: a reference artifact comes with the
      // trial's request.
      Program& p = program(rq.artifact.path.string());
      if (!p.kernel) {
        cl_int err = CL_SUCCESS;
        p.kernel = api().clCreateKernel(p.program, p.entry.c_str(), &err);
        ok(err, "clCreateKernel('" + p.entry + "')");
      }
      kernel_ = p.kernel;
      entry_ = p.entry;
    } catch (const std::runtime_error& e) {  // ClFailure, or an unreadable artifact
      return failure(Status::launch_error, e.what());
    }
    free_local_ = false;
    auto refused = check_geometry(rq);
    if (refused && refused->status == Status::resource_limit && rq.op == detail::WorkerRequest::Op::reference) {
      // The reference runs with the trial's launch. When the device refuses
      // that work-group, the trial will fail by itself; the reference (a
      // kernel that covers any launch) still runs, over the same global
      // size, in work-groups the driver picks.
      free_local_ = true;
      return std::nullopt;
    }
    return refused;
  }

  std::optional<TrialResult> run_once(const detail::WorkerRequest& rq, detail::HostArguments& args, bool) override {
    const ClApi& cl = api();
    if (auto failed = upload(rq, args)) return failed;
    try {
      enqueue(rq, nullptr);
      ok(cl.clFinish(queue_), "clFinish after the kernel");
    } catch (const ClFailure& e) {
      return launch_failure(e);
    }
    return read_outputs(args);
  }

  std::optional<TrialResult> read_outputs(detail::HostArguments& args) {
    const ClApi& cl = api();
    try {
      for (std::size_t i = 0; i < args.size(); ++i)
        if (args.is_output(i))
          ok(cl.clEnqueueReadBuffer(queue_, mems_[i], CL_TRUE, 0, args.bytes(i), args.data(i), 0, nullptr, nullptr),
             "reading back '" + args.argument(i).name + "'");
    } catch (const ClFailure& e) {
      poisoned_ = true;
      return failure(Status::launch_error, e.what());
    }
    return std::nullopt;
  }

  TrialResult time(const detail::WorkerRequest& rq, detail::HostArguments& args) override {
    const ClApi& cl = api();
    // Without a reference run_once was skipped: the buffers are set up here.
    if (auto failed = upload(rq, args)) return *failed;
    TrialResult r;
    try {
      std::function<void()> flush;
      // cold-read flushes like cold here: a read flush would need a kernel
      // built for each device; the fill is the flush OpenCL has.
      if (is_cold(rq.measure.cache) && rq.flush_bytes > 0) {
        if (!flush_ || flush_bytes_ != rq.flush_bytes) {
          if (flush_) cl.clReleaseMemObject(flush_);
          flush_ = nullptr;
          cl_int err = CL_SUCCESS;
          flush_ = cl.clCreateBuffer(ctx_->context(), CL_MEM_READ_WRITE, rq.flush_bytes, nullptr, &err);
          ok(err, fmt::format("clCreateBuffer (cache flush, {} bytes)", rq.flush_bytes));
          flush_bytes_ = rq.flush_bytes;
        }
        // Overwriting a buffer larger than the device's cache evicts the
        // kernel's data, so each sample starts cold.
        flush = [&] {
          const auto t0 = std::chrono::steady_clock::now();
          const cl_uint pattern = ++flush_pattern_;
          ok(cl.clEnqueueFillBuffer(queue_, flush_, &pattern, sizeof pattern, 0, flush_bytes_ / 4 * 4, 0, nullptr,
                                    nullptr),
             "clEnqueueFillBuffer (cache flush)");
          ok(cl.clFinish(queue_), "clFinish after the cache flush");
          r.flush += std::chrono::steady_clock::now() - t0;
        };
      }
      auto sample = [&] {
        cl_event ev = nullptr;
        enqueue(rq, &ev);
        struct Release {
          cl_event e;
          ~Release() { api().clReleaseEvent(e); }
        } release{ev};
        ok(cl.clWaitForEvents(1, &ev), "clWaitForEvents");
        cl_int status = CL_COMPLETE;
        ok(cl.clGetEventInfo(ev, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof status, &status, nullptr), "clGetEventInfo");
        if (status < 0) throw ClFailure(status, "the kernel failed");
        cl_ulong start = 0, end = 0;
        ok(cl.clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_START, sizeof start, &start, nullptr),
           "CL_PROFILING_COMMAND_START");
        ok(cl.clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_END, sizeof end, &end, nullptr),
           "CL_PROFILING_COMMAND_END");
        return Microseconds(static_cast<double>(end - start) / 1000.0);
      };
      Sampling sampled = collect_samples(rq.measure, flush, sample);
      detail::take_sampling(r, std::move(sampled), rq.measure);
      for (auto d : r.samples) r.device_busy += d;
    } catch (const ClFailure& e) {
      return launch_failure(e);
    }
    r.stats = summarize(r.samples);
    return r;
  }

  bool poisoned() const override { return poisoned_; }

 private:
  struct Program {
    std::string path;
    std::string entry;
    cl_program program = nullptr;
    cl_kernel kernel = nullptr;
  };

  bool init() {
    if (ctx_) return true;
    if (!init_error_.empty()) return false;
    try {
      ctx_ = std::make_unique<DeviceContext>(find_device(device_index_));
      const ClApi& cl = api();
      cl_int err = CL_SUCCESS;
      queue_ = cl.clCreateCommandQueue(ctx_->context(), ctx_->device(), CL_QUEUE_PROFILING_ENABLE, &err);
      ok(err, "clCreateCommandQueue");
      const cl_device_id d = ctx_->device();
      cl_uint dims = 3;
      cl.clGetDeviceInfo(d, CL_DEVICE_MAX_WORK_ITEM_DIMENSIONS, sizeof dims, &dims, nullptr);
      std::vector<std::size_t> sizes(std::max<cl_uint>(dims, 3), 1);
      cl.clGetDeviceInfo(d, CL_DEVICE_MAX_WORK_ITEM_SIZES, dims * sizeof(std::size_t), sizes.data(), nullptr);
      for (int i = 0; i < 3; ++i) max_item_[i] = sizes[i];
      cl.clGetDeviceInfo(d, CL_DEVICE_LOCAL_MEM_SIZE, sizeof local_mem_, &local_mem_, nullptr);
      cl.clGetDeviceInfo(d, CL_DEVICE_MAX_MEM_ALLOC_SIZE, sizeof max_alloc_, &max_alloc_, nullptr);
    } catch (const std::exception& e) {
      ctx_.reset();
      init_error_ = std::string("cannot open the OpenCL device: ") + e.what();
      return false;
    }
    return true;
  }

  static void release(Program& p) {
    if (p.kernel) api().clReleaseKernel(p.kernel);
    if (p.program) api().clReleaseProgram(p.program);
  }

  Program& program(const std::string& path) {
    for (auto it = programs_.begin(); it != programs_.end(); ++it)
      if (it->path == path) {
        programs_.splice(programs_.begin(), programs_, it);  // most recently used first
        return programs_.front();
      }
    const ArtifactFile artifact = read_artifact(path);
    const ClApi& cl = api();
    cl_device_id d = ctx_->device();
    const std::size_t size = artifact.binary.size();
    const unsigned char* data = artifact.binary.data();
    cl_int status = CL_SUCCESS, err = CL_SUCCESS;
    cl_program p = cl.clCreateProgramWithBinary(ctx_->context(), 1, &d, &size, &data, &status, &err);
    ok(err != CL_SUCCESS ? err : status, "clCreateProgramWithBinary(" + path + ")");
    err = cl.clBuildProgram(p, 1, &d, "", nullptr, nullptr);
    if (err != CL_SUCCESS) {
      cl.clReleaseProgram(p);
      throw ClFailure(err, "clBuildProgram of the binary " + path);
    }
    if (programs_.size() >= kMaxPrograms) {
      release(programs_.back());
      programs_.pop_back();
    }
    programs_.push_front({path, artifact.entry, p, nullptr});
    return programs_.front();
  }

  // What the device and the built kernel allow, checked before launching.
  std::optional<TrialResult> check_geometry(const detail::WorkerRequest& rq) {
    if (rq.launch.shared_memory > 0)
      return failure(Status::launch_error,
                     "'shared_memory' applies to CUDA kernels; an OpenCL kernel declares its __local arrays itself");
    const ClApi& cl = api();
    const cl_device_id d = ctx_->device();
    const auto& block = rq.launch.block;
    std::uint64_t items = 1;
    for (int i = 0; i < 3; ++i) {
      items *= block[i];
      if (block[i] > max_item_[i])
        return failure(Status::resource_limit,
                       fmt::format("block[{}] = {} exceeds the device's CL_DEVICE_MAX_WORK_ITEM_SIZES[{}] = {}", i,
                                   block[i], i, max_item_[i]));
    }
    std::size_t kernel_max = 0;
    if (cl.clGetKernelWorkGroupInfo(kernel_, d, CL_KERNEL_WORK_GROUP_SIZE, sizeof kernel_max, &kernel_max, nullptr) ==
            CL_SUCCESS &&
        items > kernel_max)
      return failure(Status::resource_limit,
                     fmt::format("a work-group of {} work-items exceeds this kernel's CL_KERNEL_WORK_GROUP_SIZE = {}",
                                 items, kernel_max));
    cl_ulong local = 0;
    if (cl.clGetKernelWorkGroupInfo(kernel_, d, CL_KERNEL_LOCAL_MEM_SIZE, sizeof local, &local, nullptr) ==
            CL_SUCCESS &&
        local > local_mem_)
      return failure(Status::resource_limit,
                     fmt::format("the kernel uses {} bytes of local memory; the device has {}", local, local_mem_));
    std::size_t required[3] = {0, 0, 0};
    if (cl.clGetKernelWorkGroupInfo(kernel_, d, CL_KERNEL_COMPILE_WORK_GROUP_SIZE, sizeof required, required,
                                    nullptr) == CL_SUCCESS &&
        required[0] != 0 && (required[0] != block[0] || required[1] != block[1] || required[2] != block[2]))
      return failure(Status::launch_error,
                     fmt::format("the kernel's reqd_work_group_size({}, {}, {}) differs from block [{}, {}, {}]",
                                 required[0], required[1], required[2], block[0], block[1], block[2]));
    cl_uint nargs = 0;
    if (cl.clGetKernelInfo(kernel_, CL_KERNEL_NUM_ARGS, sizeof nargs, &nargs, nullptr) == CL_SUCCESS &&
        nargs != rq.arguments.size())
      return failure(Status::launch_error, fmt::format("kernel '{}' takes {} arguments; the spec declares {}", entry_,
                                                       nargs, rq.arguments.size()));
    return std::nullopt;
  }

  // Device buffers for the arguments, the host data copied in, and the
  // kernel's arguments set. Every buffer is written, inputs included: the
  // device then matches the host even after a kernel wrote to an input.
  std::optional<TrialResult> upload(const detail::WorkerRequest&, detail::HostArguments& args) {
    const ClApi& cl = api();
    if (mems_.size() < args.size()) {
      mems_.resize(args.size(), nullptr);
      mem_bytes_.resize(args.size(), 0);
    }
    for (std::size_t i = 0; i < args.size(); ++i) {
      const auto& a = args.argument(i);
      if (!args.is_buffer(i)) {
        cl_int err = cl.clSetKernelArg(kernel_, static_cast<cl_uint>(i), size_of(a.type), args.scalar(i));
        if (err != CL_SUCCESS)
          return failure(Status::launch_error, fmt::format("scalar argument {} '{}' ({}, {} bytes): {}", i, a.name,
                                                           to_string(a.type), size_of(a.type), error_name(err)));
        continue;
      }
      const std::size_t bytes = std::max<std::size_t>(1, args.bytes(i));
      if (bytes > max_alloc_)
        return failure(Status::resource_limit,
                       fmt::format("argument '{}' needs {} bytes; the device allocates at most {} at once "
                                   "(CL_DEVICE_MAX_MEM_ALLOC_SIZE)",
                                   a.name, bytes, max_alloc_));
      if (!mems_[i] || mem_bytes_[i] != bytes) {
        if (mems_[i]) cl.clReleaseMemObject(mems_[i]);
        mems_[i] = nullptr;
        cl_int err = CL_SUCCESS;
        mems_[i] = cl.clCreateBuffer(ctx_->context(), CL_MEM_READ_WRITE, bytes, nullptr, &err);
        if (err != CL_SUCCESS) {
          mems_[i] = nullptr;
          // A buffer of the size's, the same for every config, that the
          // device is too full for now says nothing about this config; one
          // the config sizes may be too big for the device on its own.
          TrialResult refused = failure(Status::resource_limit, fmt::format("clCreateBuffer for '{}' ({} bytes): {}",
                                                                            a.name, bytes, error_name(err)));
          if (is_memory_exhausted(err) && !a.sized_by_config) refused.fault = Fault::environment;
          return refused;
        }
        mem_bytes_[i] = bytes;
      }
      cl_int err = cl.clSetKernelArg(kernel_, static_cast<cl_uint>(i), sizeof(cl_mem), &mems_[i]);
      if (err != CL_SUCCESS)
        return failure(Status::launch_error,
                       fmt::format("buffer argument {} '{}': {} (is it declared as a __global pointer?)", i, a.name,
                                   error_name(err)));
      if (args.bytes(i) == 0) continue;
      err = cl.clEnqueueWriteBuffer(queue_, mems_[i], CL_TRUE, 0, args.bytes(i), args.data(i), 0, nullptr, nullptr);
      if (err != CL_SUCCESS) {
        poisoned_ = true;
        return failure(Status::launch_error, fmt::format("writing '{}' to the device: {}", a.name, error_name(err)));
      }
    }
    return std::nullopt;
  }

  void enqueue(const detail::WorkerRequest& rq, cl_event* ev) {
    std::size_t global[3], local[3];
    cl_uint dims = 1;
    for (cl_uint i = 0; i < 3; ++i) {
      global[i] = rq.launch.grid[i] * rq.launch.block[i];
      local[i] = rq.launch.block[i];
      if (rq.launch.grid[i] > 1 || rq.launch.block[i] > 1) dims = i + 1;
    }
    cl_int err = api().clEnqueueNDRangeKernel(queue_, kernel_, dims, nullptr, global, free_local_ ? nullptr : local, 0,
                                              nullptr, ev);
    if (err != CL_SUCCESS) throw ClFailure(err, "clEnqueueNDRangeKernel");
  }

  // A refused launch is the config's fault; a failure while running leaves
  // the context suspect, so the worker is replaced.
  TrialResult launch_failure(const ClFailure& e) {
    switch (e.code) {
      case CL_INVALID_WORK_GROUP_SIZE:
      case CL_INVALID_WORK_ITEM_SIZE:
      case CL_INVALID_GLOBAL_WORK_SIZE:
        return failure(Status::resource_limit, e.what());
      case CL_INVALID_KERNEL_ARGS:
      case CL_INVALID_ARG_SIZE:
      case CL_INVALID_ARG_VALUE:
      case CL_INVALID_WORK_DIMENSION:
        return failure(Status::launch_error, e.what());
      case CL_OUT_OF_RESOURCES:
        // NVIDIA refuses a launch needing more registers than the
        // work-group size allows this way; a fresh worker costs little.
        poisoned_ = true;
        return failure(Status::resource_limit, e.what());
      default:
        poisoned_ = true;
        return failure(Status::launch_error, e.what());
    }
  }

  int device_index_;
  std::unique_ptr<DeviceContext> ctx_;
  std::string init_error_;
  cl_command_queue queue_ = nullptr;
  std::size_t max_item_[3] = {1, 1, 1};
  cl_ulong local_mem_ = 0;
  cl_ulong max_alloc_ = ~cl_ulong{0};
  std::list<Program> programs_;
  cl_kernel kernel_ = nullptr;
  std::string entry_;
  bool free_local_ = false;  // let the driver choose the work-group size
  std::vector<cl_mem> mems_;
  std::vector<std::size_t> mem_bytes_;
  cl_mem flush_ = nullptr;
  std::uint64_t flush_bytes_ = 0;
  cl_uint flush_pattern_ = 0;
  bool poisoned_ = false;
};

}  // namespace

int run_worker(int in_fd, int out_fd, int device) {
  OpenClRunner runner(device);
  return detail::serve(in_fd, out_fd, runner);
}

}  // namespace tunekit::opencl
