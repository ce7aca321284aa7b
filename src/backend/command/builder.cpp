#include <fstream>

#include <fmt/format.h>

#include "backend/command/detail/command_backend.hpp"
#include "core/detail/hash.hpp"
#include "builder/detail/compiler.hpp"
#include "tunekit/output.hpp"
#include "core/detail/process.hpp"

namespace tunekit::command {

namespace fs = std::filesystem;

namespace {

constexpr const char* kBuiltMarker = ".tunekit-built";

}  // namespace

Variant variant_of(const fs::path& root, const ApplicationSpec& app, const BuildInput& in) {
  detail::Hasher h;
  h.add(in.hash()).add(in.config.key()).add(app.workdir.string());
  h.add(app.build.size());
  for (const auto& a : app.build) h.add(a);
  Variant v;
  v.key = h.hex();
  v.dir = root / v.key;
  fs::path name = fs::path(in.source_name).filename();
  if (name.empty()) name = "source";
  v.source = v.dir / name;
  v.binary = v.dir / "app";
  return v;
}

Bindings placeholder_values(const Variant& v, const Bindings& values) {
  Bindings out = values;
  out["source"] = v.source.string();
  out["dir"] = v.dir.string();
  out["binary"] = v.binary.string();
  return out;
}

std::vector<std::string> expand_argv(const std::vector<std::string>& argv, const Bindings& values) {
  std::vector<std::string> out;
  out.reserve(argv.size());
  for (const auto& a : argv) out.push_back(substitute_placeholders(a, values));
  return out;
}

std::string first_output_line(std::string_view output) {
  while (!output.empty()) {
    const auto nl = output.find('\n');
    std::string_view line = output.substr(0, nl);
    output = nl == std::string_view::npos ? std::string_view{} : output.substr(nl + 1);
    while (!line.empty() && (line.front() == ' ' || line.front() == '\t')) line.remove_prefix(1);
    while (!line.empty() && (line.back() == ' ' || line.back() == '\t' || line.back() == '\r')) line.remove_suffix(1);
    if (!line.empty()) return std::string(line);
  }
  return {};
}

std::string output_tail(const std::string& output, std::size_t limit) {
  std::string text = output.size() > limit ? "..." + output.substr(output.size() - limit) : output;
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ' || text.back() == '\r')) text.pop_back();
  return text;
}

CommandBuilder::CommandBuilder(fs::path root, ApplicationSpec app, bool rebuild)
    : root_(std::move(root)), app_(std::move(app)), rebuild_(rebuild) {
  fs::create_directories(root_);
}

BuildResult CommandBuilder::build(const BuildInput& in) {
  BuildResult r;
  const Variant v = variant_of(root_, app_, in);
  r.artifact = {v.source, v.key};
  {
    std::lock_guard lock(mutex_);
    const bool seen = started_.count(v.key) > 0;
    std::error_code ec;
    if (fs::exists(v.dir / kBuiltMarker, ec) && (!rebuild_ || seen)) {
      r.cached = true;
      return r;
    }
    started_.insert(v.key);
  }
  std::vector<std::string> argv;
  try {
    fs::create_directories(v.dir);
    fs::remove(v.dir / kBuiltMarker);
    write_file_atomically(v.source, in.source);
  } catch (const std::exception& e) {
    // The variant's folder or its copy of the source (a full disk): the
    // machine's failure, built again on a resume, not the config's.
    r.status = Status::compile_error;
    r.fault = Fault::environment;
    r.log = e.what();
    return r;
  }
  try {
    Bindings values = placeholder_values(v, in.config.bindings());
    argv = expand_argv(app_.build, values);
  } catch (const std::exception& e) {
    r.status = Status::compile_error;
    r.log = e.what();
    return r;
  }
  if (!argv.empty()) {
    detail::ProcessResult p;
    try {
      p = detail::run_process(argv, app_.build_timeout, app_.workdir);
    } catch (const std::exception& e) {
      r.status = Status::compile_error;
      r.fault = Fault::environment;
      r.log = fmt::format("cannot run the build command: {}\n$ {}", e.what(), detail::shell_quote(argv));
      return r;
    }
    r.time = p.wall;
    r.log = std::move(p.output);
    if (p.timed_out || p.signal != 0 || p.exit_code != 0) {
      std::string why = p.timed_out ? fmt::format("timed out after {:.3g} s; killed", app_.build_timeout.count())
                        : p.signal  ? "killed by " + detail::describe_signal(p.signal)
                                    : fmt::format("exited with code {}", p.exit_code);
      r.status = Status::compile_error;
      r.fault = p.interrupted ? Fault::environment : p.timed_out ? Fault::config : detail::build_fault(r.log, p.signal);
      // The first line is what a console line shows: the status and the
      // first thing the build said.
      const std::string said = first_output_line(r.log);
      r.log = fmt::format("build command {}{}\n$ {}   (in {})\n{}", why, said.empty() ? "" : ": " + said,
                          detail::shell_quote(argv), app_.workdir.string(), r.log);
      return r;
    }
  }
  std::ofstream(v.dir / kBuiltMarker) << detail::shell_quote(argv) << '\n';
  return r;
}

}  // namespace tunekit::command
