// A Kernel Tuner T1 file (kernel_tuner/schema/T1/1.0.0) as a spec, so that
// `tunekit tune FILE.json` tunes the kernel it describes. Its
// ConfigurationSpace is read by load_t1 (t1.cpp), as for `tunekit space`;
// this reads the rest: KernelSpecification into the kernel, its launch and
// its arguments, Search and Budget into the search.
//
// Where Kernel Tuner's own reader (tune_kernel_T1) gives a field a meaning,
// that meaning holds, so that a file tuned there runs the same here:
// - with ProblemSize, the launch is Kernel Tuner's: the block its
//   block_size_x/y/z parameters (else 256 threads in x), the grid ProblemSize
//   over GridDivX/Y/Z; it reads no LocalSize, GlobalSize (the benchmark hub's
//   files give both, and they disagree), CompilerOptions or SharedMemory;
// - an argument's Size sees each parameter as its list of values
//   (max(filter_width)), and is truncated to an integer;
// - the kernel gets Kernel Tuner's macros: block_size_x/y/z and
//   grid_size_x/y/z of its launch, and kernel_tuner = 1;
// - Budget's first entry, over the strategy options' budgets.
// Where Kernel Tuner is silent or cannot run a file (no ProblemSize), the
// schema's meaning holds.
#include <regex>

#include "spec/detail/loader.hpp"
#include "spec/detail/t1_keys.hpp"
#include "tunekit/strategy.hpp"
#include "tunekit/t1.hpp"

