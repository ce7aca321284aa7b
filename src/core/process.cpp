#include "core/detail/process.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <mutex>
#include <sstream>
#include <optional>
#include <set>
#include <random>
#include <utility>
#include <cstring>
#include <system_error>
#include <thread>

#include <fmt/format.h>

#include "tunekit/error.hpp"
#include "tunekit/stop.hpp"

extern char** environ;

namespace tunekit::detail {

namespace {

using Clock = std::chrono::steady_clock;

// `limit` after `from`. A limit past what the clock counts (about 292 years
// of nanoseconds: a timeout of 1e10 s) would wrap to a deadline in the past
// and fail at once: it means no limit.
Clock::time_point deadline_after(Clock::time_point from, std::chrono::duration<double> limit) {
  constexpr std::chrono::duration<double> kLongest(1e9);  // 31 years
  return from + std::chrono::duration_cast<Clock::duration>(std::min(limit, kLongest));
}

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
    sigaddset(&defaults, SIGXFSZ);
    posix_spawnattr_setsigdefault(&attr, &defaults);
    posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGDEF);
  }
  ~SpawnAttributes() {
    posix_spawn_file_actions_destroy(&actions);
    posix_spawnattr_destroy(&attr);
  }
};

}  // namespace

namespace {

// A process's state letter, parent and start (in clock ticks after boot,
// which with its pid names it across pid reuse), from /proc/PID/stat;
// nullopt when it is gone (it may end between a listing and the read).
struct ProcStat {
  char state;
  pid_t parent;
  unsigned long long start;
};

// A small file of /proc, whole ("" when it cannot be read).
std::string read_proc(const char* path) {
  const int fd = ::open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return {};
  std::string text;
  char buf[4096];
  for (ssize_t n; (n = ::read(fd, buf, sizeof buf)) > 0 || (n < 0 && errno == EINTR);)
    if (n > 0) text.append(buf, static_cast<std::size_t>(n));
  ::close(fd);
  return text;
}

std::optional<ProcStat> proc_stat(long pid) {
  char path[64];
  std::snprintf(path, sizeof path, "/proc/%ld/stat", pid);
  const int fd = ::open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return std::nullopt;
  char text[1024];
  const ssize_t n = ::read(fd, text, sizeof text - 1);
  ::close(fd);
  if (n <= 0) return std::nullopt;
  text[n] = '\0';
  // "PID (COMM) STATE PPID ... STARTTIME ...": COMM may hold spaces and
  // parentheses; the start is the 22nd field, 17 after the parent.
  const char* close = std::strrchr(text, ')');
  char state = 0;
  long ppid = 0;
  unsigned long long start = 0;
  if (!close ||
      std::sscanf(close + 1, " %c %ld %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %llu", &state,
                  &ppid, &start) != 3)
    return std::nullopt;
  return ProcStat{state, static_cast<pid_t>(ppid), start};
}

// The live processes descended from `root`, parents before children.
std::vector<pid_t> descendants(pid_t root) {
  std::multimap<pid_t, pid_t> children;
  if (DIR* proc = ::opendir("/proc")) {
    while (const dirent* e = ::readdir(proc)) {
      char* end = nullptr;
      const long pid = std::strtol(e->d_name, &end, 10);
      if (pid <= 0 || *end != '\0') continue;
      if (auto st = proc_stat(pid); st && st->state != 'Z') children.emplace(st->parent, static_cast<pid_t>(pid));
    }
    ::closedir(proc);
  }
  std::vector<pid_t> out;
  std::vector<pid_t> todo{root};
  while (!todo.empty()) {
    const pid_t p = todo.back();
    todo.pop_back();
    for (auto [it, last] = children.equal_range(p); it != last; ++it) {
      out.push_back(it->second);
      todo.push_back(it->second);
    }
  }
  return out;
}

// Visits `root` and each process descended from it (on_process(PID)), and
// each of their threads (on_thread("/proc/PID/task", TID)), found through
// each thread's list of children (/proc/PID/task/TID/children): the tree's
// own files, not a listing of every process on the machine, which a look
// made twice a second would pay for. Where the kernel keeps no such files
// (no CONFIG_PROC_CHILDREN), the listing. The lists may miss a child forked
// meanwhile (proc(5)), which a look made again finds; a kill takes
// descendants() instead.
template <class OnProcess, class OnThread>
void walk_tree(pid_t root, OnProcess on_process, OnThread on_thread) {
  bool listed = false;
  std::vector<pid_t> todo{root};
  while (!todo.empty()) {
    const pid_t pid = todo.back();
    todo.pop_back();
    on_process(pid);
    char dir[64];
    std::snprintf(dir, sizeof dir, "/proc/%d/task", static_cast<int>(pid));
    DIR* tasks = ::opendir(dir);
    if (!tasks) continue;  // ended meanwhile
    while (const dirent* e = ::readdir(tasks)) {
      if (e->d_name[0] == '.') continue;
      on_thread(dir, e->d_name);
      if (listed) continue;
      char path[sizeof dir + sizeof e->d_name + 16];  // "<dir>/<name>/children", whole
      std::snprintf(path, sizeof path, "%s/%s/children", dir, e->d_name);
      if (::access(path, R_OK) != 0) {
        listed = true;
        const auto all = descendants(root);
        todo.insert(todo.end(), all.begin(), all.end());
        continue;
      }
      std::istringstream children(read_proc(path));
      for (long child; children >> child;) todo.push_back(static_cast<pid_t>(child));
    }
    ::closedir(tasks);
  }
}

}  // namespace

