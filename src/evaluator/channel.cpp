#include "evaluator/detail/channel.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <random>

namespace tunekit::detail {

namespace {

int env_int(const char* name, int fallback) {
  const char* v = std::getenv(name);
  return v && *v ? std::atoi(v) : fallback;
}

// Moves `fd` to a free descriptor at a random place above 100.
int hide(int fd) {
  std::random_device rd;
  const int at = 100 + static_cast<int>(rd() % 800);
  const int moved = ::fcntl(fd, F_DUPFD_CLOEXEC, at);
  if (moved < 0) return fd;
  ::close(fd);
  return moved;
}

}  // namespace

Channel open_worker_channel() {
  if (const char* parent = std::getenv("TUNEKIT_PARENT_PID"); parent && *parent) {
    // The signal comes when the *thread* that started the worker ends: the
    // evaluator starts it from the thread that runs the trials, which lives
    // as long as the run. (The Triton compile helpers, started by build
    // threads, watch their parent instead: python/tunekit_triton/protocol.py.)
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    // The tuner may have died before the request took effect.
    if (::getppid() != std::atoi(parent)) std::_Exit(1);
  }
  Channel c;
  if (!std::getenv("TUNEKIT_REQUEST_FD")) return c;
  c.requests = hide(env_int("TUNEKIT_REQUEST_FD", 0));
  c.replies = hide(env_int("TUNEKIT_REPLY_FD", 3));
  // Whatever else the tuner's process had open (a test runner's pipes, a
  // log) is not the kernel's to write to: a write to a pipe nobody reads
  // would kill the worker with SIGPIPE.
  const unsigned low = static_cast<unsigned>(std::min(c.requests, c.replies));
  const unsigned high = static_cast<unsigned>(std::max(c.requests, c.replies));
  ::close_range(3, low - 1, 0);
  if (high > low + 1) ::close_range(low + 1, high - 1, 0);
  ::close_range(high + 1, ~0u, 0);
  // A kernel must not see these, nor pass them to what it starts.
  ::unsetenv("TUNEKIT_REQUEST_FD");
  ::unsetenv("TUNEKIT_REPLY_FD");
  (void)reply_token();
  ::unsetenv("TUNEKIT_REPLY_TOKEN");
  return c;
}

const std::string& reply_token() {
  static const std::string token = [] {
    const char* t = std::getenv("TUNEKIT_REPLY_TOKEN");
    return std::string(t ? t : "");
  }();
  return token;
}

}  // namespace tunekit::detail
