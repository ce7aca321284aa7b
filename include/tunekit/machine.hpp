#pragma once
// A machine as constraints see it: a device name and its properties
// (l1d_bytes, cores, shared_memory_per_block_optin, ...), which trials record
// and policies read back.
#include <string>
#include <string_view>

#include "tunekit/value.hpp"

namespace tunekit {

struct MachineInfo {
  std::string device;   // e.g. "cpu: AMD EPYC (2 cores)"
  Bindings properties;  // l1d_bytes, l2_bytes, l3_bytes, cores, ...
};

// A machine as one JSON object, {"device": name, property: value, ...}: the
// form trials record, `tunekit devices --json` prints and `tunekit space
// --properties` reads. machine_from_json throws std::invalid_argument for
// anything else (a value that is neither a number nor a string, say).
std::string machine_to_json(const MachineInfo& m);
MachineInfo machine_from_json(std::string_view json);
// machine_from_json of a file (`--properties FILE`): throws InputError naming
// the file and the form expected.
MachineInfo load_machine_file(const std::string& file);

}  // namespace tunekit
