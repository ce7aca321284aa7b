// `tunekit devices` and `tunekit plugins`.
#include "info_command.hpp"

#include <algorithm>
#include <memory>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "evaluator/detail/worker_evaluator.hpp"
#include "json_output.hpp"
#include "tunekit/backend.hpp"
#include "tunekit/output.hpp"
#include "tunekit/seeds.hpp"
#include "tunekit/strategy.hpp"

namespace tunekit::cli {

namespace {

int run_devices(bool json) {
  if (json) {
    // {"backends": [{"backend", "devices": [machine objects], "unavailable"}]}:
    // a device object is what `tunekit space --properties` reads.
    std::vector<std::string> backends;
    for (const auto& listing : list_devices()) {
      std::vector<std::string> devices;
      for (const auto& m : listing.devices) devices.push_back(machine_to_json(m));
      backends.push_back(fmt::format(R"({{"backend": {}, "devices": [{}], "unavailable": {}}})",
                                     json_text(nlohmann::json(listing.backend)), fmt::join(devices, ", "),
                                     json_text(nlohmann::json(listing.unavailable))));
    }
    fmt::print("{{\"backends\": [{}]}}\n", fmt::join(backends, ",\n  "));
    return 0;
  }
  for (const auto& listing : list_devices()) {
    if (listing.devices.empty()) {
      fmt::print("{}: none ({})\n", listing.backend, listing.unavailable);
      continue;
    }
    for (std::size_t i = 0; i < listing.devices.size(); ++i) {
      const auto& m = listing.devices[i];
      fmt::print("{} {}: {}\n", listing.backend, i, m.device);
      for (const auto& [k, v] : m.properties) fmt::print("  {} = {}\n", k, v.str());
    }
  }
  return 0;
}

std::string option_lines(const std::vector<OptionSpec>& options, std::string_view indent) {
  std::string out;
  for (const auto& o : options) out += fmt::format("{}{}\n", indent, describe(o));
  return out;
}

// "popsize -> population, alpha -> none", each name in `quote`.
std::string kernel_tuner_names(const StrategyInfo& s, std::string_view quote) {
  std::vector<std::string> pairs;
  for (const auto& f : s.kernel_tuner_options) {
    // Named as an option here, it means another thing there.
    const bool homonym =
        std::any_of(s.options.begin(), s.options.end(), [&](const OptionSpec& o) { return o.name == f.name; });
    const std::string name = fmt::format("{0}{1}{0}{2}", quote, f.name, homonym ? " (another option there)" : "");
    pairs.push_back(f.here.empty() ? name + " -> none" : fmt::format("{0} -> {1}{2}{1}", name, quote, f.here));
  }
  return fmt::format("{}", fmt::join(pairs, ", "));
}

std::string plugins_text() {
  std::string out = "strategies (search.strategy, --strategy):\n";
  for (const auto& s : strategies().entries()) {
    if (s.aliases.empty()) out += fmt::format("  {}: {}\n", s.name, s.summary);
    else out += fmt::format("  {} (also {}): {}\n", s.name, fmt::join(s.aliases, ", "), s.summary);
    out += option_lines(s.options, "    option ");
    if (!s.kernel_tuner_options.empty())
      out += fmt::format("    Kernel Tuner's options: {}\n", kernel_tuner_names(s, ""));
  }
  out += "backends (kernel.language):\n";
  for (const auto& b : backends().entries()) {
    if (b.languages.empty()) out += fmt::format("  {}: {}\n", b.name, b.summary);
    else out += fmt::format("  {} ({}): {}\n", b.name, fmt::join(b.languages, ", "), b.summary);
  }
  // Which worker executable runs them: an install's own, or why there is none.
  try {
    out += fmt::format("  (their worker process: {})\n", detail::find_worker().string());
  } catch (const std::exception& e) {
    out += fmt::format("  (their worker process: none: {})\n", e.what());
  }
  out += "output writers (--output, the spec's output:):\n";
  for (const auto& w : writers().entries()) out += fmt::format("  {}: {}\n", w.name, w.summary);
  out += "seed providers (configs tried first at each size, in this order):\n";
  for (const auto& p : seed_providers().entries()) out += fmt::format("  {}: {}\n", p.name, p.summary);
  return out;
}

}  // namespace

std::string plugins_markdown() {
  std::string out =
      "# Plugins\n\n"
      "What this tunekit ships with, as `tunekit plugins --markdown` prints it from the registries\n"
      "(a test checks that this page matches). See docs/architecture.md for how to add one.\n\n"
      "## Search strategies\n\n"
      "Chosen with `search.strategy` in a spec or `--strategy` on the command line; options go in\n"
      "`search.options` or `--option NAME=VALUE`. A strategy also answers to Kernel Tuner's name for the\n"
      "same algorithm (its aliases). Kernel Tuner's options for it are listed with what stands for each here\n"
      "(none: nothing does); an option given by Kernel Tuner's name is an error that says so, and so is one\n"
      "named as an option here but meaning another thing there, when given under Kernel Tuner's name.\n\n"
      "| strategy | what it does | options |\n|---|---|---|\n";
  for (const auto& s : strategies().entries()) {
    std::string options;
    for (const auto& o : s.options) options += (options.empty() ? "" : "<br>") + describe(o);
    if (!s.kernel_tuner_options.empty())
      options += (options.empty() ? "" : "<br>") + ("Kernel Tuner's options: " + kernel_tuner_names(s, "`"));
    std::string name = fmt::format("`{}`", s.name);
    if (!s.aliases.empty()) name += fmt::format(" (also `{}`)", fmt::join(s.aliases, "`, `"));
    out += fmt::format("| {} | {} | {} |\n", name, s.summary, options.empty() ? "none" : options);
  }
  // Said here, where a plugin's author looks, and not only in the recipe:
  // guided() cannot be told from what a strategy declares (a fixed order
  // may observe() too, as the recipe's does), and its default keeps the
  // warning for a fixed order that a budget cuts short.
  out +=
      "\nA strategy of one's own (docs/architecture.md, \"Add a strategy\") that reports `planned()` (how many\n"
      "configs it will propose, for the progress bar) and whose results steer its proposals must override\n"
      "`guided()` to return true. Its default, false, is a fixed order's (exhaustive's, a configs list's): a\n"
      "budget below the plan then gets the warning that the search \"ran the first N of its M configs, in its\n"
      "order\", which a guided search would not deserve. One that reports no `planned()` is never warned.\n";
  out +=
      "\n## Backends\n\nChosen by the spec's `kernel.language`; `replay` by `tunekit tune --replay FILE`.\n\n| backend "
      "| languages | what it does |\n|---|---|---|\n";
  for (const auto& b : backends().entries())
    out += fmt::format("| `{}` | {} | {} |\n", b.name,
                       b.languages.empty() ? "(none)" : fmt::format("{}", fmt::join(b.languages, ", ")), b.summary);
  out +=
      "\n## Output writers\n\nChosen with `--output`; files can be named in the spec's `output:`.\n\n"
      "| writer | what it writes |\n|---|---|\n";
  for (const auto& w : writers().entries()) out += fmt::format("| `{}` | {} |\n", w.name, w.summary);
  out +=
      "\n## Seed providers\n\nConfigs tried first at each size, before the search, in this order; each trial "
      "records its provider's name as its origin.\n\n| provider | what it proposes |\n|---|---|\n";
  for (const auto& p : seed_providers().entries()) out += fmt::format("| `{}` | {} |\n", p.name, p.summary);
  return out;
}

SubCommand add_devices_command(CLI::App& app) {
  auto json = std::make_shared<bool>(false);
  auto* cmd = app.add_subcommand("devices", "List the devices tunekit can tune for, with their properties");
  cmd->add_flag("--json", *json,
                "Print JSON: {\"backends\": [{\"backend\", \"devices\", \"unavailable\"}]}; a device object "
                "saved to a file is what `tunekit space --properties` reads on another machine");
  return {cmd, [json] { return run_devices(*json); }};
}

SubCommand add_plugins_command(CLI::App& app) {
  auto markdown = std::make_shared<bool>(false);
  auto* cmd =
      app.add_subcommand("plugins", "List the search strategies (with their options), backends and output writers");
  cmd->add_flag("--markdown", *markdown, "Print the list as a Markdown page (docs/plugins.md)");
  return {cmd, [markdown] {
            fmt::print("{}", *markdown ? plugins_markdown() : plugins_text());
            return 0;
          }};
}

}  // namespace tunekit::cli
