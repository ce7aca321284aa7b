#include "tunekit/status.hpp"

namespace tunekit {

namespace {
constexpr Named<Status> kNames[] = {
    {Status::ok, "ok"},
    {Status::invalid, "invalid"},
    {Status::compile_error, "compile_error"},
    {Status::resource_limit, "resource_limit"},
    {Status::launch_error, "launch_error"},
    {Status::crash, "crash"},
    {Status::timeout, "timeout"},
    {Status::wrong_result, "wrong_result"},
};
}  // namespace

NameTable<Status> status_names() { return kNames; }
std::string_view to_string(Status s) { return name_of(status_names(), s); }
std::optional<Status> status_from_string(std::string_view s) { return value_named(status_names(), s); }

}  // namespace tunekit
