#include "backend/detail/registry.hpp"

#include "core/detail/text.hpp"
#include "tunekit/error.hpp"

#include <algorithm>

namespace tunekit {

Registry<BackendInfo>& backends() {
  static Registry<BackendInfo>& registry = []() -> Registry<BackendInfo>& {
    static Registry<BackendInfo> r("backend");
#define TUNEKIT_ADD_BACKEND(ns) r.add(ns::backend_info());
    TUNEKIT_BUILTIN_BACKENDS(TUNEKIT_ADD_BACKEND)
#undef TUNEKIT_ADD_BACKEND
    return r;
  }();
  return registry;
}

std::optional<std::string> compiler_problem(const KernelTraits& traits, std::string_view name) {
  const auto& known = traits.compilers;
  if (known.empty() || std::find(known.begin(), known.end(), name) != known.end()) return std::nullopt;
  return "expected one of " + detail::join(known) + did_you_mean(name, known);
}

std::vector<std::string> kernel_languages() {
  std::vector<std::string> out;
  for (const BackendInfo& b : backends().entries()) out.insert(out.end(), b.languages.begin(), b.languages.end());
  return out;
}

const BackendInfo& backend_for_language(std::string_view language, const SourceLocation& where) {
  for (const BackendInfo& b : backends().entries())
    if (std::find(b.languages.begin(), b.languages.end(), language) != b.languages.end()) return b;
  const std::vector<std::string> known = kernel_languages();
  throw InputError(where, "no backend for kernel language '" + std::string(language) + "'" +
                              did_you_mean(language, known) + "; known: " + detail::join(known));
}

std::optional<std::string> language_of_source(const std::filesystem::path& source) {
  const std::string ending = source.extension().string();
  for (const BackendInfo& b : backends().entries())
    for (const auto& [end, language] : b.source_endings)
      if (end == ending) return language;
  return std::nullopt;
}

std::unique_ptr<Backend> make_backend(std::string_view language, const BackendOptions& options) {
  const BackendInfo& info = backend_for_language(language);
  auto made = info.make(options);
  if (!made) throw std::runtime_error("the " + info.name + " backend could not be made: its make returned none");
  return made;
}

std::vector<DeviceListing> list_devices() {
  std::vector<DeviceListing> out;
  for (const BackendInfo& b : backends().entries()) out.push_back(b.list_devices());
  return out;
}

}  // namespace tunekit
