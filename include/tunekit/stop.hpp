#pragma once
// Stopping a run from outside (Ctrl-C, SIGTERM): a flag that a signal
// handler may set, and that every wait in the tuner, the worker protocol and
// child processes polls. The trial in flight is abandoned (never stored:
// being stopped is no config's fault), what is done stays stored, and tune()
// returns what it measured.
namespace tunekit {

void request_stop() noexcept;  // async-signal-safe
bool stop_requested() noexcept;
void clear_stop() noexcept;

}  // namespace tunekit
