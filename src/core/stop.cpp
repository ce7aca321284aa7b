#include "tunekit/stop.hpp"

#include <atomic>

namespace tunekit {

namespace {
// Lock-free, so a signal handler may set it.
std::atomic<bool> g_stop{false};
static_assert(std::atomic<bool>::is_always_lock_free);
}  // namespace

void request_stop() noexcept { g_stop.store(true, std::memory_order_relaxed); }
bool stop_requested() noexcept { return g_stop.load(std::memory_order_relaxed); }
void clear_stop() noexcept { g_stop.store(false, std::memory_order_relaxed); }

}  // namespace tunekit