std::filesystem::path temp_folder() {
  const char* given = std::getenv("TMPDIR");
  if (!given || !*given) return "/tmp";
  std::error_code error;
  const auto status = std::filesystem::status(given, error);
  if (std::filesystem::is_directory(status)) return given;
  const std::string why = status.type() == std::filesystem::file_type::not_found ? "no such folder"
                          : std::filesystem::exists(status)                      ? "it is not a folder"
                                                                                 : error.message();
  throw InputError(SourceLocation{"$TMPDIR", 0, 0},
                   fmt::format("'{}' ({}): expected the folder for temporary files; point TMPDIR at one, or unset "
                               "it for /tmp",
                               given, why));
}

bool any_stopped(pid_t root, Stopped which) {
  bool stopped = false;
  walk_tree(
      root,
      [&](pid_t pid) {
        const auto st = proc_stat(pid);
        stopped = stopped || (st && (st->state == 'T' || (which == Stopped::or_traced && st->state == 't')));
      },
      [](const char*, const char*) {});
  return stopped;
}

bool await_ended(const std::vector<pid_t>& pids, std::chrono::milliseconds limit) {
  const auto until = std::chrono::steady_clock::now() + limit;
  for (;;) {
    const bool ended = std::all_of(pids.begin(), pids.end(), [](pid_t pid) {
      const auto st = proc_stat(pid);
      return !st || st->state == 'Z' || st->state == 'X';
    });
    if (ended) return true;
    if (std::chrono::steady_clock::now() > until) return false;
    ::usleep(1000);
  }
}

std::string on_path(const std::string& name) {
  if (name.find('/') != std::string::npos) return name;
  const char* path = std::getenv("PATH");
  const std::string dirs = path ? path : "/usr/local/bin:/usr/bin:/bin";
  std::size_t start = 0;
  while (start <= dirs.size()) {
    const std::size_t end = std::min(dirs.find(':', start), dirs.size());
    const std::filesystem::path candidate = std::filesystem::path(dirs.substr(start, end - start)) / name;
    if (end > start && ::access(candidate.c_str(), X_OK) == 0) return candidate.string();
    start = end + 1;
  }
  return name;
}

std::string unique_suffix() {
  static std::atomic<unsigned long> next{0};
  return std::to_string(::getpid()) + "." + std::to_string(next++);
}

