#include "backend/opencl/detail/cl_api.hpp"

#include <dlfcn.h>

#include <mutex>
#include <stdexcept>

#include <fmt/format.h>

namespace tunekit::opencl {

namespace {

struct Loaded {
  ClApi api;
  bool ok = false;
  std::string why;
};

Loaded load() {
  Loaded l;
  void* h = nullptr;
  std::string errors;
  // The ICD loader's soname first; the unversioned name is a dev symlink.
  for (const char* name : {"libOpenCL.so.1", "libOpenCL.so"}) {
    h = ::dlopen(name, RTLD_NOW | RTLD_LOCAL);
    if (h) break;
    if (const char* e = ::dlerror()) errors += fmt::format("{}{}", errors.empty() ? "" : "; ", e);
  }
  if (!h) {
    l.why = "cannot load the OpenCL loader libOpenCL.so.1 (" + errors +
            "); install an OpenCL ICD loader and a driver, e.g. ocl-icd-libopencl1 and pocl-opencl-icd";
    return l;
  }
#define TUNEKIT_CL_LOAD(name)                                                  \
  l.api.name = reinterpret_cast<decltype(&::name)>(::dlsym(h, #name));         \
  if (!l.api.name) {                                                           \
    l.why = "libOpenCL.so.1 lacks " #name " (an OpenCL 1.2 loader is needed)"; \
    return l;                                                                  \
  }
  TUNEKIT_CL_FUNCTIONS(TUNEKIT_CL_LOAD)
#undef TUNEKIT_CL_LOAD
  l.ok = true;  // never dlclose: drivers keep threads running
  return l;
}

}  // namespace

const ClApi* load_api(std::string* why) {
  static const Loaded loaded = load();
  if (!loaded.ok) {
    if (why) *why = loaded.why;
    return nullptr;
  }
  return &loaded.api;
}

const ClApi& api() {
  std::string why;
  if (const ClApi* a = load_api(&why)) return *a;
  throw std::runtime_error("OpenCL is not available: " + why);
}

std::string error_name(cl_int code) {
  const char* name = "unknown OpenCL error";
  switch (code) {
#define E(x)   \
  case x:      \
    name = #x; \
    break;
    E(CL_SUCCESS)
    E(CL_DEVICE_NOT_FOUND) E(CL_DEVICE_NOT_AVAILABLE) E(CL_COMPILER_NOT_AVAILABLE) E(CL_MEM_OBJECT_ALLOCATION_FAILURE)
        E(CL_OUT_OF_RESOURCES) E(CL_OUT_OF_HOST_MEMORY) E(CL_PROFILING_INFO_NOT_AVAILABLE) E(CL_MEM_COPY_OVERLAP)
            E(CL_IMAGE_FORMAT_MISMATCH) E(CL_IMAGE_FORMAT_NOT_SUPPORTED) E(CL_BUILD_PROGRAM_FAILURE) E(CL_MAP_FAILURE)
                E(CL_MISALIGNED_SUB_BUFFER_OFFSET) E(CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST)
                    E(CL_COMPILE_PROGRAM_FAILURE) E(CL_LINKER_NOT_AVAILABLE) E(CL_LINK_PROGRAM_FAILURE)
                        E(CL_DEVICE_PARTITION_FAILED) E(CL_KERNEL_ARG_INFO_NOT_AVAILABLE) E(CL_INVALID_VALUE) E(
                            CL_INVALID_DEVICE_TYPE) E(CL_INVALID_PLATFORM) E(CL_INVALID_DEVICE) E(CL_INVALID_CONTEXT)
                            E(CL_INVALID_QUEUE_PROPERTIES) E(CL_INVALID_COMMAND_QUEUE) E(CL_INVALID_HOST_PTR)
                                E(CL_INVALID_MEM_OBJECT) E(CL_INVALID_IMAGE_FORMAT_DESCRIPTOR) E(CL_INVALID_IMAGE_SIZE)
                                    E(CL_INVALID_SAMPLER) E(CL_INVALID_BINARY) E(CL_INVALID_BUILD_OPTIONS)
                                        E(CL_INVALID_PROGRAM) E(CL_INVALID_PROGRAM_EXECUTABLE) E(CL_INVALID_KERNEL_NAME)
                                            E(CL_INVALID_KERNEL_DEFINITION) E(CL_INVALID_KERNEL) E(CL_INVALID_ARG_INDEX)
                                                E(CL_INVALID_ARG_VALUE) E(CL_INVALID_ARG_SIZE) E(CL_INVALID_KERNEL_ARGS)
                                                    E(CL_INVALID_WORK_DIMENSION) E(CL_INVALID_WORK_GROUP_SIZE)
                                                        E(CL_INVALID_WORK_ITEM_SIZE) E(CL_INVALID_GLOBAL_OFFSET)
                                                            E(CL_INVALID_EVENT_WAIT_LIST) E(CL_INVALID_EVENT) E(
                                                                CL_INVALID_OPERATION) E(CL_INVALID_GL_OBJECT)
                                                                E(CL_INVALID_BUFFER_SIZE) E(CL_INVALID_MIP_LEVEL) E(
                                                                    CL_INVALID_GLOBAL_WORK_SIZE) E(CL_INVALID_PROPERTY)
                                                                    E(CL_INVALID_IMAGE_DESCRIPTOR)
                                                                        E(CL_INVALID_COMPILER_OPTIONS)
                                                                            E(CL_INVALID_LINKER_OPTIONS)
                                                                                E(CL_INVALID_DEVICE_PARTITION_COUNT)
#undef E
                                                                                    case -1001
        : name = "CL_PLATFORM_NOT_FOUND_KHR";
    break;
    default:
      break;
  }
  return fmt::format("{} ({})", name, code);
}

void check(cl_int code, const char* what) {
  if (code != CL_SUCCESS) throw std::runtime_error(fmt::format("{}: {}", what, error_name(code)));
}

bool is_memory_exhausted(cl_int code) {
  return code == CL_MEM_OBJECT_ALLOCATION_FAILURE || code == CL_OUT_OF_RESOURCES || code == CL_OUT_OF_HOST_MEMORY;
}

}  // namespace tunekit::opencl
