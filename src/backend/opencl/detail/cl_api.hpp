#pragma once
// The OpenCL entry points tunekit uses, loaded from libOpenCL.so.1 at run
// time: a tunekit binary runs (and says why OpenCL is unavailable) on a
// machine without an OpenCL loader. Only the header's prototypes are used.
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>

#include <string>

namespace tunekit::opencl {

struct ClApi {
#define TUNEKIT_CL_FUNCTIONS(X)                                                                                     \
  X(clGetPlatformIDs)                                                                                               \
  X(clGetPlatformInfo) X(clGetDeviceIDs) X(clGetDeviceInfo) X(clCreateContext) X(clReleaseContext)                  \
      X(clCreateCommandQueue) X(clReleaseCommandQueue) X(clCreateProgramWithSource) X(clCreateProgramWithBinary)    \
          X(clBuildProgram) X(clGetProgramInfo) X(clGetProgramBuildInfo) X(clReleaseProgram) X(clCreateKernel)      \
              X(clReleaseKernel) X(clGetKernelInfo) X(clGetKernelWorkGroupInfo) X(clSetKernelArg) X(clCreateBuffer) \
                  X(clReleaseMemObject) X(clEnqueueWriteBuffer) X(clEnqueueReadBuffer) X(clEnqueueFillBuffer)       \
                      X(clEnqueueNDRangeKernel) X(clFinish) X(clWaitForEvents) X(clGetEventInfo)                    \
                          X(clGetEventProfilingInfo) X(clReleaseEvent)
#define TUNEKIT_CL_POINTER(name) decltype(&::name) name = nullptr;
  TUNEKIT_CL_FUNCTIONS(TUNEKIT_CL_POINTER)
#undef TUNEKIT_CL_POINTER
};

// The loaded table, or nullptr with `why` set (no loader library, or a
// function missing from it). Loaded once per process; thread-safe.
const ClApi* load_api(std::string* why = nullptr);

// As load_api, but throws std::runtime_error saying why.
const ClApi& api();

// "CL_OUT_OF_RESOURCES (-5)".
std::string error_name(cl_int code);

// Whether an error says the memory of the device or the host is exhausted
// now: the machine's state (another process holds the memory), not a
// property of the config, so a buffer refused so is measured again later.
bool is_memory_exhausted(cl_int code);

// Throws std::runtime_error("<what>: <error name>") unless code is CL_SUCCESS.
void check(cl_int code, const char* what);

}  // namespace tunekit::opencl
