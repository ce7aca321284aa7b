#include "tunekit/registry.hpp"

#include "core/detail/text.hpp"

namespace tunekit {

std::string unknown_name_message(std::string_view kind, std::string_view name, const std::vector<std::string>& known,
                                 std::string_view owner,
                                 const std::vector<std::pair<std::string, std::string>>& aliases) {
  std::vector<std::string> spellings = known, listed;
  for (const auto& [alias, entry] : aliases) {
    spellings.push_back(alias);
    listed.push_back(alias + " (" + entry + ")");
  }
  return "unknown " + std::string(kind) + " '" + std::string(name) + "'" +
         (owner.empty() ? std::string() : " of " + std::string(owner)) + did_you_mean(name, spellings) +
         " (known: " + detail::join(known) + (listed.empty() ? "" : "; also: " + detail::join(listed)) + ")";
}

}  // namespace tunekit
