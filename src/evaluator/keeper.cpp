#include "evaluator/detail/keeper.hpp"

#include <dirent.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>

#include "core/detail/process.hpp"

namespace tunekit::detail {

namespace {

pid_t g_keeper = 0;  // in the server: its keeper's pid

volatile sig_atomic_t g_orphaned = 0;
void on_orphaned(int) { g_orphaned = 1; }

// True when `pid` has a child other than `spare` (its threads' children
// files). Unreadable files (a kernel without CONFIG_PROC_CHILDREN) say yes,
// so that the full search runs.
bool has_other_child(pid_t pid, pid_t spare) {
  const std::string tasks = "/proc/" + std::to_string(pid) + "/task";
  DIR* dir = ::opendir(tasks.c_str());
  if (!dir) return true;
  bool found = false;
  while (const dirent* e = ::readdir(dir)) {
    if (e->d_name[0] == '.') continue;
    std::ifstream children(tasks + "/" + e->d_name + "/children");
    if (!children) {
      found = true;
      break;
    }
    for (long child; children >> child;)
      if (child != spare) found = true;
    if (found) break;
  }
  ::closedir(dir);
  return found;
}

// Reaps this process's children until none is left.
void reap_all() {
  int status;
  while (::waitpid(-1, &status, 0) > 0 || errno == EINTR) {
  }
}

}  // namespace

int run_kept(const std::function<int()>& serve) {
  if (::prctl(PR_SET_CHILD_SUBREAPER, 1) != 0) return serve();
  const pid_t keeper = ::getpid();
  const pid_t server = ::fork();
  if (server < 0) return serve();
  if (server == 0) {
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != keeper) std::_Exit(1);
    g_keeper = keeper;
    return serve();
  }
  // The keeper holds none of the server's descriptors open: the tuner sees
  // the channel close when the server ends. Its stdout and stderr stay, for
  // its own last words.
  ::close_range(3, ~0u, 0);
  // The tuner's end reaches the keeper (the PDEATHSIG the worker set up is
  // inherited by it as the original process) as SIGTERM here, so that it
  // ends the server's strays before it goes.
  struct sigaction sa {};
  sa.sa_handler = on_orphaned;
  ::sigaction(SIGTERM, &sa, nullptr);  // no SA_RESTART: waitpid returns
  ::prctl(PR_SET_PDEATHSIG, SIGTERM);
  int status = 0;
  int end_by = 0;  // the signal this process ends by
  for (;;) {
    int s = 0;
    const pid_t r = ::waitpid(-1, &s, 0);
    if (r == server) {
      status = s;
      if (WIFSIGNALED(status)) end_by = WTERMSIG(status);
      break;
    }
    if (r < 0 && errno == EINTR && g_orphaned) {
      // The tuner's end, or a SIGTERM from outside (a user who picked this
      // process out of ps): the tuner, if alive, must see a worker killed by
      // a signal, the environment's doing, and not an exit of 0, which it
      // reads as the kernel's crash and stores against the config.
      ::kill(server, SIGKILL);
      end_by = SIGTERM;
      break;
    }
    if (r < 0 && errno == ECHILD) break;
  }
  kill_descendants(keeper);
  reap_all();
  if (end_by != 0) {
    const int sig = end_by;
    const rlimit no_core{0, 0};
    ::setrlimit(RLIMIT_CORE, &no_core);  // the server dumped its own, if any
    ::signal(sig, SIG_DFL);
    sigset_t only;
    sigemptyset(&only);
    sigaddset(&only, sig);
    ::sigprocmask(SIG_UNBLOCK, &only, nullptr);
    ::raise(sig);
  }
  std::_Exit(WIFEXITED(status) ? WEXITSTATUS(status) : 1);
}

void end_strays() {
  if (g_keeper == 0) return;
  const pid_t self = ::getpid();
  if (!has_other_child(g_keeper, self) && !has_other_child(self, 0)) return;
  // The next request must not run beside them. The killed children of this
  // process are this process's to reap (the keeper reaps its own); one
  // started since (by a thread a kernel left running) is not waited for.
  await_ended(kill_descendants(g_keeper, self), kEndGrace);
  for (int status;;) {
    const pid_t r = ::waitpid(-1, &status, WNOHANG);
    if (r == 0 || (r < 0 && errno != EINTR)) break;
  }
}

}  // namespace tunekit::detail
