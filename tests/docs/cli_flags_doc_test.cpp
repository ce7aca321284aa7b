// Every flag a subcommand's --help lists is in the documentation (README.md
// or a page of docs/): a flag shown only by --help is one a reader of the
// docs never learns of (tune's --csv, space's --write and resolve's
// --ignore-constraints were such). A flag counts as documented where its
// name is written anywhere, for whichever subcommand: the check is that the
// docs name it, not where.
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "support/cli.hpp"
#include "support/temp_dir.hpp"

namespace fs = std::filesystem;
using tunekit::testing::tunekit_cli;

namespace {

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

// The subcommands `tunekit --help` lists, under its Subcommands heading.
std::vector<std::string> subcommands() {
  const auto help = tunekit_cli({"--help"});
  EXPECT_EQ(help.exit_code, 0) << help.output;
  std::vector<std::string> out;
  bool listed = false;
  const std::regex entry(R"(^  ([a-z][a-z0-9-]*)(\s|$))");
  for (const auto& line : lines_of(help.output)) {
    if (line.starts_with("Subcommands:")) {
      listed = true;
      continue;
    }
    std::smatch m;
    if (listed && std::regex_search(line, m, entry)) out.push_back(m[1]);
  }
  return out;
}

// The long flags of `tunekit SUB --help`: an option's line starts two spaces
// in; its description's wrapped lines start further in.
std::vector<std::string> flags_of(const std::string& sub) {
  const auto help = tunekit_cli({sub, "--help"});
  EXPECT_EQ(help.exit_code, 0) << sub << "\n" << help.output;
  std::vector<std::string> out;
  const std::regex option(R"(^  (?:-[A-Za-z],)?(--[a-z0-9][a-z0-9-]*))");
  for (const auto& line : lines_of(help.output)) {
    std::smatch m;
    if (std::regex_search(line, m, option) && m[1] != "--help" && m[1] != "--version") out.push_back(m[1]);
  }
  return out;
}

std::string documentation() {
  const fs::path root = TUNEKIT_SOURCE_DIR;
  std::string text = tunekit::testing::read_file(root / "README.md");
  for (const auto& e : fs::recursive_directory_iterator(root / "docs"))
    if (e.path().extension() == ".md") text += "\n" + tunekit::testing::read_file(e.path());
  return text;
}

bool names_flag(const std::string& text, const std::string& flag) {
  for (auto at = text.find(flag); at != std::string::npos; at = text.find(flag, at + 1)) {
    const std::size_t end = at + flag.size();
    const bool whole = end == text.size() || !(std::isalnum(static_cast<unsigned char>(text[end])) || text[end] == '-');
    if (whole) return true;
  }
  return false;
}

}  // namespace

TEST(CliFlagsDoc, EveryFlagInASubcommandsHelpIsInTheDocs) {
  const auto subs = subcommands();
  // The parse found the list: tune, space, select ... (a change of CLI11's
  // layout must fail here, not pass with nothing checked).
  ASSERT_GE(subs.size(), 8u);
  ASSERT_NE(std::find(subs.begin(), subs.end(), "tune"), subs.end());
  const std::string docs = documentation();
  std::size_t checked = 0;
  for (const auto& sub : subs) {
    for (const auto& flag : flags_of(sub)) {
      ++checked;
      EXPECT_TRUE(names_flag(docs, flag))
          << "`tunekit " << sub << " --help` lists " << flag << ", which neither README.md nor docs/ mentions";
    }
  }
  EXPECT_GE(checked, 50u);  // tune alone has more than 40
}
