#include "tunekit/spec.hpp"

namespace tunekit {

bool is_spec_file(const std::filesystem::path& path) {
  const auto ext = path.extension().string();
  return ext == ".yaml" || ext == ".yml" || ext == ".json";
}

}  // namespace tunekit
