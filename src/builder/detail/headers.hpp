#pragma once
// The kernel's own headers: what it includes with #include "NAME", found
// beside the including file, and what it includes from the include folders
// its flags name. They are part of the kernel: an edit to one must make
// another variant (the build cache) and another kernel (the store's
// spec_hash), or a resume serves results of the old code.
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tunekit::detail {

// `flags` with each relative include folder (-I, -iquote, -isystem,
// -idirafter, --include-path; joined to the option or the next flag) taken
// from `base`, the spec's folder: a spec's paths are its folder's, as its
// source is, not those of wherever tunekit runs. Nothing else changes.
std::vector<std::string> include_flags_from(const std::vector<std::string>& flags, const std::filesystem::path& base);

// The include folders that `flags` name, in their order.
std::vector<std::filesystem::path> include_folders(const std::vector<std::string>& flags);

// Calls `visit` with each of the source's own headers and its text, in the
// order local_headers_digest takes them (see there: which headers, and the
// bound on their number).
void for_each_local_header(const std::filesystem::path& source, std::string_view text,
                           const std::vector<std::filesystem::path>& folders,
                           const std::function<void(const std::filesystem::path&, const std::string&)>& visit);

// A digest of each such header's path and text, followed recursively
// (each file once, at most 4096 files), from `text`, the source's as already
// read (only headers are read here); "" when there is none. #include "NAME"
// is looked for beside its includer, then in `folders`; #include <NAME> in
// `folders` only. A header found in neither (a system one) is left out.
std::string local_headers_digest(const std::filesystem::path& source, std::string_view text,
                                 const std::vector<std::filesystem::path>& folders = {});

// The same for a source built with `flags` (as include_flags_from gives
// them): the include folders they name, and the headers they force in
// (`-include FILE`, which the compiler reads as if the source's first line
// included it; a relative FILE is looked for beside the source).
std::string headers_digest_for(const std::filesystem::path& source, std::string_view text,
                               const std::vector<std::string>& flags);

// The texts of the headers headers_digest_for digests, one after another:
// where a word the kernel reads may be found.
std::string headers_text_for(const std::filesystem::path& source, std::string_view text,
                             const std::vector<std::string>& flags);

// A digest of the files `flags` hand the compiler besides the source, by
// their text: each operand (a flag not starting with '-', the value of
// -include or -T too) that names a regular file, as the compiler finds it
// from the folder the build runs in (the process's), and each -lNAME found
// in the flags' own -L folders (libNAME.so, then libNAME.a). An extra source,
// object, library or linker script edited is another build, and another
// kernel; "" when the flags name no file. What the linker finds on its own
// (system folders, $LIBRARY_PATH) and files inside joined options
// (-Wl,-T,FILE) are not followed. Read once per file and process while its
// size and time stay.
std::string flag_files_digest(const std::vector<std::string>& flags);

// A digest of `file`'s bytes; nullopt when it cannot be read.
std::optional<std::string> file_digest(const std::filesystem::path& file);

}  // namespace tunekit::detail
