#include "builder/detail/compiler.hpp"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <optional>
#include <sstream>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "builder/detail/cache_claims.hpp"
#include "core/detail/hash.hpp"
#include "core/detail/process.hpp"

namespace tunekit::detail {

namespace {

// What a compiler or linker prints when the machine, not the source, stops
// it; such a build is tried again on a resume. A linker killed (the OOM
// killer often picks it) is told by gcc's collect2 and by clang's driver in
// words of their own. A part of the toolchain that cannot be run (gcc's
// cc1plus or as gone midway through an upgrade, clang's ld missing) or a
// file it may not write or open (a ccache or temporary folder of another
// user's, a file-size limit) fails every config alike.
constexpr std::string_view kMachineTrouble[] = {
    "No space left on device",
    "Disk quota exceeded",
    "Read-only file system",
    "File too large",
    "Permission denied",
    "Cannot allocate memory",
    "virtual memory exhausted",
    "out of memory allocating",
    "Killed signal terminated program",
    "terminated with signal 9 [Killed]",
    "terminated with signal 15 [Terminated]",
    // clang's driver on a part it cannot start, or one killed; a part that
    // crashed ("unable to execute command: Segmentation fault") crashes
    // again on the same input: the config's.
    "unable to execute command: Killed",
    "unable to execute command: Terminated",
    "unable to execute command: Executable",
    "cannot execute '",
    "error trying to exec '",
    "Too many open files",
    "Resource temporarily unavailable",
};

}  // namespace

void remove_files_of_killed_builds(const std::filesystem::path& cache_dir) {
  namespace fs = std::filesystem;
  const auto all_of = [](std::string_view s, auto is) {
    return !s.empty() && std::all_of(s.begin(), s.end(), [&](char c) { return is(static_cast<unsigned char>(c)); });
  };
  std::error_code ec;
  for (fs::directory_iterator it(cache_dir, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    std::vector<std::string_view> fields;
    for (std::size_t at = 0; at <= name.size();) {
      const std::size_t dot = std::min(name.find('.', at), name.size());
      fields.push_back(std::string_view(name).substr(at, dot - at));
      at = dot + 1;
    }
    // A variant's hash first (32 hex digits), then, later, pid.count.
    if (fields.size() < 4 || fields[0].size() != 32 || !all_of(fields[0], ::isxdigit)) continue;
    for (std::size_t i = 1; i + 2 < fields.size(); ++i) {
      if (!all_of(fields[i], ::isdigit) || !all_of(fields[i + 1], ::isdigit)) continue;
      // Older than a build takes by default (kernel.build_timeout, 5 minutes)
      // too: a pid of another pid namespace sharing the folder may look gone
      // from here.
      const long pid = std::strtol(std::string(fields[i]).c_str(), nullptr, 10);
      const auto written = fs::last_write_time(it->path(), ec);
      if (!ec && fs::file_time_type::clock::now() - written > std::chrono::minutes(10) && pid > 0 &&
          ::kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH)
        fs::remove(it->path(), ec);
      break;
    }
  }
}

std::string compiler_identity(const std::string& name) {
  static std::mutex mutex;
  static std::map<std::string, std::string> known;
  const std::lock_guard lock(mutex);
  if (auto it = known.find(name); it != known.end()) return it->second;
  namespace fs = std::filesystem;
  std::error_code ec;
  // A bare name not found on $PATH runs no file.
  const std::string found = on_path(name);
  const fs::path program = found.find('/') != std::string::npos ? fs::path(found) : fs::path();
  std::string id;
  // A folder is none (the name "" found "on $PATH" is its first folder).
  if (!program.empty())
    if (const fs::path real = fs::canonical(program, ec); !ec && fs::is_regular_file(real, ec)) {
      const auto size = fs::file_size(real, ec);
      const auto time = ec ? fs::file_time_type() : fs::last_write_time(real, ec);
      if (!ec) id = real.string() + " " + std::to_string(size) + " " + std::to_string(time.time_since_epoch().count());
    }
  return known[name] = id;
}

namespace {

// The first line with text that `program option` prints when it succeeds;
// nullopt when it fails, hangs or cannot start. `interrupted` is set when a
// stop request ended it (its answer is then no verdict on the compiler).
std::optional<std::string> first_line_of(const std::string& program, const char* option, bool& interrupted) {
  ProcessResult r;
  try {
    // A compiler answers these at once; the limit is for a program that is
    // not one (or hangs), whose file then identifies it.
    r = run_process({program, option}, std::chrono::seconds(30));
  } catch (const std::exception&) {
    return std::nullopt;
  }
  interrupted = interrupted || r.interrupted;
  if (r.timed_out || r.signal != 0 || r.exit_code != 0) return std::nullopt;
  for (std::size_t at = 0; at < r.output.size();) {
    const std::size_t end = std::min(r.output.find('\n', at), r.output.size());
    std::string line = r.output.substr(at, end - at);
    while (!line.empty() && std::isspace(static_cast<unsigned char>(line.back()))) line.pop_back();
    if (line.find_first_not_of(" \t") != std::string::npos) return line;
    at = end + 1;
  }
  return std::nullopt;
}

}  // namespace

std::string compiler_release(const std::string& name) {
  static std::mutex mutex;
  static std::map<std::string, std::string> known;
  // Run by the path the name finds, as builds run it (gcc names itself by
  // argv[0]: "c++ (Debian 12.2.0-14) 12.2.0", a name the spec holds anyway).
  const std::string program = on_path(name);
  const std::lock_guard lock(mutex);
  if (auto it = known.find(program); it != known.end()) return it->second;
  const std::string file = compiler_identity(program);
  if (file.empty()) return known[program] = file;  // runs no file: its build fails on its own account
  bool interrupted = false;
  const std::optional<std::string> version = first_line_of(program, "--version", interrupted);
  // A stop asked for while it ran says nothing about the compiler: asked
  // again, it runs again.
  if (!version) return interrupted ? file : known[program] = file;
  std::string id = *version;
  // The target decides the code as much as the release does (one release
  // built as a cross compiler); a compiler without -dumpmachine has none to
  // name.
  if (const auto target = first_line_of(program, "-dumpmachine", interrupted)) id += " for " + *target;
  if (interrupted) return file;
  // A wrapper script reports the compiler it runs, not the flags it adds:
  // its text is part of what it builds with (and is the same text wherever
  // it is copied to).
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::path real = fs::canonical(program, ec);
  if (std::ifstream in(real, std::ios::binary); !ec && in) {
    char start[2] = {};
    if (in.read(start, 2) && start[0] == '#' && start[1] == '!') {
      in.seekg(0);
      std::ostringstream text;
      text << in.rdbuf();
      id += " script " + Hasher().add(text.str()).hex();
    }
  }
  return known[program] = id;
}

namespace {

// "k.cpp:12:5: error: ..." (gcc, clang), "k.cu(12): error: ..." (nvcc): a
// diagnostic at a place in a source, whose words the source may have
// written (#pragma GCC error, [[deprecated("...")]]) and whose path may
// hold any words. The machine's trouble is told by the tools' own lines
// ("c++: fatal error: ...", "/usr/bin/ld: ..."), or by gcc's own failure
// to write its output, which it may place at the last line of the source.
bool at_a_place_in_a_source(std::string_view line) {
  for (std::size_t at = line.find_first_of(":("); at != std::string_view::npos; at = line.find_first_of(":(", at + 1)) {
    std::size_t digits = at + 1;
    while (digits < line.size() && std::isdigit(static_cast<unsigned char>(line[digits]))) ++digits;
    if (digits == at + 1 || digits >= line.size()) continue;
    if (line[at] == ':' && line[digits] == ':') return true;
    if (line[at] == '(' && line.substr(digits, 3) == "): ") return true;
  }
  return false;
}

bool gcc_could_not_write(std::string_view line) {
  return line.find("error writing to ") != std::string_view::npos ||
         line.find("error closing ") != std::string_view::npos;
}

}  // namespace

std::string machine_trouble_line(const std::string& log) {
  std::vector<std::string> lines;
  std::istringstream in(log);
  for (std::string line; std::getline(in, line);) lines.push_back(std::move(line));
  // clang quotes a line of source bare, with a caret line under it.
  const auto caret_line = [](const std::string& l) {
    return l.find('^') != std::string::npos && l.find_first_not_of(" \t^~") == std::string::npos;
  };
  for (std::size_t i = 0; i < lines.size(); ++i) {
    const std::string& line = lines[i];
    // The source's own words, quoted by the compiler, are the config's: a
    // line of source shown under a diagnostic (gcc's "  12 | ...", clang's
    // line above its caret), an #error or #warning, a static assertion's
    // message.
    const auto text = line.find_first_not_of(" \t0123456789");
    if (text != std::string::npos && line[text] == '|') continue;
    if (i + 1 < lines.size() && caret_line(lines[i + 1])) continue;
    if (line.find("#error") != std::string::npos || line.find("#warning") != std::string::npos ||
        line.find("static assert") != std::string::npos || line.find("static_assert") != std::string::npos)
      continue;
    if (at_a_place_in_a_source(line) && !gcc_could_not_write(line)) continue;
    for (auto marker : kMachineTrouble)
      if (line.find(marker) != std::string::npos) return line;
  }
  return {};
}

Fault build_fault(const std::string& log, int signal) {
  // SIGKILL is how the OOM killer (or a user) stops a compiler; SIGXFSZ is
  // the file-size limit's (ulimit -f).
  if (signal == SIGKILL || signal == SIGTERM || signal == SIGXFSZ) return Fault::environment;
  return machine_trouble_line(log).empty() ? Fault::config : Fault::environment;
}

namespace {

bool failed_silently(const ProcessResult& p) {
  return !p.interrupted && !p.timed_out && p.signal == 0 && p.exit_code != 0 &&
         p.output.find_first_not_of(" \t\r\n") == std::string::npos;
}

}  // namespace

bool run_compiler(const std::vector<std::string>& argv, const std::string& tool, Seconds limit, BuildResult& r,
                  int* exit_code, const std::filesystem::path& cwd) {
  if (exit_code) *exit_code = -1;
  ProcessResult p;
  bool silent_twice = false;
  try {
    p = run_process(argv, limit, cwd);
    // A compiler never fails without a diagnostic; one that did met
    // something of the machine's (a wrapper's lost lock, a file it could
    // not read for a moment), which stored as the config's would be reused
    // on every resume. Silent again at once, it is the config's: a build
    // script may reject a config without a word on purpose.
    // The two runs share the build's time limit: a retry that hangs ends
    // where the build would have, and its timeout names that limit truly.
    if (const auto first = p.wall; failed_silently(p) && first < limit) {
      p = run_process(argv, limit - first, cwd);
      p.wall += first;
      silent_twice = failed_silently(p);
    }
  } catch (const std::exception& e) {
    r.status = Status::compile_error;
    r.fault = Fault::environment;
    r.log = "cannot run " + tool + ": " + e.what();
    return false;
  }
  r.time = p.wall;
  r.log = std::move(p.output);
  if (exit_code && !p.timed_out && p.signal == 0) *exit_code = p.exit_code;
  if (!p.timed_out && p.signal == 0 && p.exit_code == 0) return true;
  r.status = Status::compile_error;
  r.fault = p.interrupted ? Fault::environment : p.timed_out ? Fault::config : build_fault(r.log, p.signal);
  if (p.timed_out)
    r.log = fmt::format("{} timed out after {:g} s (kernel.build_timeout)\n", tool, limit.count()) + r.log;
  else if (p.signal) r.log = tool + " killed by " + describe_signal(p.signal) + "\n" + r.log;
  else if (silent_twice)  // else the failure would have no reason
    r.log = tool + " exited with code " + std::to_string(p.exit_code) +
            " and printed nothing, twice in a row (run again at once): taken to reject the config";
  else if (r.log.find_first_not_of(" \t\r\n") == std::string::npos)
    r.log = tool + " exited with code " + std::to_string(p.exit_code) + " and printed nothing";
  return false;
}

}  // namespace tunekit::detail
