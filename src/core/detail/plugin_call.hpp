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

// `f()`, an InputError passed on as it is (located already), and a stop's
// failure too (no fault of the plugin's).
template <typename F>
auto call_plugin(std::string_view kind, std::string_view name, const char* call, F&& f) -> decltype(f()) {
  try {
    return f();
  } catch (const InputError&) {
    throw;
  } catch (const std::exception& e) {
    if (stop_requested()) throw;
    throw std::runtime_error(fmt::format("the {} '{}' failed in {}(): {}", kind, name, call, e.what()));
  }
}

}  // namespace tunekit::detail
