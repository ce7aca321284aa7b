// The command line: thin. Parses arguments, calls the library, prints.
// Everything it does is reachable from the library API.
#include "tunekit/cli.hpp"

#include <signal.h>

#include <algorithm>
#include <cctype>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "distribute/detail/job.hpp"
#include "flags.hpp"
#include "info_command.hpp"
#include "policy_command.hpp"
#include "resolve_command.hpp"
#include "replay_command.hpp"
#include "space_command.hpp"
#include "tune_command.hpp"
#include "tunekit/error.hpp"
#include "tunekit/names.hpp"

namespace tunekit::cli {

namespace {

// The flags a subcommand knows, as written on the command line.
std::vector<std::string> flag_names(const CLI::App& sub) {
  std::vector<std::string> out;
  for (const CLI::Option* o : sub.get_options()) {
    for (const auto& l : o->get_lnames()) out.push_back("--" + l);
    for (const auto& s : o->get_snames()) out.push_back("-" + s);
  }
  return out;
}

// Kernel Tuner's tune_kernel arguments written as flags, which a user of it
// tries first: no typo's distance leads from them to the flag that does the
// same here.
struct KernelTunerName {
  std::string_view name, flag, note;
};
constexpr KernelTunerName kKernelTunerNames[] = {
    {"strategy_options", "--option", ": NAME=VALUE, once per option"},
    {"strategy_option", "--option", ": NAME=VALUE, once per option"},
    {"time_limit", "--max-time", ": seconds, or a duration such as 90s or 5m"},
    {"max_fevals", "--max-evals", ""},
};

// "; Kernel Tuner's NAME is 'FLAG' here" where `flag` is one of Kernel
// Tuner's names (with - or _) and the command has the flag that stands for it.
std::string kernel_tuner_hint(std::string_view flag, const std::vector<std::string>& known) {
  if (flag.rfind("--", 0) != 0) return {};
  std::string name(flag.substr(2));
  std::replace(name.begin(), name.end(), '-', '_');
  std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) { return std::tolower(c); });
  for (const auto& k : kKernelTunerNames)
    if (k.name == name && std::find(known.begin(), known.end(), k.flag) != known.end())
      return fmt::format("; Kernel Tuner's {} is '{}' here{}", k.name, k.flag, k.note);
  return {};
}

// CLI11 calls a misspelt flag "an argument that was not expected" and lists
// it after its value; this names it, with the nearest flag of the command.
bool explain_unknown_flag(const CLI::App& sub, int argc, char** argv) {
  const auto known = flag_names(sub);
  for (int i = 2; i < argc; ++i) {
    std::string flag = argv[i];
    if (flag == "--") break;
    if (flag.size() < 2 || flag[0] != '-' || (flag[1] != '-' && std::isdigit(static_cast<unsigned char>(flag[1]))))
      continue;
    if (const auto eq = flag.find('='); eq != std::string::npos) flag.resize(eq);
    if (flag.size() > 2 && flag[1] != '-') flag.resize(2);  // -j4: the short flag -j
    if (std::find(known.begin(), known.end(), flag) != known.end()) continue;
    // Every short flag is one letter from every other: no guess for one.
    const bool short_flag = flag.size() == 2;
    std::string guess = short_flag ? std::string() : kernel_tuner_hint(flag, known);
    if (guess.empty() && !short_flag) guess = did_you_mean(flag, known);
    // A flag cut short ('--out') is too far from its whole for the typo
    // guess: offer the flags it begins.
    if (guess.empty() && flag.size() >= 5 && flag.rfind("--", 0) == 0) {
      std::vector<std::string> longer;
      for (const auto& k : known)
        if (k.size() > flag.size() && k.rfind(flag, 0) == 0) longer.push_back("'" + k + "'");
      if (!longer.empty() && longer.size() <= 3) guess = "; did you mean " + either(longer) + "?";
    }
    fmt::print(stderr, "error: unknown flag '{}' of `tunekit {}`{} (`tunekit {} --help` lists its flags)\n", flag,
               sub.get_name(), guess, sub.get_name());
    return true;
  }
  return false;
}

}  // namespace

