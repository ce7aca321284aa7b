// Loading a spec (YAML or JSON, through yaml-cpp): the document, its top
// level, and the entry points. Each section is read in its own file.
#include "spec/detail/loader.hpp"

#include <algorithm>
#include <cctype>
#include <iterator>
#include <sstream>

#include <fmt/format.h>
#if __has_include(<yaml-cpp/depthguard.h>)
#include <yaml-cpp/depthguard.h>  // YAML::DeepRecursion (yaml-cpp 0.7 and later)
#endif

#include "core/detail/text.hpp"
#include "tunekit/annotation.hpp"

namespace tunekit {

namespace spec_detail {

// The name becomes file names in the output folder (NAME.csv, ...).
void Loader::check_name(const std::string& name, const SourceLocation& where) const {
  const bool control =
      std::any_of(name.begin(), name.end(), [](char c) { return static_cast<unsigned char>(c) < 0x20; });
  if (name.find_first_of("/\\") != std::string::npos || name == "." || name == ".." || control)
    fail(where, "name '" + name +
                    "' must not contain '/', '\\' or control characters, nor be '.' or "
                    "'..': it names the files in the output folder");
}

Spec Loader::load(const YAML::Node& root) {
  Item top{root, "", loc(root)};
  if (top.where.line == 0) top.where = SourceLocation{file_, 1, 1};
  if (root.IsNull()) fail(top.where, "the spec is empty; expected a mapping with at least 'kernel' and 'arguments'");
  if (root.IsMap() && root["KernelSpecification"]) return t1(root);
  if (root.IsMap() && root["ConfigurationSpace"])
    fail(top.where,
         "a Kernel Tuner T1 file with a space ('ConfigurationSpace') but no kernel ('KernelSpecification'): "
         "`tunekit space FILE` counts its space and `tunekit replay CACHE --t1 FILE` replays a recorded cache over "
         "it; to tune, give its KernelSpecification (docs/spec-format.md, \"Kernel Tuner T1 files\")");
  Map m = map(top,
              {"name", "kernel", "arguments", "sizes", "parameters", "constraints", "configs", "default", "base",
               "reference", "tolerance", "measure", "search", "output", "application", "metrics", "objective"},
              "a mapping with at least 'kernel' and 'arguments'");
  Spec s;
  s.kernel = kernel(require(m, "kernel"));
  const BackendInfo& backend = backend_for_language(s.kernel.language);
  const bool command = backend.kernel.application;
  if (auto v = get(m, "name")) {
    s.name = string_of(*v, "a name");
    check_name(s.name, content_loc(*v));
  } else s.name = command && s.kernel.entry.empty() ? s.kernel.source.stem().string() : s.kernel.entry;

  if (command) {
    // The application checks its own results: nothing is passed by
    // tunekit, and nothing is compared with a reference.
    for (const char* key : {"arguments", "reference", "tolerance"})
      if (const Entry* e = m.find(key))
        fail(loc(e->key_node), "'" + std::string(key) + "' does not apply to a " + s.kernel.language +
                                   " kernel (kernel.language: " + s.kernel.language +
                                   "): the application gets its values through placeholders in "
                                   "'application.run' and checks its own results");
    s.reference.kind = ReferenceSpec::Kind::none;
  } else {
    if (const Entry* e = m.find("application"))
      fail(loc(e->key_node), "'application' needs 'kernel.language: " + languages_with(&KernelTraits::application) +
                                 "' (got '" + s.kernel.language + "')");
    arguments(require(m, "arguments"), s);
  }

  if (auto v = get(m, "sizes")) s.sizes = sizes(*v);
  else s.sizes.emplace_back();
  s.size_names = size_order_;
  space(m, s);
  check_defines(s);
  for (const ConstexprSpec& c : s.kernel.constexprs)
    for (const Parameter& p : s.parameters)
      if (p.name == c.name)
        // The build applies the constexprs after the config, so the trial
        // would run this value and record the config's.
        fail(c.where, "'" + c.name + "' is a tuned parameter (at " + p.where.str() +
                          "): a value in 'kernel.constexprs' would replace each config's, so no trial would run the "
                          "config it records; give '" +
                          c.name + "' in 'parameters' or here, not both");
  if (auto v = get(m, "metrics"); v && !v->node.IsNull()) metrics(*v, s);
  if (auto v = get(m, "objective")) objective(*v, s);
  if (auto v = get(m, "reference")) {
    s.reference = reference(*v, s.kernel.language);
    // Else every trial would pass a comparison of nothing and be reported
    // verified; an output's role left out (it defaults to `in`) is the
    // usual cause.
    if (s.reference.kind != ReferenceSpec::Kind::none && !has_compared_output(s))
      fail(loc(m.find("reference")->key_node),
           "'reference' gives outputs to compare with, but no argument has role out or inout (a buffer's role "
           "defaults to in), so nothing would be verified: give the buffer the kernel writes 'role: out' "
           "('role: inout' where it reads it too), or write 'reference: none' to tune without verifying");
  }
  if (auto v = get(m, "tolerance")) tolerance(*v, s);
  if (auto v = get(m, "measure")) measure(*v, s);
  if (auto v = get(m, "search")) search(*v, s);
  if (auto v = get(m, "output")) output(*v, s);
  if (command) s.application = application(require(m, "application"), s);
  if (backend.check_spec) s.warnings = backend.check_spec(s);
  return s;
}

}  // namespace spec_detail

using namespace spec_detail;

namespace {

// A spec file read and parsed: its one YAML document, with the text the
// loader locates its messages in.
struct Document {
  std::string name;
  std::string text;
  fs::path absolute;
  YAML::Node root;
};

Document read_document(const fs::path& file) {
  const std::string name = file.string();
  std::error_code ec;
  if (!fs::exists(file, ec)) throw InputError(SourceLocation{name, 0, 0}, "spec file not found");
  if (fs::is_directory(file, ec)) throw InputError(SourceLocation{name, 0, 0}, "spec path is a directory, not a file");
  bool ok = false;
  std::string text = read_text(file, ok);
  if (!ok) throw InputError(SourceLocation{name, 0, 0}, "cannot read spec file");
  // yaml-cpp passes such bytes through, and they would fail later, far from
  // here, where a name or a value is written out as JSON.
  if (const auto bad = detail::first_invalid_utf8(text)) {
    const auto before = text.begin() + static_cast<std::ptrdiff_t>(*bad);
    const int line = static_cast<int>(std::count(text.begin(), before, '\n')) + 1;
    const int column =
        static_cast<int>(before - std::find(std::make_reverse_iterator(before), text.rend(), '\n').base()) + 1;
    throw InputError(SourceLocation{name, line, column}, fmt::format("byte 0x{:02X} is not UTF-8: a spec is UTF-8 text",
                                                                     static_cast<unsigned char>(text[*bad])));
  }
  fs::path absolute = fs::absolute(file, ec).lexically_normal();
  if (ec) absolute = file;
  // One document: yaml-cpp reads the first, and a second (after a '---'
  // line, which at column 0 always starts one) would be ignored with all the
  // user wrote there. Found in the text: parsing every document of a hostile
  // file costs what the first alone does not.
  {
    std::istringstream lines(text);
    bool content = false;
    int line_no = 0;
    for (std::string line; std::getline(lines, line);) {
      ++line_no;
      if (line.rfind("---", 0) == 0 && (line.size() == 3 || std::isspace(static_cast<unsigned char>(line[3])))) {
        const auto rest = line.find_first_not_of(" \t\r", 3);
        if (content && rest != std::string::npos && line[rest] != '#')
          throw InputError(SourceLocation{name, line_no, 1}, "a spec is one YAML document; a second starts here");
        if (content) {
          // A '---' after content starts a second document if anything but
          // comments and blank lines follows.
          for (std::string next; std::getline(lines, next);) {
            ++line_no;
            const auto at = next.find_first_not_of(" \t\r");
            if (at != std::string::npos && next[at] != '#')
              throw InputError(SourceLocation{name, line_no, static_cast<int>(at) + 1},
                               "a spec is one YAML document; a second, begun by the '---' line above, starts here");
          }
          break;
        }
        continue;
      }
      const auto at = line.find_first_not_of(" \t\r");
      if (at != std::string::npos && line[at] != '#') content = true;
    }
  }
  YAML::Node root;
  try {
    root = YAML::Load(text);
#if __has_include(<yaml-cpp/depthguard.h>)
  } catch (const YAML::DeepRecursion& e) {
    // yaml-cpp says only "bad file", where it gave up: in a flow such as
    // [[[...]]], past the innermost value.
    throw InputError(
        SourceLocation{name, e.mark.line >= 0 ? e.mark.line + 1 : 0, e.mark.column >= 0 ? e.mark.column + 1 : 0},
        "mappings and lists nested deeper than the YAML reader takes (about 500 levels; it stopped "
        "here): expected a spec nested a few levels deep; look for '[' or '{' left unclosed, or lines "
        "indented ever further");
#endif
  } catch (const YAML::Exception& e) {
    SourceLocation where{name, e.mark.line >= 0 ? e.mark.line + 1 : 0, e.mark.column >= 0 ? e.mark.column + 1 : 0};
    // yaml-cpp's words for a tab in the indentation never name the tab.
    std::string hint;
    if (where.line > 0) {
      std::istringstream lines(text);
      std::string line;
      for (int i = 0; i < where.line && std::getline(lines, line); ++i) {
      }
      if (line.substr(0, line.find_first_not_of(" \t")).find('\t') != std::string::npos)
        hint = " (the line is indented with a tab: YAML indents with spaces only)";
      // What yaml-cpp says of a key indented unlike its siblings.
      else if (e.msg.find("end of map not found") != std::string::npos)
        hint =
            " (check this line's indentation: the keys of one mapping start in the same column, and a value "
            "nested under a key is indented further than it)";
    }
    throw InputError(where, "YAML syntax error: " + e.msg + hint);
  }
  return Document{name, std::move(text), std::move(absolute), std::move(root)};
}

// What `read` reads with a loader of `d`.
template <typename Read>
auto read_with_loader(Document& d, Read read) {
  try {
    Loader loader(d.name, std::move(d.text), d.absolute.parent_path());
    return read(loader);
  } catch (const YAML::Exception& e) {  // not expected: the loader checks types first
    SourceLocation where{d.name, e.mark.line >= 0 ? e.mark.line + 1 : 0, e.mark.column >= 0 ? e.mark.column + 1 : 0};
    throw InputError(where, e.msg);
  }
}

}  // namespace

Spec load_spec(const fs::path& file) {
  Document d = read_document(file);
  return read_with_loader(d, [&](Loader& loader) {
    Spec spec = loader.load(d.root);
    spec.file = d.absolute;
    return spec;
  });
}

T1Search load_t1_search(const fs::path& file) {
  Document d = read_document(file);
  return read_with_loader(d, [&](Loader& loader) { return loader.t1_search_only(d.root); });
}

Spec spec_from_source(const fs::path& source) {
  const std::string name = source.string();
  std::error_code ec;
  if (!fs::exists(source, ec)) throw InputError(SourceLocation{name, 0, 0}, "source file not found");
  if (!fs::is_regular_file(source, ec))
    throw InputError(SourceLocation{name, 0, 0}, "source path is not a regular file");
  bool ok = false;
  std::string text = read_text(source, ok);
  if (!ok) throw InputError(SourceLocation{name, 0, 0}, "cannot read source file");
  fs::path absolute = fs::absolute(source, ec).lexically_normal();
  if (ec) absolute = source;
  Spec spec;
  spec.file = absolute;
  spec.kernel.source = absolute;
  spec.kernel.injection = Injection::range_defines;
  // A .c file is C (its functions keep their names), a .cu file CUDA ...;
  // other endings are C++, as a spec's kernel is by default.
  if (auto language = language_of_source(source)) spec.kernel.language = *language;
  spec.kernel.flags = backend_for_language(spec.kernel.language).kernel.default_flags;
  spec.parameters = parameters_from_ranges(parse_range_annotations(text, name), name);
  // Else every command would go on with a space of one empty config: a
  // tune would time the source as it is and name that the best.
  if (spec.parameters.empty() && has_tunable_lines(text))
    throw InputError(SourceLocation{name, 0, 0},
                     "its `// tunable` lines name what a config replaces, but not the values to try: those are a "
                     "spec's `configs:` list (msKPP's autotune_v2 form); give that spec instead");
  if (spec.parameters.empty())
    throw InputError(SourceLocation{name, 0, 0},
                     "no tunable parameter here: expected a spec (.yaml, .yml, .json), or a source with %RANGE% "
                     "annotations (// %RANGE% NAME label start:end:step)");
  spec.sizes.emplace_back();
  return spec;
}

std::pair<std::string, Value> parse_assignment(std::string_view text, const SourceLocation& where) {
  std::size_t eq = text.find('=');
  const std::string expected = "expected NAME=VALUE, e.g. M=4096";
  if (eq == std::string_view::npos) throw InputError(where, "bad assignment '" + std::string(text) + "': " + expected);
  std::string_view name = trim(text.substr(0, eq));
  std::string_view value = trim(text.substr(eq + 1));
  if (!is_identifier(name))
    throw InputError(where, "bad assignment '" + std::string(text) + "': '" + std::string(name) +
                                "' is not a valid name; " + expected);
  if (value.empty())
    throw InputError(where, "bad assignment '" + std::string(text) + "': the value is missing; " + expected);
  return {std::string(name), flag_value(value, where)};
}

std::vector<Value> parse_range(std::string_view text, const SourceLocation& where) {
  IntRange r = parse_int_range(text, where, /*require_step=*/false);
  std::vector<Value> out;
  append_range(r, out);
  return out;
}
}  // namespace tunekit
