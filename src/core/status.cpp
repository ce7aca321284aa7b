#include "tunekit/status.hpp"

#include <array>
#include <utility>

namespace tunekit {

namespace {
constexpr std::array<std::pair<Status, std::string_view>, 9> kNames{{
    {Status::ok, "ok"},
    {Status::slower, "slower"},
    {Status::invalid, "invalid"},
    {Status::compile_error, "compile_error"},
    {Status::resource_limit, "resource_limit"},
    {Status::launch_error, "launch_error"},
    {Status::crash, "crash"},
    {Status::timeout, "timeout"},
    {Status::wrong_result, "wrong_result"},
}};
}  // namespace

std::string_view to_string(Status s) {
  for (auto [status, name] : kNames)
    if (status == s) return name;
  return "unknown";
}

std::optional<Status> status_from_string(std::string_view s) {
  for (auto [status, name] : kNames)
    if (name == s) return status;
  return std::nullopt;
}

}  // namespace tunekit
