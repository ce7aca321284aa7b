#include "core/detail/process.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <system_error>

extern char** environ;

namespace tunekit::detail {

namespace {

using Clock = std::chrono::steady_clock;

std::vector<char*> c_argv(const std::vector<std::string>& argv) {
  std::vector<char*> out;
  for (const auto& a : argv) out.push_back(const_cast<char*>(a.c_str()));
  out.push_back(nullptr);
  return out;
}

[[noreturn]] void fail(const std::string& what) { throw std::system_error(errno, std::generic_category(), what); }

void close_fd(int& fd) {
  if (fd >= 0) ::close(fd);
  fd = -1;
}

// Milliseconds left until `deadline`, for poll().
int ms_until(Clock::time_point deadline) {
  auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
  return left < 0 ? 0 : static_cast<int>(std::min<long long>(left, 1 << 30));
}

struct SpawnAttributes {
  posix_spawn_file_actions_t actions;
  posix_spawnattr_t attr;
  SpawnAttributes() {
    posix_spawn_file_actions_init(&actions);
    posix_spawnattr_init(&attr);
    // Own process group: a timeout kills the compiler's children too.
    posix_spawnattr_setpgroup(&attr, 0);
    sigset_t defaults;
    sigemptyset(&defaults);
    sigaddset(&defaults, SIGPIPE);
    posix_spawnattr_setsigdefault(&attr, &defaults);
    posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGDEF);
  }
  ~SpawnAttributes() {
    posix_spawn_file_actions_destroy(&actions);
    posix_spawnattr_destroy(&attr);
  }
};

}  // namespace

std::string describe_signal(int sig) {
  const char* abbrev = sigabbrev_np(sig);
  const char* text = strsignal(sig);
  return std::string("SIG") + (abbrev ? abbrev : std::to_string(sig)) + " (" + (text ? text : "?") + ")";
}

ProcessResult run_process(const std::vector<std::string>& argv, std::chrono::duration<double> timeout,
                          const std::filesystem::path& cwd) {
  ProcessResult result;
  int out[2];
  if (::pipe2(out, O_CLOEXEC) != 0) fail("pipe");
  SpawnAttributes sa;
  posix_spawn_file_actions_adddup2(&sa.actions, out[1], 1);
  posix_spawn_file_actions_adddup2(&sa.actions, out[1], 2);
  posix_spawn_file_actions_addopen(&sa.actions, 0, "/dev/null", O_RDONLY, 0);
  if (!cwd.empty()) posix_spawn_file_actions_addchdir_np(&sa.actions, cwd.c_str());
  auto args = c_argv(argv);
  const auto start = Clock::now();
  pid_t pid = -1;
  int rc = posix_spawnp(&pid, args[0], &sa.actions, &sa.attr, args.data(), environ);
  ::close(out[1]);
  if (rc != 0) {
    ::close(out[0]);
    errno = rc;
    fail("cannot start '" + argv[0] + "'");
  }
  const auto deadline = start + std::chrono::duration_cast<Clock::duration>(timeout);
  char buf[65536];
  for (;;) {
    pollfd p{out[0], POLLIN, 0};
    int n = ::poll(&p, 1, ms_until(deadline));
    if (n == 0) {
      result.timed_out = true;
      ::kill(-pid, SIGKILL);
      break;
    }
    if (n < 0 && errno == EINTR) continue;
    ssize_t got = ::read(out[0], buf, sizeof buf);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) break;
    result.output.append(buf, static_cast<std::size_t>(got));
  }
  ::close(out[0]);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  result.wall = Clock::now() - start;
  if (!result.timed_out) {
    if (WIFSIGNALED(status)) result.signal = WTERMSIG(status);
    else result.exit_code = WEXITSTATUS(status);
  }
  return result;
}

Child::~Child() { kill(); }

