// {NAME} placeholders in application argv elements (kernel.language:
// command). Substitution happens inside one element and never goes through
// a shell, so a value with spaces, quotes or `$(...)` stays one literal
// argument.
#include <string>
#include <string_view>
#include <vector>

#include "spec/detail/text.hpp"
#include "tunekit/error.hpp"
#include "tunekit/spec.hpp"

namespace tunekit {

namespace {

// Calls `name(n)` for each placeholder and `literal(text)` for the text
// between them, with `{{` and `}}` unescaped.
template <typename OnLiteral, typename OnName>
void scan_placeholders(std::string_view text, const SourceLocation& where, OnLiteral literal, OnName name) {
  auto at = [&](std::size_t i) { return where.line ? where.shifted(static_cast<int>(i)) : where; };
  std::string run;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '{' && i + 1 < text.size() && text[i + 1] == '{') {
      run += '{';
      ++i;
    } else if (c == '}' && i + 1 < text.size() && text[i + 1] == '}') {
      run += '}';
      ++i;
    } else if (c == '{') {
      const auto close = text.find('}', i);
      if (close == std::string_view::npos)
        throw InputError(at(i), "unclosed '{' in '" + std::string(text) + "' (write '{{' for a literal brace)");
      std::string_view n = spec_detail::trim(text.substr(i + 1, close - i - 1));
      if (!spec_detail::is_identifier(n))
        throw InputError(at(i), "'{" + std::string(text.substr(i + 1, close - i - 1)) + "}' in '" + std::string(text) +
                                    "' is not a placeholder: expected {NAME} with NAME a parameter, a size, or one of "
                                    "source, dir, binary (write '{{' for a literal brace)");
      literal(run);
      run.clear();
      name(std::string(n), at(i));
      i = close;
    } else if (c == '}') {
      throw InputError(at(i), "stray '}' in '" + std::string(text) + "' (write '}}' for a literal brace)");
    } else {
      run += c;
    }
  }
  literal(run);
}

}  // namespace

std::vector<std::string> placeholder_names(std::string_view text, const SourceLocation& where) {
  std::vector<std::string> names;
  scan_placeholders(
      text, where, [](const std::string&) {},
      [&](std::string n, const SourceLocation&) { names.push_back(std::move(n)); });
  return names;
}

std::string substitute_placeholders(std::string_view text, const Bindings& values, const SourceLocation& where) {
  std::string out;
  scan_placeholders(
      text, where, [&](const std::string& s) { out += s; },
      [&](const std::string& n, const SourceLocation& at) {
        auto it = values.find(n);
        if (it == values.end())
          throw InputError(at, "placeholder {" + n + "} in '" + std::string(text) + "' names nothing known here");
        out += it->second.str();
      });
  return out;
}

}  // namespace tunekit
