#include "core/detail/text.hpp"
#include "tunekit/spec.hpp"

namespace tunekit {

bool is_spec_file(const std::filesystem::path& path) {
  const std::string ext = detail::lowercase_extension(path);
  return ext == ".yaml" || ext == ".yml" || ext == ".json";
}

}  // namespace tunekit
