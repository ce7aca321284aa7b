#pragma once
// The CUDA driver API, loaded from libcuda.so.1 at run time with dlopen, and
// declared here (only what tunekit calls): tunekit builds without the CUDA
// toolkit, and one binary runs on machines with and without a GPU.
#include <cstddef>  // offsetof
#include <cstdint>
#include <string>

#include "tunekit/status.hpp"

namespace tunekit::cuda {

using CUresult = int;
using CUdevice = int;
using CUdeviceptr = unsigned long long;
using CUcontext = struct CUctx_st*;
using CUmodule = struct CUmod_st*;
using CUfunction = struct CUfunc_st*;
using CUstream = struct CUstream_st*;
using CUevent = struct CUevent_st*;
using CUgraph = struct CUgraph_st*;
using CUgraphExec = struct CUgraphExec_st*;

// Result codes tunekit looks at (cuda.h's CUresult values).
enum : int {
  CUDA_SUCCESS = 0,
  CUDA_ERROR_INVALID_VALUE = 1,
  CUDA_ERROR_OUT_OF_MEMORY = 2,
  CUDA_ERROR_NOT_INITIALIZED = 3,
  CUDA_ERROR_NO_DEVICE = 100,
  CUDA_ERROR_INVALID_IMAGE = 200,
  CUDA_ERROR_NO_BINARY_FOR_GPU = 209,
  CUDA_ERROR_ECC_UNCORRECTABLE = 214,
  CUDA_ERROR_NOT_FOUND = 500,
  CUDA_ERROR_NOT_READY = 600,
  CUDA_ERROR_ILLEGAL_ADDRESS = 700,
  CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES = 701,
  CUDA_ERROR_LAUNCH_TIMEOUT = 702,
  CUDA_ERROR_CONTEXT_IS_DESTROYED = 709,
  CUDA_ERROR_ASSERT = 710,
  CUDA_ERROR_HARDWARE_STACK_ERROR = 714,
  CUDA_ERROR_ILLEGAL_INSTRUCTION = 715,
  CUDA_ERROR_MISALIGNED_ADDRESS = 716,
  CUDA_ERROR_INVALID_ADDRESS_SPACE = 717,
  CUDA_ERROR_INVALID_PC = 718,
  CUDA_ERROR_LAUNCH_FAILED = 719,
  CUDA_ERROR_TENSOR_MEMORY_LEAK = 721,
  CUDA_ERROR_NOT_SUPPORTED = 801,
  CUDA_ERROR_INVALID_CLUSTER_SIZE = 912,
  CUDA_ERROR_UNKNOWN = 999,
};

// CUdevice_attribute values.
enum DeviceAttribute : int {
  kMaxThreadsPerBlock = 1,
  kMaxBlockDimX = 2,
  kMaxBlockDimY = 3,
  kMaxBlockDimZ = 4,
  kMaxGridDimX = 5,
  kMaxGridDimY = 6,
  kMaxGridDimZ = 7,
  kMaxSharedMemoryPerBlock = 8,
  kWarpSize = 10,
  kMaxRegistersPerBlock = 12,
  kClockRate = 13,
  kMultiprocessorCount = 16,
  kMemoryClockRate = 36,
  kGlobalMemoryBusWidth = 37,
  kL2CacheSize = 38,
  kMaxThreadsPerMultiprocessor = 39,
  kComputeCapabilityMajor = 75,
  kComputeCapabilityMinor = 76,
  kMaxSharedMemoryPerMultiprocessor = 81,
  kMaxRegistersPerMultiprocessor = 82,
  kMaxSharedMemoryPerBlockOptin = 97,
  kMaxBlocksPerMultiprocessor = 106,
};

// CUfunction_attribute values.
enum FunctionAttribute : int {
  kFuncMaxThreadsPerBlock = 0,
  kFuncSharedSizeBytes = 1,
  kFuncConstSizeBytes = 2,
  kFuncLocalSizeBytes = 3,
  kFuncNumRegs = 4,
  kFuncMaxDynamicSharedSizeBytes = 8,
  kFuncNonPortableClusterSizeAllowed = 14,
};

// ---- Launches with attributes (cuLaunchKernelEx, CUDA 11.8 on) -------------
// cuda.h's CUlaunchAttributeID values tunekit sets.
inline constexpr int kLaunchAttributeClusterDimension = 4;  // CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION

// CUlaunchAttributeValue: a 64-byte union (with pointers in it, so 8-byte
// aligned); tunekit fills only clusterDim.
union CUlaunchAttributeValue {
  char pad[64];
  struct {
    unsigned x, y, z;
  } clusterDim;
  void* align_;
};
// CUlaunchAttribute_st: the id, padding to 8 bytes, the value.
struct CUlaunchAttribute {
  int id;
  char pad[8 - sizeof(int)];
  CUlaunchAttributeValue value;
};
// CUlaunchConfig_st.
struct CUlaunchConfig {
  unsigned gridDimX, gridDimY, gridDimZ;
  unsigned blockDimX, blockDimY, blockDimZ;
  unsigned sharedMemBytes;
  CUstream hStream;
  CUlaunchAttribute* attrs;
  unsigned numAttrs;
};
static_assert(sizeof(CUlaunchAttributeValue) == 64 && alignof(CUlaunchAttributeValue) == 8);
static_assert(sizeof(CUlaunchAttribute) == 72 && offsetof(CUlaunchAttribute, value) == 8);
static_assert(sizeof(CUlaunchConfig) == 56 && offsetof(CUlaunchConfig, hStream) == 32 &&
              offsetof(CUlaunchConfig, attrs) == 40 && offsetof(CUlaunchConfig, numAttrs) == 48);

// ---- Tensor maps (cuTensorMapEncodeTiled, CUDA 12.0 on) ---------------------
// CUtensorMap: 128 opaque bytes. cuda.h aligns it to 64 bytes (CUDA 12) or
// 128 (CUDA 13); 128 satisfies both.
struct alignas(128) CUtensorMap {
  std::uint64_t opaque[16];
};
static_assert(sizeof(CUtensorMap) == 128);
// CUtensorMapDataType values.
enum TensorMapDataType : int {
  kTensorMapUint8 = 0,
  kTensorMapUint16 = 1,
  kTensorMapUint32 = 2,
  kTensorMapInt32 = 3,
  kTensorMapUint64 = 4,
  kTensorMapInt64 = 5,
  kTensorMapFloat16 = 6,
  kTensorMapFloat32 = 7,
  kTensorMapFloat64 = 8,
  kTensorMapBfloat16 = 9,
};
// CUtensorMapInterleave, CUtensorMapSwizzle, CUtensorMapL2promotion and
// CUtensorMapFloatOOBfill values.
inline constexpr int kTensorMapInterleaveNone = 0;
inline constexpr int kTensorMapSwizzleNone = 0, kTensorMapSwizzle32B = 1, kTensorMapSwizzle64B = 2,
                     kTensorMapSwizzle128B = 3;
inline constexpr int kTensorMapL2PromotionNone = 0, kTensorMapL2Promotion64B = 1, kTensorMapL2Promotion128B = 2,
                     kTensorMapL2Promotion256B = 3;
inline constexpr int kTensorMapOobFillNone = 0;               // out-of-bounds elements read as zero
inline constexpr int kTensorMapOobFillNanRequestZeroFma = 1;  // ... as NaN

inline constexpr unsigned kStreamNonBlocking = 0x1;
inline constexpr unsigned kEventDefault = 0x0;
inline constexpr int kStreamCaptureModeThreadLocal = 1;

struct Driver {
  CUresult (*cuInit)(unsigned);
  CUresult (*cuDriverGetVersion)(int*);
  CUresult (*cuGetErrorName)(CUresult, const char**);
  CUresult (*cuGetErrorString)(CUresult, const char**);
  CUresult (*cuDeviceGetCount)(int*);
  CUresult (*cuDeviceGet)(CUdevice*, int);
  CUresult (*cuDeviceGetName)(char*, int, CUdevice);
  CUresult (*cuDeviceGetAttribute)(int*, int, CUdevice);
  CUresult (*cuDeviceTotalMem)(std::size_t*, CUdevice);
  CUresult (*cuDevicePrimaryCtxRetain)(CUcontext*, CUdevice);
  CUresult (*cuDevicePrimaryCtxRelease)(CUdevice);
  CUresult (*cuCtxSetCurrent)(CUcontext);
  CUresult (*cuCtxSynchronize)();
  CUresult (*cuModuleLoadData)(CUmodule*, const void*);
  CUresult (*cuModuleUnload)(CUmodule);
  CUresult (*cuModuleGetFunction)(CUfunction*, CUmodule, const char*);
  CUresult (*cuModuleGetGlobal)(CUdeviceptr*, std::size_t*, CUmodule, const char*);
  CUresult (*cuFuncGetAttribute)(int*, int, CUfunction);
  CUresult (*cuFuncSetAttribute)(CUfunction, int, int);
  CUresult (*cuMemAlloc)(CUdeviceptr*, std::size_t);
  CUresult (*cuMemFree)(CUdeviceptr);
  CUresult (*cuMemcpyHtoD)(CUdeviceptr, const void*, std::size_t);
  CUresult (*cuMemcpyDtoH)(void*, CUdeviceptr, std::size_t);
  CUresult (*cuMemcpyHtoDAsync)(CUdeviceptr, const void*, std::size_t, CUstream);
  CUresult (*cuMemcpyDtoHAsync)(void*, CUdeviceptr, std::size_t, CUstream);
  CUresult (*cuMemcpyDtoDAsync)(CUdeviceptr, CUdeviceptr, std::size_t, CUstream);
  CUresult (*cuMemsetD8Async)(CUdeviceptr, unsigned char, std::size_t, CUstream);
  CUresult (*cuMemsetD16Async)(CUdeviceptr, unsigned short, std::size_t, CUstream);
  CUresult (*cuMemsetD32Async)(CUdeviceptr, unsigned int, std::size_t, CUstream);
  CUresult (*cuLaunchKernel)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, CUstream,
                             void**, void**);
  CUresult (*cuStreamCreate)(CUstream*, unsigned);
  CUresult (*cuStreamSynchronize)(CUstream);
  CUresult (*cuStreamBeginCapture)(CUstream, int);
  CUresult (*cuStreamEndCapture)(CUstream, CUgraph*);
  CUresult (*cuGraphInstantiateWithFlags)(CUgraphExec*, CUgraph, unsigned long long);
  CUresult (*cuGraphLaunch)(CUgraphExec, CUstream);
  CUresult (*cuGraphExecDestroy)(CUgraphExec);
  CUresult (*cuGraphDestroy)(CUgraph);
  CUresult (*cuEventCreate)(CUevent*, unsigned);
  CUresult (*cuEventRecord)(CUevent, CUstream);
  CUresult (*cuEventSynchronize)(CUevent);
  CUresult (*cuEventElapsedTime)(float*, CUevent, CUevent);
  // Optional (nullptr when the driver lacks them): a trial that needs one
  // fails with a launch_error saying so.
  CUresult (*cuLaunchKernelEx)(const CUlaunchConfig*, CUfunction, void**, void**);
  CUresult (*cuTensorMapEncodeTiled)(CUtensorMap*, int data_type, unsigned rank, void* global_address,
                                     const std::uint64_t* global_dim, const std::uint64_t* global_strides,
                                     const unsigned* box_dim, const unsigned* element_strides, int interleave,
                                     int swizzle, int l2_promotion, int oob_fill);
};

// The driver, loaded and initialised (cuInit) once; nullptr when libcuda is
// missing or cuInit fails. `why` then says which.
const Driver* driver();
const std::string& driver_unavailable_reason();

// "CUDA_ERROR_ILLEGAL_ADDRESS: an illegal memory access was encountered".
std::string describe(CUresult r);

// Errors after which the context is unusable: every later call fails, so the
// worker must be replaced.
bool is_sticky(CUresult r);

// The status a failed launch or synchronisation gives its trial. A launch
// the device refuses for its resources is resource_limit; one that the
// driver's watchdog stopped (a GPU that drives a display) ran too long, a
// timeout of the config's own, though not at tunekit's limit.
Status status_of_failed_call(CUresult r);

}  // namespace tunekit::cuda
