#pragma once
// Child processes without a shell: argv goes to execvp as is, so a value
// with spaces, quotes or `$(...)` stays literal.
#include <sys/types.h>

#include <chrono>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace tunekit::detail {

struct ProcessResult {
  int exit_code = -1;  // valid when signal == 0 and !timed_out
  int signal = 0;      // terminating signal, 0 if it exited
  bool timed_out = false;
  std::string output;  // stdout and stderr, interleaved
  std::chrono::duration<double> wall{0};
};

// Runs argv[0] (searched in PATH) to completion, capturing its output.
// Throws std::system_error only when the process cannot be started.
ProcessResult run_process(const std::vector<std::string>& argv, std::chrono::duration<double> timeout,
                          const std::filesystem::path& cwd = {});

// `argv` as one line a POSIX shell splits back into the same words (for
// display only: tunekit itself never runs a shell).
std::string shell_quote(const std::vector<std::string>& argv);

// "SIGSEGV (Segmentation fault)".
std::string describe_signal(int sig);

// A long-lived child talking over two pipes: we write requests to its stdin,
// it answers on its fd 3. Its stdout and stderr go to `log`.
class Child {
 public:
  Child() = default;
  ~Child();
  Child(const Child&) = delete;
  Child& operator=(const Child&) = delete;

  void start(const std::vector<std::string>& argv, const std::filesystem::path& log);
  bool running() const { return pid_ > 0; }
  // True once the child closed its answer pipe (it exited or crashed).
  bool closed() const { return from_child_ < 0; }
  // Sends one line (a newline is appended). False if the child is gone.
  bool send(const std::string& line);
  // Waits up to `timeout` for one line. nullopt on timeout or EOF; then
  // exited() tells which.
  std::optional<std::string> receive(std::chrono::duration<double> timeout);
  // Kills (SIGKILL) and reaps. Returns the wait status description.
  void kill();
  // Reaps an exited child; returns its terminating signal or exit code text.
  std::string reap();

 private:
  pid_t pid_ = -1;
  int to_child_ = -1;
  int from_child_ = -1;
  std::string buffer_;
};

}  // namespace tunekit::detail
