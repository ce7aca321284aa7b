// tunekit-worker BACKEND [DEVICE]: runs variants for one device in a process
// of its own, so a kernel that crashes, hangs or corrupts its context takes
// down this process, not the tuner. Requests arrive on stdin; answers go to
// fd 3 (stdout and stderr are the kernel's, and go to a log).
#include <cstdio>
#include <cstdlib>
#include <string>

#include "tunekit/backend.hpp"

int main(int argc, char** argv) {
  const std::string name = argc > 1 ? argv[1] : "cpu";
  const int device = argc > 2 ? std::atoi(argv[2]) : 0;
  const tunekit::BackendInfo* backend = tunekit::backends().find(name);
  if (!backend || !backend->run_worker) {
    std::fprintf(stderr, "tunekit-worker: %s\n",
                 backend ? ("the " + name + " backend runs no worker").c_str()
                         : tunekit::unknown_name_message("backend", name, tunekit::backends().names()).c_str());
    return 2;
  }
  return backend->run_worker(0, 3, device);
}
