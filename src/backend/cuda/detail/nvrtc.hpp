#pragma once
// NVRTC, loaded at run time with dlopen (libnvrtc.so.13, then .12) and
// declared here. It needs no GPU, so CUDA kernels build on any machine that
// has the library.
#include <cstddef>
#include <string>

namespace tunekit::cuda {

using nvrtcResult = int;
using nvrtcProgram = struct _nvrtcProgram*;
inline constexpr nvrtcResult NVRTC_SUCCESS = 0;

struct Nvrtc {
  int major = 0, minor = 0;  // nvrtcVersion
  std::string library;       // the file that was loaded
  const char* (*nvrtcGetErrorString)(nvrtcResult);
  nvrtcResult (*nvrtcVersion)(int*, int*);
  nvrtcResult (*nvrtcCreateProgram)(nvrtcProgram*, const char*, const char*, int, const char* const*,
                                    const char* const*);
  nvrtcResult (*nvrtcDestroyProgram)(nvrtcProgram*);
  nvrtcResult (*nvrtcCompileProgram)(nvrtcProgram, int, const char* const*);
  nvrtcResult (*nvrtcGetCUBINSize)(nvrtcProgram, std::size_t*);
  nvrtcResult (*nvrtcGetCUBIN)(nvrtcProgram, char*);
  nvrtcResult (*nvrtcGetProgramLogSize)(nvrtcProgram, std::size_t*);
  nvrtcResult (*nvrtcGetProgramLog)(nvrtcProgram, char*);
  nvrtcResult (*nvrtcAddNameExpression)(nvrtcProgram, const char*);
  nvrtcResult (*nvrtcGetLoweredName)(nvrtcProgram, const char*, const char**);
};

// NVRTC, loaded once ($TUNEKIT_LIBNVRTC, else libnvrtc.so.13, .12, .so);
// nullptr when none loads, and nvrtc_unavailable_reason() says why.
const Nvrtc* nvrtc();
const std::string& nvrtc_unavailable_reason();

}  // namespace tunekit::cuda
