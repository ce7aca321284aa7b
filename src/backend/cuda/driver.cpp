#include <dlfcn.h>

#include <cstdlib>
#include <initializer_list>

#include <fmt/format.h>

#include "backend/cuda/detail/driver.hpp"

namespace tunekit::cuda {

namespace {

struct Loaded {
  Driver table{};
  bool ok = false;
  std::string why;
};

// Each symbol under its versioned name first (what cuda.h's macros pick),
// then the plain one.
template <class F>
bool bind(void* lib, F& slot, std::initializer_list<const char*> names, std::string& missing) {
  for (const char* n : names)
    if (void* p = ::dlsym(lib, n)) {
      slot = reinterpret_cast<F>(p);
      return true;
    }
  missing = *names.begin();
  return false;
}

Loaded load() {
  Loaded l;
  const char* env = std::getenv("TUNEKIT_LIBCUDA");
  void* lib = ::dlopen(env && *env ? env : "libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    const char* e = ::dlerror();
    l.why = fmt::format("no CUDA driver (libcuda.so.1): {}", e ? e : "not found");
    return l;
  }
  Driver& d = l.table;
  std::string missing;
  const bool all =
      bind(lib, d.cuInit, {"cuInit"}, missing) && bind(lib, d.cuDriverGetVersion, {"cuDriverGetVersion"}, missing) &&
      bind(lib, d.cuGetErrorName, {"cuGetErrorName"}, missing) &&
      bind(lib, d.cuGetErrorString, {"cuGetErrorString"}, missing) &&
      bind(lib, d.cuDeviceGetCount, {"cuDeviceGetCount"}, missing) &&
      bind(lib, d.cuDeviceGet, {"cuDeviceGet"}, missing) &&
      bind(lib, d.cuDeviceGetName, {"cuDeviceGetName"}, missing) &&
      bind(lib, d.cuDeviceGetAttribute, {"cuDeviceGetAttribute"}, missing) &&
      bind(lib, d.cuDeviceTotalMem, {"cuDeviceTotalMem_v2", "cuDeviceTotalMem"}, missing) &&
      bind(lib, d.cuDevicePrimaryCtxRetain, {"cuDevicePrimaryCtxRetain"}, missing) &&
      bind(lib, d.cuDevicePrimaryCtxRelease, {"cuDevicePrimaryCtxRelease_v2", "cuDevicePrimaryCtxRelease"}, missing) &&
      bind(lib, d.cuCtxSetCurrent, {"cuCtxSetCurrent"}, missing) &&
      bind(lib, d.cuCtxSynchronize, {"cuCtxSynchronize"}, missing) &&
      bind(lib, d.cuModuleLoadData, {"cuModuleLoadData"}, missing) &&
      bind(lib, d.cuModuleUnload, {"cuModuleUnload"}, missing) &&
      bind(lib, d.cuModuleGetFunction, {"cuModuleGetFunction"}, missing) &&
      bind(lib, d.cuModuleGetGlobal, {"cuModuleGetGlobal_v2"}, missing) &&
      bind(lib, d.cuFuncGetAttribute, {"cuFuncGetAttribute"}, missing) &&
      bind(lib, d.cuFuncSetAttribute, {"cuFuncSetAttribute"}, missing) &&
      bind(lib, d.cuMemAlloc, {"cuMemAlloc_v2"}, missing) && bind(lib, d.cuMemFree, {"cuMemFree_v2"}, missing) &&
      bind(lib, d.cuMemcpyHtoD, {"cuMemcpyHtoD_v2"}, missing) &&
      bind(lib, d.cuMemcpyDtoH, {"cuMemcpyDtoH_v2"}, missing) &&
      bind(lib, d.cuMemcpyHtoDAsync, {"cuMemcpyHtoDAsync_v2"}, missing) &&
      bind(lib, d.cuMemcpyDtoHAsync, {"cuMemcpyDtoHAsync_v2"}, missing) &&
      bind(lib, d.cuMemcpyDtoDAsync, {"cuMemcpyDtoDAsync_v2"}, missing) &&
      bind(lib, d.cuMemsetD8Async, {"cuMemsetD8Async"}, missing) &&
      bind(lib, d.cuMemsetD16Async, {"cuMemsetD16Async"}, missing) &&
      bind(lib, d.cuMemsetD32Async, {"cuMemsetD32Async"}, missing) &&
      bind(lib, d.cuLaunchKernel, {"cuLaunchKernel"}, missing) &&
      bind(lib, d.cuStreamCreate, {"cuStreamCreate"}, missing) &&
      bind(lib, d.cuStreamSynchronize, {"cuStreamSynchronize"}, missing) &&
      bind(lib, d.cuStreamBeginCapture, {"cuStreamBeginCapture_v2"}, missing) &&
      bind(lib, d.cuStreamEndCapture, {"cuStreamEndCapture"}, missing) &&
      bind(lib, d.cuGraphInstantiateWithFlags, {"cuGraphInstantiateWithFlags"}, missing) &&
      bind(lib, d.cuGraphLaunch, {"cuGraphLaunch"}, missing) &&
      bind(lib, d.cuGraphExecDestroy, {"cuGraphExecDestroy"}, missing) &&
      bind(lib, d.cuGraphDestroy, {"cuGraphDestroy"}, missing) &&
      bind(lib, d.cuEventCreate, {"cuEventCreate"}, missing) &&
      bind(lib, d.cuEventRecord, {"cuEventRecord"}, missing) &&
      bind(lib, d.cuEventSynchronize, {"cuEventSynchronize"}, missing) &&
      bind(lib, d.cuEventElapsedTime, {"cuEventElapsedTime_v2", "cuEventElapsedTime"}, missing);
  if (!all) {
    l.why = "the CUDA driver lacks " + missing + " (too old?)";
    return l;
  }
  // Optional: older drivers lack them, and only clusters and tensor maps need them.
  std::string optional;
  bind(lib, d.cuLaunchKernelEx, {"cuLaunchKernelEx"}, optional);
  bind(lib, d.cuTensorMapEncodeTiled, {"cuTensorMapEncodeTiled"}, optional);
  if (CUresult r = d.cuInit(0); r != CUDA_SUCCESS) {
    const char* name = nullptr;
    d.cuGetErrorName(r, &name);
    l.why = fmt::format("cuInit failed: {}", name ? name : std::to_string(r));
    return l;
  }
  l.ok = true;
  return l;  // the library stays loaded for the life of the process
}

const Loaded& loaded() {
  static const Loaded l = load();
  return l;
}

}  // namespace

const Driver* driver() { return loaded().ok ? &loaded().table : nullptr; }

const std::string& driver_unavailable_reason() { return loaded().why; }

std::string describe(CUresult r) {
  const Driver* d = loaded().ok ? &loaded().table : nullptr;
  const char* name = nullptr;
  const char* text = nullptr;
  if (d) {
    d->cuGetErrorName(r, &name);
    d->cuGetErrorString(r, &text);
  }
  if (!name) return fmt::format("CUDA error {}", r);
  return text ? fmt::format("{}: {}", name, text) : std::string(name);
}

bool is_sticky(CUresult r) {
  switch (r) {
    case CUDA_ERROR_ILLEGAL_ADDRESS:
    case CUDA_ERROR_LAUNCH_TIMEOUT:
    case CUDA_ERROR_ASSERT:
    case CUDA_ERROR_HARDWARE_STACK_ERROR:
    case CUDA_ERROR_ILLEGAL_INSTRUCTION:
    case CUDA_ERROR_MISALIGNED_ADDRESS:
    case CUDA_ERROR_INVALID_ADDRESS_SPACE:
    case CUDA_ERROR_INVALID_PC:
    case CUDA_ERROR_LAUNCH_FAILED:
    case CUDA_ERROR_TENSOR_MEMORY_LEAK:
    case CUDA_ERROR_ECC_UNCORRECTABLE:
    case CUDA_ERROR_CONTEXT_IS_DESTROYED:
    case CUDA_ERROR_UNKNOWN:
      return true;
    default:
      return false;
  }
}

Status status_of_failed_call(CUresult r) {
  switch (r) {
    case CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES:
    case CUDA_ERROR_INVALID_CLUSTER_SIZE:
      return Status::resource_limit;
    case CUDA_ERROR_LAUNCH_TIMEOUT:
      return Status::timeout;
    default:
      return Status::launch_error;
  }
}

}  // namespace tunekit::cuda