namespace {

// Kills what `find` lists: each stopped as found, so that none forks a
// process the search has passed; searched again until a search finds no
// new one.
template <typename Find>
std::vector<pid_t> kill_found(Find find, pid_t spare) {
  std::set<pid_t> found;
  for (int round = 0; round < 64; ++round) {
    bool grew = false;
    for (pid_t p : find())
      if (p != spare && found.insert(p).second) {
        ::kill(p, SIGSTOP);
        grew = true;
      }
    if (!grew) break;
  }
  for (pid_t p : found) ::kill(p, SIGKILL);
  return {found.begin(), found.end()};
}

// The processes whose environment holds a run's mark (kRunMark=VALUE) for
// which `accept(PID, VALUE)` holds, read from /proc/PID/environ: the environment
// a process started with, which it inherited.
template <typename Accept>
std::vector<pid_t> marked(Accept accept) {
  std::vector<pid_t> out;
  DIR* proc = ::opendir("/proc");
  if (!proc) return out;
  const std::string name = std::string(kRunMark) + "=";
  while (const dirent* e = ::readdir(proc)) {
    char* end = nullptr;
    const long pid = std::strtol(e->d_name, &end, 10);
    if (pid <= 0 || *end != '\0') continue;
    char path[64];
    std::snprintf(path, sizeof path, "/proc/%ld/environ", pid);
    const std::string env = read_proc(path);  // empty: gone, or another user's
    for (std::size_t at = env.find(name); at != std::string::npos; at = env.find(name, at + 1)) {
      if (at != 0 && env[at - 1] != '\0') continue;
      const std::size_t value = at + name.size();
      if (accept(pid, std::string_view(env).substr(value, env.find('\0', value) - value)))
        out.push_back(static_cast<pid_t>(pid));
      break;
    }
  }
  ::closedir(proc);
  return out;
}

// A run's mark: this process (pid and start, which a killed tuner's orphans
// are known by) and the run.
std::string run_mark_value() {
  static std::atomic<unsigned long> next{0};
  const auto self = proc_stat(::getpid());
  return fmt::format("{}.{}.{}", ::getpid(), self ? self->start : 0, next++);
}

std::string pid_namespace(const char* proc_entry) {
  char link[128] = {};
  const ssize_t n = ::readlink(proc_entry, link, sizeof link - 1);
  return n > 0 ? std::string(link, static_cast<std::size_t>(n)) : std::string();
}

// Whether process `pid`, marked `mark`, was left by a tuner that is gone:
// one of this pid namespace (where the mark's pid means what it says) whose
// mark names a process that no longer runs.
bool left_by_a_tuner_gone(long pid, std::string_view mark) {
  static const std::string own = pid_namespace("/proc/self/ns/pid");
  unsigned long long owner = 0, ticks = 0;
  if (std::sscanf(std::string(mark).c_str(), "%llu.%llu.", &owner, &ticks) != 2 || owner == 0) return false;
  if (static_cast<pid_t>(owner) == ::getpid()) return false;
  char entry[64];
  std::snprintf(entry, sizeof entry, "/proc/%ld/ns/pid", pid);
  if (own.empty() || pid_namespace(entry) != own) return false;
  // A tuner killed is a zombie until its parent reaps it, and no parent may.
  const auto st = proc_stat(static_cast<long>(owner));
  return !st || st->start != ticks || st->state == 'Z' || st->state == 'X';
}

// The environment a program runs in: this process's, with `mark` in place
// of a mark it inherited.
std::vector<char*> environment_with(std::string& mark) {
  std::vector<char*> env;
  const std::string_view name = std::string_view(mark).substr(0, mark.find('=') + 1);
  for (char** e = environ; *e; ++e)
    if (!std::string_view(*e).starts_with(name)) env.push_back(*e);
  env.push_back(mark.data());
  env.push_back(nullptr);
  return env;
}

}  // namespace

std::vector<pid_t> kill_descendants(pid_t root, pid_t spare) {
  return kill_found([&] { return descendants(root); }, spare);
}

