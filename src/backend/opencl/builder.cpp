#include <chrono>
#include <fstream>
#include <iterator>
#include <thread>

#include <fmt/format.h>

#include "backend/opencl/detail/opencl.hpp"
#include "builder/detail/compiler.hpp"
#include "core/detail/hash.hpp"

namespace tunekit::opencl {

namespace fs = std::filesystem;

SourceBuild build_from_source(const DeviceContext& ctx, const std::string& source, const std::string& options) {
  const ClApi& cl = api();
  SourceBuild b;
  const char* text = source.c_str();
  const std::size_t length = source.size();
  cl_program p = cl.clCreateProgramWithSource(ctx.context(), 1, &text, &length, &b.error);
  if (b.error != CL_SUCCESS) {
    b.log = "clCreateProgramWithSource: " + error_name(b.error);
    return b;
  }
  cl_device_id device = ctx.device();
  b.error = cl.clBuildProgram(p, 1, &device, options.c_str(), nullptr, nullptr);
  std::size_t n = 0;
  if (cl.clGetProgramBuildInfo(p, device, CL_PROGRAM_BUILD_LOG, 0, nullptr, &n) == CL_SUCCESS && n > 1) {
    b.log.assign(n, '\0');
    cl.clGetProgramBuildInfo(p, device, CL_PROGRAM_BUILD_LOG, n, b.log.data(), nullptr);
    while (!b.log.empty() && (b.log.back() == '\0' || b.log.back() == '\n')) b.log.pop_back();
  }
  if (b.error != CL_SUCCESS) {
    b.log = "clBuildProgram: " + error_name(b.error) + (b.log.empty() ? "" : "\n" + b.log);
    cl.clReleaseProgram(p);
    return b;
  }
  b.program = p;
  return b;
}

std::string build_options(const BuildInput& in) {
  std::string out;
  auto add = [&](const std::string& option) {
    if (!out.empty()) out += ' ';
    out += option;
  };
  for (const auto& f : in.flags) add(f);
  for (const auto& d : in.defines) add("-D" + d);
  // A kernel may #include files next to it.
  const fs::path dir = fs::path(in.source_name).parent_path();
  if (!dir.empty() && dir.string().find_first_of(" \t\"") == std::string::npos) add("-I" + dir.string());
  return out;
}

void write_artifact(const fs::path& path, const ArtifactFile& a) {
  std::ofstream f(path, std::ios::binary);
  f << kArtifactMagic << "\nentry " << a.entry << "\n\n";
  f.write(reinterpret_cast<const char*>(a.binary.data()), static_cast<std::streamsize>(a.binary.size()));
  if (!f) throw std::runtime_error("cannot write " + path.string());
}

ArtifactFile read_artifact(const fs::path& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) throw std::runtime_error("cannot read the program binary " + path.string());
  std::string magic, entry;
  std::getline(f, magic);
  std::getline(f, entry);
  std::string blank;
  std::getline(f, blank);
  if (magic != kArtifactMagic || entry.rfind("entry ", 0) != 0 || !blank.empty() || !f)
    throw std::runtime_error(path.string() + " is not a tunekit OpenCL artifact");
  ArtifactFile a;
  a.entry = entry.substr(6);
  a.binary.assign(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
  return a;
}

OpenClBuilder::OpenClBuilder(std::shared_ptr<DeviceContext> ctx, fs::path cache_dir, bool rebuild)
    : ctx_(std::move(ctx)),
      identity_(device_identity(ctx_->ref())),
      cache_dir_(std::move(cache_dir)),
      rebuild_(rebuild) {
  fs::create_directories(cache_dir_);
}

namespace {

// The names of the kernels a program defines, for a helpful message.
std::string kernel_names(cl_program p) {
  std::size_t n = 0;
  if (api().clGetProgramInfo(p, CL_PROGRAM_KERNEL_NAMES, 0, nullptr, &n) != CL_SUCCESS || n == 0) return {};
  std::string s(n, '\0');
  api().clGetProgramInfo(p, CL_PROGRAM_KERNEL_NAMES, n, s.data(), nullptr);
  while (!s.empty() && s.back() == '\0') s.pop_back();
  return s;
}

}  // namespace

BuildResult OpenClBuilder::build(const BuildInput& in) {
  const ClApi& cl = api();
  BuildResult r;
  const std::string options = build_options(in);
  // The binary depends on the compiler too, and the folder given as -I.
  const std::string hash = detail::Hasher().add(in.hash()).add(identity_).add(options).hex();
  r.artifact = {cache_dir_ / (hash + ".clbin"), hash};
  {
    std::lock_guard lock(mutex_);
    const bool rebuilt_already = built_.count(hash) > 0;
    if (fs::exists(r.artifact.path) && (!rebuild_ || rebuilt_already)) {
      r.cached = true;
      return r;
    }
    built_.insert(hash);
  }
  const auto t0 = std::chrono::steady_clock::now();
  std::string name;  // a C string literal's contents
  for (char c : in.source_name) {
    if (c == '"' || c == '\\') name += '\\';
    name += c;
  }
  const std::string source = fmt::format("#line 1 \"{}\"\n{}", name, in.source);
  SourceBuild b = build_from_source(*ctx_, source, options);
  r.log = std::move(b.log);
  if (!b.program) {
    r.status = Status::compile_error;
    r.time = std::chrono::steady_clock::now() - t0;
    return r;
  }
  struct Release {
    cl_program p;
    ~Release() { api().clReleaseProgram(p); }
  } release{b.program};

  // A missing entry is the variant's fault: report it now, not at launch.
  cl_int err = CL_SUCCESS;
  cl_kernel k = cl.clCreateKernel(b.program, in.entry.c_str(), &err);
  if (err != CL_SUCCESS) {
    r.status = Status::compile_error;
    const std::string names = kernel_names(b.program);
    r.log = fmt::format("clCreateKernel('{}'): {}{}{}", in.entry, error_name(err),
                        names.empty() ? std::string() : "; the program's kernels: " + names,
                        r.log.empty() ? std::string() : "\n" + r.log);
    r.time = std::chrono::steady_clock::now() - t0;
    return r;
  }
  cl.clReleaseKernel(k);

  std::size_t size = 0;
  err = cl.clGetProgramInfo(b.program, CL_PROGRAM_BINARY_SIZES, sizeof size, &size, nullptr);
  std::vector<unsigned char> binary(size);
  unsigned char* data = binary.data();
  if (err == CL_SUCCESS && size > 0)
    err = cl.clGetProgramInfo(b.program, CL_PROGRAM_BINARIES, sizeof data, &data, nullptr);
  if (err != CL_SUCCESS || size == 0) {
    r.status = Status::compile_error;
    r.log = "the driver gave no program binary (CL_PROGRAM_BINARIES): " + error_name(err) + "\n" + r.log;
    return r;
  }
  // Its own: two threads, or two tuners, may build the same variant at once.
  const fs::path tmp = cache_dir_ / fmt::format("{}.{}.tmp.clbin", hash, detail::unique_suffix());
  try {
    write_artifact(tmp, {in.entry, std::move(binary)});
  } catch (const std::exception& e) {
    r.status = Status::compile_error;
    r.log = e.what();
    return r;
  }
  fs::rename(tmp, r.artifact.path);  // atomic: a killed run never leaves half a binary
  r.time = std::chrono::steady_clock::now() - t0;
  return r;
}

}  // namespace tunekit::opencl