namespace tunekit::spec_detail {

namespace {

constexpr const char* kAxes[] = {"X", "Y", "Z"};
constexpr const char* kProblemSizes[] = {"problem_size_x", "problem_size_y", "problem_size_z"};
constexpr const char* kBlockSizes[] = {"block_size_x", "block_size_y", "block_size_z"};
constexpr const char* kGridSizes[] = {"grid_size_x", "grid_size_y", "grid_size_z"};

// A T1 Language, tunekit's name for it, and the device property that
// bounds a block's threads there (Kernel Tuner's max_threads).
struct Language {
  std::string t1, ours, threads_per_block;
};
const std::vector<Language> kLanguages{{"CUDA", "cuda", "max_threads_per_block"},
                                       {"OpenCL", "opencl", "max_work_group_size"}};

// The T1 element types tunekit has; the vector types (float4, ...), bool
// and custom it has not.
const std::vector<std::pair<std::string, ElementType>> kTypes{
    {"int8", ElementType::i8},    {"uint8", ElementType::u8},   {"int16", ElementType::i16},
    {"uint16", ElementType::u16}, {"int32", ElementType::i32},  {"uint32", ElementType::u32},
    {"int64", ElementType::i64},  {"uint64", ElementType::u64}, {"half", ElementType::f16},
    {"float", ElementType::f32},  {"double", ElementType::f64}};

template <typename T>
std::vector<std::string> names_of(const std::vector<std::pair<std::string, T>>& table) {
  std::vector<std::string> out;
  for (const auto& [name, value] : table) out.push_back(name);
  return out;
}

}  // namespace

// A T1 expression in tunekit's language: ProblemSize[i] is the size
// problem_size_x (y, z), and max(P) or min(P) of a parameter P its largest
// or smallest value, as Kernel Tuner evaluates it with each parameter bound
// to its list.
Expression Loader::t1_expression(const Item& it, const Spec& s, const std::string& what) const {
  if (!it.node.IsScalar() || it.node.Scalar().empty()) wrong_type(it, what);
  const SourceLocation where = content_loc(it);
  const std::string text = it.node.Scalar();
  static const std::regex problem_size(R"(\bProblemSize\s*\[\s*(\d+)\s*\])");
  static const std::regex extreme(R"(\b(max|min)\s*\(\s*([A-Za-z_]\w*)\s*\))");
  auto rewrite = [&](const std::string& in, const std::regex& re, auto&& replace) {
    std::string r;
    auto last = in.cbegin();
    for (std::sregex_iterator m(in.begin(), in.end(), re), end; m != end; ++m) {
      r.append(last, (*m)[0].first);
      r += replace(*m);
      last = (*m)[0].second;
    }
    r.append(last, in.cend());
    return r;
  };
  std::string out = rewrite(text, problem_size, [&](const std::smatch& m) -> std::string {
    const std::size_t i = std::stoul(m[1].str());
    if (i >= s.size_names.size())
      fail(where, display(it.path) + ": '" + m[0].str() + "', but KernelSpecification.ProblemSize has " +
                      std::to_string(s.size_names.size()) + " entr" + (s.size_names.size() == 1 ? "y" : "ies"));
    return kProblemSizes[i];
  });
  out = rewrite(out, extreme, [&](const std::smatch& m) -> std::string {
    auto p = std::find_if(s.parameters.begin(), s.parameters.end(),
                          [&](const Parameter& q) { return q.name == m[2].str(); });
    if (p == s.parameters.end()) return m[0].str();  // max of a size or an expression: the language's own
    const auto& v = p->values;
    return (m[1].str() == "max" ? *std::max_element(v.begin(), v.end()) : *std::min_element(v.begin(), v.end())).repr();
  });
  if (std::regex_search(out, std::regex(R"(\bProblemSize\b)")))
    fail(where, display(it.path) + ": ProblemSize is a list here; index it (ProblemSize[0] is the first size)");
  try {
    return Expression::parse(out, where);
  } catch (const InputError&) {
    throw;
  } catch (const std::exception& e) {
    fail(where, display(it.path) + ": " + e.what());
  }
}

Spec Loader::t1(const YAML::Node& root) {
  Item top{root, "", loc(root)};
  if (top.where.line == 0) top.where = SourceLocation{file_, 1, 1};
  // The space as `tunekit space` reads it, first: Values, Types and
  // Conditions, and every section's keys, checked there, so that a mistake
  // is the same error at the same place for every command.
  SpaceDefinition space = load_t1(fs::path(file_));
  Map m = map(top, kT1Sections);
  Spec s;
  s.parameters = std::move(space.parameters);
  s.constraints = std::move(space.constraints);
  s.name = space.name;  // General.BenchmarkName, else the file's stem
  check_name(s.name, top.where);

  Map k = map(require(m, "KernelSpecification"), kT1KernelKeys);
  const Item language = require(k, "Language");
  const Language& lang = [&]() -> const Language& {
    const std::string name = string_of(language, "a T1 Language");
    std::vector<std::string> names;
    for (const Language& l : kLanguages) {
      if (name == l.t1) return l;
      names.push_back(l.t1);
    }
    fail(content_loc(language), "Language '" + name + "' has no tunekit backend here; a T1 kernel is one of " +
                                    join(names) + did_you_mean(name, names));
  }();
  s.kernel.language = lang.ours;
  const KernelTraits& traits = backend_for_language(s.kernel.language).kernel;
  s.kernel.flags = traits.default_flags;
  s.kernel.injection = Injection::defines;  // Kernel Tuner defines every parameter
  {
    const Item name = require(k, "KernelName");
    s.kernel.entry = function_name(name);
    s.kernel.entry_where = content_loc(name);
  }
  {
    // Where Kernel Tuner looks: beside the file, one folder up, and in the
    // working directory (which it tries first; last here, so that a file's
    // kernel does not depend on where the command runs when both exist).
    const Item file = require(k, "KernelFile");
    const fs::path given(string_of(file, "a file path"));
    std::vector<fs::path> tried{given.is_absolute() ? given : (dir_ / given).lexically_normal()};
    std::error_code ec;
    if (given.is_relative()) {
      tried.push_back((dir_.parent_path() / given).lexically_normal());
      tried.push_back((fs::current_path(ec) / given).lexically_normal());
    }
    auto found =
        std::find_if(tried.begin(), tried.end(), [&](const fs::path& p) { return fs::is_regular_file(p, ec); });
    if (found == tried.end()) {
      // Each place once (the working directory is often the file's own), and
      // none for an absolute path, which is the one place already named.
      std::vector<std::string> looked;
      for (const fs::path& p : tried)
        if (std::find(looked.begin(), looked.end(), p.string()) == looked.end()) looked.push_back(p.string());
      fail(content_loc(file), "KernelFile '" + given.string() + "' not found" +
                                  (given.is_absolute() ? std::string() : " (looked for " + either(looked) + ")"));
    }
    s.kernel.source = *found;
  }
  // Read by neither Kernel Tuner nor tunekit: said so, since they look as
  // if they would change the build (the hub's -std=c++11 would fail every
  // OpenCL build if it were passed).
  for (const char* key : {"CompilerOptions", "Misc"})
    if (auto v = get(k, key); v && !(v->node.IsSequence() && v->node.size() == 0))
      s.warnings.push_back(fmt::format(
          "{}: KernelSpecification.{} is not read, as Kernel Tuner does not read it{}",
          loc(k.find(key)->key_node).str(), key,
          std::string_view(key) == "CompilerOptions" ? "; a tunekit spec gives a kernel's flags (kernel.flags)" : ""));

  t1_device_and_profiling(k, s);

  // ProblemSize: the sizes, named problem_size_x (y, z).
  s.sizes.emplace_back();
  if (auto v = get(k, "ProblemSize")) {
    std::vector<Item> dims = v->node.IsSequence() ? elements(*v) : std::vector<Item>{*v};
    if (dims.empty() || dims.size() > 3)
      fail(v->where, "KernelSpecification.ProblemSize must be 1 to 3 sizes, got " + std::to_string(dims.size()));
    for (std::size_t i = 0; i < dims.size(); ++i) {
      s.sizes.front()[kProblemSizes[i]] = Value(int_of(dims[i], 1, "a size (an integer >= 1)"));
      s.size_names.emplace_back(kProblemSizes[i]);
    }
  }
  for (const Parameter& p : s.parameters)
    for (const std::string& n : s.size_names)
      if (p.name == n)
        fail(p.where, "parameter '" + p.name + "' has the name tunekit gives KernelSpecification.ProblemSize's entry " +
                          "(" + n + "); rename the parameter");

  // The block. With ProblemSize (which Kernel Tuner needs), as Kernel Tuner
  // launches it: the block_size_x (y, z) parameter, else 256 threads in x;
  // it reads no LocalSize. Without, the schema's LocalSize.
  const bool kernel_tuners = !s.size_names.empty();
  auto is_parameter = [&](const char* name) {
    return std::any_of(s.parameters.begin(), s.parameters.end(), [&](const Parameter& p) { return p.name == name; });
  };
  std::optional<Map> local;
  if (auto v = get(k, "LocalSize")) local = map(*v, {"X", "Y", "Z"}, "a mapping {X, Y, Z} of expressions");
  for (std::size_t d = 0; d < 3; ++d) {
    std::optional<Item> given;
    if (local) given = get(*local, kAxes[d]);
    const std::string kernel_tuner_block = is_parameter(kBlockSizes[d]) ? kBlockSizes[d] : d == 0 ? "256" : "1";
    if (given && !kernel_tuners) {
      s.kernel.launch.block.push_back(t1_expression(*given, s, "an expression"));
      continue;
    }
    if (given && !(given->node.IsScalar() && given->node.Scalar() == kernel_tuner_block))
      s.warnings.push_back(fmt::format(
          "{}: LocalSize.{} is not read: the block's {} is {}, as Kernel Tuner launches it", content_loc(*given).str(),
          kAxes[d], kAxes[d],
          is_parameter(kBlockSizes[d]) ? "the parameter " + kernel_tuner_block
                                       : kernel_tuner_block + " without a " + kBlockSizes[d] + " parameter"));
    s.kernel.launch.block.push_back(Expression::parse(kernel_tuner_block, k.item.where));
  }
  // Kernel Tuner's restriction on the block_size parameters: no more
  // threads than the device's block holds.
  {
    std::vector<std::string> used;
    for (const char* b : kBlockSizes)
      if (is_parameter(b)) used.emplace_back(b);
    if (!used.empty())
      s.constraints.push_back(
          Expression::parse(fmt::format("{} <= {}", join(used, " * "), lang.threads_per_block), k.item.where));
  }
  if (!s.size_names.empty()) {
    // Kernel Tuner's grid: ProblemSize[d] over the product of GridDiv's
    // entries (each truncated to an integer), rounded up; a dimension with
    // no GridDiv, or an empty one, is divided by its block_size parameter,
    // or by nothing without one. GlobalSize is not read, as there.
    for (std::size_t d = 0; d < s.size_names.size(); ++d) {
      std::string divisor;
      auto times = [&](const std::string& e) { divisor += (divisor.empty() ? "" : " * ") + e; };
      const std::string key = std::string("GridDiv") + kAxes[d];
      const auto given = get(k, key);
      const std::vector<Item> entries = !given                     ? std::vector<Item>{}
                                        : given->node.IsSequence() ? elements(*given)
                                                                   : std::vector<Item>{*given};
      for (const Item& el : entries)
        times("int(" + t1_expression(el, s, "a divisor (a parameter or an expression)").text() + ")");
      if (entries.empty() && is_parameter(kBlockSizes[d])) times(kBlockSizes[d]);
      s.kernel.launch.grid.push_back(Expression::parse(
          divisor.empty() ? std::string(kProblemSizes[d]) : fmt::format("ceil_div({}, {})", kProblemSizes[d], divisor),
          given ? content_loc(*given) : k.item.where));
    }
  } else {
    for (const char* key : {"GridDivX", "GridDivY", "GridDivZ"})
      if (const Entry* e = k.find(key))
        fail(loc(e->key_node), "GridDivX/Y/Z divide KernelSpecification.ProblemSize, which the file does not give");
    // Without ProblemSize, which Kernel Tuner needs, the schema's own:
    // GlobalSize, in blocks (GlobalSizeType CUDA) or in threads (OpenCL,
    // divided by the block here, rounded up).
    const Map global = map(require(k, "GlobalSize"), {"X", "Y", "Z"}, "a mapping {X, Y, Z} of expressions");
    bool in_blocks = s.kernel.language == "cuda";
    if (auto v = get(k, "GlobalSizeType")) in_blocks = enum_of<bool>(*v, {{"CUDA", true}, {"OpenCL", false}});
    for (std::size_t d = 0; d < 3; ++d) {
      auto v = get(global, kAxes[d]);
      if (!v) break;
      const Expression e = t1_expression(*v, s, "an expression");
      if (in_blocks) s.kernel.launch.grid.push_back(e);
      else
        s.kernel.launch.grid.push_back(Expression::parse(
            fmt::format("ceil_div({}, {})", e.text(), s.kernel.launch.block[d].text()), content_loc(*v)));
    }
    if (s.kernel.launch.grid.empty()) fail(global.item.where, "GlobalSize needs at least X");
  }
  if (auto v = get(k, "SharedMemory")) {
    // Kernel Tuner reads none; a CUDA kernel with an extern __shared__
    // array needs it, and an OpenCL kernel sizes its __local arrays itself.
    if (const std::int64_t bytes = int_of(*v, 0, "bytes of dynamic shared memory (an integer >= 0)"); bytes > 0) {
      if (traits.shared_memory)
        s.kernel.launch.shared_memory = Expression::parse(std::to_string(bytes), content_loc(*v));
      else
        s.warnings.push_back(
            fmt::format("{}: SharedMemory (dynamic shared memory per block) is not read for {} "
                        "kernels, as Kernel Tuner does not read it; it applies to {} kernels",
                        content_loc(*v).str(), s.kernel.language, languages_with(&KernelTraits::shared_memory)));
    }
  }
  // Kernel Tuner's macros, which kernels written for it read: each launch
  // dimension (a parameter already is one), and kernel_tuner.
  for (std::size_t d = 0; d < 3; ++d) {
    if (!is_parameter(kBlockSizes[d]))
      s.kernel.defines.push_back({kBlockSizes[d], s.kernel.launch.block[d], k.item.where});
    s.kernel.defines.push_back(
        {kGridSizes[d],
         d < s.kernel.launch.grid.size() ? s.kernel.launch.grid[d] : Expression::parse("1", k.item.where),
         k.item.where});
  }
  s.kernel.defines.push_back({"kernel_tuner", Expression::parse("1", k.item.where), k.item.where});
  for (const NamedExpression& d : s.kernel.defines)
    for (const Parameter& p : s.parameters)
      if (p.name == d.name)
        fail(p.where, "parameter '" + p.name + "' has the name of a macro Kernel Tuner defines for its kernels (" +
                          d.name + "); rename the parameter");

  if (const Entry* e = k.find("ReferenceArguments"))
    fail(loc(e->key_node),
         "ReferenceArguments are not read: tunekit checks each config's outputs against those of the default "
         "config (each TuningParameter's Default, else the first valid config)");
  t1_arguments(require(k, "Arguments"), s);

  // The benchmark hub's Default, one per parameter: the default config.
  {
    const Map cs = map(require(m, "ConfigurationSpace"), {});
    const Item params = require(cs, "TuningParameters");
    std::vector<std::pair<std::string, Value>> values;
    bool every = params.node.IsSequence() && params.node.size() > 0;
    for (const Item& p : params.node.IsSequence() ? elements(params) : std::vector<Item>{}) {
      const Map pm = map(p, {});
      const auto d = get(pm, "Default");
      if (!d) {
        every = false;
        break;
      }
      // A list of one (as the hub's GEMM file writes one) is its value.
      const Item v = d->node.IsSequence() && d->node.size() == 1 ? elements(*d).front() : *d;
      values.emplace_back(string_of(require(pm, "Name")), finite_value_of(v, "a value of the parameter"));
      if (s.default_config_where.file.empty()) s.default_config_where = content_loc(v);
    }
    if (every) s.default_config = Config(std::move(values));
  }

  std::vector<std::string> search_warnings, budget_warnings;
  t1_search(m, s, search_warnings, budget_warnings);
  for (auto* list : {&search_warnings, &budget_warnings})
    s.warnings.insert(s.warnings.end(), list->begin(), list->end());
  check_defines(s);
  if (const BackendInfo& backend = backend_for_language(s.kernel.language); backend.check_spec)
    for (std::string& w : backend.check_spec(s)) s.warnings.push_back(std::move(w));
  return s;
}

// KernelSpecification's Device and Profiling, and the keys that name other
// runs than a tune's: what tunekit has a meaning for is read as that, and
// the rest said to be left out, where it is written, when it asks for
// anything but what tunekit does anyway.
void Loader::t1_device_and_profiling(const Map& k, Spec& s) const {
  if (auto d = get(k, "Device")) {
    const Map dm = map(*d, kT1DeviceKeys, "a mapping {PlatformId, DeviceId, Name}");
    // Kernel Tuner's `device`: checked against the device the tune runs
    // on, whichever the index below picks.
    if (auto name = get(dm, "Name")) {
      s.intended_device = string_of(*name, "a device name");
      s.intended_device_where = content_loc(*name);
    }
    // Checked against the devices there are where the tune starts: this
    // machine's are not the file's to know.
    if (auto v = get(dm, "DeviceId")) {
      s.device = int_of(*v, 0, "an index (an integer >= 0)");
      s.device_where = content_loc(*v);
    }
    // tunekit numbers an OpenCL device among every platform's, as `tunekit
    // devices` lists them: a platform index has nothing to pick.
    if (auto v = get(dm, "PlatformId"); v && int_of(*v, 0, "an index (an integer >= 0)") != 0)
      s.warnings.push_back(
          fmt::format("{}: KernelSpecification.Device.PlatformId is not read: tunekit numbers the "
                      "devices of every platform in one list (`tunekit devices`), which DeviceId "
                      "indexes",
                      content_loc(*v).str()));
  }
  if (auto v = get(k, "Profiling")) {
    if (!is_boolean(*v)) wrong_type(*v, "true or false");
    // Kernel Tuner does not read it either; false asks for what tunekit does.
    if (value_of(*v).truthy())
      s.warnings.push_back(fmt::format(
          "{}: KernelSpecification.Profiling is not read: tunekit times each config (the spec's measure settings) and "
          "collects no profiler counters",
          content_loc(*v).str()));
  }
  if (auto v = get(k, "SimulationInput"))
    s.warnings.push_back(fmt::format(
        "{}: KernelSpecification.SimulationInput is not read: the tune runs the kernel; to replay a recorded cache "
        "instead, give it to `tunekit tune --replay`",
        content_loc(*v).str()));
  if (auto v = get(k, "Stream"); v && !v->node.IsNull())
    s.warnings.push_back(
        fmt::format("{}: KernelSpecification.Stream is not read: each trial runs on its own", content_loc(*v).str()));
}

// Search and Budget, as Kernel Tuner's tune_kernel_T1 reads them: the
// strategy and its options, Kernel Tuner's names taken, and the budget.
void Loader::t1_search(const Map& m, Spec& s, std::vector<std::string>& search_warnings,
                       std::vector<std::string>& budget_warnings) {
  auto positive_seconds = [&](const Item& v, const char* what) {
    const Seconds t(number_of(v, "seconds"));
    if (!(t.count() > 0)) fail(content_loc(v), fmt::format("{} must be > 0 seconds, got {}", what, v.node.Scalar()));
    return t;
  };
  auto share_of_space = [&](const Item& v, const char* what) {
    const double f = number_of(v, "a share of the valid configs in (0, 1]");
    if (!(f > 0 && f <= 1)) fail(content_loc(v), fmt::format("{} must be in (0, 1], got {}", what, v.node.Scalar()));
    return f;
  };
  std::optional<Item> search_name;
  if (auto v = get(m, "Search")) {
    const Map sm = map(*v, kT1SearchKeys);
    const Item name = require(sm, "Name");
    search_name = name;
    s.search.strategy_where = content_loc(name);
    s.search.strategy = name_in(name, strategies());
    if (name.node.Scalar() != s.search.strategy) s.search.strategy_alias = name.node.Scalar();
    if (auto a = get(sm, "Attributes")) {
      // Kernel Tuner's strategy_options, which a T1 file holds: an option
      // that means the same here under another name is read as that one,
      // its budgets as the search's (where Budget gives none), and one with
      // no counterpart is left out with a warning, so that the file runs.
      if (!a->node.IsSequence()) wrong_type(*a, "a list of {Name, Value}");
      const StrategyInfo& info = strategies().get(s.search.strategy);
      for (const Item& el : elements(*a)) {
        const Map am = map(el, kT1AttributeKeys, "{Name, Value}");
        const Item name = require(am, "Name");
        const Item value = require(am, "Value");
        OptionValue o{name_of(name, "an option name"), value_of(value, "an option value"), content_loc(name)};
        o.written_as_boolean = is_boolean(value);
        o.written = value.node.Scalar();
        // Under Kernel Tuner's name for the strategy, one that has the name
        // of an option here but means another thing there is Kernel
        // Tuner's (strategy_options), left out below.
        const bool theirs = !s.search.strategy_alias.empty() &&
                            std::any_of(info.kernel_tuner_options.begin(), info.kernel_tuner_options.end(),
                                        [&](const ForeignOption& f) { return f.name == o.name; });
        const bool declared = !theirs && std::any_of(info.options.begin(), info.options.end(),
                                                     [&](const OptionSpec& d) { return d.name == o.name; });
        if (!declared) {
          // Kernel Tuner's budgets among the options (Budget below
          // overrides its own kind, as there).
          if (o.name == "max_fevals") {
            s.search.max_evaluations = static_cast<std::size_t>(int_of(value, 1, "a number of configs >= 1"));
            s.search.max_evaluations_where = content_loc(value);
            continue;
          }
          if (o.name == "time_limit") {
            s.search.max_time = positive_seconds(value, "a time_limit");
            continue;
          }
          if (o.name == "fraction") {
            s.search.max_fraction = share_of_space(value, "a fraction");
            continue;
          }
          auto f = std::find_if(info.kernel_tuner_options.begin(), info.kernel_tuner_options.end(),
                                [&](const ForeignOption& x) { return x.name == o.name; });
          if (f != info.kernel_tuner_options.end() && !f->here.empty() && f->note.empty()) {
            o.name = f->here;
          } else {
            search_warnings.push_back(
                fmt::format("{}: Kernel Tuner's option '{}' is left out: {}", o.where.str(), o.name,
                            f == info.kernel_tuner_options.end()
                                ? "strategy '" + info.name + "' has no such option (`tunekit plugins` lists them)"
                            : f->here.empty()
                                ? "it has no counterpart in strategy '" + info.name + "' (" + f->note + ")"
                                : "'" + f->here + "' stands for it here, but is " + f->note + "; set that in a spec"));
            continue;
          }
        }
        s.search.options.push_back(std::move(o));
      }
    }
    (void)strategy_options(strategies().get(s.search.strategy), s.search.options, s.search.strategy_alias);
  }
  if (auto v = get(m, "Budget")) {
    // The first entry, as Kernel Tuner reads it.
    if (!v->node.IsSequence()) wrong_type(*v, "a list of {Type, BudgetValue}");
    const std::vector<Item> entries = elements(*v);
    for (std::size_t i = 1; i < entries.size(); ++i)
      budget_warnings.push_back(fmt::format("{}: Budget[{}] is not read: Kernel Tuner reads the first Budget only",
                                            entries[i].where.str(), i));
    if (!entries.empty()) {
      const Map bm = map(entries.front(), kT1BudgetKeys, "{Type, BudgetValue}");
      const Item value = require(bm, "BudgetValue");
      enum class Kind { count, fraction, duration };
      switch (enum_of<Kind>(require(bm, "Type"), {{"ConfigurationCount", Kind::count},
                                                  {"ConfigurationFraction", Kind::fraction},
                                                  {"TuningDuration", Kind::duration}})) {
        case Kind::count:
          s.search.max_evaluations = static_cast<std::size_t>(int_of(value, 1, "a number of configs >= 1"));
          s.search.max_evaluations_where = content_loc(value);
          break;
        case Kind::fraction:
          s.search.max_fraction = share_of_space(value, "a ConfigurationFraction");
          break;
        case Kind::duration:
          s.search.max_time = positive_seconds(value, "a TuningDuration");
          break;
      }
    }
  }
  if (search_name && !s.search.max_evaluations && !s.search.max_fraction && !s.search.max_time) {
    // No budget: where Kernel Tuner's strategy stops on its own after a
    // count, the same count; where it stops after its own iterations, which
    // have no counterpart here, a warning (tunekit's search runs on until the
    // space is done).
    const std::string& written = search_name->node.Scalar();
    if (written == "random_sample") {
      s.search.max_fraction = 0.1;  // its option fraction
      s.search.budget_is_strategys_stop = true;
    } else if (written == "greedy_ils" || written == "greedy_mls" || written == "bayes_opt") {
      s.search.max_evaluations = 100;  // its max_fevals
      s.search.max_evaluations_where = content_loc(*search_name);
      s.search.budget_is_strategys_stop = true;
    } else if (written != "brute_force") {
      budget_warnings.push_back(
          fmt::format("{}: no Budget: Kernel Tuner's {} stops after its own iterations, tunekit's "
                      "search when the space is done; give a Budget to bound it",
                      content_loc(*search_name).str(), written));
    }
  }
}

T1Search Loader::t1_search_only(const YAML::Node& root) {
  Item top{root, "", loc(root)};
  if (top.where.line == 0) top.where = SourceLocation{file_, 1, 1};
  const Map m = map(top, kT1Sections);
  T1Search out;
  Spec s;
  t1_search(m, s, out.search_warnings, out.budget_warnings);
  out.search = std::move(s.search);
  out.has_search = m.find("Search") != nullptr;
  // A T1 file of a space alone has no KernelSpecification.
  if (auto k = get(m, "KernelSpecification"))
    if (auto name = get(map(*k, {}), "KernelName")) {
      out.kernel_name = string_of(*name, "a kernel name");
      out.kernel_name_where = content_loc(*name);
    }
  return out;
}

// KernelSpecification.Arguments, in call order.
void Loader::t1_arguments(const Item& args, Spec& s) const {
  if (!args.node.IsSequence()) wrong_type(args, "a list of arguments, in call order");
  const KernelTraits& traits = backend_for_language(s.kernel.language).kernel;
  std::map<std::string, SourceLocation> seen;
  std::size_t index = 0;
  for (const Item& el : elements(args)) {
    const Map am = map(el, kT1ArgumentKeys);
    ArgumentSpec a;
    a.where = el.where;
    a.name = get(am, "Name") ? name_of(*get(am, "Name"), "a C identifier") : "arg" + std::to_string(index);
    ++index;
    const std::string who = "argument '" + a.name + "'";
    {
      const Item type = require(am, "Type");
      const std::string name = string_of(type, "a T1 Type");
      auto t = std::find_if(kTypes.begin(), kTypes.end(), [&](const auto& e) { return e.first == name; });
      if (t == kTypes.end())
        fail(content_loc(type), who + ": Type '" + name + "' is not one tunekit fills; expected one of " +
                                    join(names_of(kTypes)) + did_you_mean(name, names_of(kTypes)));
      a.type = t->second;
    }
    const Item memory = require(am, "MemoryType");
    enum class Memory { scalar, vector, local, symbol };
    const Memory kind = enum_of<Memory>(
        memory,
        {{"Scalar", Memory::scalar}, {"Vector", Memory::vector}, {"Local", Memory::local}, {"Symbol", Memory::symbol}});
    const auto constant_memory = get(am, "MemType");
    if (kind == Memory::local)
      fail(content_loc(memory), who +
                                    ": OpenCL local-memory arguments are not supported; declare the buffer "
                                    "__local inside the kernel, sized by a parameter");
    if (constant_memory && string_of(*constant_memory) != "Constant")
      fail(content_loc(*constant_memory),
           who + ": MemType must be Constant, got '" + constant_memory->node.Scalar() + "'");
    // A __constant__ symbol of the argument's name (Kernel Tuner's
    // cmem_args); an OpenCL __constant argument is a buffer like any other.
    if (kind == Memory::symbol && !traits.constant_memory)
      fail(content_loc(memory), who + ": a Symbol (constant memory) applies to " +
                                    languages_with(&KernelTraits::constant_memory) + " kernels, not " +
                                    s.kernel.language);
    a.constant_memory = traits.constant_memory && (kind == Memory::symbol || constant_memory);
    const auto fill_value = get(am, "FillValue");
    if (kind == Memory::scalar) {
      if (a.constant_memory)
        fail(el.where, who + ": a Scalar in constant memory is not supported; make it a Vector of Size 1");
      if (!fill_value) fail(el.where, who + " is a Scalar: its value is FillValue, which it lacks");
      // An integer's FillValue truncated, as numpy.int32(v) does there.
      double v = number_of(*fill_value, "a number");
      if (!is_floating(a.type) && std::isfinite(v)) v = std::trunc(v);
      if (auto why = fill_misfit(a.type, Fill::constant, v)) fail(content_loc(*fill_value), who + ": " + *why);
      a.role = Role::scalar;
      a.value =
          Expression::parse(is_floating(a.type) ? fmt::format("{}", v) : std::to_string(static_cast<std::int64_t>(v)),
                            content_loc(*fill_value));
    } else {
      {
        // Truncated to an integer, as Kernel Tuner's int(eval(Size)).
        const Item size = require(am, "Size");
        const Expression e = t1_expression(size, s, "an element count (an integer or an expression)");
        a.size = Expression::parse("int(" + e.text() + ")", content_loc(size));
      }
      // An argument the file gives no AccessType (the benchmark hub's) stays
      // `in`, as it always was: a T1 kernel runs on a GPU, where `in` and
      // `scratch` behave alike (only a CPU kernel's writes into an input are
      // looked for), and another role would change the hash of every such
      // file, losing its users' stores and replay databases for nothing.
      a.role = Role::in;
      if (auto access = get(am, "AccessType"))
        a.role = enum_of<Role>(*access, {{"ReadOnly", Role::in}, {"WriteOnly", Role::out}, {"ReadWrite", Role::inout}});
      else if (auto out = get(am, "Output"); out && value_of(*out).truthy()) a.role = Role::inout;
      // Kernel Tuner fills with numpy.random.randn; an integer buffer, which
      // it does not fill, gets tunekit's random integers.
      a.fill = is_floating(a.type) ? Fill::normal : Fill::random;
      if (auto f = get(am, "FillType")) {
        enum class T1Fill { constant, random, raw, other };
        const T1Fill fill = enum_of<T1Fill>(*f, {{"Constant", T1Fill::constant},
                                                 {"Random", T1Fill::random},
                                                 {"Generator", T1Fill::other},
                                                 {"Script", T1Fill::other},
                                                 {"BinaryRaw", T1Fill::raw},
                                                 {"BinaryHDF", T1Fill::other}});
        a.fill_where = content_loc(*f);
        if (fill == T1Fill::other)
          fail(content_loc(*f), who + ": FillType '" + f->node.Scalar() +
                                    "' is not supported; tunekit fills an argument with Constant, Random or "
                                    "BinaryRaw values");
        if (fill == T1Fill::raw) {
          // The file's bytes as they are (an .npy file's data past its header).
          const auto source = get(am, "DataSource");
          if (!source) fail(el.where, who + " has FillType BinaryRaw but no DataSource (the file)");
          a.fill_file = existing_file(*source, "DataSource");
          a.fill = Fill::file;
        }
        if (fill == T1Fill::constant) {
          if (!fill_value) fail(el.where, who + " has FillType Constant but no FillValue");
          a.fill_value = number_of(*fill_value, "a number");
          a.fill = a.fill_value == 0 ? Fill::zeros : Fill::constant;
          if (auto why = fill_misfit(a.type, a.fill, a.fill_value)) fail(content_loc(*fill_value), who + ": " + *why);
        }
        // Kernel Tuner passes a WriteOnly buffer its fill, so an element the
        // kernel leaves alone keeps it; tunekit's `out` starts as NaN, which
        // would fail such a kernel's check.
        if (a.role == Role::out) a.role = Role::inout;
      }
      if (a.constant_memory && a.role != Role::in)
        fail(el.where, who + " is in constant memory, which a kernel only reads: its AccessType must be ReadOnly");
    }
    if (auto prev = seen.find(a.name); prev != seen.end())
      fail(el.where, "duplicate argument name '" + a.name + "' (first at " + prev->second.str() + ")");
    seen.emplace(a.name, el.where);
    s.arguments.push_back(std::move(a));
  }
}

}  // namespace tunekit::spec_detail