std::optional<CpuTimes> cpu_times_of_tree(pid_t root) {
  CpuTimes sum;
  bool any = false;
  walk_tree(
      root, [](pid_t) {},
      [&](const char* dir, const char* thread) {
        char path[64 + 256 + 16];  // "<dir>/<thread>/schedstat", whole
        std::snprintf(path, sizeof path, "%s/%s/schedstat", dir, thread);
        unsigned long long ran = 0, waited = 0;
        if (std::sscanf(read_proc(path).c_str(), "%llu %llu", &ran, &waited) == 2) {
          sum.ran += std::chrono::nanoseconds(ran);
          sum.waited += std::chrono::nanoseconds(waited);
          any = true;
        }
      });
  if (!any) return std::nullopt;
  return sum;
}

std::vector<pid_t> kill_orphaned_runs() {
  return kill_found([] { return marked(left_by_a_tuner_gone); }, 0);
}

bool signal_from_outside(int sig) {
  return sig == SIGKILL || sig == SIGTERM || sig == SIGINT || sig == SIGHUP || sig == SIGQUIT;
}

std::string describe_signal(int sig) {
  const char* abbrev = sigabbrev_np(sig);
  const char* text = strsignal(sig);
  return std::string("SIG") + (abbrev ? abbrev : std::to_string(sig)) + " (" + (text ? text : "?") + ")";
}

namespace {

// Keeps the first and the last kKeptOutputBytes of a stream.
class KeptOutput {
 public:
  void add(const char* data, std::size_t n) {
    const std::size_t to_head = std::min(n, kKeptOutputBytes - std::min(kKeptOutputBytes, head_.size()));
    head_.append(data, to_head);
    data += to_head;
    n -= to_head;
    if (n == 0) return;
    tail_.append(data, n);
    if (tail_.size() > 2 * kKeptOutputBytes) {
      const std::size_t cut = tail_.size() - kKeptOutputBytes;
      dropped_ += cut;
      tail_.erase(0, cut);
    }
  }
  std::string take(std::uint64_t& dropped) {
    if (tail_.size() > kKeptOutputBytes) {
      dropped_ += tail_.size() - kKeptOutputBytes;
      tail_.erase(0, tail_.size() - kKeptOutputBytes);
    }
    dropped = dropped_;
    if (dropped_ == 0) return head_ + tail_;
    return head_ + "\n[... " + std::to_string(dropped_) + " bytes of output not kept ...]\n" + tail_;
  }

