#include "flags.hpp"

#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <limits>
#include <map>
#include <sstream>
#include <stdexcept>
#include <string_view>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "builder/detail/headers.hpp"
#include "core/detail/process.hpp"
#include "tunekit/backend.hpp"
#include "tunekit/error.hpp"
#include "tunekit/names.hpp"
#include "tunekit/measure.hpp"
#include "tunekit/output.hpp"

namespace tunekit::cli {

// A duration flag: bad text is bad input (exit 1) at the flag.
double fraction_flag(const std::string& flag, double value) {
  if (!(value > 0 && value <= 1))
    throw InputError({flag}, fmt::format("a budget of {} of the space: expected a share in (0, 1], e.g. 0.02", value));
  return value;
}

Seconds duration_flag(const std::string& flag, const std::string& text, bool positive) {
  Seconds d;
  try {
    d = parse_duration(text);
  } catch (const std::invalid_argument& e) {
    throw InputError({flag}, e.what());
  }
  if (positive && d.count() <= 0)
    throw InputError({flag}, "'" + text + "' is not a positive duration; give a limit such as 10s or 5m");
  return d;
}

KeptFiles kept_inputs(const Spec& spec, const std::filesystem::path& db) {
  KeptFiles kept{{"the results database", db}, {"the spec", spec.file}, {"the kernel's source", spec.kernel.source}};
  if (!spec.reference.source.empty()) kept.emplace_back("the reference's source", spec.reference.source);
  return kept;
}

namespace {

// The file a path names, as far as the file system can say (a name too long
// for it still compares as written: two such paths are not one file).
std::filesystem::path resolved(const std::filesystem::path& file) {
  std::error_code ec;
  const auto absolute = std::filesystem::absolute(file).lexically_normal();
  auto canonical = std::filesystem::weakly_canonical(absolute, ec);
  return ec ? absolute : canonical;
}

}  // namespace

void check_output_file(const OutputFile& out, const KeptFiles& kept) {
  for (const auto& [what, path] : kept)
    if (!path.empty() && resolved(out.file) == resolved(path))
      throw InputError(out.where, "'" + out.file.string() + "' is " + what + "; an output may not replace it");
  if (auto why = unsafe_output(out.file)) throw InputError(out.where, *why);
  std::error_code ec;
  if (!std::filesystem::is_regular_file(out.file, ec) || std::filesystem::file_size(out.file, ec) == 0) return;
  std::ifstream in(out.file, std::ios::binary);
  const std::string text(std::istreambuf_iterator<char>(in), {});
  const bool read = !in.bad() && in.is_open();
  // A file that cannot be read is none of emit's as far as can be told: a
  // tune's report fails at its write if at all, emit's output is refused.
  const std::optional<EmittedKind> found = read ? emitted_kind_of(text) : std::nullopt;
  if (found == out.kind) return;
  if (out.kind)
    throw InputError(out.where, fmt::format("'{}' exists and is not {} as tunekit writes one (a tune's report, a "
                                            "file of another kind?); an output replaces only a file of its own "
                                            "kind: give another path, or move that file away first",
                                            out.file.string(), emitted_kind_name(*out.kind)));
  throw InputError(out.where, fmt::format("'{}' exists and is {} as tunekit emit writes one (a policy named here "
                                          "by mistake?); an output replaces only a file of its own kind: give "
                                          "another path, or move that file away first",
                                          out.file.string(), emitted_kind_name(*found)));
}

void check_distinct_outputs(const std::vector<OutputFile>& outputs) {
  for (std::size_t i = 0; i < outputs.size(); ++i)
    for (std::size_t j = 0; j < i; ++j)
      if (resolved(outputs[i].file) == resolved(outputs[j].file))
        throw InputError(outputs[i].where, fmt::format("'{}' is also where {} writes; give each output its own file",
                                                       outputs[i].file.string(), outputs[j].named_by));
}

std::vector<std::string> split_assignments(const std::vector<std::string>& given) {
  auto starts_assignment = [](std::string_view rest) {
    std::size_t i = 0;
    while (i < rest.size() && rest[i] == ' ') ++i;
    const std::size_t first = i;
    while (i < rest.size() && (std::isalnum(static_cast<unsigned char>(rest[i])) || rest[i] == '_')) ++i;
    if (i == first || std::isdigit(static_cast<unsigned char>(rest[first]))) return false;
    while (i < rest.size() && rest[i] == ' ') ++i;
    return i < rest.size() && rest[i] == '=';
  };
  std::vector<std::string> out;
  for (const auto& text : given) {
    std::size_t start = 0;
    for (std::size_t comma = text.find(','); comma != std::string::npos; comma = text.find(',', comma + 1))
      if (starts_assignment(std::string_view(text).substr(comma + 1))) {
        out.push_back(text.substr(start, comma - start));
        start = comma + 1;
      }
    out.push_back(text.substr(start));
  }
  return out;
}

CLI::Validator at_least(std::uint64_t min) {
  return CLI::Validator(
      [min](std::string& v) -> std::string {
        std::uint64_t x = 0;
        const auto r = std::from_chars(v.data(), v.data() + v.size(), x);
        if (r.ec == std::errc() && r.ptr == v.data() + v.size() && x >= min) return {};
        return fmt::format("expected a whole number >= {}, not '{}'", min, v);
      },
      "");
}

CLI::Option* add_size_flag(CLI::App* cmd, std::vector<std::string>& sizes, const std::string& help) {
  auto split = [&sizes](const std::vector<std::string>& given) {
    sizes.clear();
    for (const auto& flag : given) {
      std::string part;
      int depth = 0;
      for (char c : flag) {
        if (c == '[') ++depth;
        if (c == ']' && depth > 0) --depth;
        if (c == ',' && depth == 0) {
          sizes.push_back(std::exchange(part, {}));
          continue;
        }
        part += c;
      }
      sizes.push_back(std::move(part));
    }
  };
  // One value a flag: `-s N=64 spec.yaml` leaves the spec to its positional.
  return cmd
      ->add_option_function<std::vector<std::string>>("-s,--size", split,
                                                      help + " (repeat, or give several names in one: -s M=64,N=64)")
      ->allow_extra_args(false);
}

// CLI11 2.1 reads "-1" into an unsigned flag as 2^64 - 1, clamps a whole
// number too large for its type, and says only "Could not convert" for
// "abc": every number flag of every subcommand gets this check instead,
// which runs before the conversion and says what was expected.
void check_numbers(CLI::App& app) {
  for (CLI::App* sub : app.get_subcommands({}))
    for (CLI::Option* o : sub->get_options()) {
      const std::string type = o->get_type_name();
      if (type == "INT" || type == "UINT") {
        const bool non_negative = type == "UINT";
        o->check([non_negative](const std::string& v) -> std::string {
          const char* end = v.data() + v.size();
          std::int64_t i = 0;
          std::uint64_t u = 0;
          const auto r = non_negative ? std::from_chars(v.data(), end, u) : std::from_chars(v.data(), end, i);
          if (r.ec == std::errc() && r.ptr == end) return {};
          const char* what = non_negative ? "a whole number >= 0" : "a whole number";
          if (r.ec == std::errc::result_out_of_range) return fmt::format("'{}' is too large; expected {}", v, what);
          return fmt::format("expected {}, not '{}'", what, v);
        });
      } else if (type == "FLOAT") {
        o->check([](const std::string& v) -> std::string {
          char* end = nullptr;
          const double x = std::strtod(v.c_str(), &end);
          if (!v.empty() && end == v.c_str() + v.size() && std::isfinite(x)) return {};
          return fmt::format("expected a finite number, not '{}'", v);
        });
      }
    }
}

// The names a size may give a value: those of the spec's sizes, and the free
// names of its expressions (arguments, launch, constraints) and of an
// application's commands, less its parameters. A size named otherwise
// changes nothing that runs, so the same work would be tuned twice.
std::set<std::string> size_names_used(const Spec& spec) {
  std::set<std::string> names;
  for (const auto& size : spec.sizes)
    for (const auto& [k, v] : size) names.insert(k);
  for (const Expression* e : trial_expressions(spec)) names.insert(e->variables().begin(), e->variables().end());
  if (const auto& app = spec.application)
    for (const auto* argv : {&app->build, &app->run})
      for (const auto& word : *argv) {
        try {
          for (auto& n : placeholder_names(word)) names.insert(std::move(n));
        } catch (const InputError&) {  // the loader has checked them
        }
      }
  for (const auto& p : spec.parameters) names.erase(p.name);
  if (spec.application)
    for (const std::string_view path : kVariantPlaceholders) names.erase(std::string(path));  // set by the build
  return names;
}

void check_property_names(const std::set<std::string>& read, const Bindings& properties, const std::string& file) {
  std::vector<std::string> lacking;
  for (const auto& n : read)
    if (!properties.count(n)) lacking.push_back(n);
  for (const auto& [key, value] : properties) {
    if (read.count(key)) continue;
    if (std::string hint = did_you_mean(key, lacking); !hint.empty())
      throw InputError(SourceLocation{file, 0, 0},
                       fmt::format("property '{}' is read by nothing in the spec{} (the spec reads that name, and "
                                   "this file does not give it)",
                                   key, hint));
  }
}

int device_index(const Spec& spec, std::optional<std::uint64_t> flag) {
  if (!flag && !spec.device) return 0;
  const std::int64_t index = flag ? static_cast<std::int64_t>(std::min<std::uint64_t>(*flag, INT64_MAX)) : *spec.device;
  const SourceLocation where = flag ? SourceLocation{"--device-index"} : spec.device_where;
  const BackendInfo& backend = backend_for_language(spec.kernel.language);
  const DeviceListing listing = backend.list_devices();
  const auto& devices = listing.devices;
  if (!devices.empty() && index >= static_cast<std::int64_t>(devices.size())) {
    std::vector<std::string> listed;
    for (std::size_t i = 0; i < devices.size(); ++i) listed.push_back(fmt::format("{}: {}", i, devices[i].device));
    throw InputError(where, fmt::format("there is no {} device {}: this machine has {} {} device{} ({}), as `tunekit "
                                        "devices` lists them; expected an index from 0 to {}",
                                        backend.name, index, devices.size(), backend.name,
                                        devices.size() == 1 ? "" : "s", fmt::join(listed, "; "), devices.size() - 1));
  }
  if (index > std::numeric_limits<int>::max())
    throw InputError(where, fmt::format("{} is no device index; expected a small whole number (0 for the first "
                                        "device of `tunekit devices`)",
                                        index));
  return static_cast<int>(index);
}

Bindings this_machines_properties(const std::string& language) {
  return make_backend(language, {detail::temp_folder() / "tunekit-space", false})->machine().properties;
}

void check_property_types(const Bindings& given, const std::string& language, const std::string& file) {
  // Only a string can be of the wrong type: the backend is asked then only
  // (starting one may take seconds, Triton's imports torch).
  if (language.empty() ||
      std::none_of(given.begin(), given.end(), [](const auto& property) { return property.second.is_string(); }))
    return;
  Bindings here;
  try {
    here = this_machines_properties(language);
  } catch (const std::runtime_error&) {
    return;  // no backend for it here (a GPU's, on a machine without one)
  }
  for (const auto& [key, value] : given)
    if (const auto it = here.find(key); it != here.end() && value.is_string() && it->second.is_number())
      throw InputError(SourceLocation{file, 0, 0},
                       fmt::format("property '{}' is the string \"{}\"; expected a number, as this machine's {} is "
                                   "({})",
                                   key, value.as_string(), key, it->second.str()));
}

// A size given on the command line: a name the spec uses, and a number
// (a malformed axis such as 'M=[1,2' would otherwise be the string "[1,2").
// A machine property the constraints read is among the names the spec
// uses, but a size flag would replace the machine's value unseen: it is
// refused, and left out of the sizes offered, unless the spec's sizes
// declare it (a size named like a property wins).
void check_size_flag(const Spec& spec, const std::set<std::string>& known, const Bindings& machine,
                     const std::string& flag, const std::string& name, const std::vector<Value>& values) {
  if (std::any_of(spec.parameters.begin(), spec.parameters.end(), [&](const Parameter& p) { return p.name == name; }))
    throw InputError({flag}, "'" + name +
                                 "' is a parameter of the spec, not a size; a run's parameters are narrowed "
                                 "with --where");
  auto is_property = [&](const std::string& n) {
    return machine.count(n) > 0 &&
           std::find(spec.size_names.begin(), spec.size_names.end(), n) == spec.size_names.end();
  };
  if (is_property(name))
    throw InputError({flag}, fmt::format("'{}' is a property of the machine ({} here), not a size; to try the spec as "
                                         "on a machine with other properties, give them with --properties FILE (one "
                                         "device object of `tunekit devices --json`, edited)",
                                         name, machine.at(name).str()));
  if (!known.count(name)) {
    std::vector<std::string> list;
    for (const auto& n : known)
      if (!is_property(n)) list.push_back(n);
    throw InputError({flag}, "the spec uses no size named '" + name + "'" + did_you_mean(name, list) +
                                 (list.empty() ? " (it uses no size at all)" : " (its sizes: " + either(list) + ")"));
  }
  check_size_values(flag, name, values);
}

SizeAxes size_axes_from_flags(const std::vector<std::string>& sizes, const std::vector<std::string>& axes) {
  SizeAxes out;
  for (const auto& s : sizes) {
    if (s.find('=') == std::string::npos || s.front() == '=')
      throw InputError({"--size " + s}, "expected NAME=VALUE, e.g. --size N=4096");
    auto [name, value] = parse_assignment(s, {"--size " + s});
    out.overrides.push_back({name, {value}, {"--size " + s}});
  }
  for (const auto& a : axes) out.axes.push_back(parse_axis(a));
  std::map<std::string, std::string> given;  // name -> the flag that gave it first
  for (const auto* flagged : {&out.overrides, &out.axes})
    for (const auto& p : *flagged) {
      check_size_values(p.where.file, p.name, p.values);
      if (auto [it, fresh] = given.try_emplace(p.name, p.where.file); !fresh)
        throw InputError(p.where, fmt::format("size '{}' is given twice (by {} before); give each size one flag, "
                                              "with a list or range of its values",
                                              p.name, it->second));
    }
  return out;
}

Bindings one_size_from_flags(const std::vector<std::string>& flags, const Spec* spec, const Bindings& machine,
                             const std::string& command) {
  const std::set<std::string> known = spec ? size_names_used(*spec) : std::set<std::string>{};
  Bindings size;
  std::map<std::string, std::string> given;  // name -> the flag that gave it
  for (const auto& s : flags) {
    const std::string flag = "--size " + s;
    auto [name, value] = parse_assignment(s, {flag});
    if (spec) check_size_flag(*spec, known, machine, flag, name, {value});
    else check_size_values(flag, name, {value});
    if (auto [at, fresh] = given.try_emplace(name, s); !fresh)
      throw InputError({flag}, fmt::format("'{}' is given twice (--size {} before); `{}` takes one size", name,
                                           at->second, command));
    size[name] = std::move(value);
  }
  return size;
}

void check_size_values(const std::string& flag, const std::string& name, const std::vector<Value>& values) {
  // The forms of the flag at hand: --size takes one value, a list is -a's.
  const bool axis = flag.rfind("-a ", 0) == 0;
  for (const auto& v : values)
    if (v.is_string())
      throw InputError(
          {flag}, "'" + v.str() +
                      "' is not a number; a size is an integer (4096, 0x1000, 0o10000) or a float (0.5, 1e3), e.g. " +
                      name + "=4096" +
                      (axis ? " or " + name + "=[1024,2048]"
                            : " (a list of sizes, " + name + "=[1024,2048], is for tune's -a/--axis)"));
}

// --arg NAME:TYPE:SIZE[:FILL[:ROLE]]  or  --arg NAME:TYPE=EXPR (a scalar).
ArgumentSpec parse_arg_option(const std::string& text) {
  const SourceLocation where{"--arg " + text};
  auto fail = [&](const std::string& why) -> ArgumentSpec {
    throw InputError(where, why + "; expected NAME:TYPE:SIZE[:FILL[:ROLE]] or NAME:TYPE=VALUE");
  };
  ArgumentSpec a;
  a.where = where;
  const auto first = text.find(':');
  if (first == std::string::npos || first == 0) return fail("missing ':' after the name");
  a.name = text.substr(0, first);
  std::string rest = text.substr(first + 1);
  if (auto eq = rest.find('='); eq != std::string::npos && rest.find(':') > eq) {
    auto type = element_type_from_string(rest.substr(0, eq));
    if (!type) return fail("unknown element type '" + rest.substr(0, eq) + "'");
    a.type = *type;
    a.role = Role::scalar;
    a.value = Expression::parse(rest.substr(eq + 1), where);
    return a;
  }
  std::vector<std::string> parts;
  std::stringstream ss(rest);
  for (std::string p; std::getline(ss, p, ':');) parts.push_back(p);
  if (parts.size() < 2 || parts.size() > 4) return fail("wrong number of fields");
  auto type = element_type_from_string(parts[0]);
  if (!type) return fail("unknown element type '" + parts[0] + "'");
  a.type = *type;
  a.size = Expression::parse(parts[1], where);
  // A buffer's role and fill, by the names specs use (names.hpp); a number
  // for FILL is a constant fill, and `sequence` counts from 0.
  std::vector<std::string> roles;
  for (const auto& r : role_names())
    if (r.value != Role::scalar && r.value != Role::tensor_map) roles.emplace_back(r.name);
  if (parts.size() == 4) {
    auto role = value_named(role_names(), parts[3]);
    if (!role || *role == Role::scalar || *role == Role::tensor_map)
      return fail("unknown role '" + parts[3] + "' (" + either(roles) + ")");
    a.role = *role;
  }
  // As in a spec: a workspace starts as zeros (a counter in it needs that).
  a.fill = a.role == Role::out || a.role == Role::scratch ? Fill::zeros : Fill::random;
  // An empty FILL (x:f32:N::out) is the default.
  if (parts.size() >= 3 && !parts[2].empty() && a.role == Role::out)
    return fail("fill '" + parts[2] +
                "' of an out buffer, which starts as NaN (a poison pattern for integers) before each verified run "
                "so that an element the kernel never writes fails: its fill would never be seen. A kernel that "
                "reads the buffer before writing it needs role inout (NAME:TYPE:SIZE:" +
                parts[2] + ":inout); an out buffer's FILL is left empty (NAME:TYPE:SIZE::out)");
  if (parts.size() >= 3 && parts[2].rfind("file=", 0) == 0) {
    // The spec's fill: {file: PATH}: raw elements of the type, or an .npy
    // file (checked against the argument at each size, as a spec's is).
    const std::filesystem::path file = parts[2].substr(5);
    std::error_code ec;
    if (file.empty() || !std::filesystem::is_regular_file(file, ec))
      return fail("fill " + parts[2] + ": '" + file.string() + "' is not a file");
    a.fill = Fill::file;
    a.fill_file = std::filesystem::absolute(file);
    a.fill_where = where;
  } else if (parts.size() >= 3 && !parts[2].empty()) {
    const auto& f = parts[2];
    if (auto named = value_named(fill_names(), f); named && *named != Fill::constant && *named != Fill::file) {
      a.fill = *named;
      if (auto why = fill_misfit(a.type, a.fill, 0)) return fail("fill: " + *why);
    } else {
      try {
        std::size_t used = 0;
        a.fill_value = std::stod(f, &used);
        if (used != f.size()) throw std::invalid_argument(f);
        a.fill = Fill::constant;
      } catch (const std::out_of_range&) {
        return fail("fill " + f + " is out of the range of a double");
      } catch (const std::exception&) {
        std::vector<std::string> fills;
        for (const auto& n : fill_names())
          if (n.value != Fill::constant && n.value != Fill::file) fills.emplace_back(n.name);
        fills.emplace_back("a number");
        fills.emplace_back("file=PATH");
        return fail("unknown fill '" + f + "' (" + either(fills) + ")");
      }
      if (auto why = fill_misfit(a.type, a.fill, a.fill_value)) return fail("fill: " + *why);
    }
  }
  return a;
}

Spec spec_of_target(const std::filesystem::path& target, const std::string& entry,
                    const std::vector<std::string>& args) {
  if (is_spec_file(target)) {
    // A spec describes its call itself; a flag it would not read must not
    // look as if it had been obeyed.
    if (!entry.empty() || !args.empty())
      throw InputError({entry.empty() ? "--arg" : "--entry"},
                       fmt::format("describes the call of a bare kernel source, but {} is a spec: its kernel's "
                                   "'entry' and its 'arguments' describe the call",
                                   target.string()));
    return load_spec(target);
  }
  Spec spec = spec_from_source(target);
  // --entry and --arg describe a call on the host; a device kernel's launch
  // (grid, block) and a Python kernel's tensors need a spec, which can
  // point at this source and keep its annotations.
  if (const KernelTraits& traits = backend_for_language(spec.kernel.language).kernel;
      traits.launch || traits.tensors || traits.application)
    throw InputError(
        {target.string(), 0, 0},
        fmt::format("its name's ending makes it a kernel of language {}: a bare source is tuned as a C or C++ function "
                    "called on the CPU with --entry and --arg, which give no launch; write a spec "
                    "(kernel: {{source: {}, language: {}, ...}} with its grid and block), and the "
                    "source keeps its %RANGE% lines",
                    spec.kernel.language, target.filename().string(), spec.kernel.language));
  if (entry.empty()) throw InputError({"--entry"}, "a bare source needs --entry NAME (the function to call)");
  spec.kernel.entry = entry;
  spec.kernel.entry_where = {"--entry " + entry};  // an entry the source lacks is the flag's error
  spec.name = entry;
  if (args.empty())
    throw InputError({"--arg"},
                     "a bare source needs its arguments: --arg NAME:TYPE:SIZE[:FILL[:ROLE]] "
                     "or --arg NAME:TYPE=VALUE, once per argument, in call order");
  std::map<std::string, std::string> named;  // argument name -> its --arg
  for (const auto& a : args) {
    spec.arguments.push_back(parse_arg_option(a));
    if (auto [it, fresh] = named.try_emplace(spec.arguments.back().name, a); !fresh)
      throw InputError({"--arg " + a}, fmt::format("argument '{}' is given twice (also by --arg {}); each argument "
                                                   "of the call takes one --arg, in call order",
                                                   it->first, it->second));
  }
  spec.reference.kind = ReferenceSpec::Kind::default_config;
  return spec;
}

void add_kernel_flags(CLI::App* cmd, KernelFlags& k, bool as_tuned) {
  // A command that reads a tune's results takes them as the tune was given them.
  const std::string tuned = as_tuned ? ", as the tune was given it" : "";
  cmd->add_option("--compiler", k.compiler,
                  "Compiler for CPU kernels (default: the spec's, else $CXX, else c++)" + tuned);
  cmd->add_option("--flags", k.flags,
                  "Compiler flags, space separated; replace the spec's (default -O3 -march=native)" + tuned);
  cmd->add_option("--reference", k.reference,
                  "Verification reference: a function NAME in the kernel source, 'default' (the default config's "
                  "outputs) or 'none'" +
                      tuned);
  cmd->add_option("--atol", k.atol, "Absolute tolerance for verification" + tuned);
  cmd->add_option("--rtol", k.rtol, "Relative tolerance for verification" + tuned);
}

void apply_kernel_flags(Spec& spec, const KernelFlags& k) {
  const KernelTraits& traits = backend_for_language(spec.kernel.language).kernel;
  // A command kernel's outputs are the user's program's own: nothing is
  // compared, so flags about comparing them would change nothing.
  if (traits.application)
    for (const auto& [flag, given] : {std::pair{"--reference", !k.reference.empty()},
                                      std::pair{"--atol", k.atol.has_value()}, std::pair{"--rtol", k.rtol.has_value()}})
      if (given)
        throw InputError({flag}, fmt::format("does not apply to a {} kernel: its program's outputs are not compared "
                                             "with a reference (its time is read from the program's output)",
                                             spec.kernel.language));
  if (!k.reference.empty()) {
    // An error about the reference names the flag, not the spec's line.
    spec.reference.where = SourceLocation{"--reference " + k.reference};
    if (k.reference == "none") spec.reference.kind = ReferenceSpec::Kind::none;
    else if (k.reference == "default") spec.reference.kind = ReferenceSpec::Kind::default_config;
    else {
      spec.reference.kind = ReferenceSpec::Kind::function;
      spec.reference.entry = k.reference;
    }
    // As a spec's 'reference' key with no output is refused at its line.
    if (spec.reference.kind != ReferenceSpec::Kind::none && !has_compared_output(spec))
      throw InputError({"--reference " + k.reference},
                       "gives outputs to compare with, but no argument has role out or inout, so nothing would be "
                       "verified: give the buffer the kernel writes role out (a spec's 'role: out', or --arg "
                       "NAME:TYPE:SIZE::out), or pass --reference none");
  }
  if (!k.compiler.empty() || !k.flags.empty()) {
    // Held to what the spec's kernel.compiler and kernel.flags may be, and
    // remembered as the flags' own: a build that fails names them.
    const std::string flag = k.compiler.empty() ? "--flags" : "--compiler";
    if (traits.application)
      throw InputError({flag}, fmt::format("does not apply to a {} kernel: its build and run commands are given in "
                                           "the spec's 'application'",
                                           spec.kernel.language));
    if (!k.compiler.empty()) {
      if (auto why = compiler_problem(traits, k.compiler))
        throw InputError({"--compiler"}, fmt::format("'{}' is not a compiler of {} kernels: {}", k.compiler,
                                                     spec.kernel.language, *why));
      spec.kernel.compiler = k.compiler;
      spec.kernel.compiler_where = {"--compiler"};
    }
    if (!k.flags.empty()) {
      // Include folders on the command line are the shell's, not the spec's.
      std::istringstream in(k.flags);
      std::vector<std::string> words;
      for (std::string w; in >> w;) words.push_back(w);
      spec.kernel.flags = detail::include_flags_from(words, std::filesystem::current_path());
      spec.kernel.flags_where = {"--flags"};
    }
  }
  for (const auto& [flag, value] : {std::pair{"--atol", k.atol}, std::pair{"--rtol", k.rtol}})
    if (value && !(*value >= 0 && std::isfinite(*value)))
      throw InputError({flag}, fmt::format("{} is not a tolerance; give a number of 0 or more", *value));
  if (k.atol) spec.tolerance.atol = *k.atol;
  if (k.rtol) spec.tolerance.rtol = *k.rtol;
}

int report_error(const std::exception& e) {
  // On a terminal the error starts a line of its own, past a progress bar
  // drawn in place; in a log it is the line.
  const char* lead = ::isatty(STDERR_FILENO) ? "\n" : "";
  fmt::print(stderr, "{}error: {}\n", lead, e.what());
  return dynamic_cast<const InputError*>(&e) ? 1 : 2;
}

}  // namespace tunekit::cli
