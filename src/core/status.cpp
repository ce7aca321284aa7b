#include "tunekit/status.hpp"

namespace tunekit {

namespace {
constexpr Named<Status> kNames[] = {
    {Status::ok, "ok"},
    {Status::slower, "slower"},
    {Status::invalid, "invalid"},
    {Status::compile_error, "compile_error"},
    {Status::resource_limit, "resource_limit"},
    {Status::launch_error, "launch_error"},
    {Status::crash, "crash"},
    {Status::timeout, "timeout"},
    {Status::wrong_result, "wrong_result"},
};
constexpr Named<Fault> kFaults[] = {
    {Fault::none, "none"},
    {Fault::config, "config"},
    {Fault::environment, "environment"},
};
}  // namespace

NameTable<Status> status_names() { return kNames; }
std::string_view to_string(Status s) { return name_of(status_names(), s); }
std::optional<Status> status_from_string(std::string_view s) { return value_named(status_names(), s); }

NameTable<Fault> fault_names() { return kFaults; }
std::string_view to_string(Fault f) { return name_of(fault_names(), f); }
std::optional<Fault> fault_from_string(std::string_view s) { return value_named(fault_names(), s); }

}  // namespace tunekit