 private:
  std::string head_, tail_;
  std::uint64_t dropped_ = 0;
};

// How long the output of a program that has exited is still read: what it
// wrote just before it exited, not what a background process it left
// behind writes later.
constexpr auto kDrainAfterExit = std::chrono::milliseconds(200);

// The longest poll() while waiting: how often a stop request (which may come
// from a signal to another thread) is looked at. The program's exit and its
// output wake the wait at once, whatever this is.
constexpr int kPollSliceMs = 50;

// Sees a child's exit the moment it happens, and reaps it: through a pidfd
// (pidfd_open, Linux 5.3), which poll() reports readable when the child
// exits, else through a thread blocked in waitpid() that writes to a pipe.
// Either way fd() wakes a poll() at the exit, and the time of the exit is
// taken then: a wall time is not rounded up to a polling interval (it was:
// every run took 50 ms more, in steps of 50 ms).
class ExitWatch {
 public:
  ExitWatch(pid_t pid, bool try_pidfd) : pid_(pid) {
#ifdef SYS_pidfd_open
    // ENOSYS before Linux 5.3, EPERM under some seccomp filters: the thread.
    if (try_pidfd) fd_ = static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));  // close-on-exec
#else
    (void)try_pidfd;
#endif
    if (fd_ >= 0) return;
    int p[2];
    if (::pipe2(p, O_CLOEXEC) != 0) {
      const int e = errno;
      abandon();
      errno = e;
      fail("pipe");
    }
    fd_ = p[0];
    wake_ = p[1];
    try {
      waiter_ = std::thread([this] {
        int status = 0;
        pid_t r;
        while ((r = ::waitpid(pid_, &status, 0)) < 0 && errno == EINTR) {
        }
        at_ = Clock::now();
        status_ = status;
        known_ = r == pid_;
        done_.store(true, std::memory_order_release);
        [[maybe_unused]] auto n = ::write(wake_, "x", 1);
      });
    } catch (...) {
      close_fd(fd_);
      close_fd(wake_);
      abandon();
      throw;
    }
  }
  ExitWatch(const ExitWatch&) = delete;
  ExitWatch& operator=(const ExitWatch&) = delete;
  // Kills the child if it has not been reaped (an exception left the wait).
  ~ExitWatch() {
    if (!done_.load(std::memory_order_acquire) || waiter_.joinable()) {
      int status;
      reap(status);
    }
    close_fd(fd_);
    close_fd(wake_);
  }

  // Readable once the child has exited; -1 once it has been reaped.
  int fd() const { return reaped_ ? -1 : fd_; }

  // True once the child has exited: it is reaped, with `status` its
  // waitpid() status (-1 if it could not be had) and `at` when it exited.
  bool exited(int& status, Clock::time_point& at) {
    if (waiter_.joinable()) {
      if (!done_.load(std::memory_order_acquire)) return false;
      waiter_.join();
    } else if (!reaped_) {
      int s = 0;
      const pid_t r = ::waitpid(pid_, &s, WNOHANG);
      if (r == 0 || (r < 0 && errno == EINTR)) return false;
      at_ = Clock::now();
      status_ = s;
      // ECHILD: someone else reaped it (SIGCHLD ignored); the pidfd says it ended.
      known_ = r == pid_;
      done_.store(true, std::memory_order_release);
    }
    reaped_ = true;
    status = known_ ? status_ : -1;
    at = at_;
    return true;
  }

  // Kills the child (SIGKILL, its process group too) and reaps it.
  void reap(int& status) {
    Clock::time_point at;
    if (exited(status, at)) return;
    ::kill(-pid_, SIGKILL);
    ::kill(pid_, SIGKILL);  // should it have left its group
    if (waiter_.joinable()) {
      waiter_.join();
    } else {
      int s = 0;
      pid_t r;
      while ((r = ::waitpid(pid_, &s, 0)) < 0 && errno == EINTR) {
      }
      status_ = s;
      known_ = r == pid_;
      done_.store(true, std::memory_order_release);
    }
    reaped_ = true;
    status = known_ ? status_ : -1;
  }

 private:
  // When the watch cannot be set up: the child is not left running.
  void abandon() {
    ::kill(-pid_, SIGKILL);
    ::kill(pid_, SIGKILL);
    int s;
    while (::waitpid(pid_, &s, 0) < 0 && errno == EINTR) {
    }
  }

  pid_t pid_;
  int fd_ = -1;
  int wake_ = -1;
  std::thread waiter_;
  std::atomic<bool> done_{false};
  bool reaped_ = false;
  // Written by the waiter before done_, read after it.
  Clock::time_point at_{};
  int status_ = 0;
  bool known_ = false;
};

