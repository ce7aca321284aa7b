#pragma once
// Child processes without a shell: argv goes to execvp as is, so a value
// with spaces, quotes or `$(...)` stays literal.
#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tunekit::detail {

struct ProcessResult {
  int exit_code = -1;  // valid when signal == 0 and !timed_out
  int signal = 0;      // terminating signal, 0 if it exited
  bool timed_out = false;
  bool interrupted = false;          // stop_requested() (stop.hpp): killed before it ended
  std::string output;                // stdout and stderr, interleaved; at most the limit's head and tail
  std::uint64_t output_dropped = 0;  // bytes of output between the head and the tail, not kept
  std::chrono::duration<double> wall{0};
};

// What run_process keeps of a child's output: this much of its head and of
// its tail. A program that prints gigabytes costs no memory.
inline constexpr std::size_t kKeptOutputBytes = 1 << 20;

// Runs argv[0] (searched in PATH) to completion, capturing its output.
// `wall` is the time from the spawn to the program's exit, taken when the
// exit happens (not when a poll notices it); for a program killed at its
// timeout or by a stop request, until it was killed.
// The timeout holds however much the program prints. When the program
// itself has exited, a background process it left holding the output does
// not keep the run going. When the run ends, every process it started is
// killed: its process group, and those elsewhere (another group, another
// session) that still carry kRunMark in their environment, as it passed
// it on.
// Throws std::system_error only when the process cannot be started.
ProcessResult run_process(const std::vector<std::string>& argv, std::chrono::duration<double> timeout,
                          const std::filesystem::path& cwd = {});
// The environment variable that marks one run's processes (a value of its
// own per run).
inline constexpr std::string_view kRunMark = "TUNEKIT_RUN_MARK";
// The same, as on a kernel without pidfd_open (Linux before 5.3): the
// program's exit is waited for in a thread. For tests; run_process falls
// back to it by itself.
ProcessResult run_process_without_pidfd(const std::vector<std::string>& argv, std::chrono::duration<double> timeout,
                                        const std::filesystem::path& cwd = {});

// `argv` as one line a POSIX shell splits back into the same words (for
// display only: tunekit itself never runs a shell).
std::string shell_quote(const std::vector<std::string>& argv);

// "SIGSEGV (Segmentation fault)".
std::string describe_signal(int sig);

// Whether a process killed by `sig` was most likely killed from outside: the
// OOM killer's SIGKILL, a user's SIGTERM, SIGINT, SIGHUP or SIGQUIT (a program
// can raise them too, but then it is the rare case).
bool signal_from_outside(int sig);

// Kills (SIGKILL) every process descended from `root`, found through /proc,
// and returns their pids: also those that left its process group or its
// session, which a group kill misses. `spare` itself is left running (its
// descendants are not). Each is stopped as it is found, so that none forks
// past the search. `root` itself is not killed.
std::vector<pid_t> kill_descendants(pid_t root, pid_t spare = 0);

// How long the threads of `root` and of its descendants have run on a CPU,
// and have waited for one while they could run (on a run queue, as other
// processes held the cores), since each started: /proc/PID/task/TID/schedstat.
// nullopt where the kernel keeps no such count (no CONFIG_SCHED_INFO).
struct CpuTimes {
  std::chrono::nanoseconds ran{0};
  std::chrono::nanoseconds waited{0};
};
std::optional<CpuTimes> cpu_times_of_tree(pid_t root);

// Kills (SIGKILL) what runs of run_process left running when their tuner
// was killed with SIGKILL, which could not end them: the processes of this
// pid namespace whose kRunMark names a process that no longer runs. Each
// process does so once by itself, before its first run.
std::vector<pid_t> kill_orphaned_runs();

// A name part no other writer, in this process or another, uses at the
// same time: two tuners sharing a build cache or an output folder each write
// a file of their own and rename it in.
std::string unique_suffix();

// `name` searched in $PATH as a shell would (programs are spawned without
// one): the path of the first executable file so named; `name` itself when
// it holds a '/' or none is found (starting it then fails and says so).
std::string on_path(const std::string& name);

// Waits, up to `limit`, until none of `pids` runs any more (each is a
// zombie or gone), and says whether that came. A process sent SIGKILL runs
// on until its exit is scheduled, which on a busy machine is not at once.
bool await_ended(const std::vector<pid_t>& pids, std::chrono::milliseconds limit);

// How long processes killed on the way to the next request or worker are
// waited for: past it, one is taken to be stuck in the kernel (a device
// driver's call), which no wait ends.
inline constexpr std::chrono::seconds kEndGrace{5};

