#include <map>
#include <mutex>

#include <fmt/format.h>

#include "backend/opencl/detail/opencl.hpp"

namespace tunekit::opencl {

namespace {

std::string trimmed(std::string s) {
  while (!s.empty() && (s.back() == '\0' || s.back() == ' ' || s.back() == '\n')) s.pop_back();
  std::size_t start = 0;
  while (start < s.size() && s[start] == ' ') ++start;
  return s.substr(start);
}

std::string platform_string(cl_platform_id p, cl_platform_info what) {
  const ClApi& cl = api();
  std::size_t n = 0;
  if (cl.clGetPlatformInfo(p, what, 0, nullptr, &n) != CL_SUCCESS || n == 0) return {};
  std::string s(n, '\0');
  if (cl.clGetPlatformInfo(p, what, n, s.data(), nullptr) != CL_SUCCESS) return {};
  return trimmed(std::move(s));
}

template <class T>
T device_value(cl_device_id d, cl_device_info what, T fallback = T{}) {
  T v{};
  if (api().clGetDeviceInfo(d, what, sizeof v, &v, nullptr) != CL_SUCCESS) return fallback;
  return v;
}

}  // namespace

std::string device_string(cl_device_id d, cl_device_info what) {
  const ClApi& cl = api();
  std::size_t n = 0;
  if (cl.clGetDeviceInfo(d, what, 0, nullptr, &n) != CL_SUCCESS || n == 0) return {};
  std::string s(n, '\0');
  if (cl.clGetDeviceInfo(d, what, n, s.data(), nullptr) != CL_SUCCESS) return {};
  return trimmed(std::move(s));
}

std::vector<DeviceRef> enumerate_devices(std::string& why) {
  const ClApi* cl = load_api(&why);
  if (!cl) return {};
  cl_uint np = 0;
  cl_int err = cl->clGetPlatformIDs(0, nullptr, &np);
  if (err == -1001 /* CL_PLATFORM_NOT_FOUND_KHR */ || (err == CL_SUCCESS && np == 0)) {
    why = "no OpenCL platform found (no ICD registered in /etc/OpenCL/vendors; install a driver, e.g. pocl-opencl-icd)";
    return {};
  }
  if (err != CL_SUCCESS) {
    why = "clGetPlatformIDs failed: " + error_name(err);
    return {};
  }
  std::vector<cl_platform_id> platforms(np);
  cl->clGetPlatformIDs(np, platforms.data(), nullptr);
  std::vector<DeviceRef> out;
  std::string errors;
  for (cl_platform_id p : platforms) {
    cl_uint nd = 0;
    err = cl->clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, 0, nullptr, &nd);
    if (err != CL_SUCCESS || nd == 0) {
      if (err != CL_SUCCESS && err != CL_DEVICE_NOT_FOUND)
        errors += "; " + platform_string(p, CL_PLATFORM_NAME) + ": " + error_name(err);
      continue;
    }
    std::vector<cl_device_id> devices(nd);
    cl->clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, nd, devices.data(), nullptr);
    for (cl_device_id d : devices) {
      DeviceRef r;
      r.platform = p;
      r.device = d;
      r.platform_name = platform_string(p, CL_PLATFORM_NAME);
      r.device_name = device_string(d, CL_DEVICE_NAME);
      r.type = device_value<cl_device_type>(d, CL_DEVICE_TYPE);
      out.push_back(std::move(r));
    }
  }
  if (out.empty()) why = fmt::format("{} OpenCL platform(s), but no device{}", np, errors);
  return out;
}

DeviceRef find_device(int index) {
  std::string why;
  auto devices = enumerate_devices(why);
  if (devices.empty()) throw std::runtime_error("the opencl backend has no device: " + why);
  if (index < 0 || static_cast<std::size_t>(index) >= devices.size()) {
    std::string list;
    for (std::size_t i = 0; i < devices.size(); ++i)
      list += fmt::format("\n  {}: {} / {}", i, devices[i].platform_name, devices[i].device_name);
    throw std::runtime_error(fmt::format("there is no OpenCL device {}; there are {}:{}", index, devices.size(), list));
  }
  return devices[static_cast<std::size_t>(index)];
}