ProcessResult run(const std::vector<std::string>& argv, std::chrono::duration<double> timeout,
                  const std::filesystem::path& cwd, bool try_pidfd) {
  ProcessResult result;
  int out[2];
  if (::pipe2(out, O_CLOEXEC) != 0) fail("pipe");
  SpawnAttributes sa;
  posix_spawn_file_actions_adddup2(&sa.actions, out[1], 1);
  posix_spawn_file_actions_adddup2(&sa.actions, out[1], 2);
  posix_spawn_file_actions_addopen(&sa.actions, 0, "/dev/null", O_RDONLY, 0);
  if (!cwd.empty()) posix_spawn_file_actions_addchdir_np(&sa.actions, cwd.c_str());
  auto args = c_argv(argv);
  // Once, before this process's first run: what runs of a tuner killed with
  // SIGKILL left running (it could not end them) ends now.
  static std::once_flag swept;
  std::call_once(swept, [] { kill_orphaned_runs(); });
  // Marks the program's processes, wherever they go: what it leaves in
  // another process group (coreutils' `timeout` makes one) or session (a
  // daemon) is found by it when the run ends.
  const std::string value = run_mark_value();
  std::string mark = std::string(kRunMark) + "=" + value;
  auto env = environment_with(mark);
  const auto start = Clock::now();
  pid_t pid = -1;
  int rc = posix_spawnp(&pid, args[0], &sa.actions, &sa.attr, args.data(), env.data());
  ::close(out[1]);
  if (rc != 0) {
    ::close(out[0]);
    errno = rc;
    fail("cannot start '" + argv[0] + "'");
  }
  struct CloseOnExit {
    int& fd;
    ~CloseOnExit() { close_fd(fd); }
  } close_output{out[0]};
  const auto deadline = deadline_after(start, timeout);
  // Before anything that may throw: its destructor kills and reaps the child.
  ExitWatch watch(pid, try_pidfd);
  KeptOutput kept;
  int status = 0;
  bool exited = false, eof = false;
  Clock::time_point exited_at;
  char buf[65536];
  for (;;) {
    if (!exited) exited = watch.exited(status, exited_at);
    const auto now = Clock::now();
    if (exited && (eof || now - exited_at >= kDrainAfterExit)) break;
    if (!exited && stop_requested()) {
      result.interrupted = true;
      break;
    }
    // Checked on every pass, not only when poll() times out: a program that
    // prints without pause must still stop at its deadline.
    if (!exited && now >= deadline) {
      result.timed_out = true;
      break;
    }
    const int wait_ms = std::min(ms_until(exited ? exited_at + kDrainAfterExit : deadline), kPollSliceMs);
    // The output, and the exit: whichever comes first ends the wait.
    pollfd p[2] = {{eof ? -1 : out[0], POLLIN, 0}, {exited ? -1 : watch.fd(), POLLIN, 0}};
    int n = ::poll(p, 2, wait_ms);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0 || eof || p[0].revents == 0) continue;
    ssize_t got = ::read(out[0], buf, sizeof buf);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) {
      eof = true;
      continue;
    }
    kept.add(buf, static_cast<std::size_t>(got));
  }
  close_fd(out[0]);
  // The program's process group: whatever it left running dies with it (a
  // timed-out program, or a background process holding its output).
  ::kill(-pid, SIGKILL);
  if (!exited) watch.reap(status);
  kill_found([&] { return marked([&](long, std::string_view v) { return v == value; }); }, 0);
  result.output = kept.take(result.output_dropped);
  // From the spawn to the exit, as the exit was seen: not the output's
  // drain after it. A program killed (timeout, stop) ran until now.
  result.wall = (exited ? exited_at : Clock::now()) - start;
  if (!result.timed_out && !result.interrupted) {
    if (status == -1) result.exit_code = -1;  // reaped elsewhere: how it ended is not known
    else if (WIFSIGNALED(status)) result.signal = WTERMSIG(status);
    else result.exit_code = WEXITSTATUS(status);
  }
  return result;
}

}  // namespace

ProcessResult run_process(const std::vector<std::string>& argv, std::chrono::duration<double> timeout,
                          const std::filesystem::path& cwd) {
  return run(argv, timeout, cwd, true);
}

ProcessResult run_process_without_pidfd(const std::vector<std::string>& argv, std::chrono::duration<double> timeout,
                                        const std::filesystem::path& cwd) {
  return run(argv, timeout, cwd, false);
}

Child::~Child() { kill(); }

namespace {

std::string random_token() {
  std::random_device rd;
  return fmt::format("tk{:08x}{:08x}", rd(), rd());
}

// The parent's environment with the worker's channel variables set.
std::vector<std::string> child_environment(const std::string& token) {
  std::vector<std::string> env;
  for (char** e = environ; *e; ++e) {
    const std::string_view v(*e);
    if (v.starts_with("TUNEKIT_REQUEST_FD=") || v.starts_with("TUNEKIT_REPLY_FD=") ||
        v.starts_with("TUNEKIT_REPLY_TOKEN=") || v.starts_with("TUNEKIT_PARENT_PID="))
      continue;
    env.emplace_back(v);
  }
  env.push_back("TUNEKIT_REQUEST_FD=3");
  env.push_back("TUNEKIT_REPLY_FD=4");
  env.push_back("TUNEKIT_REPLY_TOKEN=" + token);
  env.push_back("TUNEKIT_PARENT_PID=" + std::to_string(::getpid()));
  return env;
}

}  // namespace

