#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <map>
#include <mutex>
#include <optional>
#include <regex>
#include <set>
#include <sstream>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "builder/detail/compiler.hpp"
#include "builder/detail/headers.hpp"
#include "core/detail/hash.hpp"
#include "tunekit/annotation.hpp"
#include "tunekit/backend.hpp"
#include "tunekit/builder.hpp"

namespace tunekit {

namespace fs = std::filesystem;

std::string BuildInput::hash() const {
  detail::Hasher h;
  h.add(source).add(entry).add(language).add(compiler).add(arch);
  // The compiler the name runs now: a build of another (an upgrade, a
  // switched alternative) is not this variant.
  if (const std::string id = detail::compiler_identity(compiler); !id.empty()) h.add("compiler").add(id);
  if (!headers.empty()) h.add("headers").add(headers);  // only when there are: other variants keep their hash
  if (!files.empty()) h.add("flag files").add(files);   // likewise
  h.add(defines.size());
  for (const auto& d : defines) h.add(d);
  h.add(flags.size());
  for (const auto& f : flags) h.add(f);
  // The call shim depends on the argument types and roles.
  h.add(arguments.size());
  for (const auto& a : arguments) h.add(a.name).add(to_string(a.type)).add(to_string(a.role));
  return h.hex();
}

namespace {

// The include options, in the forms gcc, clang, nvcc and NVRTC take them.
constexpr std::string_view kIncludeOptions[] = {"--include-path", "-iquote", "-isystem", "-idirafter", "-I"};

// The option `flag` is, and the folder joined to it ("" for the option
// alone, whose folder is the next flag); nullopt for other flags.
std::optional<std::pair<std::string_view, std::string>> include_option(const std::string& flag) {
  for (std::string_view option : kIncludeOptions) {
    if (!flag.starts_with(option)) continue;
    std::string folder = flag.substr(option.size());
    if (option == "--include-path") {
      if (!folder.empty() && folder.front() != '=') continue;  // another long option
      if (!folder.empty()) folder.erase(0, 1);
    }
    return std::pair{option, folder};
  }
  return std::nullopt;
}

}  // namespace

std::vector<std::string> detail::include_flags_from(const std::vector<std::string>& flags, const fs::path& base) {
  // gcc's "=" and "$SYSROOT" prefixes are the sysroot's, not relative.
  auto from_base = [&](const std::string& folder) {
    if (base.empty() || folder.empty() || folder.front() == '=' || folder.front() == '$' ||
        fs::path(folder).is_absolute())
      return folder;
    return (base / folder).lexically_normal().string();
  };
  std::vector<std::string> out = flags;
  for (std::size_t i = 0; i < out.size(); ++i) {
    const auto option = include_option(out[i]);
    if (!option) continue;
    const auto& [name, joined] = *option;
    if (!joined.empty()) out[i] = std::string(name) + (name == "--include-path" ? "=" : "") + from_base(joined);
    else if (i + 1 < out.size()) out[i + 1] = from_base(out[i + 1]), ++i;
  }
  return out;
}

std::vector<fs::path> detail::include_folders(const std::vector<std::string>& flags) {
  std::vector<fs::path> out;
  for (std::size_t i = 0; i < flags.size(); ++i) {
    const auto option = include_option(flags[i]);
    if (!option) continue;
    if (!option->second.empty()) out.emplace_back(option->second);
    else if (i + 1 < flags.size()) out.emplace_back(flags[++i]);
  }
  return out;
}

void detail::for_each_local_header(const fs::path& source, std::string_view text, const std::vector<fs::path>& folders,
                                   const std::function<void(const fs::path&, const std::string&)>& visit) {
  static const std::regex include(R"re(^[ \t]*#[ \t]*include[ \t]*(["<])([^">]+)[">])re");
  // A Python kernel's (Triton's) own modules: `import a.b, c`,
  // `from .a import x` and `from . import a, b`, looked for beside the
  // importer (a/b.py or a/b/__init__.py); torch, triton and the standard
  // library are not there.
  static const std::regex from_import(R"re(^[ \t]*from[ \t]+\.*([A-Za-z_][\w.]*)[ \t]+import\b)re");
  static const std::regex from_here_import(
      R"re(^[ \t]*from[ \t]+\.+[ \t]+import[ \t]+\(?[ \t]*([A-Za-z_]\w*(?:[ \t]*,[ \t]*[A-Za-z_]\w*)*))re");
  static const std::regex plain_import(R"re(^[ \t]*import[ \t]+([A-Za-z_][\w.]*(?:[ \t]*,[ \t]*[A-Za-z_][\w.]*)*))re");
  const bool python = source.extension() == ".py";
  // Bounded, as the docs say (spec-format.md): a header-only library
  // through -I (CUTLASS, Eigen) reaches hundreds, and this runs for every
  // variant built.
  constexpr std::size_t kMostFiles = 4096;
  std::set<fs::path> seen;
  // The files to scan: the source's text as given, then each header found.
  std::vector<std::pair<fs::path, std::string>> pending{{source, std::string(text)}};
  auto find = [&](const fs::path& includer, const std::string& name, bool quoted) -> fs::path {
    std::error_code ec;
    if (quoted)
      if (fs::path p = fs::weakly_canonical(includer.parent_path() / name, ec); !ec && fs::is_regular_file(p, ec))
        return p;
    for (const fs::path& folder : folders)
      if (fs::path p = fs::weakly_canonical(folder / name, ec); !ec && fs::is_regular_file(p, ec)) return p;
    return {};
  };
  auto visit_found = [&](const fs::path& found) {
    if (found.empty() || !seen.insert(found).second) return;
    std::ifstream in(found, std::ios::binary);
    std::string read((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    visit(found, read);
    pending.emplace_back(found, std::move(read));
  };
  auto find_module = [&](const fs::path& importer, std::string dotted) -> fs::path {
    std::replace(dotted.begin(), dotted.end(), '.', '/');
    std::error_code ec;
    for (const fs::path& p :
         {importer.parent_path() / (dotted + ".py"), importer.parent_path() / dotted / "__init__.py"})
      if (fs::path c = fs::weakly_canonical(p, ec); !ec && fs::is_regular_file(c, ec)) return c;
    return {};
  };
  while (!pending.empty() && seen.size() < kMostFiles) {
    const auto [file, body] = std::move(pending.back());
    pending.pop_back();
    std::istringstream lines(body);
    for (std::string line; std::getline(lines, line);) {
      if (python) {
        if (line.find("import") == std::string::npos) continue;
        std::smatch m;
        if (std::regex_search(line, m, from_import)) {
          visit_found(find_module(file, m[1].str()));
        } else if (std::regex_search(line, m, from_here_import) || std::regex_search(line, m, plain_import)) {
          std::istringstream names(m[1].str());
          for (std::string name; std::getline(names, name, ',');) {
            name.erase(0, name.find_first_not_of(" \t"));
            name.erase(name.find_last_not_of(" \t") + 1);
            visit_found(find_module(file, name));
          }
        }
        continue;
      }
      // Most lines of most kernels include nothing, and without include
      // folders only "NAME" can be the kernel's own: no regex for the rest
      // (this runs for every variant built).
      if (line.find("include") == std::string::npos || (folders.empty() && line.find('"') == std::string::npos))
        continue;
      std::smatch m;
      if (!std::regex_search(line, m, include)) continue;
      visit_found(find(file, m[2].str(), m[1].str() == "\""));
    }
  }
}

std::string detail::local_headers_digest(const fs::path& source, std::string_view text,
                                         const std::vector<fs::path>& folders) {
  detail::Hasher h;
  bool any = false;
  std::error_code canonical_error;
  const fs::path base = fs::weakly_canonical(fs::absolute(source), canonical_error).parent_path();
  for_each_local_header(source, text, folders, [&](const fs::path& header, const std::string& read) {
    // By its place beside the source, not on the disk: a project moved or
    // cloned elsewhere is the same kernel.
    const fs::path from_source = header.lexically_relative(base);
    h.add((from_source.empty() ? header : from_source).string()).add(read);
    any = true;
  });
  return any ? h.hex() : std::string();
}

namespace {

// The source's text as the compiler reads it with `flags`: each header they
// force in (`-include FILE`) included first.
std::string with_forced_headers(const fs::path& source, std::string_view text, const std::vector<std::string>& flags) {
  std::string forced;
  for (std::size_t i = 0; i + 1 < flags.size(); ++i)
    if (flags[i] == "-include") {
      const fs::path file = fs::path(flags[i + 1]).is_absolute() ? fs::path(flags[i + 1])
                                                                 : fs::absolute(source).parent_path() / flags[i + 1];
      forced += "#include \"" + file.string() + "\"\n";
    }
  return forced + std::string(text);
}

}  // namespace

std::string detail::headers_digest_for(const fs::path& source, std::string_view text,
                                       const std::vector<std::string>& flags) {
  return local_headers_digest(source, with_forced_headers(source, text, flags), include_folders(flags));
}

std::string detail::headers_text_for(const fs::path& source, std::string_view text,
                                     const std::vector<std::string>& flags) {
  std::string all;
  for_each_local_header(source, with_forced_headers(source, text, flags), include_folders(flags),
                        [&](const fs::path&, const std::string& read) { all.append(read).push_back('\n'); });
  return all;
}

std::optional<std::string> detail::file_digest(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) return std::nullopt;
  detail::Hasher h;
  // Read in pieces: a library or a fill file may be larger than is worth
  // holding at once.
  std::string piece(std::size_t{1} << 20, '\0');
  while (in) {
    in.read(piece.data(), static_cast<std::streamsize>(piece.size()));
    h.add(std::string_view(piece.data(), static_cast<std::size_t>(in.gcount())));
  }
  if (in.bad()) return std::nullopt;
  return h.hex();
}

namespace {

// file_digest of a regular file, read again only when its size or time
// changed: every variant's input asks, and a library may be large. nullopt
// for what is no regular file.
std::optional<std::string> known_file_digest(const fs::path& file) {
  std::error_code ec;
  if (!fs::is_regular_file(file, ec)) return std::nullopt;
  const auto size = fs::file_size(file, ec);
  if (ec) return std::nullopt;
  const auto time = fs::last_write_time(file, ec);
  if (ec) return std::nullopt;
  struct Known {
    std::uintmax_t size;
    fs::file_time_type time;
    std::string digest;
  };
  static std::mutex mutex;
  static std::map<std::string, Known> known;
  const std::string key = fs::absolute(file, ec).string();
  {
    const std::lock_guard lock(mutex);
    if (auto it = known.find(key); it != known.end() && it->second.size == size && it->second.time == time)
      return it->second.digest;
  }
  auto digest = detail::file_digest(file);
  if (!digest) return std::nullopt;
  const std::lock_guard lock(mutex);
  known[key] = {size, time, *digest};
  return digest;
}

}  // namespace

std::string detail::flag_files_digest(const std::vector<std::string>& flags) {
  // Outputs: a dependency file is written anew by every build.
  constexpr std::string_view kOutputOptions[] = {"-o", "-MF"};
  std::vector<fs::path> library_folders;
  for (std::size_t i = 0; i < flags.size(); ++i)
    if (flags[i] == "-L" && i + 1 < flags.size()) library_folders.emplace_back(flags[++i]);
    else if (flags[i].starts_with("-L")) library_folders.emplace_back(flags[i].substr(2));
  detail::Hasher h;
  bool any = false;
  auto add = [&](const std::string& flag, const fs::path& file) {
    const auto digest = known_file_digest(file);
    if (digest) h.add(flag).add(*digest), any = true;
    return digest.has_value();
  };
  for (std::size_t i = 0; i < flags.size(); ++i) {
    const std::string& flag = flags[i];
    if (std::find(std::begin(kOutputOptions), std::end(kOutputOptions), flag) != std::end(kOutputOptions)) {
      ++i;
      continue;
    }
    std::string library;
    if (flag == "-l" && i + 1 < flags.size()) library = flags[++i];
    else if (flag.starts_with("-l")) library = flag.substr(2);
    if (!library.empty()) {
      // As the linker looks in each folder: -l:FILE by its name, else the
      // shared library before the archive.
      const std::vector<std::string> names =
          library.front() == ':' ? std::vector<std::string>{library.substr(1)}
                                 : std::vector<std::string>{"lib" + library + ".so", "lib" + library + ".a"};
      [&] {
        for (const fs::path& folder : library_folders)
          for (const std::string& name : names)
            if (add("-l" + library, folder / name)) return;
      }();
      continue;
    }
    if (!flag.empty() && flag.front() != '-') add(flag, flag);
  }
  return any ? h.hex() : std::string();
}

namespace {

std::string default_compiler(const std::string& language) {
  const BackendInfo& b = backend_for_language(language);
  return b.kernel.default_compiler ? b.kernel.default_compiler(language) : std::string{};
}

BuildInput common_input(const Spec& spec) {
  BuildInput in;
  in.source_name = spec.kernel.source.string();
  in.entry = spec.kernel.entry;
  in.arguments = spec.arguments;
  in.language = spec.kernel.language;
  in.compiler = detail::kernel_compiler(spec);
  in.flags = detail::include_flags_from(spec.kernel.flags, spec.file.parent_path());
  in.arch = spec.kernel.arch;
  in.timeout =
      spec.kernel.build_timeout.value_or(backend_for_language(spec.kernel.language).kernel.default_build_timeout);
  in.max_spills = spec.kernel.max_spills;
  return in;
}

// kernel.defines, evaluated for a build at `size` with `config`'s values,
// after those the injection passed: a reference in the kernel's own source
// reads them as its variants do.
void add_kernel_defines(BuildInput& in, const Spec& spec, const Config& config, const Bindings& size) {
  if (spec.kernel.defines.empty()) return;
  Bindings env = size;
  for (const auto& [name, value] : config) env[name] = value;
  for (const NamedExpression& d : spec.kernel.defines) {
    try {
      in.defines.push_back(d.name + "=" + d.value.evaluate(env).str());
    } catch (const InputError& e) {
      throw InputError(e.where(), fmt::format("define '{}': {}", d.name, e.message()));
    }
  }
}

}  // namespace

std::string detail::kernel_compiler(const Spec& spec) {
  return spec.kernel.compiler.empty() ? default_compiler(spec.kernel.language) : spec.kernel.compiler;
}

std::string detail::kernel_compiler_identity(const Spec& spec, int device) {
  const std::string compiler = kernel_compiler(spec);
  if (const auto& own = backend_for_language(spec.kernel.language).kernel.toolchain_identity)
    return own(compiler, spec.kernel.flags, device);
  return compiler_identity(compiler);
}

Injection resolve_injection(Injection requested, std::string_view source, const std::string& file) {
  if (uses_tunable_lines(requested, source)) return Injection::tunable_lines;
  if (requested != Injection::automatic) return requested;
  if (!parse_range_annotations(source, file).empty()) return Injection::range_defines;
  return Injection::defines;
}

std::string resolve_entry(const std::string& entry, const Config& config) {
  std::string out;
  for (std::size_t i = 0; i < entry.size(); ++i) {
    if (entry[i] != '{') {
      out += entry[i];
      continue;
    }
    const auto close = entry.find('}', i);
    if (close == std::string::npos) throw InputError({}, "unclosed '{' in kernel entry '" + entry + "'");
    const std::string name = entry.substr(i + 1, close - i - 1);
    const Value* v = config.find(name);
    if (!v) throw InputError({}, "kernel entry '" + entry + "' names '" + name + "', which is not a parameter");
    out += v->str();
    i = close;
  }
  return out;
}

BuildInput make_build_input(const Spec& spec, const std::string& kernel_source, const Config& config,
                            const Bindings& size) {
  BuildInput in = common_input(spec);
  in.headers = detail::headers_digest_for(spec.kernel.source, kernel_source, in.flags);
  in.files = detail::flag_files_digest(in.flags);
  in.config = config;
  in.size = size;
  in.entry = resolve_entry(spec.kernel.entry, config);
  const std::string file = spec.kernel.source.string();
  switch (resolve_injection(spec.kernel.injection, kernel_source, file)) {
    case Injection::tunable_lines:
      in.source = apply_tunable_lines(kernel_source, config, file);
      break;
    case Injection::range_defines:
      // CCCL's base variant, as CCCL's scripts build it: TUNE_BASE and none
      // of the %RANGE% defines, whatever `base:` gives its launch. (A
      // parameter named TUNE_BASE is a config's, and there is no base.)
      if (const Value* base = config.find(kTuneBase);
          base && std::none_of(spec.parameters.begin(), spec.parameters.end(),
                               [](const Parameter& p) { return p.name == kTuneBase; }))
        in.source = prepend_defines(kernel_source, Config({{std::string(kTuneBase), *base}}), file);
      else in.source = prepend_defines(kernel_source, config, file);
      break;
    case Injection::defines:
    case Injection::automatic:
      in.source = kernel_source;
      for (const auto& [name, value] : config) in.defines.push_back(name + "=" + value.str());
      break;
  }
  add_kernel_defines(in, spec, config, size);
  return in;
}

Config base_variant_config(const Spec& spec) {
  std::vector<std::pair<std::string, Value>> entries{{std::string(kTuneBase), Value(1)}};
  for (const auto& [name, value] : spec.base_values) entries.emplace_back(name, value);
  return Config(std::move(entries));
}

BuildInput make_reference_input(const Spec& spec, const Config* values, const Bindings& size) {
  BuildInput in = common_input(spec);
  const auto& ref = spec.reference;
  const auto path = ref.source.empty() ? spec.kernel.source : ref.source;
  std::ifstream f(path, std::ios::binary);
  if (!f) throw InputError({spec.file.string()}, "cannot read reference source '" + path.string() + "'");
  std::stringstream ss;
  ss << f.rdbuf();
  in.source = ss.str();
  in.source_name = path.string();
  in.entry = ref.entry;
  if (!ref.flags.empty()) in.flags = detail::include_flags_from(ref.flags, spec.file.parent_path());
  in.headers = detail::headers_digest_for(path, in.source, in.flags);
  in.files = detail::flag_files_digest(in.flags);
  // A Python reference (Triton) is no build: the backend's builder records
  // what the worker calls.
  if (backend_for_language(spec.kernel.language).kernel.tensors) {
    in.compiler = ref.torch_expression.empty() ? "reference:python" : "reference:torch";
    if (!ref.torch_expression.empty()) in.entry = ref.torch_expression;
    return in;
  }
  // A reference function in the kernel's own source is built with a
  // config's values, as the kernel's variants get theirs: a source whose
  // macros have no fallback (an OpenCL kernel reading TS, say) would not
  // build without them. A valid config's, when the caller has one: a default
  // outside its lists would fail the source's own checks (static_assert) and
  // blame the reference. A source with tunable lines keeps its own values,
  // and a separate reference source gets nothing injected. kernel.defines
  // come with the values, as they do to every variant (their expressions
  // read them).
  const bool own_source = ref.source.empty() || ref.source == spec.kernel.source;
  if (!values && spec.default_config) values = &*spec.default_config;
  if (own_source && values) {
    switch (resolve_injection(spec.kernel.injection, in.source, in.source_name)) {
      case Injection::range_defines:
        in.source = prepend_defines(in.source, *values, in.source_name);
        break;
      case Injection::defines:
      case Injection::automatic:
        for (const auto& [name, value] : *values) in.defines.push_back(name + "=" + value.str());
        break;
      case Injection::tunable_lines:
        break;
    }
    add_kernel_defines(in, spec, *values, size);
  }
  return in;
}

}  // namespace tunekit
