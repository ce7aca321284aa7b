// The Triton backend's entry points: where Python is, the device as Python
// sees it, the load-time checks, and an evaluator talking to the device's
// Python worker.
#include "backend/triton/detail/triton_backend.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "backend/detail/registry.hpp"
#include "core/detail/process.hpp"
#include "core/detail/text.hpp"
#include "evaluator/detail/worker_evaluator.hpp"

namespace tunekit::triton {

namespace fs = std::filesystem;
using json = nlohmann::json;

PythonSetup python_setup() {
  PythonSetup py;
  const char* interpreter = std::getenv("TUNEKIT_PYTHON");
  py.interpreter = detail::on_path(interpreter && *interpreter ? interpreter : "python3");
  std::vector<fs::path> candidates;
  if (const char* p = std::getenv("TUNEKIT_TRITON_PATH"); p && *p) candidates.emplace_back(p);
  std::error_code ec;
  const fs::path self = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) candidates.push_back(self.parent_path().parent_path() / "share" / "tunekit" / "python");
  // A program built against the installed package: the package's own copy,
  // beside its worker (PREFIX/libexec/tunekit/tunekit-worker), never the
  // source tree it was built from, which may be gone or of another version.
  if (const std::string& worker = detail::noted_package_worker(); !worker.empty())
    candidates.push_back(fs::path(worker).parent_path().parent_path().parent_path() / "share" / "tunekit" / "python");
  if (detail::runs_from_build_tree()) candidates.emplace_back(TUNEKIT_SOURCE_PYTHON_DIR);
  for (const auto& c : candidates)
    if (fs::exists(c / "tunekit_triton" / "__main__.py", ec)) {
      py.package_dir = c;
      return py;
    }
  py.package_dir = candidates.front();  // the error names where it looked first
  return py;
}

std::vector<std::string> python_command(const PythonSetup& py, const std::vector<std::string>& args) {
  std::vector<std::string> argv{py.interpreter, "-c",
                                "import sys; sys.path.insert(0, sys.argv.pop(1)); "
                                "from tunekit_triton.__main__ import main; sys.exit(main())",
                                py.package_dir.string()};
  argv.insert(argv.end(), args.begin(), args.end());
  return argv;
}

namespace {

// How long `python3 -m tunekit_triton inspect` may take (importing torch
// and Triton, then the kernel file) before the load-time checks are skipped.
constexpr std::chrono::seconds kInspectTimeout{300};

// The last line of `output` that is a JSON object: Python may print
// warnings before it.
std::optional<json> last_json_line(const std::string& output) {
  std::size_t end = output.size();
  while (end > 0) {
    std::size_t start = output.rfind('\n', end - 1);
    start = start == std::string::npos ? 0 : start + 1;
    std::string line = output.substr(start, end - start);
    if (!line.empty() && line.front() == '{') try {
        return json::parse(line);
      } catch (const std::exception&) {
      }
    if (start == 0) break;
    end = start - 1;
  }
  return std::nullopt;
}

std::string tail(const std::string& text, std::size_t n = 1500) {
  return text.size() > n ? "..." + text.substr(text.size() - n) : text;
}

// What a failed Python command says: a traceback's last line (the
// exception, "ModuleNotFoundError: No module named 'torch'") is the reason;
// the frames above it are tunekit's own, and no use to the user.
std::string python_failure(const std::string& output) {
  const std::size_t end = output.find_last_not_of(" \n\r");
  if (output.find("Traceback (most recent call last)") == std::string::npos || end == std::string::npos)
    return tail(output);
  const std::size_t newline = output.rfind('\n', end);
  const std::size_t start = newline == std::string::npos ? 0 : newline + 1;
  return output.substr(start, end + 1 - start);
}

}  // namespace

MachineInfo describe_device(const PythonSetup& py, int device) {
  detail::ProcessResult r;
  try {
    r = detail::run_process(python_command(py, {"describe", "--device", std::to_string(device)}),
                            std::chrono::seconds(300));
  } catch (const std::exception& e) {
    throw std::runtime_error("the triton backend cannot start " + py.interpreter +
                             " (set TUNEKIT_PYTHON): " + e.what());
  }
  auto j = r.exit_code == 0 ? last_json_line(r.output) : std::nullopt;
  if (!j)
    throw std::runtime_error(
        fmt::format("the triton backend needs {} with torch and triton, and a GPU (or "
                    "TRITON_INTERPRET=1; TUNEKIT_PYTHON names another Python); `python3 -m tunekit_triton "
                    "describe` failed{}: {}",
                    py.interpreter, r.timed_out ? " (timed out)" : "", python_failure(r.output)));
  MachineInfo m;
  m.device = j->value("device", std::string("triton device"));
  for (const auto& [k, v] : j->items()) {
    if (k == "device") continue;
    if (v.is_number_integer()) m.properties[k] = Value(v.get<std::int64_t>());
    else if (v.is_number()) m.properties[k] = Value(v.get<double>());
    else if (v.is_string()) m.properties[k] = Value(v.get<std::string>());
  }
  return m;
}

