#pragma once
// A fixture for spec-loading tests: a scratch folder holding a kernel source
// (k.cpp), specs written into it, and the check that a spec fails to load
// with an InputError at file:line:column whose message says what was wrong.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "tunekit/error.hpp"
#include "tunekit/spec.hpp"

namespace tunekit::testing {

class SpecErrors : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = std::filesystem::temp_directory_path() /
           ("tunekit_" + std::string(info->test_suite_name()) + "_" + std::to_string(::getpid()) + "_" + info->name());
    std::filesystem::create_directories(dir_);
    std::ofstream(dir_ / "k.cpp") << "void k() {}\n";
  }
  void TearDown() override {
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }

  std::filesystem::path write(const std::string& text, const std::string& name = "spec.yaml") {
    std::filesystem::path p = dir_ / name;
    std::ofstream(p) << text;
    return p;
  }

  // Loads `text`; expects an InputError at line:col whose message contains
  // `fragment`, and whose what() starts with "file:line:col: ".
  void expect_error(const std::string& text, int line, int col, const std::string& fragment,
                    const std::string& name = "spec.yaml") {
    std::filesystem::path p = write(text, name);
    try {
      load_spec(p);
      ADD_FAILURE() << "no error for:\n" << text;
    } catch (const InputError& e) {
      std::string prefix = p.string() + ":" + std::to_string(line) + ":" + std::to_string(col) + ": ";
      EXPECT_EQ(std::string(e.what()).substr(0, prefix.size()), prefix) << e.what();
      EXPECT_EQ(e.where().file, p.string());
      EXPECT_EQ(e.where().line, line) << e.what();
      EXPECT_EQ(e.where().column, col) << e.what();
      EXPECT_THAT(e.message(), ::testing::HasSubstr(fragment));
    } catch (const std::exception& e) {
      ADD_FAILURE() << "not an InputError: " << e.what();
    }
  }

  std::filesystem::path dir_;
};

}  // namespace tunekit::testing
