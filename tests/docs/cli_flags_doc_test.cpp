// Every flag a subcommand's --help lists is in that subcommand's section of
// the command-line reference, docs/cli.md ("## tunekit SUB"): a flag shown
// only by --help is one a reader of the docs never learns of (tune's --csv,
// space's --write and resolve's --ignore-constraints were such), and a flag
// named only in another subcommand's section is not documented for this one
// (select's --device is a device's name, tune's --device-index an index).
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <map>
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

// docs/cli.md's section for each subcommand: from its heading "## tunekit
// SUB" to the next heading of that level.
std::map<std::string, std::string> sections_by_subcommand() {
  const std::string text = tunekit::testing::read_file(fs::path(TUNEKIT_SOURCE_DIR) / "docs" / "cli.md");
  std::map<std::string, std::string> out;
  std::string* section = nullptr;
  const std::regex heading(R"(^## `?tunekit ([a-z][a-z0-9-]*)`?\s*$)");
  for (const auto& line : lines_of(text)) {
    std::smatch m;
    if (line.starts_with("## ")) section = std::regex_match(line, m, heading) ? &out[m[1]] : nullptr;
    else if (section) *section += line + "\n";
  }
  return out;
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

TEST(CliFlagsDoc, EveryFlagInASubcommandsHelpIsInItsSectionOfTheDocs) {
  const auto subs = subcommands();
  // The parse found the list: tune, space, select ... (a change of CLI11's
  // layout must fail here, not pass with nothing checked).
  ASSERT_GE(subs.size(), 8u);
  ASSERT_NE(std::find(subs.begin(), subs.end(), "tune"), subs.end());
  const auto sections = sections_by_subcommand();
  std::size_t checked = 0;
  for (const auto& sub : subs) {
    const auto section = sections.find(sub);
    if (section == sections.end()) {
      ADD_FAILURE() << "docs/cli.md has no section '## tunekit " << sub << "'";
      continue;
    }
    for (const auto& flag : flags_of(sub)) {
      ++checked;
      EXPECT_TRUE(names_flag(section->second, flag))
          << "`tunekit " << sub << " --help` lists " << flag << ", which docs/cli.md's section '## tunekit " << sub
          << "' does not name";
    }
  }
  EXPECT_GE(checked, 50u);  // tune alone has more than 40
  // A section for no subcommand is one for a subcommand renamed or gone.
  for (const auto& [sub, text] : sections)
    EXPECT_NE(std::find(subs.begin(), subs.end(), sub), subs.end())
        << "docs/cli.md has a section for 'tunekit " << sub << "', which `tunekit --help` does not list";
}

// The check reads sections: a flag named in another subcommand's section
// does not count for this one.
TEST(CliFlagsDoc, AFlagCountsOnlyInItsOwnSubcommandsSection) {
  const auto sections = sections_by_subcommand();
  ASSERT_TRUE(sections.count("tune") && sections.count("select"));
  EXPECT_TRUE(names_flag(sections.at("tune"), "--device-index"));
  EXPECT_FALSE(names_flag(sections.at("tune"), "--device")) << "--device-index is another flag";
  EXPECT_TRUE(names_flag(sections.at("select"), "--device"));
  EXPECT_FALSE(names_flag(sections.at("select"), "--no-rules"));
  EXPECT_FALSE(names_flag(sections.at("tune"), "--mode"));
}
