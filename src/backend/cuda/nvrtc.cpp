#include <dlfcn.h>

#include <cstdlib>
#include <vector>

#include <fmt/format.h>

#include "backend/cuda/detail/nvrtc.hpp"

namespace tunekit::cuda {

namespace {

struct Loaded {
  Nvrtc table{};
  bool ok = false;
  std::string why;
};

Loaded load() {
  Loaded l;
  std::vector<std::string> names;
  if (const char* env = std::getenv("TUNEKIT_LIBNVRTC"); env && *env) names.emplace_back(env);
  names.insert(names.end(), {"libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so"});
  void* lib = nullptr;
  std::string errors;
  for (const auto& n : names) {
    lib = ::dlopen(n.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (lib) {
      l.table.library = n;
      break;
    }
    const char* e = ::dlerror();
    errors += fmt::format("{}{}", errors.empty() ? "" : "; ", e ? e : n);
  }
  if (!lib) {
    l.why = "no NVRTC library: " + errors;
    return l;
  }
  Nvrtc& t = l.table;
  const char* missing = nullptr;
  auto bind = [&](auto& slot, const char* name) {
    void* p = ::dlsym(lib, name);
    if (!p && !missing) missing = name;
    slot = reinterpret_cast<std::remove_reference_t<decltype(slot)>>(p);
  };
  bind(t.nvrtcGetErrorString, "nvrtcGetErrorString");
  bind(t.nvrtcVersion, "nvrtcVersion");
  bind(t.nvrtcCreateProgram, "nvrtcCreateProgram");
  bind(t.nvrtcDestroyProgram, "nvrtcDestroyProgram");
  bind(t.nvrtcCompileProgram, "nvrtcCompileProgram");
  bind(t.nvrtcGetCUBINSize, "nvrtcGetCUBINSize");
  bind(t.nvrtcGetCUBIN, "nvrtcGetCUBIN");
  bind(t.nvrtcGetProgramLogSize, "nvrtcGetProgramLogSize");
  bind(t.nvrtcGetProgramLog, "nvrtcGetProgramLog");
  bind(t.nvrtcAddNameExpression, "nvrtcAddNameExpression");
  bind(t.nvrtcGetLoweredName, "nvrtcGetLoweredName");
  if (missing) {
    l.why = fmt::format("{} lacks {}", t.library, missing);
    return l;
  }
  t.nvrtcVersion(&t.major, &t.minor);
  l.ok = true;
  return l;
}

const Loaded& loaded() {
  static const Loaded l = load();
  return l;
}

}  // namespace

const Nvrtc* nvrtc() { return loaded().ok ? &loaded().table : nullptr; }
const std::string& nvrtc_unavailable_reason() { return loaded().why; }

}  // namespace tunekit::cuda