void Child::start(const std::vector<std::string>& argv, const std::filesystem::path& log) {
  kill();
  int in[2], back[2];
  if (::pipe2(in, O_CLOEXEC) != 0) fail("pipe");
  if (::pipe2(back, O_CLOEXEC) != 0) fail("pipe");
  SpawnAttributes sa;
  posix_spawn_file_actions_adddup2(&sa.actions, in[0], 0);
  posix_spawn_file_actions_adddup2(&sa.actions, back[1], 3);
  posix_spawn_file_actions_addopen(&sa.actions, 1, log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
  posix_spawn_file_actions_adddup2(&sa.actions, 1, 2);
  auto args = c_argv(argv);
  int rc = posix_spawn(&pid_, args[0], &sa.actions, &sa.attr, args.data(), environ);
  ::close(in[0]);
  ::close(back[1]);
  if (rc != 0) {
    ::close(in[1]);
    ::close(back[0]);
    pid_ = -1;
    errno = rc;
    fail("cannot start '" + argv[0] + "'");
  }
  to_child_ = in[1];
  from_child_ = back[0];
  buffer_.clear();
}

bool Child::send(const std::string& line) {
  if (pid_ <= 0) return false;
  std::string data = line + "\n";
  std::size_t off = 0;
  while (off < data.size()) {
    ssize_t n = ::write(to_child_, data.data() + off, data.size() - off);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;  // EPIPE: the child is gone (SIGPIPE is ignored by the caller)
    off += static_cast<std::size_t>(n);
  }
  return true;
}

std::optional<std::string> Child::receive(std::chrono::duration<double> timeout) {
  const auto deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(timeout);
  char buf[65536];
  for (;;) {
    if (auto nl = buffer_.find('\n'); nl != std::string::npos) {
      std::string line = buffer_.substr(0, nl);
      buffer_.erase(0, nl + 1);
      return line;
    }
    if (from_child_ < 0) return std::nullopt;
    pollfd p{from_child_, POLLIN, 0};
    int n = ::poll(&p, 1, ms_until(deadline));
    if (n == 0) return std::nullopt;
    if (n < 0 && errno == EINTR) continue;
    ssize_t got = ::read(from_child_, buf, sizeof buf);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) {
      close_fd(from_child_);
      return std::nullopt;
    }
    buffer_.append(buf, static_cast<std::size_t>(got));
  }
}

void Child::kill() {
  if (pid_ > 0) {
    ::kill(-pid_, SIGKILL);
    ::kill(pid_, SIGKILL);
    int status;
    while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
    }
  }
  pid_ = -1;
  close_fd(to_child_);
  close_fd(from_child_);
  buffer_.clear();
}

std::string Child::reap() {
  if (pid_ <= 0) return "not running";
  int status = 0;
  // The pipe closed, so it is exiting; give it a moment, then force it.
  for (int i = 0; i < 200; ++i) {
    pid_t r = ::waitpid(pid_, &status, WNOHANG);
    if (r == pid_) break;
    if (r < 0 && errno != EINTR) break;
    ::usleep(10000);
    if (i == 199) {
      ::kill(-pid_, SIGKILL);
      ::waitpid(pid_, &status, 0);
    }
  }
  pid_ = -1;
  close_fd(to_child_);
  close_fd(from_child_);
  if (WIFSIGNALED(status)) return "killed by " + describe_signal(WTERMSIG(status));
  if (WIFEXITED(status)) return "exited with code " + std::to_string(WEXITSTATUS(status));
  return "ended";
}

std::string shell_quote(const std::vector<std::string>& argv) {
  std::string out;
  for (const auto& a : argv) {
    if (!out.empty()) out += ' ';
    const bool plain = !a.empty() && a.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                                         "0123456789_-+=/.,:@%") == std::string::npos;
    if (plain) {
      out += a;
      continue;
    }
    out += '\'';
    for (char c : a) {
      if (c == '\'') out += "'\\''";
      else out += c;
    }
    out += '\'';
  }
  return out;
}

}  // namespace tunekit::detail
