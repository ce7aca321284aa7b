#pragma once
namespace tunekit::cpu {
// The worker's main loop: requests on `in_fd`, answers on `out_fd`, until
// EOF. Runs inside the tunekit-worker process.
int run_worker(int in_fd, int out_fd);
}  // namespace tunekit::cpu
