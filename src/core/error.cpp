#include "tunekit/error.hpp"

#include "core/detail/text.hpp"

namespace tunekit {

std::string SourceLocation::str() const {
  std::string out = file;
  if (line > 0) {
    out += (out.empty() ? "line " : ":") + std::to_string(line);
    if (column > 0) out += ":" + std::to_string(column);
  } else if (column > 0) {
    // A flag's text has no lines: "--where A >= (column 11)", not "--where A >= :11".
    out += (out.empty() ? "column " : " (column ") + std::to_string(column) + (out.empty() ? "" : ")");
  }
  return out;
}

SourceLocation SourceLocation::shifted(int offset) const {
  SourceLocation s = *this;
  if (s.column > 0) s.column += offset;
  else s.column = offset + 1;
  return s;
}

// A message names what the user wrote, which may hold a NUL (that would end
// what() there) or an escape sequence (that a terminal would obey): both
// are shown instead.
static std::string located(const SourceLocation& where, const std::string& message) {
  std::string prefix = where.str();
  return detail::shown_controls(prefix.empty() ? message : prefix + ": " + message, true);
}

InputError::InputError(SourceLocation where, const std::string& message)
    : std::runtime_error(located(where, message)), where_(std::move(where)), message_(message) {}

}  // namespace tunekit
