#include "tunekit/registry.hpp"

#include "core/detail/text.hpp"

namespace tunekit {

std::string unknown_name_message(std::string_view kind, std::string_view name, const std::vector<std::string>& known,
                                 std::string_view owner, const std::vector<std::string>& aliases) {
  // An alias is offered by itself ("genetic_algorithm"), listed with its entry.
  std::vector<std::string> spellings = known;
  for (const std::string& a : aliases) spellings.push_back(a.substr(0, a.find(' ')));
  return "unknown " + std::string(kind) + " '" + std::string(name) + "'" +
         (owner.empty() ? std::string() : " of " + std::string(owner)) + did_you_mean(name, spellings) +
         " (known: " + detail::join(known) + (aliases.empty() ? "" : "; also: " + detail::join(aliases)) + ")";
}

}  // namespace tunekit
