#pragma once
// A scratch folder per test, under the build tree, emptied on entry (kept
// after a failure for inspection).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

namespace tunekit::testing {

inline std::filesystem::path fresh_dir(const std::string& suffix = "") {
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  auto dir = std::filesystem::path(TUNEKIT_BINARY_DIR) / "test-tmp" /
             (std::string(info->test_suite_name()) + "." + info->name() + suffix);
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

inline void write_file(const std::filesystem::path& p, const std::string& text) {
  std::filesystem::create_directories(p.parent_path());
  std::ofstream(p, std::ios::binary) << text;
}

inline std::string read_file(const std::filesystem::path& p) {
  std::ifstream f(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}

inline std::filesystem::path tunekit_exe() { return std::filesystem::path(TUNEKIT_BINARY_DIR) / "bin" / "tunekit"; }

}  // namespace tunekit::testing
