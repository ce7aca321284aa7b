#pragma once
// What the subcommands' --json prints.
#include <string>

#include <nlohmann/json.hpp>

namespace tunekit::cli {

// `j` as JSON text (one line, or indented by `indent`), each byte of a string
// that is not UTF-8 written as U+FFFD: a path is the file system's bytes, and
// a name in a store or a cache may be anything, where dump() alone throws
// and --json printed nothing.
template <typename Json>
std::string json_text(const Json& j, int indent = -1) {
  return j.dump(indent, ' ', false, Json::error_handler_t::replace);
}

}  // namespace tunekit::cli
