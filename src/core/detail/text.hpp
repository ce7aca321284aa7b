#pragma once
// Text helpers every component may use: typo suggestions and joining.
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tunekit::detail {

// Levenshtein distance, case-insensitive.
std::size_t edit_distance(std::string_view a, std::string_view b);
// The candidate closest to `word` when it is close enough to be a likely typo.
std::optional<std::string> closest_match(std::string_view word, const std::vector<std::string>& candidates);

std::string join(const std::vector<std::string>& items, std::string_view sep = ", ");

// The offset of the first byte of `text` that is not part of well-formed
// UTF-8 (overlong forms, surrogates and code points past U+10FFFF are not),
// or nullopt when all of it is.
std::optional<std::size_t> first_invalid_utf8(std::string_view text);

}  // namespace tunekit::detail
