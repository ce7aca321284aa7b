#pragma once
// Where a program built against an installed tunekit finds the worker
// program (tunekit-worker), which runs every kernel in a process of its own.
// The tunekit command line finds it beside itself or in the install layout;
// a program of one's own runs from anywhere, so the package's CMake config
// tells it: it defines TUNEKIT_PACKAGE_WORKER (the installed worker's path)
// for everything that links tunekit::tunekit, and this header, which
// tuner.hpp and cli.hpp include, notes it before main() runs.
// $TUNEKIT_WORKER still comes first (docs/architecture.md lists the order).
namespace tunekit {

// Notes `path` as the installed package's worker. Returns true (a value for
// the variable below to hold).
bool note_package_worker(const char* path);

#ifdef TUNEKIT_PACKAGE_WORKER
namespace detail {
inline const bool package_worker_noted = note_package_worker(TUNEKIT_PACKAGE_WORKER);
}  // namespace detail
#endif

}  // namespace tunekit