// The folder for temporary files: $TMPDIR, else /tmp. Where $TMPDIR names
// no folder, an InputError that names it and says what it should be
// (std::filesystem::temp_directory_path throws a filesystem_error that names
// neither the variable nor a way out).
std::filesystem::path temp_folder();

// Whether `root` or a process descended from it is stopped: by a signal
// (SIGSTOP, SIGTSTP, SIGTTIN, SIGTTOU), which nothing but a SIGCONT ends,
// or, with Stopped::or_traced, also held by a debugger. Either way it cannot
// have run to its end however long it was given.
enum class Stopped { by_signal, or_traced };
bool any_stopped(pid_t root, Stopped which);

// A long-lived child talking over two private pipes: requests go to the
// descriptor named by $TUNEKIT_REQUEST_FD, answers come back on
// $TUNEKIT_REPLY_FD, each prefixed with $TUNEKIT_REPLY_TOKEN. Its stdin is
// /dev/null; its stdout and stderr come back through a third pipe that the
// tuner drains while it waits: at most kLogBytesPerRequest of it per request
// go to `log`, and the last few kilobytes are kept for error messages.
// The child is in a process group of its own and, through
// $TUNEKIT_PARENT_PID, asks to be killed when this process dies.
class Child {
 public:
  static constexpr std::size_t kLogBytesPerRequest = 1 << 20;
  // A log larger than this when a child starts, or when a request starts,
  // is moved to LOG.1 (a worker that lives long logs up to
  // kLogBytesPerRequest a request).
  static constexpr std::uintmax_t kLogRotateBytes = 64ull << 20;
  // What output() keeps, and the longest answer line taken.
  static constexpr std::size_t kTailBytes = 2000;
  static constexpr std::size_t kMaxLineBytes = 64 << 20;

  Child() = default;
  ~Child();
  Child(const Child&) = delete;
  Child& operator=(const Child&) = delete;

  void start(const std::vector<std::string>& argv, const std::filesystem::path& log);
  bool running() const { return pid_ > 0; }
  pid_t pid() const { return pid_; }
  // True once the child closed its answer pipe (it exited or crashed).
  bool closed() const { return from_child_ < 0; }
  const std::string& token() const { return token_; }
  // Sends one line (a newline is appended). False if the child is gone.
  bool send(const std::string& line);
  // Waits up to `timeout` for one line, draining the child's output
  // meanwhile. nullopt on timeout, on EOF (closed() tells which), when
  // stop_requested(), and, under WhenStopped::give_up, when the child (or a
  // descendant) is seen stopped by a signal at two looks kStopLook apart
  // (seen_stopped() tells): a caller that can tell a stop from a hang asks
  // for it; one that cannot would read it as a timeout.
  enum class WhenStopped { wait, give_up };
  std::optional<std::string> receive(std::chrono::duration<double> timeout,
                                     WhenStopped when_stopped = WhenStopped::wait);
  bool seen_stopped() const { return seen_stopped_; }
  // How often receive() looks for a stopped child: each look reads the
  // /proc files of the child's process tree.
  static constexpr std::chrono::milliseconds kStopLook{500};
  // Kills (SIGKILL, the whole process group) and reaps.
  void kill();
  // Reaps an exited child; returns its terminating signal or exit code text.
  std::string reap();
  // The signal that ended the child reaped last (0: it exited).
  int last_signal() const { return last_signal_; }
  // Starts a new request's output: output() then returns what the child
  // printed since (its last few kilobytes).
  void mark_output();
  std::string output() const;

 private:
  // Reads what the output pipe has within `wait`; false at EOF.
  bool drain_output(std::chrono::milliseconds wait);
  void keep_output(const char* data, std::size_t n);
  // Says in the log how much of this request's output it does not hold.
  void note_dropped();
  // Moves a log over kLogRotateBytes to LOG.1 and opens a fresh one.
  void rotate_log();

  pid_t pid_ = -1;
  int to_child_ = -1;
  int from_child_ = -1;
  int output_ = -1;
  int log_ = -1;
  std::filesystem::path log_path_;
  std::string token_;
  std::string buffer_;
  std::string tail_;
  std::size_t logged_ = 0;   // this request's output written to the log
  std::size_t dropped_ = 0;  // and not written
  int last_signal_ = 0;
  bool seen_stopped_ = false;  // the last receive() ended on a stopped child
};

}  // namespace tunekit::detail
