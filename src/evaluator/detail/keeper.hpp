#pragma once
// A worker whose kernels cannot leave processes behind. A kernel may start a
// process that leaves the worker's process group and session (a daemon:
// fork, setsid, fork again); killing the group misses it, and when its
// parent ends it would be adopted by init and outlive the tune. So the
// worker process forks: the child serves requests, and the parent, the
// keeper, is marked a child subreaper (PR_SET_CHILD_SUBREAPER), so that every
// such orphan becomes its child. The server ends them after each request;
// the keeper ends those left when the server ends, and mirrors how it ended;
// the tuner, killing a worker, kills the keeper's descendants first
// (kill_descendants).
#include <functional>

namespace tunekit::detail {

// Runs `serve` in a child process as described above and returns, in this
// process, what `serve` returned (an exit code); a server killed by a signal
// kills the keeper with the same signal. Where the keeper cannot be set up,
// `serve` runs in this process.
int run_kept(const std::function<int()>& serve);

// In the serving process, after a request: kills and reaps every process the
// request left running. Does nothing outside run_kept.
void end_strays();

}  // namespace tunekit::detail
