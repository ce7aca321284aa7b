// tunekit-worker BACKEND [DEVICE]: runs variants for one device in a process
// of its own, so a kernel that crashes, hangs or corrupts its context takes
// down this process, not the tuner. Requests arrive on one private pipe and
// answers leave on another (see channel.hpp); stdout and stderr are the
// kernel's, and the tuner keeps a bounded part of them in a log.
// tunekit-worker BACKEND DEVICE build ARGS...: one build, for a backend
// whose compiler runs in its driver (BackendInfo::run_build); its output
// is the build's log.
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "evaluator/detail/channel.hpp"
#include "evaluator/detail/keeper.hpp"
#include "tunekit/backend.hpp"

int main(int argc, char** argv) {
  const std::string name = argc > 1 ? argv[1] : "cpu";
  const int device = argc > 2 ? std::atoi(argv[2]) : 0;
  const tunekit::BackendInfo* backend = tunekit::backends().find(name);
  if (backend && argc > 3 && std::string(argv[3]) == "build") {
    if (!backend->run_build) {
      std::fprintf(stderr, "tunekit-worker: the %s backend builds in the tuner\n", name.c_str());
      return 2;
    }
    return backend->run_build(device, std::vector<std::string>(argv + 4, argv + argc));
  }
  if (!backend || !backend->run_worker) {
    std::fprintf(stderr, "tunekit-worker: %s\n",
                 backend ? ("the " + name + " backend runs no worker").c_str()
                         : tunekit::unknown_name_message("backend", name, tunekit::backends().names()).c_str());
    return 2;
  }
  const tunekit::detail::Channel channel = tunekit::detail::open_worker_channel();
  return tunekit::detail::run_kept([&] { return backend->run_worker(channel.requests, channel.replies, device); });
}
