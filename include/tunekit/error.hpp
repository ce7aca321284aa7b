#pragma once
// Errors in a user's input carry where they are, so the message can say
// "spec.yaml:12:7: ..." and the user can jump there.
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace tunekit {

struct SourceLocation {
  std::string file;  // may be empty (an expression given on the command line)
  int line = 0;      // 1-based; 0 = unknown
  int column = 0;    // 1-based; 0 = unknown

  // "file:line:col" with the unknown parts left out.
  std::string str() const;
  // This location moved `offset` characters to the right (same line).
  SourceLocation shifted(int offset) const;
};

// Bad user input: a spec, an annotation, an expression, a command-line value.
class InputError : public std::runtime_error {
 public:
  InputError(SourceLocation where, const std::string& message);
  const SourceLocation& where() const { return where_; }
  const std::string& message() const { return message_; }

 private:
  SourceLocation where_;
  std::string message_;
};

// "; did you mean 'x'?" when `word` looks like a typo of one of
// `candidates`, else "": the tail of an "unknown name" message.
std::string did_you_mean(std::string_view word, const std::vector<std::string>& candidates);

}  // namespace tunekit