void Child::start(const std::vector<std::string>& argv, const std::filesystem::path& log) {
  kill();
  int in[2], back[2], out[2];
  if (::pipe2(in, O_CLOEXEC) != 0) fail("pipe");
  if (::pipe2(back, O_CLOEXEC) != 0) fail("pipe");
  if (::pipe2(out, O_CLOEXEC) != 0) fail("pipe");
  SpawnAttributes sa;
  posix_spawn_file_actions_addopen(&sa.actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&sa.actions, out[1], 1);
  posix_spawn_file_actions_adddup2(&sa.actions, out[1], 2);
  posix_spawn_file_actions_adddup2(&sa.actions, in[0], 3);
  posix_spawn_file_actions_adddup2(&sa.actions, back[1], 4);
  auto args = c_argv(argv);
  token_ = random_token();
  const auto env = child_environment(token_);
  auto envp = c_argv(env);
  int rc = posix_spawn(&pid_, args[0], &sa.actions, &sa.attr, args.data(), envp.data());
  ::close(in[0]);
  ::close(back[1]);
  ::close(out[1]);
  if (rc != 0) {
    ::close(in[1]);
    ::close(back[0]);
    ::close(out[0]);
    pid_ = -1;
    errno = rc;
    fail("cannot start '" + argv[0] + "'");
  }
  to_child_ = in[1];
  from_child_ = back[0];
  output_ = out[0];
  log_path_ = log;
  log_ = ::open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  buffer_.clear();
  mark_output();
}

void Child::rotate_log() {
  struct stat st {};
  if (log_ < 0 || ::fstat(log_, &st) != 0 || static_cast<std::uintmax_t>(st.st_size) <= kLogRotateBytes) return;
  std::error_code ec;
  std::filesystem::rename(log_path_, log_path_.string() + ".1", ec);
  if (ec) return;  // keep writing where it is: a log is no reason to fail a trial
  close_fd(log_);
  log_ = ::open(log_path_.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
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

void Child::note_dropped() {
  if (log_ >= 0 && dropped_ > 0) {
    const std::string note = "\n[tunekit: " + std::to_string(dropped_) + " more bytes of output not kept]\n";
    [[maybe_unused]] auto n = ::write(log_, note.data(), note.size());
  }
  dropped_ = 0;
}

void Child::mark_output() {
  note_dropped();
  rotate_log();
  tail_.clear();
  logged_ = 0;
  dropped_ = 0;
}

std::string Child::output() const {
  std::string text = tail_;
  if (dropped_ > 0 || text.size() > kTailBytes)
    text = "..." + text.substr(text.size() - std::min(text.size(), kTailBytes));
  return text;
}

void Child::keep_output(const char* data, std::size_t n) {
  const std::size_t to_log = std::min(n, kLogBytesPerRequest - std::min(kLogBytesPerRequest, logged_));
  if (log_ >= 0 && to_log > 0) {
    [[maybe_unused]] auto w = ::write(log_, data, to_log);
  }
  logged_ += to_log;
  dropped_ += n - to_log;
  tail_.append(data, n);
  if (tail_.size() > 2 * kTailBytes) tail_.erase(0, tail_.size() - kTailBytes);
}

bool Child::drain_output(std::chrono::milliseconds wait) {
  const auto deadline = Clock::now() + wait;
  char buf[65536];
  while (output_ >= 0) {
    pollfd p{output_, POLLIN, 0};
    int n = ::poll(&p, 1, ms_until(deadline));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return true;
    ssize_t got = ::read(output_, buf, sizeof buf);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) {
      close_fd(output_);
      return false;
    }
    keep_output(buf, static_cast<std::size_t>(got));
  }
  return false;
}

std::optional<std::string> Child::receive(std::chrono::duration<double> timeout, WhenStopped when_stopped) {
  const auto deadline = deadline_after(Clock::now(), timeout);
  seen_stopped_ = false;
  // A child stopped by a signal would wait out the whole timeout; two looks
  // in a row, so that a stop a moment long (a shell's job control in the
  // kernel's children) is not taken for one that lasts.
  auto next_look = Clock::now() + kStopLook;
  int stopped_looks = 0;
  char buf[65536];
  for (;;) {
    if (auto nl = buffer_.find('\n'); nl != std::string::npos) {
      std::string line = buffer_.substr(0, nl);
      buffer_.erase(0, nl + 1);
      return line;
    }
    // No answer is this long: hand it over as it is, to fail as malformed.
    if (buffer_.size() > kMaxLineBytes) return std::exchange(buffer_, {});
    if (from_child_ < 0 || stop_requested() || Clock::now() >= deadline) return std::nullopt;
    if (when_stopped == WhenStopped::give_up && pid_ > 0 && Clock::now() >= next_look) {
      next_look = Clock::now() + kStopLook;
      stopped_looks = any_stopped(pid_, Stopped::by_signal) ? stopped_looks + 1 : 0;
      if (stopped_looks == 2) {
        seen_stopped_ = true;
        return std::nullopt;
      }
    }
    pollfd p[2] = {{from_child_, POLLIN, 0}, {output_, POLLIN, 0}};
    // Short slices: a stop request may come from a signal to another thread.
    int n = ::poll(p, 2, std::min(ms_until(deadline), 100));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) continue;
    if (p[1].revents) {
      ssize_t got = ::read(output_, buf, sizeof buf);
      if (got > 0) keep_output(buf, static_cast<std::size_t>(got));
      else if (got == 0 || errno != EINTR) close_fd(output_);
    }
    if (p[0].revents) {
      ssize_t got = ::read(from_child_, buf, sizeof buf);
      if (got < 0 && errno == EINTR) continue;
      if (got <= 0) {
        close_fd(from_child_);
        drain_output(std::chrono::milliseconds(100));
        return std::nullopt;
      }
      buffer_.append(buf, static_cast<std::size_t>(got));
    }
  }
}

