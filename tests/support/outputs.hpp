#pragma once
// What `tunekit tune` writes after a tune: the default writers into the
// out folder. Returns the console summary.
#include <chrono>
#include <filesystem>
#include <sstream>
#include <string>
#include <string_view>

#include "tunekit/output.hpp"

namespace tunekit::testing {

inline std::string write_default_outputs(TuneReport& report, const Spec& spec, const std::filesystem::path& out_dir) {
  std::ostringstream console;
  write_outputs(report, plan_outputs(report, spec.output, {out_dir, std::chrono::system_clock::now()}), console);
  return console.str();
}

// The file a writer wrote (empty if it did not run).
inline std::filesystem::path output_file(const TuneReport& report, std::string_view writer) {
  for (const auto& [name, file] : report.files)
    if (name == writer) return file;
  return {};
}

}  // namespace tunekit::testing
