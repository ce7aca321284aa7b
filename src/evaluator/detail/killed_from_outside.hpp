#pragma once
// A trial whose worker (or program) a signal from outside the kernel ended:
// the OOM killer's SIGKILL or a user's signal, which cannot be told apart
// from here. Once is the machine's; the same config killed again at once,
// on a fresh worker, is taken for its own doing (its memory use past a
// limit, which the OOM killer ends every time), so that it is recorded as
// its failure instead of being measured again on every resume.
#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>

#include "tunekit/evaluator.hpp"

namespace tunekit::detail {

// How many OOM kills the kernel has counted where this process runs: its
// cgroup's `oom_kill` (v2's memory.events, which counts its descendants'
// too; v1's memory.oom_control), else the machine's (/proc/vmstat);
// nullopt where none is kept. `proc` and `cgroups` are the mounts (for
// tests).
std::optional<std::uint64_t> oom_kill_count(const std::filesystem::path& proc = "/proc",
                                            const std::filesystem::path& cgroups = "/sys/fs/cgroup");

// One attempt at a trial, each on a fresh worker or program (the one a
// signal ended is gone): its result, and in `killed_by` the signal from
// outside that ended it (0 when none did).
using Attempt = std::function<TrialResult(int& killed_by)>;

// Runs `attempt`; when a signal from outside ended it, runs it once more.
// Ended so again, the result is the config's failure (fault config):
// resource_limit when the OOM kill count rose during the second attempt,
// else crash, its error saying why and that --retry-failed measures it
// again. `what` names what was killed ("worker", "run").
TrialResult measure_unless_killed_twice(
    const Attempt& attempt, const std::string& what,
    const std::function<std::optional<std::uint64_t>()>& oom_kills = [] { return oom_kill_count(); });

}  // namespace tunekit::detail