std::uint64_t flush_bytes_for(const MachineInfo& machine) {
  std::uint64_t l2 = 0;
  if (auto it = machine.properties.find("l2_bytes"); it != machine.properties.end() && it->second.is_int())
    l2 = static_cast<std::uint64_t>(it->second.as_int());
  return std::max<std::uint64_t>(4 * l2, 256ull << 20);
}

namespace {

// Where in the spec an inspect error belongs (python/tunekit_triton/
// inspect_kernel.py names the key by `what` and `name`); line 0 for a
// problem of a Python file itself.
SourceLocation spec_location(const Spec& spec, const json& error) {
  const std::string what = error.value("what", "");
  const std::string name = error.value("name", "");
  if (what == "entry") return spec.kernel.entry_where;
  if (what == "reference") return spec.reference.where;
  if (what == "torch") {
    SourceLocation w = spec.reference.where;
    // The column Python stopped at is within the expression; 0 when it is
    // not on the expression's first line.
    if (const int column = error.value("column", 0); column > 0) w.column += column - 1;
    return w;
  }
  if (what == "parameter")
    for (const auto& p : spec.parameters)
      if (p.name == name) return p.where;
  if (what == "constexprs")
    for (const auto& c : spec.kernel.constexprs)
      if (c.name == name) return c.where;
  if (what == "argument")
    for (const auto& a : spec.arguments)
      if (a.name == name) return a.where;
  if (what == "setup")
    for (const auto& a : spec.arguments)
      if (a.setup == name) return a.where;
  return {};
}

// What a warning may quote of Python's output: one line, short.
std::string quoted(std::string text) {
  std::replace(text.begin(), text.end(), '\n', ' ');
  std::replace(text.begin(), text.end(), '\r', ' ');
  const std::size_t first = text.find_first_not_of(' '), last = text.find_last_not_of(' ');
  text = first == std::string::npos ? "" : text.substr(first, last + 1 - first);
  if (text.empty()) return "nothing";
  return "'" + (text.size() > 200 ? text.substr(0, 200) + "..." : text) + "'";
}

}  // namespace

std::vector<std::string> check_spec(const Spec& spec) {
  const PythonSetup py = python_setup();
  json rq{{"source", spec.kernel.source.string()}, {"entry", spec.kernel.entry}};
  json params = json::array(), constexprs = json::array(), args = json::array(), setups = json::array();
  for (const auto& p : spec.parameters) params.push_back(p.name);
  for (const auto& c : spec.kernel.constexprs) constexprs.push_back(c.name);
  for (const auto& a : spec.arguments) {
    if (a.passed) args.push_back(a.name);
    if (!a.setup.empty()) setups.push_back(a.setup);
  }
  rq["parameters"] = params;
  rq["constexprs"] = constexprs;
  rq["arguments"] = args;
  rq["setups"] = setups;
  if (spec.reference.kind == ReferenceSpec::Kind::function) {
    if (!spec.reference.torch_expression.empty()) rq["torch"] = spec.reference.torch_expression;
    else
      rq["reference"] = {
          {"source", (spec.reference.source.empty() ? spec.kernel.source : spec.reference.source).string()},
          {"entry", spec.reference.entry}};
  }
  detail::ProcessResult r;
  const fs::path request = detail::temp_folder() / fmt::format("tunekit-inspect-{}.json", ::getpid());
  { std::ofstream(request) << rq.dump(); }
  try {
    auto argv = python_command(py, {"inspect"});
    // run_process has no stdin: the shell-free way is a file on stdin via python itself
    argv[2] =
        "import sys; sys.stdin = open(sys.argv.pop(1)); sys.path.insert(0, sys.argv.pop(1)); "
        "from tunekit_triton.__main__ import main; sys.exit(main())";
    argv.insert(argv.begin() + 3, request.string());
    r = detail::run_process(argv, kInspectTimeout);
  } catch (const std::exception&) {
    fs::remove(request);
    return {};  // no python3 here: the tune says so when it starts the backend
  }
  fs::remove(request);
  auto j = r.exit_code == 0 ? last_json_line(r.output) : std::nullopt;
  if (!j && r.interrupted) return {};  // the user stopped tunekit
  if (!j) {
    // Python ran but gave no answer: the tune goes on (the compiles check
    // the names again), and says the check did not run.
    const std::string command = py.interpreter + " -m tunekit_triton inspect";
    const SourceLocation& w = spec.kernel.entry_where;
    const std::string why = r.timed_out ? fmt::format("{} did not finish within {} s", command, kInspectTimeout.count())
                            : r.exit_code != 0 ? fmt::format("{} failed ({}): {}", command,
                                                             r.signal ? "killed by " + detail::describe_signal(r.signal)
                                                                      : "exit code " + std::to_string(r.exit_code),
                                                             quoted(python_failure(r.output)))
                                               : fmt::format("the output of {} was unreadable (no JSON answer): {}",
                                                             command, quoted(tail(r.output, 200)));
    return {fmt::format(
        "{}the load-time check of kernel.entry '{}' was skipped: {}; a wrong parameter name will fail at compile "
        "instead",
        w.file.empty() ? "" : w.str() + ": ", spec.kernel.entry, why)};
  }
  if (j->contains("triton_missing")) return {};  // the tune says so when it starts the backend
  const auto& errors = (*j)["errors"];
  if (errors.empty()) return {};
  std::string message;
  SourceLocation where;
  for (const auto& e : errors) {
    SourceLocation here = spec_location(spec, e);
    if (here.line == 0) {
      // The spec is not loaded yet (spec.file is empty): its kernel entry
      // names the file.
      const int line = e.value("line", 0);
      here = line > 0
                 ? SourceLocation{e.value("file", spec.kernel.source.string()), line, std::max(1, e.value("column", 1))}
                 : SourceLocation{spec.kernel.entry_where.file, 0, 0};
    }
    if (message.empty()) {
      where = here;  // the error's own location; the others follow, each with theirs
      message = e.value("message", "");
    } else {
      message += "\n" + (here.line ? here.str() + ": " : "") + e.value("message", "");
    }
  }
  throw InputError(where, message);
}