void Child::kill() {
  if (pid_ > 0) {
    // What the worker's kernel started in a session of its own is out of
    // the group's reach; the worker keeps such processes as its children
    // (run_kept), so they are its descendants until it dies.
    std::vector<pid_t> killed = kill_descendants(pid_);
    ::kill(-pid_, SIGKILL);
    ::kill(pid_, SIGKILL);
    int status;
    while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
    }
    // A kernel that spun on (the worker's server, the threads it started)
    // must not run beside the next worker's measurements.
    await_ended(killed, kEndGrace);
  }
  pid_ = -1;
  close_fd(to_child_);
  close_fd(from_child_);
  close_fd(output_);
  note_dropped();
  close_fd(log_);
  buffer_.clear();
}

std::string Child::reap() {
  last_signal_ = 0;
  if (pid_ <= 0) return "not running";
  int status = 0;
  // The pipe closed, so it is exiting; give it a moment, then force it.
  for (int i = 0; i < 200; ++i) {
    pid_t r = ::waitpid(pid_, &status, WNOHANG);
    if (r == pid_) break;
    if (r < 0 && errno != EINTR) break;
    ::usleep(10000);
    if (i == 199) {
      const std::vector<pid_t> killed = kill_descendants(pid_);
      ::kill(-pid_, SIGKILL);
      ::waitpid(pid_, &status, 0);
      await_ended(killed, kEndGrace);
    }
  }
  // Whatever the worker's kernel left running in its group goes with it.
  ::kill(-pid_, SIGKILL);
  pid_ = -1;
  close_fd(to_child_);
  close_fd(from_child_);
  close_fd(output_);
  note_dropped();
  close_fd(log_);
  if (WIFSIGNALED(status)) {
    last_signal_ = WTERMSIG(status);
    return "killed by " + describe_signal(WTERMSIG(status));
  }
  if (WIFEXITED(status)) return "exited with code " + std::to_string(WEXITSTATUS(status));
  return "ended";
}

std::string shell_quote(const std::vector<std::string>& argv) {
  std::string out;
  for (const auto& a : argv) {
    if (!out.empty()) out += ' ';
    const bool plain = !a.empty() && a.find_first_not_of(
                                         "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
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
