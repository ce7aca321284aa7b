// The `application` section: the user's build and run commands (kernel.language: command).
#include "spec/detail/loader.hpp"

#include <regex>

namespace tunekit::spec_detail {

namespace {

// What is wrong with a JSON path of `time: {json: ...}` (names joined by
// '.', array indexes as [2]), or nullopt: a path the output could never
// match is the spec's error, not every trial's.
std::optional<std::string> json_path_problem(const std::string& path) {
  std::size_t i = 0;
  while (true) {
    const std::size_t name = i;
    while (i < path.size() && path[i] != '.' && path[i] != '[' && path[i] != ']') ++i;
    bool empty = i == name && !(name == 0 && i < path.size() && path[i] == '[');  // "[0].t": a root array
    while (i < path.size() && path[i] == '[') {
      const std::size_t close = path.find(']', i);
      if (close == std::string::npos) return fmt::format("the '[' at character {} is not closed", i + 1);
      const std::string index = path.substr(i + 1, close - i - 1);
      if (index.empty() || index.find_first_not_of("0123456789") != std::string::npos)
        return fmt::format("'[{}]' is not an array index (0 or more)", index);
      i = close + 1;
      empty = false;
    }
    if (empty) return fmt::format("a name is missing at character {}", i + 1);
    if (i == path.size()) return std::nullopt;
    if (path[i] == ']') return fmt::format("the ']' at character {} closes no '['", i + 1);
    if (path[i] == '.') ++i;
    if (i == path.size()) return std::string("it ends with '.'");
  }
}

}  // namespace

ApplicationSpec Loader::application(const Item& it, const Spec& s) const {
  // The command backend sets these placeholders itself: a parameter or size
  // of the same name would be replaced by a path without a word.
  for (const std::string_view reserved : kVariantPlaceholders) {
    for (const auto& p : s.parameters)
      if (p.name == reserved)
        fail(p.where, fmt::format("parameter '{}' has the name of a placeholder that a command kernel's build sets "
                                  "({{{}}}: the variant's path); rename it",
                                  p.name, p.name));
    for (const auto& size : s.sizes)
      if (size.count(std::string(reserved)))
        fail(it.where, fmt::format("problem size '{}' has the name of a placeholder that a command kernel's build "
                                   "sets ({{{}}}: the variant's path); rename it",
                                   reserved, reserved));
  }
  Map m = map(it, {"build", "run", "time", "warmup", "build_timeout", "run_timeout", "workdir"},
              "a mapping {build: [argv], run: [argv], time: ...}");
  ApplicationSpec a;
  a.where = it.where;
  a.workdir = dir_;
  if (auto v = get(m, "workdir")) {
    fs::path p(string_of(*v, "a folder path"));
    if (p.is_relative()) p = dir_ / p;
    p = p.lexically_normal();
    std::error_code ec;
    if (!fs::is_directory(p, ec))
      fail(content_loc(*v),
           "'application.workdir' '" + v->node.Scalar() + "' is not a folder (looked for " + p.string() + ")");
    a.workdir = p;
  }
  // Placeholders name a variant path, a parameter or (in `run` only) a
  // problem size. The run command's names are checked by the backend once the
  // sizes are known, since `--size` on the command line may add sizes.
  auto check_argv = [&](const Item& argv_item, bool is_build) {
    if (!argv_item.node.IsSequence())
      wrong_type(argv_item,
                 "a list of strings (an argv: no shell runs it, so 'bash build.sh' is written "
                 "[bash, build.sh])");
    std::vector<Item> els = elements(argv_item);
    for (const Item& el : els)
      if (el.node.IsMap())
        fail(el.where, display(el.path) +
                           " is a mapping: quote an element that is a placeholder, e.g. \"{M}\" "
                           "(YAML reads a bare {M} as a mapping)");
    std::vector<std::string> argv = strings_of(argv_item);
    std::vector<std::string> known(std::begin(kVariantPlaceholders), std::end(kVariantPlaceholders));
    for (const auto& p : s.parameters) known.push_back(p.name);
    for (std::size_t i = 0; i < argv.size(); ++i) {
      for (const std::string& name : placeholder_names(argv[i], content_loc(els[i]))) {
        if (!is_build || std::find(known.begin(), known.end(), name) != known.end()) continue;
        std::string msg = "placeholder {" + name + "} in " + display(els[i].path) + " names no parameter";
        if (std::any_of(s.sizes.begin(), s.sizes.end(), [&](const Bindings& b) { return b.count(name) > 0; }))
          msg +=
              ": '" + name + "' is a problem size, and sizes reach only the run command (one build serves every size)";
        else if (auto near = closest_match(name, known)) msg += "; did you mean {" + *near + "}?";
        msg += " (known here: " + join(known) + ")";
        fail(content_loc(els[i]), msg);
      }
    }
    return argv;
  };
  if (auto v = get(m, "build"); v && !v->node.IsNull()) {
    a.build = check_argv(*v, true);
    if (a.build.empty() || a.build[0].empty())
      fail(v->where,
           "'application.build' must be a non-empty argv list, e.g. [bash, build.sh, '{source}', '{binary}']");
  }
  {
    Item v = require(m, "run");
    a.run = check_argv(v, false);
    a.run_where = content_loc(v);
    if (a.run.empty() || a.run[0].empty())
      fail(v.where, "'application.run' must be a non-empty argv list, e.g. ['{binary}', '{M}']");
  }
  if (auto v = get(m, "time")) {
    TimeSource& t = a.time;
    t.where = content_loc(*v);
    const std::string expected = "'wall', {regex: 'time: ([0-9.]+)'} or {json: 'a.b.c'}, with an optional unit";
    if (v->node.IsScalar()) {
      if (v->node.Scalar() != "wall")
        fail(content_loc(*v), "bad value '" + v->node.Scalar() + "' for 'application.time': expected " + expected);
    } else {
      Map tm = map(*v, {"regex", "json", "unit"}, expected);
      auto rx = get(tm, "regex");
      auto js = get(tm, "json");
      if (rx && js) fail(js->where, "'application.time' takes one of 'regex' and 'json', not both");
      if (!rx && !js) fail(v->where, "'application.time' needs 'regex' or 'json' (or is the string 'wall')");
      const Item& src = rx ? *rx : *js;
      t.kind = rx ? TimeSource::Kind::regex : TimeSource::Kind::json;
      t.pattern = string_of(src, rx ? "a regular expression" : "a JSON path such as result.time_us");
      t.where = content_loc(src);
      if (js)
        if (auto why = json_path_problem(t.pattern))
          fail(content_loc(src), "'application.time.json' is not a JSON path: " + *why +
                                     "; expected names joined by '.', with array indexes as [2], e.g. "
                                     "runs[0].time_us");
      if (rx) {
        try {
          std::regex re(t.pattern);
        } catch (const std::regex_error& e) {
          fail(content_loc(src),
               "'application.time.regex' is not a valid regular expression: " + std::string(e.what()));
        }
      }
      if (auto u = get(tm, "unit")) t.to_us = enum_of<double>(*u, {{"us", 1.0}, {"ns", 1e-3}, {"ms", 1e3}, {"s", 1e6}});
    }
  }
  if (auto v = get(m, "warmup")) a.warmup = static_cast<std::size_t>(int_of(*v, 0, "an integer >= 0 (runs)"));
  if (auto v = get(m, "build_timeout")) a.build_timeout = duration_of(*v, true);
  if (auto v = get(m, "run_timeout")) a.run_timeout = duration_of(*v, true);
  return a;
}

}  // namespace tunekit::spec_detail