std::string device_identity(const DeviceRef& d) {
  return fmt::format("{} | {} | {} | {} | {}", d.platform_name, platform_string(d.platform, CL_PLATFORM_VERSION),
                     d.device_name, device_string(d.device, CL_DEVICE_VERSION),
                     device_string(d.device, CL_DRIVER_VERSION));
}

std::string toolchain_identity(int index) {
  static std::mutex mutex;
  static std::map<int, std::string> known;
  const std::lock_guard lock(mutex);
  if (auto it = known.find(index); it != known.end()) return it->second;
  std::string id;
  try {
    id = "opencl " + device_identity(find_device(index));
  } catch (const std::exception&) {
    // Not empty, which would be no identity at all: trials read here are
    // none that a driver built (the tune itself says why it cannot run).
    id = fmt::format("opencl, no device {}", index);
  }
  return known[index] = id;
}

DeviceContext::DeviceContext(DeviceRef device) : ref_(std::move(device)) {
  cl_int err = CL_SUCCESS;
  const cl_context_properties props[] = {CL_CONTEXT_PLATFORM, reinterpret_cast<cl_context_properties>(ref_.platform),
                                         0};
  context_ = api().clCreateContext(props, 1, &ref_.device, nullptr, nullptr, &err);
  check(err, "clCreateContext");
}

DeviceContext::~DeviceContext() {
  if (context_) api().clReleaseContext(context_);
}

MachineInfo describe(const DeviceContext& ctx) {
  const cl_device_id d = ctx.device();
  MachineInfo m;
  m.device = fmt::format("opencl: {} / {}", ctx.ref().platform_name, ctx.ref().device_name);
  auto i64 = [](auto v) { return static_cast<std::int64_t>(v); };
  m.properties["max_work_group_size"] = i64(device_value<std::size_t>(d, CL_DEVICE_MAX_WORK_GROUP_SIZE));
  m.properties["local_mem_bytes"] = i64(device_value<cl_ulong>(d, CL_DEVICE_LOCAL_MEM_SIZE));
  m.properties["compute_units"] = i64(device_value<cl_uint>(d, CL_DEVICE_MAX_COMPUTE_UNITS));
  m.properties["global_mem_bytes"] = i64(device_value<cl_ulong>(d, CL_DEVICE_GLOBAL_MEM_SIZE));
  m.properties["l2_bytes"] = i64(device_value<cl_ulong>(d, CL_DEVICE_GLOBAL_MEM_CACHE_SIZE));
  const auto dims = device_value<cl_uint>(d, CL_DEVICE_MAX_WORK_ITEM_DIMENSIONS, 3);
  std::vector<std::size_t> sizes(std::max<cl_uint>(dims, 3), 1);
  api().clGetDeviceInfo(d, CL_DEVICE_MAX_WORK_ITEM_SIZES, dims * sizeof(std::size_t), sizes.data(), nullptr);
  for (int i = 0; i < 3; ++i) m.properties[fmt::format("max_work_item_sizes_{}", i)] = i64(sizes[i]);
  // The warp / wavefront / SIMD width, as a built kernel reports it; drivers
  // cache such a tiny build, so this costs little after the first time.
  SourceBuild probe =
      build_from_source(ctx, "__kernel void tunekit_probe(__global int* x) { x[get_global_id(0)] = 1; }", "");
  if (probe.program) {
    cl_int err = CL_SUCCESS;
    cl_kernel k = api().clCreateKernel(probe.program, "tunekit_probe", &err);
    std::size_t multiple = 0;
    if (err == CL_SUCCESS &&
        api().clGetKernelWorkGroupInfo(k, d, CL_KERNEL_PREFERRED_WORK_GROUP_SIZE_MULTIPLE, sizeof multiple, &multiple,
                                       nullptr) == CL_SUCCESS &&
        multiple > 0)
      m.properties["preferred_work_group_multiple"] = i64(multiple);
    if (k) api().clReleaseKernel(k);
    api().clReleaseProgram(probe.program);
  }
  return m;
}

bool is_cpu(const DeviceRef& d) { return (d.type & CL_DEVICE_TYPE_CPU) != 0; }

}  // namespace tunekit::opencl
