#pragma once
// A seam for the tests that count how often a command reads a store's whole
// file to check it (PRAGMA integrity_check on open): half a second for a
// 150 MB store, so a command runs it once per file.
#include <cstdint>

namespace tunekit::detail {

// The whole-file checks this process has run so far.
std::uint64_t store_whole_file_checks();

}  // namespace tunekit::detail
