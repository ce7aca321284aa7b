#pragma once
// Running an external compiler (or build script) for a builder: its output
// becomes the build log, and any failure becomes Status::compile_error.
#include <filesystem>
#include <string>
#include <vector>

#include "tunekit/builder.hpp"

namespace tunekit::detail {

// Whose fault a failed build is, from its log and the signal that ended it.
Fault build_fault(const std::string& log, int signal);

// The first line of a build's log that says the machine stopped it (a full
// disk, no memory, a tool that cannot run), not a line of source the
// compiler quotes; "" when there is none.
std::string machine_trouble_line(const std::string& log);

// What tells one installed compiler from another under the same name: the
// file `name` runs (through $PATH and symbolic links, so c++ that became
// clang++ is another), its size and its modification time (an upgrade in
// place). "" when `name` runs no file (NVRTC, a library). Looked up once per
// name and process.
std::string compiler_identity(const std::string& name);

// What the compiler `name` runs is, wherever it is installed: the first line
// its --version prints ("g++ (Debian 12.2.0-14) 12.2.0") and the target its
// -dumpmachine names, and for a script (a wrapper) a digest of its text.
// The same release installed elsewhere, or at another time, is the same;
// the build cache's key stays compiler_identity (an install rebuilt in
// place builds anew). compiler_identity(name) when it cannot be run or
// answers neither; "" when `name` runs no file. Runs the compiler twice
// (each bounded to 30 s), once per name and process.
std::string compiler_release(const std::string& name);

// The compiler `spec`'s builds run: kernel.compiler, else the backend's
// default for its language (the CPU's reads $CXX or $CC).
std::string kernel_compiler(const Spec& spec);

// The identity of what `spec`'s builds compile with on the backend's device
// `device`: its backend's toolchain_identity where it has one (the host
// compiler's release, NVRTC's version, $CUDA_HOME's nvcc's release with its
// host compiler's, the OpenCL platform's and driver's versions), else
// compiler_identity(kernel_compiler(spec)). Part of spec_hash and of an MPI
// rank's hello.
std::string kernel_compiler_identity(const Spec& spec, int device = 0);

// Runs `argv` (no shell), killed past `limit` (BuildInput::timeout). Fills
// r.time and r.log; on failure sets r.status = compile_error, says why in
// the log (naming `tool`) and returns false. A build that runs out of time
// is the config's fault: a variant that takes that long to compile is one.
// `exit_code`, when given, receives the program's exit status (-1 when it
// did not exit by itself): a build helper says with it whose fault a
// failure is. `cwd`, when given, is the folder it runs in.
bool run_compiler(const std::vector<std::string>& argv, const std::string& tool, Seconds limit, BuildResult& r,
                  int* exit_code = nullptr, const std::filesystem::path& cwd = {});

}  // namespace tunekit::detail
