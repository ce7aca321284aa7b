#pragma once
// The kernel's own headers: what it includes with #include "NAME", found
// beside the including file. They are part of the kernel: an edit to one
// must make another variant (the build cache) and another kernel (the
// store's spec_hash), or a resume serves results of the old code.
#include <filesystem>
#include <string>
#include <string_view>

namespace tunekit::detail {

// A digest of each such header's path and text, followed recursively
// (each file once, at most 256 files), from `text`, the source's as already
// read (only headers are read here); "" when there is none. A header not
// found beside its includer (a system one, one on an -I path) is left out.
std::string local_headers_digest(const std::filesystem::path& source, std::string_view text);

}  // namespace tunekit::detail
