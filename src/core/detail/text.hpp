#pragma once
// Text helpers every component may use: typo suggestions and joining.
#include <cstddef>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tunekit/value.hpp"

namespace tunekit::detail {

// Optimal string alignment distance (Levenshtein's, with a swap of two
// adjacent characters one edit), case-insensitive.
std::size_t edit_distance(std::string_view a, std::string_view b);
// The candidate closest to `word` when it is close enough to be a likely typo.
std::optional<std::string> closest_match(std::string_view word, const std::vector<std::string>& candidates);

std::string join(const std::vector<std::string>& items, std::string_view sep = ", ");

// `file`'s extension in lower case (".yaml" for k.YAML): what kind of file
// a spec, T1 or data file is does not depend on how its name was typed.
std::string lowercase_extension(const std::filesystem::path& file);

// How `v` reads in a line of console text ({A: 64, T: float}): v.str(),
// but a string that would break the line, not read as one value, or read
// as another type is quoted with Python's escapes ('a\nb', 'unsigned int',
// '', '64'): one that is empty, or holds a blank, a control character, a
// quote, a backslash, a comma, a colon or a brace, or that a spec would read
// unquoted as a number, a bool or a null (64, 0x40, .inf, true, null).
std::string shown_value(const Value& v);
// A size (or any bindings) as every printed line shows one: "{K: 512, M:
// 64}", each value as shown_value() shows it; "{}" for none.
std::string shown_bindings(const Bindings& b);

// A letter, a digit or '_': a character of a C-like identifier.
bool identifier_char(char c);
// Whether `text` has `word` as a whole identifier (not inside a longer one).
bool has_word(std::string_view text, std::string_view word);
// The distinct identifiers of `text` (runs of identifier characters that do
// not start with a digit), sorted.
std::vector<std::string> identifiers_in(std::string_view text);

// Where a JSON parser stopped in `text`, as file:line:column: nlohmann's
// parse_error gives the byte (`byte`, counted from 1) and a message
// (`what`) that names its exception id and repeats the place; returns the
// line, the column and the message without either.
struct JsonErrorPlace {
  int line = 1, column = 1;
  std::string message;
};
JsonErrorPlace json_error_place(std::string_view text, std::size_t byte, std::string_view what);

// The offset of the first byte of `text` that is not part of well-formed
// UTF-8 (overlong forms, surrogates and code points past U+10FFFF are not),
// or nullopt when all of it is.
std::optional<std::size_t> first_invalid_utf8(std::string_view text);

// `text` with its control characters shown rather than obeyed, when it goes
// to a terminal: C0 and DEL as ^X (^@ for NUL, ^[ for ESC), C1 (U+0080 to
// U+009F) as <U+0085>. Newlines and tabs are kept where `keep_lines`, else a
// tab is a space (and a newline ^J).
std::string shown_controls(std::string_view text, bool keep_lines);

// `at`, moved back to the start of the UTF-8 character it falls in (past
// the end: text.size()), so that text cut there keeps whole characters.
std::size_t utf8_floor(std::string_view text, std::size_t at);

}  // namespace tunekit::detail
