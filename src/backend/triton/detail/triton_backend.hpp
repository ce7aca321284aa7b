#pragma once
// The Triton backend: kernels are @triton.jit functions in Python files.
// tunekit never runs Triton in its own process: a pool of Python compile
// helpers builds variants ahead of measurement, in parallel, into a Triton
// cache shared with the device's Python worker, which verifies and times
// them (python/tunekit_triton). A config's values reach Python split into
// tl.constexpr meta-parameters and launch options (num_warps, num_stages,
// ...), by name, against the kernel's signature and the installed Triton.
#include <condition_variable>
#include <filesystem>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "core/detail/process.hpp"
#include "tunekit/backend.hpp"

namespace tunekit::triton {

// How tunekit runs Python: the interpreter ($TUNEKIT_PYTHON, else python3)
// and the folder holding the tunekit_triton package ($TUNEKIT_TRITON_PATH,
// else <bin>/../share/tunekit/python next to an installed tunekit, else the
// source tree's python/).
struct PythonSetup {
  std::string interpreter;
  std::filesystem::path package_dir;
};
PythonSetup python_setup();

// argv that runs `python3 -m tunekit_triton ARGS...` with the package found
// wherever python_setup() found it (no PYTHONPATH needed).
std::vector<std::string> python_command(const PythonSetup& py, const std::vector<std::string>& args);

// The device as `python3 -m tunekit_triton describe` reports it. Throws
// std::runtime_error saying what is missing (python3, torch, triton, a GPU).
MachineInfo describe_device(const PythonSetup& py, int device);

// Bytes a cold flush overwrites: 4x the L2, at least 256 MB (do_bench's).
std::uint64_t flush_bytes_for(const MachineInfo& machine);

// The load-time checks only Python can make (python3 -m tunekit_triton
// inspect): the kernel file imports, the entry is a @triton.jit function,
// each parameter is a tl.constexpr of it or a launch option, so is each
// key of kernel.constexprs, the arguments are its parameters, the reference
// function exists or the torch reference compiles. Throws InputError located
// at the spec key (or the kernel file's line and column). Skipped where
// python3 has no triton: the tune then says so. Skipped too where Python
// gives no readable answer (it fails, prints no JSON, or runs past 5
// minutes): the warning it returns says why (Spec::warnings).
std::vector<std::string> check_spec(const Spec& spec);

class TritonBuilder final : public Builder {
 public:
  TritonBuilder(std::filesystem::path dir, std::filesystem::path triton_cache, PythonSetup py, MachineInfo machine,
                const Spec* spec, bool rebuild, unsigned jobs, int device);
  ~TritonBuilder() override;
  BuildResult build(const BuildInput& input) override;

 private:
  BuildResult build_reference(const BuildInput& input, BuildResult r);
  std::unique_ptr<detail::Child> acquire();
  void release(std::unique_ptr<detail::Child> helper);

  std::filesystem::path dir_, triton_cache_;
  PythonSetup py_;
  MachineInfo machine_;
  const Spec* spec_;
  bool rebuild_;
  unsigned max_helpers_;
  int device_;
  std::mutex mutex_;
  std::condition_variable available_;
  std::vector<std::unique_ptr<detail::Child>> idle_;
  unsigned live_ = 0;
  std::set<std::string> built_;
};

}  // namespace tunekit::triton
