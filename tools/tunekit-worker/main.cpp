// tunekit-worker: runs variants for the CPU backend in a process of its own,
// so a kernel that crashes or hangs takes down this process, not the tuner.
// Requests arrive on stdin; answers go to fd 3 (stdout is the kernel's).
#include "backend/cpu/detail/worker.hpp"

int main() { return tunekit::cpu::run_worker(0, 3); }
