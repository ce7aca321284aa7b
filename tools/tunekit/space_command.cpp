#include "space_command.hpp"

#include <chrono>
#include <cstdio>
#include <fstream>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>

#include <sys/resource.h>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/detail/text.hpp"
#include "flags.hpp"
#include "json_output.hpp"
#include "store/detail/json_value.hpp"
#include "tunekit/backend.hpp"
#include "tunekit/space.hpp"
#include "tunekit/spec.hpp"
#include "tunekit/t1.hpp"

namespace tunekit::cli {

namespace fs = std::filesystem;

namespace {

struct SpaceArgs {
  std::string file;
  std::string properties;  // a machine's JSON description (tunekit devices --json), instead of this machine's
  std::vector<std::string> sizes;
  std::vector<std::string> where;
  bool json = false;
  std::string write;
};

// A CSV field: quoted when it holds a comma, a quote or a line break.
std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\n\r") == std::string::npos) return s;
  std::string out = "\"";
  for (char c : s) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

// The parameters, constraints and constants of FILE: a T1 or neutral JSON
// space, a spec (with the machine's properties and its first size set), or
// an annotated source; and the spec, loaded once.
struct Loaded {
  SpaceDefinition def;
  std::optional<Spec> spec;  // FILE's, when it is a spec
};

Loaded load(const SpaceArgs& a) {
  SpaceDefinition def;
  std::string language;
  std::optional<Spec> spec;
  if (is_spec_file(a.file)) {
    if (auto space_file = load_space_file(a.file)) {
      def = std::move(*space_file);
    } else {
      spec = load_spec(a.file);
      def = space_definition(*spec);
      language = spec->kernel.language;
    }
  } else {
    const Spec source = spec_from_source(a.file);
    def.name = source.name;
    def.format = "source";
    def.parameters = source.parameters;
    def.constraints = source.constraints;
    // Nothing reads a machine's properties unless --where does: a GPU
    // kernel's annotated space is counted on a machine without one.
    if (!a.where.empty()) language = source.kernel.language;
  }
  // The machine's properties: from --properties (a GPU's, say, on a machine
  // without one), else from this machine's backend for the spec's language.
  Bindings constants;
  if (!a.properties.empty()) {
    constants = load_machine_file(a.properties).properties;
    if (spec) check_property_names(size_names_used(*spec), constants, a.properties);
    check_property_types(constants, language, a.properties);
  } else if (!language.empty()) {
    try {
      constants = this_machines_properties(language);
    } catch (const InputError&) {
      throw;  // the machine's setup ($TMPDIR), which --properties does not mend
    } catch (const std::runtime_error& e) {
      throw InputError(SourceLocation{a.file, 0, 0},
                       std::string(e.what()) +
                           "\nthe constraints may read this machine's properties: give those of "
                           "the target machine with --properties FILE (one device object of "
                           "`tunekit devices --json` there)");
    }
  }
  if (spec) check_parameter_names(*spec, constants);  // as tune refuses it
  const Bindings machine = constants;
  for (const auto& [k, v] : def.constants) constants[k] = v;
  def.constants = std::move(constants);
  for (auto& [name, value] : one_size_from_flags(a.sizes, spec ? &*spec : nullptr, machine, "space"))
    def.constants[name] = std::move(value);
  for (const auto& w : a.where) def.constraints.push_back(Expression::parse(w, SourceLocation{"--where " + w}));
  return {std::move(def), std::move(spec)};
}

// Peak resident memory of this process, bytes.
std::size_t peak_rss() {
  struct rusage u {};
  if (getrusage(RUSAGE_SELF, &u) != 0) return 0;
  return static_cast<std::size_t>(u.ru_maxrss) * 1024;
}

int run_space(const SpaceArgs& a) {
  auto [def, spec] = load(a);
  if (spec) {
    try {
      check_expression_names(*spec, def.constants);
    } catch (const InputError& e) {
      if (a.properties.empty()) throw;
      // The name may be one the target machine has and the file left out.
      throw InputError(e.where(), e.message() + "; the machine properties are those of --properties " +
                                      a.properties + ", which may lack it");
    }
  }
  const auto t0 = std::chrono::steady_clock::now();
  Space space(def.parameters, def.constraints, def.constants);
  const bool indexed = space.build();
  // A spec that lists its configs (configs:) tries those only: count the
  // listed ones the constraints allow, not the space they span.
  const bool listed = spec && !spec->configs.empty();
  std::uint64_t valid = 0;
  if (listed) {
    for (const auto& c : spec->configs) valid += space.contains(c);
  } else {
    // Without the index the count is a walk of the product, which may not
    // end in any useful time: said before it starts, not after.
    if (!indexed)
      fmt::print(
          stderr,
          "note: the space is too large to index (docs/space-index.md); counting its valid configs walks "
          "its {} configs, pruned by the constraints where it can, and may take long (Ctrl-C stops it)\n",
          space.cartesian_size() == UINT64_MAX ? std::string(">= 2^64") : std::to_string(space.cartesian_size()));
    valid = space.count();
  }
  // The size counted: the spec's first, with --size on top. The others may
  // allow other configs (constraints over the sizes).
  Bindings size = spec && !spec->sizes.empty() ? spec->sizes.front() : Bindings{};
  for (const auto& s : a.sizes) {
    auto [name, value] = parse_assignment(s, {"--size " + s});
    size[name] = value;
  }
  const std::size_t sizes = spec ? spec->sizes.size() : 0;
  // The default is the baseline of every speedup; say when it is not valid
  // here, and why (the constraint, the machine property).
  std::optional<std::string> default_problem;
  if (spec && spec->default_config && !space.contains(*spec->default_config)) {
    Bindings machine = def.constants;
    for (const auto& [k, v] : size) machine.erase(k);
    Spec checked = *spec;
    checked.constraints = def.constraints;  // --where included
    default_problem = default_config_problem(checked, size, machine);
  }
  const std::chrono::duration<double> took = std::chrono::steady_clock::now() - t0;
  const std::size_t bytes = space.memory_bytes();
  const double per_config = valid > 0 ? static_cast<double>(bytes) / static_cast<double>(valid) : 0.0;
  // count() saturates at 2^64 - 1, which is also an exact count: the index
  // tells them apart (size() throws only past 64 bits).
  bool saturated = valid == UINT64_MAX;
  if (saturated && !listed && indexed) {
    try {
      saturated = space.size() != valid;
    } catch (const std::overflow_error&) {
    }
  }
  const std::string valid_text = saturated ? ">= 18446744073709551615" : std::to_string(valid);

  if (!a.write.empty()) {
    KeptFiles kept{{"the file the space is read from", a.file}};
    if (spec) kept = kept_inputs(*spec, spec->output.db);
    check_output_file(OutputFile::of_flag("--write", a.write), kept);
    std::ofstream out(a.write);
    if (!out) throw InputError(SourceLocation{a.write, 0, 0}, "cannot write " + a.write);
    for (std::size_t p = 0; p < space.parameters().size(); ++p)
      out << (p ? "," : "") << csv_field(space.parameters()[p].name);
    out << "\n";
    std::string row;
    const auto write_row = [&](std::span<const std::uint32_t> ix) {
      row.clear();
      for (std::size_t p = 0; p < ix.size(); ++p) {
        if (p) row += ',';
        row += csv_field(space.parameters()[p].values[ix[p]].str());
      }
      row += '\n';
      out << row;
      return static_cast<bool>(out);
    };
    if (listed) {
      // The configs a tune would run, in the order it runs them; written as
      // the parameters' own values (a listed 3.0 of [1, 2, 3] is 3).
      for (const auto& c : spec->configs)
        if (space.contains(c))
          if (const auto ix = space.indices_of(c); ix && !write_row(*ix)) break;
    } else {
      space.for_each(write_row);
    }
    if (!out) throw InputError(SourceLocation{a.write, 0, 0}, "error writing " + a.write);
  }

  // Before the peak's line, which then covers them: the reasons' counts of
  // an empty space can hold more than the space's own index.
  const auto constraint_errors = space.constraint_errors();
  const auto why_empty = valid == 0 ? space.why_empty() : std::nullopt;
  if (a.json) {
    nlohmann::ordered_json j;
    j["file"] = a.file;
    j["name"] = def.name;
    j["format"] = def.format;
    // The size counted (null for a space without sizes), and how many the spec has.
    j["size"] = spec ? detail::bindings_to_json(size) : nlohmann::ordered_json(nullptr);
    j["sizes"] = sizes;
    j["parameters"] = space.parameters().size();
    j["constraints"] = space.constraints().size();
    j["cartesian"] = space.cartesian_size();
    j["valid"] = valid;
    j["saturated"] = saturated;
    j["seconds"] = took.count();
    j["bytes"] = bytes;
    j["bytes_per_config"] = per_config;
    j["indexable"] = indexed;
    j["peak_rss_bytes"] = peak_rss();
    j["listed"] = listed ? nlohmann::ordered_json(spec->configs.size()) : nlohmann::ordered_json(nullptr);
    j["default_problem"] = default_problem ? nlohmann::ordered_json(*default_problem) : nlohmann::ordered_json(nullptr);
    if (!a.write.empty()) j["written"] = a.write;
    j["constraint_errors"] = constraint_errors;
    j["why_empty"] = why_empty ? nlohmann::ordered_json(*why_empty) : nlohmann::ordered_json(nullptr);
    fmt::print("{}\n", json_text(j));
    return 0;
  }
  // With --size the size counted is the spec's first with the flags' values
  // on top, which need not be one of the spec's sizes.
  if (spec && !size.empty())
    fmt::print("size:        {}{}\n", detail::shown_bindings(size),
               sizes <= 1 ? std::string()
               : a.sizes.empty()
                   ? fmt::format(" (the first of the spec's {} sizes; --size NAME=VALUE for another)", sizes)
                   : fmt::format(" (--size over the first of the spec's {} sizes)", sizes));
  // cartesian_size() saturates, as count() does, past 64 bits.
  const std::uint64_t cartesian = space.cartesian_size();
  fmt::print("parameters:  {}\nconstraints: {}\ncartesian:   {}{}\n", space.parameters().size(),
             space.constraints().size(), cartesian == UINT64_MAX ? ">= " : "", cartesian);
  if (listed) fmt::print("listed:      {} (the spec's configs: list; only those run)\n", spec->configs.size());
  fmt::print("valid:       {}{}\nseconds:     {:.6f}\n", valid_text, listed ? " (of the listed configs)" : "",
             took.count());
  if (indexed) fmt::print("bytes:       {} ({:.2f} per valid config; the index)\n", bytes, per_config);
  else fmt::print("bytes:       0 (too large to index: counted by search)\n");
  fmt::print("peak rss:    {} bytes (this process)\n", peak_rss());
  if (!a.write.empty()) fmt::print("written:     {}\n", a.write);
  if (default_problem) fmt::print("warning: {}\n", *default_problem);
  // A constraint that cannot be evaluated (a division by zero) rules its
  // configs out: say so, or "valid: 0" has no reason.
  for (const auto& e : constraint_errors) fmt::print("warning: {}\n", e);
  if (why_empty) fmt::print("warning: no config is valid: {}\n", *why_empty);
  return 0;
}

}  // namespace

SubCommand add_space_command(CLI::App& app) {
  auto args = std::make_shared<SpaceArgs>();
  auto* cmd = app.add_subcommand(
      "space",
      "Build a search space and report on it: parameters, constraints, Cartesian and valid sizes, construction\n"
      "time and memory. FILE is a spec (YAML/JSON), Kernel Tuner T1 JSON, the neutral space JSON of\n"
      "shared/spaces, or an annotated source.");
  cmd->add_option("FILE", args->file, "Spec, T1 or space JSON file, or annotated source")
      ->required()
      ->check(CLI::ExistingFile);
  add_size_flag(cmd, args->sizes, "Problem size NAME=VALUE for constraints that use sizes");
  cmd->add_option("--properties", args->properties,
                  "Machine properties from this JSON file (one device object of `tunekit devices --json`), instead "
                  "of this machine's: count a CUDA spec's space where there is no GPU")
      ->check(CLI::ExistingFile);
  cmd->add_option("--where", args->where, "Extra constraint, as tunekit tune --where (repeat: all must hold)");
  cmd->add_flag("--json", args->json,
                "Print one JSON object (keys file, name, format, size (the size counted, or null), sizes, "
                "parameters, constraints, cartesian, valid, saturated, seconds, bytes, bytes_per_config, indexable, "
                "peak_rss_bytes, listed (the number of configs a spec lists, or null), default_problem (why the "
                "spec's default is not valid here, or null), written (with --write), constraint_errors, why_empty "
                "(why no config is valid, or null))");
  cmd->add_option("--write", args->write,
                  "Write the valid configs to this CSV file (a header, then one row each; of a spec with configs:, the "
                  "listed ones, in order)");
  return {cmd, [args] { return run_space(*args); }};
}

}  // namespace tunekit::cli
