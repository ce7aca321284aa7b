#include "resolve_command.hpp"

#include <algorithm>
#include <fstream>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <sstream>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "core/detail/process.hpp"
#include "core/detail/text.hpp"
#include "evaluator/detail/host_data.hpp"
#include "flags.hpp"
#include "json_output.hpp"
#include "tunekit/backend.hpp"
#include "tunekit/builder.hpp"
#include "tunekit/evaluator.hpp"
#include "tunekit/space.hpp"
#include "tunekit/spec.hpp"

namespace tunekit::cli {

namespace fs = std::filesystem;
using Json = nlohmann::ordered_json;

namespace {

struct ResolveArgs {
  std::string spec;
  std::vector<std::string> sizes;
  std::vector<std::string> configs;
  std::string properties;
  std::optional<std::uint64_t> device_index;
  std::string out_dir = "tunekit-out";
  bool json = false;
  bool build = false;
  bool ignore_constraints = false;
};

// Where each parameter's value came from, for the report.
constexpr const char* kFromFlag = "--config";
constexpr const char* kFromDefault = "default";
constexpr const char* kFromFirst = "first value";
constexpr const char* kFromPinned = "pinned";
constexpr const char* kFromList = "listed config";

Json to_json(const Value& v) {
  if (v.is_int()) return v.as_int();
  if (v.is_float()) return v.as_float();
  return v.as_string();
}

Json to_json(const Bindings& b) {
  Json j = Json::object();
  for (const auto& [k, v] : b) j[k] = to_json(v);
  return j;
}

std::string bindings_text(const Bindings& b) {
  std::vector<std::string> parts;
  for (const auto& [k, v] : b) parts.push_back(k + "=" + detail::shown_value(v));
  return parts.empty() ? "(none)" : fmt::format("{}", fmt::join(parts, ", "));
}

std::string read_text(const fs::path& path, const std::string& spec_file) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError({spec_file}, "cannot read the kernel source " + path.string());
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// NAME=VALUE from a flag, errors naming the flag.
std::pair<std::string, Value> assignment(const std::string& flag, const std::string& text) {
  return parse_assignment(text, {flag + " " + text});
}

bool is_parameter(const Spec& spec, std::string_view name) {
  return std::any_of(spec.parameters.begin(), spec.parameters.end(),
                     [&](const Parameter& p) { return p.name == name; });
}

// The size to resolve at: the spec's first size with --size applied. A
// name that is neither a size the spec declares or reads, nor a machine
// property, is a typo until proven otherwise.
Bindings choose_size(const Spec& spec, const ResolveArgs& a, const Bindings& machine) {
  std::set<std::string> known = size_names_used(spec);
  for (const auto& [k, v] : machine) known.insert(k);

  Bindings size = spec.sizes.empty() ? Bindings{} : spec.sizes.front();
  std::map<std::string, std::string> given;  // name -> the flag that gave it
  for (const auto& text : a.sizes) {
    auto [name, value] = assignment("--size", text);
    if (auto [at, fresh] = given.try_emplace(name, text); !fresh)
      throw InputError({"--size " + text}, fmt::format("'{}' is given twice (--size {} before); `resolve` works "
                                                       "out one size",
                                                       name, at->second));
    if (is_parameter(spec, name))
      throw InputError({"--size " + text},
                       "'" + name + "' is a parameter of the spec, not a size; give it with --config");
    if (!known.count(name)) {
      std::string msg = "'" + name + "' is not a size of " + a.spec;
      msg += did_you_mean(name, {known.begin(), known.end()});
      std::vector<std::string> declared;
      for (const auto& n : known)
        if (!machine.count(n)) declared.push_back(n);
      if (!declared.empty()) msg += fmt::format(" (its sizes: {})", fmt::join(declared, ", "));
      throw InputError({"--size " + text}, msg);
    }
    check_size_values("--size " + text, name, {value});
    size[name] = value;
  }
  return size;
}

struct ChosenConfig {
  Config config;
  std::vector<std::pair<std::string, std::string>> origin;  // parameter -> where its value came from
};

// The default config (else each parameter's first value), --config on top,
// and each parameter a constraint pins to the size (a term NAME == E over
// sizes and machine properties) computed for this size unless --config names
// it, as an emitted policy computes it for a size it was not tuned at.
ChosenConfig choose_config(const Spec& spec, const ResolveArgs& a, const Bindings& constants) {
  std::map<std::string, Value, std::less<>> values;
  std::map<std::string, std::string, std::less<>> origin;
  for (const auto& p : spec.parameters) {
    const Value* d = spec.default_config ? spec.default_config->find(p.name) : nullptr;
    if (d) {
      values[p.name] = *d;
      origin[p.name] = kFromDefault;
    } else if (!p.values.empty()) {
      values[p.name] = p.values.front();
      origin[p.name] = kFromFirst;
    }
  }
  std::vector<std::string> names;
  for (const auto& p : spec.parameters) names.push_back(p.name);
  std::set<std::string> given;
  for (const auto& text : split_assignments(a.configs)) {
    auto [name, value] = assignment("--config", text);
    if (!given.insert(name).second)
      throw InputError({"--config " + text}, "'" + name + "' is given twice; a config gives each parameter one value");
    if (!is_parameter(spec, name)) {
      std::string msg = "'" + name + "' is not a parameter of " + a.spec;
      msg += did_you_mean(name, names);
      msg += fmt::format(" (its parameters: {})", fmt::join(names, ", "));
      throw InputError({"--config " + text}, msg);
    }
    // As the space lists it (1.0 for 1): the variant a tune built.
    const Parameter& param = *std::find_if(spec.parameters.begin(), spec.parameters.end(),
                                           [&, &name = name](const Parameter& p) { return p.name == name; });
    if (const Value* as_listed = param.listed(value)) value = *as_listed;
    values[name] = value;
    origin[name] = kFromFlag;
  }
  if (!spec.configs.empty()) {
    // A spec that lists its configs runs those alone: the others take the
    // values of the first listed config (the default first, when it is
    // listed) that has every value given. With none, the config stays as
    // given, and why_invalid() says it is not listed.
    std::vector<const Config*> listed;
    for (const auto& c : spec.configs)
      if (spec.default_config && c == *spec.default_config) listed.push_back(&c);
    for (const auto& c : spec.configs) listed.push_back(&c);
    for (const Config* c : listed) {
      const bool fits = std::all_of(values.begin(), values.end(), [&](const auto& entry) {
        const Value* v = c->find(entry.first);
        return origin[entry.first] != kFromFlag || (v && *v == entry.second);
      });
      if (!fits) continue;
      const bool is_default = spec.default_config && *c == *spec.default_config;
      for (const auto& [name, value] : *c)
        if (origin[name] != kFromFlag) {
          values[name] = value;
          origin[name] = is_default ? kFromDefault : kFromList;
        }
      break;
    }
  }
  // A listed config is whole: no rule recomputes it.
  auto is_target = [&](const std::string& n) {
    return spec.configs.empty() && is_parameter(spec, n) && origin[n] != kFromFlag;
  };
  auto is_input = [&](const std::string& n) { return !is_parameter(spec, n) && constants.count(n) > 0; };
  for (const auto& c : spec.constraints)
    for (const auto& [name, rule] : c.equalities(is_target, is_input)) {
      if (origin[name] == kFromPinned) continue;  // the first rule for a name wins
      try {
        values[name] = rule.evaluate(constants);
        origin[name] = kFromPinned;
      } catch (const InputError&) {
        // A rule that fails here (a division by zero at this size, say)
        // pins nothing; the constraint itself then says what is wrong.
      }
    }
  ChosenConfig out;
  for (const auto& p : spec.parameters) {
    if (!values.count(p.name)) continue;
    out.config.set(p.name, values[p.name]);
    out.origin.emplace_back(p.name, origin[p.name]);
  }
  return out;
}

// nullopt when `config` is in the space at `constants`; otherwise why not,
// located at the failing constraint when one fails.
std::optional<std::pair<SourceLocation, std::string>> why_invalid(const Spec& spec, const Config& config,
                                                                  const Bindings& constants) {
  for (const auto& p : spec.parameters) {
    const Value* v = config.find(p.name);
    if (!v) return std::pair{p.where, "'" + p.name + "' has no value: give --config " + p.name + "=VALUE"};
    if (std::find(p.values.begin(), p.values.end(), *v) == p.values.end()) {
      std::vector<std::string> listed;
      for (const auto& x : p.values) listed.push_back(detail::shown_value(x));
      return std::pair{p.where, fmt::format("{}={} is not one of its values ({})", p.name, detail::shown_value(*v),
                                            fmt::join(listed, ", "))};
    }
  }
  if (!spec.configs.empty() && std::find(spec.configs.begin(), spec.configs.end(), config) == spec.configs.end())
    return std::pair{SourceLocation{spec.file.string()},
                     "it is not one of the spec's listed configs (configs:), the only ones a tune runs"};
  const Space space(spec.parameters, spec.constraints, constants);
  auto why = space.why_invalid(config);
  if (!why) return std::nullopt;
  for (const auto& c : spec.constraints)
    if (c.text() == *why) return std::pair{c.where(), "the constraint '" + *why + "' does not hold"};
  return std::pair{SourceLocation{spec.file.string()}, *why};
}

Json argument_json(const ResolvedArgument& r) {
  Json j;
  j["name"] = r.name;
  j["type"] = std::string(to_string(r.type));
  j["role"] = std::string(to_string(r.role));
  if (r.role == Role::scalar) {
    j["value"] = to_json(r.scalar);
  } else if (r.role == Role::tensor_map && r.tensor_map) {
    const auto& m = *r.tensor_map;
    j["tensor_map"] = Json{{"of", m.of},
                           {"dims", m.dims},
                           {"box", m.box},
                           {"swizzle", m.swizzle},
                           {"oob", m.oob_nan ? "nan" : "zero"},
                           {"l2_promotion", m.l2_promotion}};
  } else {
    j["count"] = r.count;
    j["bytes"] = r.count * size_of(r.type);
    if (!r.shape.empty()) j["shape"] = r.shape;
    if (!r.passed) j["passed"] = false;
    // A Triton setup function makes it for each config: no fill does.
    if (!r.setup.empty()) {
      j["setup"] = r.setup;
      return j;
    }
    if (detail::starts_poisoned(r.role)) {
      j["poison"] = detail::poison_text(r.type);
      return j;
    }
    j["fill"] = std::string(to_string(r.fill));
    if (r.fill == Fill::constant || r.fill == Fill::sequence) j["fill_value"] = r.fill_value;
    if (r.fill == Fill::file) j["fill_file"] = r.fill_file;
  }
  return j;
}

std::string argument_text(const Json& a) {
  const std::string head = fmt::format("  {:<10} {:<5} {:<10}", a["name"].get<std::string>(),
                                       a["type"].get<std::string>(), a["role"].get<std::string>());
  if (a.contains("value")) return head + " = " + a["value"].dump();
  if (a.contains("tensor_map")) {
    const Json& m = a["tensor_map"];
    return head + fmt::format(" of {}: dims {}, box {}, swizzle {}, oob {}, l2 promotion {}",
                              m["of"].get<std::string>(), m["dims"].dump(), m["box"].dump(), m["swizzle"].dump(),
                              m["oob"].get<std::string>(), m["l2_promotion"].dump());
  }
  // Triton's tensors: the shape, and the inputs a setup function makes
  // or only it and the reference read.
  const std::string not_passed = a.contains("passed") ? ", not passed to the kernel (pass: false)" : "";
  if (a.contains("setup"))
    return head + " made by the setup function " + a["setup"].get<std::string>() + " for each config" + not_passed;
  const std::string shape =
      a.contains("shape") ? fmt::format(" shape [{}]:", fmt::join(a["shape"].get<std::vector<std::int64_t>>(), ", "))
                          : "";
  const std::string elements = fmt::format("{} {} elements ({} bytes)", shape, a["count"].dump(), a["bytes"].dump());
  if (a.contains("poison"))
    return head + elements + ", no fill: " + a["poison"].get<std::string>() + " before each verified run" + not_passed;
  return head + elements + ", fill " + a["fill"].get<std::string>() + not_passed;
}

std::string built_text(bool cached, double seconds) {
  return cached ? "from the build cache" : fmt::format("built in {:.2f} s", seconds);
}

std::string dims_text(const Json& d) {
  return fmt::format("{}x{}x{}", d[0].get<std::uint64_t>(), d[1].get<std::uint64_t>(), d[2].get<std::uint64_t>());
}

// NAME=VALUE, ... of a JSON object, as Python's keyword arguments.
std::string keywords_text(const Json& values) {
  std::vector<std::string> parts;
  for (const auto& [k, v] : values.items()) parts.push_back(k + "=" + v.dump());
  return fmt::format("{}", fmt::join(parts, ", "));
}

int run_resolve(const ResolveArgs& a) {
  if (!is_spec_file(a.spec))
    throw InputError({a.spec}, "resolve takes a spec file (.yaml, .yml or .json), not a kernel source");
  const Spec spec = load_spec(a.spec);

  // The backend builds (--build) and, without --properties, gives this
  // machine's properties, which constraints and launch expressions read: of
  // the device a tune of the spec would run on.
  if (a.device_index && !a.properties.empty() && !a.build)
    throw InputError({"--device-index"},
                     "does not apply with --properties without --build: the machine is the file's, and no device "
                     "builds or runs anything");
  std::unique_ptr<Backend> backend;
  if (a.build || a.properties.empty()) {
    BackendOptions options;
    options.device = device_index(spec, a.device_index);
    options.work_dir = fs::path(a.out_dir) / "cache";
    options.application = spec.application;
    try {
      backend = make_backend(spec.kernel.language, options);
    } catch (const std::runtime_error& e) {
      if (a.build)
        throw InputError({a.spec}, std::string(e.what()) + "\n--build needs the spec's backend on this machine");
      throw InputError({a.spec}, std::string(e.what()) +
                                     "\nthe constraints and launch expressions may read this machine's "
                                     "properties: give those of the target machine with "
                                     "--properties FILE (one device object of `tunekit devices "
                                     "--json` there)");
    }
  }
  const MachineInfo machine = a.properties.empty() ? backend->machine() : load_machine_file(a.properties);
  check_parameter_names(spec, machine.properties);  // as tune refuses it

  const Bindings size = choose_size(spec, a, machine.properties);
  Bindings constants = machine.properties;
  for (const auto& [k, v] : size) constants[k] = v;  // a size named like a property wins, as in tune
  for (const Expression* e : trial_expressions(spec))
    for (const auto& n : e->variables())
      if (!is_parameter(spec, n) && !constants.count(n))
        throw InputError(e->where(), "'" + n +
                                         "' has no value here: it is not a parameter, a size of the spec or a "
                                         "property of " +
                                         machine.device + "; give it with --size " + n + "=VALUE");

  const ChosenConfig chosen = choose_config(spec, a, constants);
  const auto invalid = why_invalid(spec, chosen.config, constants);
  if (invalid && !a.ignore_constraints)
    throw InputError(invalid->first,
                     fmt::format("{} is not in the space at {} on {}: {} (--ignore-constraints "
                                 "resolves it anyway)",
                                 chosen.config.str(), bindings_text(size), machine.device, invalid->second));

  Bindings env = constants;
  for (const auto& [k, v] : chosen.config) env[k] = v;
  const std::string source = read_text(spec.kernel.source, spec.file.string());
  const BuildInput input = make_build_input(spec, source, chosen.config, size);
  const std::vector<ResolvedArgument> arguments = resolve_arguments(spec.arguments, env);

  Json out;
  out["spec"] = fs::absolute(spec.file).lexically_normal().string();
  out["name"] = spec.name.empty() ? spec.kernel.entry : spec.name;
  out["language"] = spec.kernel.language;
  out["device"] = machine.device;
  out["size"] = to_json(size);
  Json config = Json::object(), origin = Json::object();
  for (const auto& [k, v] : chosen.config) config[k] = to_json(v);
  for (const auto& [k, from] : chosen.origin) origin[k] = from;
  out["config"] = config;
  out["config_origin"] = origin;
  out["valid"] = !invalid.has_value();
  if (invalid)
    out["invalid_reason"] = (invalid->first.str().empty() ? "" : invalid->first.str() + ": ") + invalid->second;
  // A Python (Triton) kernel takes its config as keyword arguments, no -D
  // define nor block: its tl.constexpr meta-parameters, kernel.constexprs
  // evaluated after them (as the build applies them), and the launch
  // options (num_warps, num_stages, ...), of which Triton has its defaults.
  const KernelTraits& traits = backend_for_language(spec.kernel.language).kernel;
  const bool python = traits.tensors;
  Json kernel;
  kernel["source"] = fs::absolute(spec.kernel.source).lexically_normal().string();
  kernel["entry"] = input.entry;
  Json constexprs = Json::object(), launch_options = Json::object();
  if (python) {
    for (const auto& [k, v] : chosen.config) (is_triton_launch_option(k) ? launch_options : constexprs)[k] = to_json(v);
    for (const auto& c : spec.kernel.constexprs) constexprs[c.name] = to_json(c.value.evaluate(env));
    kernel["constexprs"] = constexprs;
    kernel["launch_options"] = launch_options;
  }
  // With tunable lines or %RANGE% sources the config is written into the
  // variant's text instead of passed as defines: only --build's artefact has it.
  // A %RANGE% source gets its config as #define lines at the variant's top,
  // which a harness of its own passes as -D defines alike.
  const bool range =
      resolve_injection(spec.kernel.injection, source, spec.kernel.source.string()) == Injection::range_defines;
  std::vector<std::string> defines = input.defines;
  if (range)
    for (const auto& [k, v] : chosen.config) defines.push_back(k + "=" + v.str());
  if (!python) {
    kernel["injection"] = input.source == source ? "defines" : range ? "range" : "source";
    kernel["defines"] = defines;
  }
  kernel["flags"] = input.flags;
  kernel["compiler"] = input.compiler;
  kernel["arch"] = input.arch;
  out["kernel"] = kernel;
  if (traits.launch && python) {
    out["launch"] = Json{{"grid", resolve_launch(spec.kernel.launch, env).grid}};
  } else if (traits.launch) {
    const LaunchGeometry g = resolve_launch(spec.kernel.launch, env);
    out["launch"] = Json{{"grid", g.grid},
                         {"block", g.block},
                         {"cluster", g.cluster},
                         {"clustered", g.clustered()},
                         {"shared_memory", g.shared_memory}};
  } else {
    out["launch"] = nullptr;
  }
  Json args = Json::array();
  for (const auto& r : arguments) args.push_back(argument_json(r));
  out["arguments"] = args;
  if (backend)
    if (auto command = backend->command_line(input, env); !command.empty()) out["command"] = command;
  if (spec.application) out["workdir"] = spec.application->workdir.string();

  if (a.build) {
    const BuildResult built = backend->make_builder()->build(input);
    if (built.status != Status::ok) {
      fmt::print(stderr, "\nerror: {}: {} at {} does not compile ({}):\n{}\n", spec.kernel.source.string(),
                 chosen.config.str(), bindings_text(size), to_string(built.status), built.log);
      return 1;
    }
    const fs::path path = fs::absolute(built.artifact.path).lexically_normal();
    out["artifact"] = Json{{"path", path.string()},
                           {"hash", built.artifact.hash},
                           {"cached", built.cached},
                           {"build_seconds", built.time.count()}};
    if (spec.application) {
      // An application's variant is a folder ({dir}): the source written
      // there and whatever the build command made in it ({binary}, say).
      std::vector<std::string> files;
      std::error_code ec;
      for (const auto& e : fs::directory_iterator(path.parent_path(), ec))
        if (e.is_regular_file(ec) && !e.path().filename().string().starts_with(".tunekit"))
          files.push_back(e.path().filename().string());
      std::sort(files.begin(), files.end());
      out["artifact"]["path"] = path.parent_path().string();
      out["artifact"]["files"] = files;
    }
  }

  if (a.json) {
    fmt::print("{}\n", json_text(out, 2));
    return 0;
  }
  fmt::print("spec:      {} ({}, {})\n", out["spec"].get<std::string>(), out["name"].get<std::string>(),
             spec.kernel.language);
  fmt::print("device:    {}\n", machine.device);
  fmt::print("size:      {}\n", bindings_text(size));
  fmt::print("config:    {}\n", chosen.config.str());
  std::vector<std::string> not_default;
  for (const auto& [k, from] : chosen.origin)
    if (from != std::string(kFromDefault)) not_default.push_back(k + " (" + from + ")");
  if (!not_default.empty()) fmt::print("           not from the default: {}\n", fmt::join(not_default, ", "));
  if (invalid) fmt::print("valid:     no: {}\n", out["invalid_reason"].get<std::string>());
  if (!input.entry.empty()) fmt::print("entry:     {}\n", input.entry);
  if (python) {
    fmt::print("constexpr: {} (tl.constexpr keyword arguments)\n",
               constexprs.empty() ? std::string("none") : keywords_text(constexprs));
    fmt::print("options:   {}\n", launch_options.empty() ? std::string("none (Triton's defaults)")
                                                         : keywords_text(launch_options) + " (launch options)");
  } else if (defines.empty()) {
    fmt::print("defines:   none (the config is written into the variant's source)\n");
  } else {
    fmt::print("defines:   -D{}{}\n", fmt::join(defines, " -D"),
               range ? " (as #define lines at the top of the variant's source)" : "");
  }
  if (!input.flags.empty()) fmt::print("flags:     {}\n", fmt::join(input.flags, " "));
  if (python && out["launch"].is_object()) {
    const Json& g = out["launch"]["grid"];
    fmt::print("launch:    grid ({}, {}, {}), the arguments, constexprs and options by name\n",
               g[0].get<std::uint64_t>(), g[1].get<std::uint64_t>(), g[2].get<std::uint64_t>());
  } else if (out["launch"].is_object()) {
    const Json& l = out["launch"];
    fmt::print("launch:    grid {}, block {}, cluster {}, dynamic shared memory {} bytes\n", dims_text(l["grid"]),
               dims_text(l["block"]), dims_text(l["cluster"]), l["shared_memory"].get<std::uint64_t>());
  }
  fmt::print("arguments:\n");
  for (const auto& arg : out["arguments"]) fmt::print("{}\n", argument_text(arg));
  // As a shell would need it: the argv runs without one.
  if (out.contains("command"))
    fmt::print("command:   {}\n", detail::shell_quote(out["command"].get<std::vector<std::string>>()));
  if (out.contains("workdir")) fmt::print("workdir:   {}\n", out["workdir"].get<std::string>());
  if (out.contains("artifact")) {
    const Json& artifact = out["artifact"];
    fmt::print("artifact:  {} ({})\n", artifact["path"].get<std::string>(),
               built_text(artifact["cached"].get<bool>(), artifact["build_seconds"].get<double>()));
    if (artifact.contains("files"))
      fmt::print("files:     {}\n", fmt::join(artifact["files"].get<std::vector<std::string>>(), ", "));
  }
  return 0;
}

}  // namespace

SubCommand add_resolve_command(CLI::App& app) {
  auto args = std::make_shared<ResolveArgs>();
  auto* cmd = app.add_subcommand(
      "resolve",
      "Work out one config of a spec at one size as a trial runs it: the kernel's entry, the defines, the launch\n"
      "geometry (grid, block, cluster, dynamic shared memory), every argument (element counts, scalar values,\n"
      "tensor maps) and, with --build, the compiled artefact. A Triton kernel's config is its tl.constexpr\n"
      "keyword arguments and launch options (num_warps, num_stages, ...), launched on a grid of programs.\n"
      "For harnesses that launch a tuned kernel themselves.");
  cmd->add_option("SPEC", args->spec, "Spec file (YAML/JSON)")->required()->check(CLI::ExistingFile);
  add_size_flag(cmd, args->sizes, "Problem size NAME=VALUE, replacing that name in the spec's first size");
  cmd->add_option("-c,--config", args->configs,
                  "Parameter NAME=VALUE (repeat, or separate by commas: a comma in a value, as in "
                  "'L1=GemmShape<64, 64, 128>', stays in it); the others take the spec's default (with a configs "
                  "list, the first listed config that has the values given), else their first value, and a "
                  "parameter a constraint pins to the size is computed for it");
  cmd->add_option("--properties", args->properties,
                  "Machine properties from this JSON file (one device object of `tunekit devices --json`), instead "
                  "of this machine's: resolve a CUDA spec where there is no GPU")
      ->check(CLI::ExistingFile);
  cmd->add_option("--device-index", args->device_index,
                  "Which device of the kernel's backend to resolve on (its properties, and --build's compiler), by "
                  "its index in `tunekit devices`, as tune's --device-index (default: a T1 file's Device.DeviceId, "
                  "else 0)");
  cmd->add_flag("--ignore-constraints", args->ignore_constraints,
                "Resolve a config outside the space too (a tile tuned at another size, say); the output says which "
                "constraint it breaks");
  cmd->add_flag("--build", args->build,
                "Also build the variant with the spec's backend into OUT_DIR/cache, as tune does, and report the "
                "artefact's path");
  cmd->add_option("-o,--out-dir", args->out_dir,
                  "The tune's output folder (tune's --out-dir), whose build cache OUT_DIR/cache --build uses and fills")
      ->capture_default_str();
  cmd->add_flag(
      "--json", args->json,
      "Print one JSON object: spec, name, language, device, size, config, config_origin, valid "
      "(invalid_reason), kernel {source, entry, injection, defines, flags, compiler, arch; a Triton kernel's "
      "constexprs and launch_options in place of injection and defines}, launch {grid, "
      "block, cluster, clustered, shared_memory; a Triton kernel's grid alone} (null for CPU kernels), "
      "arguments [{name, type, role, count, bytes, shape (Triton), passed (false where the kernel does not "
      "take it), fill | poison (what an out buffer holds before each verified run, instead of a "
      "fill) | setup (Triton: the function that makes it) | value | tensor_map {of, dims, box, swizzle, oob, "
      "l2_promotion}}], command "
      "and workdir (application specs), artifact {path, hash, cached, build_seconds; for application specs the "
      "variant's folder, with its files} (--build)");
  cmd->footer(
      "Exit status: 0 when resolved (and built), 1 for bad input (the message names the flag, or the spec's\n"
      "file:line:column, with the constraint a config breaks) and for a variant that does not compile.");
  return {cmd, [args] { return run_resolve(*args); }};
}

}  // namespace tunekit::cli
