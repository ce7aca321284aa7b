#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <iterator>
#include <sstream>
#include <thread>

#include <fmt/format.h>

#include "backend/opencl/detail/opencl.hpp"
#include "builder/detail/compiler.hpp"
#include "core/detail/process.hpp"
#include "core/detail/hash.hpp"
#include "evaluator/detail/worker_evaluator.hpp"

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
    // A driver may refuse an option without a word in the log.
    const std::string refused = b.error == CL_INVALID_BUILD_OPTIONS ? " (options: " + options + ")" : "";
    b.log = "clBuildProgram: " + error_name(b.error) + refused + (b.log.empty() ? "" : "\n" + b.log);
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

OpenClBuilder::OpenClBuilder(std::shared_ptr<DeviceContext> ctx, int device, fs::path cache_dir, bool rebuild)
    : ctx_(std::move(ctx)),
      device_(device),
      identity_(device_identity(ctx_->ref())),
      cache_dir_(std::move(cache_dir)),
      claims_(rebuild) {
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

// What this process writes on its stderr from construction to text(): the
// driver's compiler prints there (PoCL's clang: "1 error generated.").
// Only for a process of its own, the build's: the redirection holds for
// every thread.
class StderrCapture {
 public:
  StderrCapture() : file_(std::tmpfile()) {
    std::fflush(stderr);
    if (file_) saved_ = ::dup(2);
    if (saved_ >= 0) ::dup2(::fileno(file_), 2);
  }
  ~StderrCapture() {
    restore();
    if (file_) std::fclose(file_);
  }
  StderrCapture(const StderrCapture&) = delete;
  StderrCapture& operator=(const StderrCapture&) = delete;

  std::string text() {
    restore();
    std::string out;
    if (!file_) return out;
    std::rewind(file_);
    char buf[4096];
    for (std::size_t n; (n = std::fread(buf, 1, sizeof buf, file_)) > 0;) out.append(buf, n);
    while (!out.empty() && out.back() == '\n') out.pop_back();
    return out;
  }

 private:
  void restore() {
    if (saved_ < 0) return;
    std::fflush(stderr);
    ::dup2(saved_, 2);
    ::close(saved_);
    saved_ = -1;
  }
  std::FILE* file_;
  int saved_ = -1;
};

// Builds `source` into the artifact at `path` (its entry `entry`): the
// status, and the log with what the compiler printed after it.
std::pair<Status, std::string> build_artifact(const DeviceContext& ctx, const std::string& source,
                                              const std::string& options, const std::string& entry,
                                              const fs::path& path) {
  const ClApi& cl = api();
  StderrCapture printed;
  SourceBuild b = build_from_source(ctx, source, options);
  std::string log = std::move(b.log);
  if (const std::string text = printed.text(); !text.empty()) log += (log.empty() ? "" : "\n") + text;
  if (!b.program) return {Status::compile_error, log};
  struct Release {
    cl_program p;
    ~Release() { api().clReleaseProgram(p); }
  } release{b.program};

  // A missing entry is the variant's fault: report it now, not at launch.
  cl_int err = CL_SUCCESS;
  cl_kernel k = cl.clCreateKernel(b.program, entry.c_str(), &err);
  if (err != CL_SUCCESS) {
    const std::string names = kernel_names(b.program);
    return {Status::compile_error, fmt::format("clCreateKernel('{}'): {}{}{}", entry, error_name(err),
                                               names.empty() ? std::string() : "; the program's kernels: " + names,
                                               log.empty() ? std::string() : "\n" + log)};
  }
  cl.clReleaseKernel(k);

  std::size_t size = 0;
  err = cl.clGetProgramInfo(b.program, CL_PROGRAM_BINARY_SIZES, sizeof size, &size, nullptr);
  std::vector<unsigned char> binary(size);
  unsigned char* data = binary.data();
  if (err == CL_SUCCESS && size > 0)
    err = cl.clGetProgramInfo(b.program, CL_PROGRAM_BINARIES, sizeof data, &data, nullptr);
  if (err != CL_SUCCESS || size == 0)
    return {Status::compile_error,
            "the driver gave no program binary (CL_PROGRAM_BINARIES): " + error_name(err) + "\n" + log};
  // Its own: two builds, of one tuner or of two, may write the same variant at once.
  const fs::path tmp =
      path.parent_path() / fmt::format("{}.{}.tmp.clbin", path.stem().string(), detail::unique_suffix());
  try {
    write_artifact(tmp, {entry, std::move(binary)});
    fs::rename(tmp, path);  // atomic: a killed run never leaves half a binary
  } catch (const std::exception& e) {
    std::error_code ec;
    fs::remove(tmp, ec);
    return {Status::compile_error, e.what()};
  }
  return {Status::ok, log};
}

}  // namespace

