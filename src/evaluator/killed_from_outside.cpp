#include "evaluator/detail/killed_from_outside.hpp"

#include <signal.h>

#include <fstream>
#include <sstream>
#include <string_view>

#include <fmt/format.h>

#include "core/detail/process.hpp"

namespace tunekit::detail {

namespace fs = std::filesystem;

namespace {

// The value of the line "NAME VALUE" in a file of such lines
// (memory.events, /proc/vmstat).
std::optional<std::uint64_t> counter(const fs::path& file, std::string_view name) {
  std::ifstream in(file);
  for (std::string line; std::getline(in, line);) {
    std::istringstream fields(line);
    std::string key;
    std::uint64_t value = 0;
    if (fields >> key >> value && key == name) return value;
  }
  return std::nullopt;
}

}  // namespace

std::optional<std::uint64_t> oom_kill_count(const fs::path& proc, const fs::path& cgroups) {
  // A limit on the group (a container's, a systemd unit's) kills inside it
  // and counts it there: cgroup v2's line is "0::/PATH", read in
  // memory.events; v1's "N:memory:/PATH" (among other controllers), in
  // memory.oom_control. The v2 root keeps no memory.events; the machine's
  // count stands for it.
  std::optional<std::uint64_t> v1;
  std::ifstream groups(proc / "self" / "cgroup");
  for (std::string line; std::getline(groups, line);) {
    const auto first = line.find(':'), second = line.find(':', first + 1);
    if (first == std::string::npos || second == std::string::npos) continue;
    const fs::path group = fs::path(line.substr(second + 1)).relative_path();
    const std::string controllers = "," + line.substr(first + 1, second - first - 1) + ",";
    if (controllers == ",,") {
      if (auto n = counter(cgroups / group / "memory.events", "oom_kill")) return n;
    } else if (controllers.find(",memory,") != std::string::npos) {
      v1 = counter(cgroups / "memory" / group / "memory.oom_control", "oom_kill");
    }
  }
  if (v1) return v1;
  return counter(proc / "vmstat", "oom_kill");
}

TrialResult measure_unless_killed_twice(const Attempt& attempt, const std::string& what,
                                        const std::function<std::optional<std::uint64_t>()>& oom_kills) {
  int killed_by = 0;
  TrialResult first = attempt(killed_by);
  if (killed_by == 0 || first.interrupted) return first;
  // Counted around the second attempt only: no trial pays for the reading.
  const auto before = oom_kills();
  int killed_again_by = 0;
  TrialResult again = attempt(killed_again_by);
  if (again.interrupted) return again;
  if (killed_again_by == 0) {
    again.killed_from_outside_by = killed_by;
    // An ok trial's error is a note on its measurement, shown on its line
    // and kept with it, and so is one cut short as slower: the kill would
    // leave no trace otherwise.
    if (again.status == Status::ok || again.status == Status::slower) {
      const std::string signal = describe_signal(killed_by);
      again.error = fmt::format("{}{}{} {} from outside ({}); measured again on a fresh {}", again.error,
                                again.error.empty() ? "" : ", ", what, killed_by == SIGSTOP ? "stopped" : "killed",
                                signal.substr(0, signal.find(' ')), what);
    }
    return again;
  }
  if ((killed_by == SIGSTOP) != (killed_again_by == SIGSTOP)) {
    // A stop and a kill are not the same thing twice: a kill (the OOM
    // killer's) and a stop (a user's kill -STOP) point nowhere together, and
    // the config is blamed only for what it was seen to do twice.
    const auto what_happened = [&](int signal) {
      const std::string name = describe_signal(signal);
      return fmt::format("{} by {}", signal == SIGSTOP ? "stopped" : "killed", name.substr(0, name.find(' ')));
    };
    again.status = Status::crash;
    again.fault = Fault::environment;
    again.error = fmt::format(
        "{} {} from outside, then the fresh {} {}: not the same thing twice, so the machine's, not the config's; "
        "the next run measures it again\nthe first time: {}\nthe second time: {}",
        what, what_happened(killed_by), what, what_happened(killed_again_by),
        first.error.substr(0, first.error.find('\n')), again.error);
    return again;
  }
  if (killed_again_by == SIGSTOP) {
    // Stopped on a fresh worker at once, after a stop on the last: a stop
    // the kernel makes itself (a "wait for the debugger" left in), which
    // would otherwise be measured, and waited for, on every resume.
    again.status = Status::crash;
    again.fault = Fault::config;
    again.error = fmt::format(
        "the config stopped its {} twice in a row (SIGSTOP, or a terminal's stop signal; the second time a fresh "
        "{}, at once): taken to be its own doing (a raise(SIGSTOP) left in to wait for a debugger); --retry-failed "
        "measures it again",
        what, what);
    return again;
  }
  const auto after = oom_kills();
  // A kill counted while ours died by a signal from outside was most likely
  // ours: a victim elsewhere in the cgroup would have left ours running.
  const bool oom = before && after && *after > *before;
  again.status = oom ? Status::resource_limit : Status::crash;
  again.fault = Fault::config;
  // The signal's name alone: the console shows the line's head and tail.
  const std::string signal = describe_signal(killed_again_by);
  again.error = fmt::format(
      "{} killed by {} twice in a row: the config's own doing, taken to be {} (the second time a fresh {}, at "
      "once); --retry-failed measures it again\nthe first time: {}\nthe second time: {}",
      what, signal.substr(0, signal.find(' ')),
      oom ? "memory use past the limit (the OOM killer counted a kill meanwhile)"
          : "memory use past a limit, which the OOM killer ends every time, or a kill of its own",
      what, first.error.substr(0, first.error.find('\n')), again.error);
  return again;
}

}  // namespace tunekit::detail
