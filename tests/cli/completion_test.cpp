// Shell completion (scripts/completion/): every subcommand of `tunekit
// --help` and every option of `tunekit SUB --help` is offered, in bash and
// in zsh, so that the scripts cannot fall behind the command line.
#include <gtest/gtest.h>

#include <regex>
#include <set>
#include <sstream>

#include "core/detail/process.hpp"
#include "support/temp_dir.hpp"

using namespace tunekit;
using namespace std::chrono_literals;
using tunekit::testing::read_file;
using tunekit::testing::tunekit_exe;

namespace {

const std::string kBash = std::string(TUNEKIT_SOURCE_DIR) + "/scripts/completion/tunekit.bash";
const std::string kZsh = std::string(TUNEKIT_SOURCE_DIR) + "/scripts/completion/_tunekit";

std::string help(const std::vector<std::string>& args) {
  std::vector<std::string> argv{tunekit_exe().string()};
  argv.insert(argv.end(), args.begin(), args.end());
  auto r = detail::run_process(argv, 60s);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  return r.output;
}

// The subcommands listed under "Subcommands:" in the top-level help.
std::vector<std::string> subcommands() {
  const std::string text = help({"--help"});
  std::vector<std::string> out;
  const auto start = text.find("Subcommands:");
  EXPECT_NE(start, std::string::npos) << text;
  std::regex line(R"(\n  ([a-z][a-z-]*)\s)");
  for (std::sregex_iterator it(text.begin() + static_cast<std::ptrdiff_t>(start), text.end(), line), end; it != end;
       ++it)
    out.push_back((*it)[1]);
  return out;
}

// The flags of a subcommand's help: "-s,--size", "--where", ...
std::set<std::string> options(const std::string& sub) {
  const std::string text = help({sub, "--help"});
  std::set<std::string> out;
  std::regex flag(R"(\n  +((?:-[a-zA-Z],)?--[a-z][a-z-]*|-[a-zA-Z])\b)");
  for (std::sregex_iterator it(text.begin(), text.end(), flag), end; it != end; ++it) {
    const std::string names = (*it)[1];
    for (std::size_t begin = 0; begin < names.size();) {
      const auto comma = names.find(',', begin);
      out.insert(names.substr(begin, comma == std::string::npos ? std::string::npos : comma - begin));
      begin = comma == std::string::npos ? names.size() : comma + 1;
    }
  }
  return out;
}

bool has_word(const std::string& text, const std::string& word) {
  return std::regex_search(
      text, std::regex("(^|[^a-zA-Z0-9-])" + std::regex_replace(word, std::regex("-"), "\\-") + "($|[^a-zA-Z0-9-])"));
}

// What bash completes for the words typed so far (the last may be partial).
std::set<std::string> bash_complete(const std::vector<std::string>& typed) {
  std::string words = "tunekit";
  for (const auto& w : typed) words += " '" + w + "'";
  const std::string script = "source '" + kBash + "'; COMP_WORDS=(" + words +
                             "); COMP_CWORD=" + std::to_string(typed.size()) + "; COMP_WORDS[0]='" +
                             tunekit_exe().string() + "'; _tunekit; printf '%s\\n' \"${COMPREPLY[@]}\"";
  auto r = detail::run_process({"bash", "-c", script}, 60s);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  std::set<std::string> out;
  std::istringstream in(r.output);
  for (std::string line; std::getline(in, line);)
    if (!line.empty()) out.insert(line);
  return out;
}

}  // namespace

TEST(Completion, EverySubcommandAndOptionIsInBothScripts) {
  const std::string bash = read_file(kBash), zsh = read_file(kZsh);
  ASSERT_FALSE(bash.empty());
  ASSERT_FALSE(zsh.empty());
  const auto subs = subcommands();
  ASSERT_GE(subs.size(), 8u);
  for (const auto& sub : subs) {
    EXPECT_TRUE(has_word(bash, sub)) << "bash lacks the subcommand " << sub;
    EXPECT_TRUE(has_word(zsh, "'" + sub) || has_word(zsh, sub)) << "zsh lacks the subcommand " << sub;
    const auto opts = options(sub);
    EXPECT_TRUE(opts.count("--help")) << sub;
    for (const auto& opt : opts) {
      EXPECT_TRUE(has_word(bash, opt)) << "bash lacks " << sub << " " << opt;
      EXPECT_TRUE(has_word(zsh, opt)) << "zsh lacks " << sub << " " << opt;
    }
  }
}

TEST(Completion, BashCompletesSubcommandsOptionsAndValues) {
  EXPECT_TRUE(bash_complete({"t"}).count("tune"));
  EXPECT_TRUE(bash_complete({"s"}).count("select"));
  const auto tune = bash_complete({"tune", "--pr"});
  EXPECT_EQ(tune, (std::set<std::string>{"--properties"}));
  EXPECT_EQ(bash_complete({"select", "--mode", "a"}), (std::set<std::string>{"all-sizes"}));
  EXPECT_EQ(bash_complete({"tune", "x.yaml", "--cache", "cold"}), (std::set<std::string>{"cold", "cold-read"}));
  // Strategies come from the tunekit being completed (`tunekit plugins`).
  const auto strategies = bash_complete({"tune", "x.yaml", "--strategy", ""});
  EXPECT_TRUE(strategies.count("exhaustive")) << strategies.size();
  EXPECT_TRUE(strategies.count("random"));
  EXPECT_TRUE(bash_complete({"tune", "x.yaml", "--output", "cs"}).count("csv"));
  // Writers are separated by commas: the one after the last comma completes.
  EXPECT_TRUE(bash_complete({"tune", "x.yaml", "--output", "csv,js"}).count("csv,json"));
  // --json is a switch for space, resolve and replay: an option may follow.
  EXPECT_EQ(bash_complete({"space", "x.yaml", "--json", "--wr"}), (std::set<std::string>{"--write"}));
}

TEST(Completion, ZshScriptParses) {
  auto r = detail::run_process({"zsh", "-n", kZsh}, 60s);
  EXPECT_EQ(r.exit_code, 0) << "zsh (scripts/install-deps.sh installs it) could not parse " << kZsh << ":\n"
                            << r.output;
}