int run(int argc, char** argv) {
  // A write past the file-size limit (ulimit -f), to the store or to a
  // report, must fail as one to a full disk does, and be told: SIGXFSZ would
  // end the process without a word. The processes it starts get the
  // signal's default back (run_process). Set here, not by the library: a
  // program that embeds tunekit keeps its own disposition.
  ::signal(SIGXFSZ, SIG_IGN);
  CLI::App app{
      "tunekit: auto-tune compute kernels.\n"
      "Declare a search space in a spec file (YAML/JSON) or in the kernel source,\n"
      "then `tunekit tune` builds every variant, runs it in an isolated worker,\n"
      "verifies it against a reference, times it, and keeps every result in SQLite.",
      "tunekit"};
  app.set_version_flag("--version", "tunekit 0.1.0");
  // A usage error reads as tunekit's own do: "error: FLAG: what was
  // expected", and where to read more about the subcommand's flags.
  app.failure_message([](const CLI::App* failed, const CLI::Error& e) {
    std::string what = e.what();
    if (const auto at = what.find(": At Most 1 required but received"); at != std::string::npos)
      what = what.substr(0, at) + ": given more than once; give it once";
    std::string command = "tunekit";
    for (const CLI::App* sub : failed->get_subcommands()) command += " " + sub->get_name();
    return fmt::format("error: {} (`{} --help` lists the flags)\n", what, command);
  });
  app.require_subcommand(1);

  const SubCommand commands[] = {
      add_tune_command(app),         add_space_command(app),  add_select_command(app),  add_emit_command(app),
      add_rules_report_command(app), add_report_command(app), add_devices_command(app), add_plugins_command(app),
      add_resolve_command(app),      add_replay_command(app),
  };

  check_numbers(app);

  // Nothing to do is a usage error, exit 1 as documented; the help lists
  // what there is to do (CLI11 said only "A subcommand is required").
  if (argc == 1) {
    fmt::print(stderr, "{}\nerror: a subcommand is required (the list above)\n", app.help());
    return 1;
  }
  // CLI11 would call a mistyped subcommand "an extra argument" and then say
  // a subcommand is required.
  if (argc > 1 && argv[1][0] != '-') {
    std::vector<std::string> names;
    for (const auto& c : commands) names.push_back(c.command->get_name());
    const std::string given = argv[1];
    if (std::find(names.begin(), names.end(), given) == names.end()) {
      fmt::print(stderr, "error: unknown subcommand '{}'{} (the subcommands: {}; `tunekit --help` says more)\n", given,
                 did_you_mean(given, names), either(names));
      return 1;
    }
  }
  // Under mpirun only `tune` spreads its work over the ranks. Any other
  // subcommand is one job, which rank 0 runs; the other ranks would print
  // it again and write the same files at the same time.
  if (argc > 1 && std::string_view(argv[1]) != "tune" && detail::launched_ranks() > 1 && detail::launched_rank() > 0)
    return 0;
  // A usage error is bad input: exit 1, as documented, not CLI11's codes.
  // Under mpirun every rank of a tune meets it: rank 0 says it.
  const auto usage_error = [&](const std::function<void()>& say) {
    if (argc > 1 && std::string_view(argv[1]) == "tune") return end_tune_with_usage_error(say);
    say();
    return 1;
  };
  try {
    app.parse(argc, argv);
  } catch (const CLI::Success& e) {  // --help, --version
    return app.exit(e);
  } catch (const CLI::ExtrasError& e) {
    return usage_error([&] {
      for (const auto& c : commands)
        if (c.command->get_name() == argv[1] && explain_unknown_flag(*c.command, argc, argv)) return;
      (void)app.exit(e);
    });
  } catch (const CLI::ParseError& e) {
    return usage_error([&] { (void)app.exit(e); });
  }
  try {
    for (const auto& c : commands)
      if (c.command->parsed()) return c.run();
  } catch (const std::exception& e) {
    return report_error(e);
  }
  return 0;
}

}  // namespace tunekit::cli
