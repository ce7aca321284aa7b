#pragma once
// The OpenCL backend's pieces: device discovery, a context per device, the
// builder (a program binary per variant, cached by content hash) and the
// worker's kernel runner.
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "backend/opencl/detail/cl_api.hpp"
#include "builder/detail/cache_claims.hpp"
#include "tunekit/backend.hpp"

namespace tunekit::opencl {

// One device of one platform. Devices are numbered over all platforms, in
// the order the loader lists them: that number is BackendOptions::device.
struct DeviceRef {
  cl_platform_id platform = nullptr;
  cl_device_id device = nullptr;
  std::string platform_name;
  std::string device_name;
  cl_device_type type = 0;
};

// Every device, or an empty list and `why` (no loader, no platform ...).
std::vector<DeviceRef> enumerate_devices(std::string& why);
// Device `index`; throws std::runtime_error naming the devices there are.
DeviceRef find_device(int index);

std::string device_string(cl_device_id device, cl_device_info what);
// PoCL and other CPU drivers run kernels on the host's cores.
bool is_cpu(const DeviceRef& d);
// What identifies the compiler a binary came from: platform, device and
// driver names and versions. Part of every build's cache key.
std::string device_identity(const DeviceRef& d);
// The same for device `index` (BackendOptions::device), as the kernel's
// identity names its compiler (KernelTraits::toolchain_identity): trials
// measured with one driver are not another's. Looked up once per device and
// process; "opencl, no device N" where there is no such device.
std::string toolchain_identity(int index);

// A context and an in-order profiling queue on one device.
class DeviceContext {
 public:
  explicit DeviceContext(DeviceRef device);
  ~DeviceContext();
  DeviceContext(const DeviceContext&) = delete;
  DeviceContext& operator=(const DeviceContext&) = delete;

  const DeviceRef& ref() const { return ref_; }
  cl_device_id device() const { return ref_.device; }
  cl_context context() const { return context_; }

 private:
  DeviceRef ref_;
  cl_context context_ = nullptr;
};

// `tunekit devices` names: max_work_group_size, local_mem_bytes, ...
MachineInfo describe(const DeviceContext& ctx);

// A program built from source: the program, or nullptr and the build log.
struct SourceBuild {
  cl_program program = nullptr;
  cl_int error = CL_SUCCESS;
  std::string log;
};
SourceBuild build_from_source(const DeviceContext& ctx, const std::string& source, const std::string& options);

// The clBuildProgram options of a variant: its flags, then -DNAME=value for
// each define, then -I for the source's folder.
std::string build_options(const BuildInput& input);

// Builds each variant with clBuildProgram, in a process of its own
// (run_build), and keeps the program binary (CL_PROGRAM_BINARIES), named by
// the input's hash and the device's identity; the worker loads it with
// clCreateProgramWithBinary. The file names its entry (see ArtifactFile),
// as a CPU artifact's call shim does: a reference artifact is run with the
// trial's request, whose entry is the trial's kernel.
// An artifact file: a header line, "entry NAME", an empty line, then the
// driver's program binary.
struct ArtifactFile {
  std::string entry;
  std::vector<unsigned char> binary;
};
inline constexpr const char* kArtifactMagic = "tunekit-opencl-binary 1";
void write_artifact(const std::filesystem::path& path, const ArtifactFile& a);  // throws on I/O errors
ArtifactFile read_artifact(const std::filesystem::path& path);                  // throws if malformed

class OpenClBuilder final : public Builder {
 public:
  OpenClBuilder(std::shared_ptr<DeviceContext> ctx, int device, std::filesystem::path cache_dir, bool rebuild);
  BuildResult build(const BuildInput& input) override;

 private:
  std::shared_ptr<DeviceContext> ctx_;
  int device_;  // ctx_'s number, for the build process
  std::string identity_;
  std::filesystem::path cache_dir_;
  tunekit::detail::CacheClaims claims_;  // which variants the cache may serve
};

// `tunekit-worker opencl DEVICE build SOURCE OPTIONS ENTRY ARTIFACT`
// (BackendInfo::run_build): builds the variant in the file SOURCE with the
// clBuildProgram OPTIONS into ARTIFACT, and prints the build's log, with
// what the driver's compiler printed on stderr after it. Exit status 0 when
// built, 1 when the variant does not build, kNoDevice when the device
// cannot be opened here.
inline constexpr int kNoDevice = 2;
int run_build(int device, const std::vector<std::string>& args);

}  // namespace tunekit::opencl