namespace {

class TritonBackend final : public Backend {
 public:
  TritonBackend(BackendOptions options, PythonSetup py, MachineInfo machine)
      : options_(std::move(options)), py_(std::move(py)), machine_(std::move(machine)) {}
  std::string_view name() const override { return "triton"; }
  const MachineInfo& machine() const override { return machine_; }
  std::unique_ptr<Builder> make_builder() override {
    return std::make_unique<TritonBuilder>(options_.work_dir / "triton" / "build", triton_cache(), py_, machine_,
                                           options_.spec, options_.rebuild, options_.jobs, options_.device);
  }
  std::unique_ptr<Evaluator> make_evaluator() override {
    return tunekit::detail::WorkerEvaluator::with_command(
        options_.work_dir / "triton" / fmt::format("device{}", options_.device),
        python_command(py_,
                       {"worker", "--device", std::to_string(options_.device), "--cache", triton_cache().string()}),
        flush_bytes_for(machine_), options_.rebuild);
  }
  // The compile helpers run on the host cores while the GPU measures.
  bool measures_while_building() const override { return true; }

 private:
  // One Triton cache per device, shared by its compile helpers and worker.
  fs::path triton_cache() const { return options_.work_dir / "triton" / fmt::format("cache{}", options_.device); }

  BackendOptions options_;
  PythonSetup py_;
  MachineInfo machine_;
};

std::unique_ptr<Backend> make_triton_backend(const BackendOptions& options) {
  PythonSetup py = python_setup();
  MachineInfo machine = describe_device(py, options.device);
  return std::make_unique<TritonBackend>(options, std::move(py), std::move(machine));
}

DeviceListing list_triton_devices() {
  DeviceListing l{"triton", {}, {}};
  try {
    l.devices.push_back(describe_device(python_setup(), 0));
  } catch (const std::exception& e) {
    l.unavailable = e.what();
  }
  return l;
}

}  // namespace

BackendInfo backend_info() {
  KernelTraits k;
  k.launch = true;
  k.threads = false;
  k.tensors = true;
  k.spills = true;
  k.parameters_checked = true;
  k.defines = true;
  // The compile helpers stop a compile after kernel.build_timeout; Triton's
  // compiles (MLIR, LLVM and ptxas, for each config) take longer than a C++
  // build, so its default is 10 minutes.
  k.build_timeout = true;
  k.default_build_timeout = Seconds(600);
  k.compilers = {"triton"};
  k.default_flags = {};
  k.default_compiler = [](std::string_view) { return std::string("triton"); };
  BackendInfo b;
  b.name = "triton";
  b.languages = {"triton"};
  b.source_endings = {{".py", "triton"}};
  b.summary =
      "@triton.jit kernels in Python files, compiled ahead in parallel by Python helpers, run by one Python "
      "worker per GPU";
  b.kernel = std::move(k);
  b.make = make_triton_backend;
  b.list_devices = list_triton_devices;
  b.check_spec = check_spec;
  return b;
}

}  // namespace tunekit::triton