int run_build(int device, const std::vector<std::string>& args) {
  if (args.size() != 4) {
    fmt::print(stderr, "expected: tunekit-worker opencl DEVICE build SOURCE OPTIONS ENTRY ARTIFACT\n");
    return kNoDevice;
  }
  std::ifstream in(args[0], std::ios::binary);
  std::stringstream source;
  source << in.rdbuf();
  if (!in) {
    fmt::print("cannot read the variant's source {}\n", args[0]);
    return kNoDevice;
  }
  std::unique_ptr<DeviceContext> ctx;
  try {
    ctx = std::make_unique<DeviceContext>(find_device(device));
  } catch (const std::exception& e) {
    fmt::print("cannot open OpenCL device {} for the build: {}\n", device, e.what());
    return kNoDevice;
  }
  const auto [status, log] = build_artifact(*ctx, source.str(), args[1], args[2], args[3]);
  std::fputs(log.c_str(), stdout);
  return status == Status::ok ? 0 : 1;
}

BuildResult OpenClBuilder::build(const BuildInput& in) {
  BuildResult r;
  const std::string options = build_options(in);
  // The binary depends on the compiler too, and the folder given as -I.
  const std::string hash = detail::Hasher().add(in.hash()).add(identity_).add(options).hex();
  r.artifact = {cache_dir_ / (hash + ".clbin"), hash};
  if (claims_.cached(hash, {r.artifact.path})) {
    r.cached = true;
    return r;
  }
  std::string name;  // a C string literal's contents
  for (char c : in.source_name) {
    if (c == '"' || c == '\\') name += '\\';
    name += c;
  }
  // The driver compiles in a process of its own (run_build): what its
  // compiler prints on stderr goes to the variant's log, not to the user's
  // terminal, and a compiler that crashes costs one variant.
  const fs::path source = cache_dir_ / fmt::format("{}.{}.tmp.cl", hash, detail::unique_suffix());
  std::vector<std::string> argv;
  try {
    std::ofstream f(source, std::ios::binary);
    f << fmt::format("#line 1 \"{}\"\n{}", name, in.source);
    f.close();
    if (!f) throw std::runtime_error("cannot write " + source.string());
    argv = {fs::absolute(detail::find_worker()).string(),
            "opencl",
            std::to_string(device_),
            "build",
            fs::absolute(source).string(),
            options,
            in.entry,
            fs::absolute(r.artifact.path).string()};
  } catch (const std::exception& e) {
    r.status = Status::compile_error;
    r.fault = Fault::environment;
    r.log = e.what();
    std::error_code ec;
    fs::remove(source, ec);
    return r;
  }
  // The runtime gets the source as text, so a quoted #include is looked up
  // in the folder the build runs in before any -I: run in the kernel's own,
  // not in the user's (whose header of the same name would be compiled in,
  // unlike the one the build's hash covers), and so reach its headers where
  // -I cannot name the folder (a space in its path).
  const fs::path kernel_dir = fs::absolute(fs::path(in.source_name)).parent_path();
  int exit_code = 0;
  if (!detail::run_compiler(argv, "the OpenCL build", in.timeout, r, &exit_code, kernel_dir) && exit_code == kNoDevice)
    r.fault = Fault::environment;
  std::error_code ec;
  fs::remove(source, ec);
  return r;
}

}  // namespace tunekit::opencl
