#pragma once
// A plugin's call, with what it throws named: "the strategy 'mine' failed in
// next(): ...". Every registry's plugins (strategies, seed providers) fail
// this way, so the message says whose failure it is.
#include <stdexcept>
#include <string_view>

#include <fmt/format.h>

#include "tunekit/error.hpp"
#include "tunekit/stop.hpp"

namespace tunekit::detail {

// Within a catch: the exception being handled, passed on named. An
// InputError goes as it is (located already), and so does a stop's failure
// (no fault of the plugin's). `at` names what the call was about
// ("{BM: 64}"), where there is one. What is not a std::exception (a
// plugin's `throw 42`) is a failure too, not std::terminate.
[[noreturn]] inline void rethrow_named(std::string_view kind, std::string_view name, const char* call,
                                       std::string_view at = {}) {
  const auto failed = [&](std::string_view what) {
    return std::runtime_error(
        fmt::format("the {} '{}' failed in {}(){}{}: {}", kind, name, call, at.empty() ? "" : " at ", at, what));
  };
  try {
    throw;
  } catch (const InputError&) {
    throw;
  } catch (const std::exception& e) {
    if (stop_requested()) throw;
    throw failed(e.what());
  } catch (...) {
    throw failed("it threw something that is not a std::exception");
  }
}

// `f()`, with what it throws passed on named.
template <typename F>
auto call_plugin(std::string_view kind, std::string_view name, const char* call, F&& f, std::string_view at = {})
    -> decltype(f()) {
  try {
    return f();
  } catch (...) {
    rethrow_named(kind, name, call, at);
  }
}

}  // namespace tunekit::detail
