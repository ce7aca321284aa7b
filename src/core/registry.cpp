#include "tunekit/registry.hpp"

#include "core/detail/text.hpp"

namespace tunekit {

std::string unknown_name_message(std::string_view kind, std::string_view name, const std::vector<std::string>& known,
                                 std::string_view owner) {
  return "unknown " + std::string(kind) + " '" + std::string(name) + "'" +
         (owner.empty() ? std::string() : " of " + std::string(owner)) + did_you_mean(name, known) +
         " (known: " + detail::join(known) + ")";
}

}  // namespace tunekit
