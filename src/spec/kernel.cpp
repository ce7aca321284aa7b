// The `kernel` and `reference` sections, checked against the backend's traits.
#include "spec/detail/loader.hpp"

namespace tunekit::spec_detail {

std::string languages_with(bool KernelTraits::*allowed) {
  std::vector<std::string> out;
  for (const BackendInfo& b : backends().entries())
    if (b.kernel.*allowed) out.insert(out.end(), b.languages.begin(), b.languages.end());
  if (out.size() <= 1) return join(out);
  const std::string last = out.back();
  out.pop_back();
  return join(out) + " and " + last;
}

KernelSpec Loader::kernel(const Item& it) const {
  Map m = map(it, {"source", "entry", "language", "compiler", "flags", "injection", "arch", "grid", "block",
                   "shared_memory", "cluster", "constexprs", "max_spills", "build_timeout", "defines"});
  KernelSpec k;
  k.source = existing_file(require(m, "source"), "kernel source file");
  if (auto v = get(m, "language")) {
    const std::vector<std::string> known = kernel_languages();
    std::string name = string_of(*v, "a kernel language");
    if (std::find(known.begin(), known.end(), name) == known.end()) {
      std::string msg = "bad value '" + name + "' for " + display(v->path) + ": expected one of " + join(known);
      if (auto near = closest_match(name, known)) msg += "; did you mean '" + *near + "'?";
      fail(content_loc(*v), msg);
    }
    k.language = name;
  }
  const KernelTraits& traits = backend_for_language(k.language).kernel;
  k.flags = traits.default_flags;
  if (traits.application) {
    // An application: the user's build and run commands ('application')
    // replace the compiler and the call, so there is no entry to call.
    for (const char* key : {"compiler", "flags", "arch", "grid", "block", "shared_memory", "cluster"})
      if (const Entry* e = m.find(key))
        fail(loc(e->key_node), "'" + std::string(key) + "' does not apply to a " + k.language +
                                   " kernel: its build and run commands are given in 'application'");
  }
  if (traits.entry) {
    const Item e = require(m, "entry");
    k.entry = function_name(e);
    k.entry_where = content_loc(e);
  } else if (auto v = get(m, "entry")) {
    k.entry = function_name(*v);
    k.entry_where = content_loc(*v);
  }
  if (auto v = get(m, "compiler")) {
    if (!traits.compilers.empty()) {
      const std::string name = string_of(*v, "one of " + join(traits.compilers));
      if (auto why = compiler_problem(traits, name))
        fail(content_loc(*v), "bad value '" + name + "' for " + display(v->path) + ": " + *why);
      k.compiler = name;
    } else {
      k.compiler = string_of(*v, "a compiler command");
    }
    k.compiler_where = content_loc(*v);
  }
  if (auto v = get(m, "flags")) {
    k.flags = strings_of(*v);
    k.flags_where = content_loc(*v);
  }
  if (auto v = get(m, "arch")) {
    if (!traits.arch)
      fail(loc(m.find("arch")->key_node), "'arch' (the target architecture) applies to " +
                                              languages_with(&KernelTraits::arch) + " kernels, not " + k.language +
                                              " (whose compiler flags choose the target: kernel.flags)");
    k.arch = string_of(*v, "an architecture such as sm_90a");
  }
  if (auto v = get(m, "build_timeout")) {
    const SourceLocation key = loc(m.find("build_timeout")->key_node);
    if (traits.application)
      fail(key, "'build_timeout' does not apply to a " + k.language +
                    " kernel: its build command's limit is 'application.build_timeout'");
    if (!traits.build_timeout)
      fail(key, "'build_timeout' applies to " + languages_with(&KernelTraits::build_timeout) + " kernels, not " +
                    k.language);
    k.build_timeout = duration_of(*v, true);
  }
  if (auto v = get(m, "grid")) k.launch.grid = expressions_of(*v, 1, 3);
  if (auto v = get(m, "block")) k.launch.block = expressions_of(*v, 1, 3);
  if (auto v = get(m, "shared_memory")) {
    if (traits.launch && traits.threads && !traits.shared_memory)
      fail(loc(m.find("shared_memory")->key_node),
           "'shared_memory' (dynamic shared memory per block) applies to " +
               languages_with(&KernelTraits::shared_memory) + " kernels, not " + k.language +
               " (whose kernels declare their local memory themselves)");
    k.launch.shared_memory = expression_of(*v, "an expression (bytes)");
  }
  if (auto v = get(m, "cluster")) {
    if (!traits.cluster)
      fail(loc(m.find("cluster")->key_node), "'cluster' (thread-block clusters) applies to " +
                                                 languages_with(&KernelTraits::cluster) + " kernels, not " +
                                                 k.language);
    k.launch.cluster = cluster_of(*v);
  }
  if (traits.launch && !traits.threads) {
    // Triton: threads per program come from num_warps, shared memory from the compiler.
    for (const char* key : {"block", "shared_memory", "cluster"})
      if (const Entry* e = m.find(key))
        fail(loc(e->key_node), "'" + std::string(key) + "' does not apply to a " + k.language +
                                   " kernel: its programs' threads come from num_warps (a launch option; make it a "
                                   "parameter) and its shared memory from the compiler");
    if (k.launch.grid.empty())
      fail(it.where, "a " + k.language +
                         " kernel needs 'grid' in 'kernel': programs per dimension, expressions over "
                         "sizes and parameters, e.g. grid: [\"ceil_div(N, BLOCK_N)\", B]");
  } else if (traits.launch && (k.launch.grid.empty() || k.launch.block.empty())) {
    fail(it.where,
         "a " + k.language +
             " kernel needs 'grid' and 'block' in 'kernel' (expressions over sizes and "
             "parameters, e.g. grid: [\"ceil_div(N, BLOCK)\"], block: [BLOCK]; quote an expression with a comma)");
  }
  if (const Entry* e = m.find("constexprs"); e && !traits.tensors)
    fail(loc(e->key_node),
         "'constexprs' applies to " + languages_with(&KernelTraits::tensors) + " kernels, not " + k.language);
  if (const Entry* e = m.find("max_spills"); e && !traits.spills)
    fail(loc(e->key_node),
         "'max_spills' applies to " + languages_with(&KernelTraits::spills) + " kernels, not " + k.language);
  if (auto v = get(m, "constexprs")) {
    Map cm = map(*v, {}, "a mapping of tl.constexpr names to expressions over sizes, e.g. {HEAD_DIM: D}");
    for (const Entry& e : cm.entries)
      k.constexprs.push_back({name_of(Item{e.key_node, v->path + "." + e.key, loc(e.key_node)}, "an identifier"),
                              expression_of(child(cm, e), "an expression"), loc(e.key_node)});
  }
  if (auto v = get(m, "max_spills")) k.max_spills = int_of(*v, 0, "a number of spilled registers");
  // A Triton kernel takes its parameters as constexprs, not as -D values:
  // a define would reach no code.
  if (const Entry* e = m.find("defines"); e && (!traits.defines || traits.tensors)) {
    std::vector<std::string> compiled;
    for (const BackendInfo& b : backends().entries())
      if (b.kernel.defines && !b.kernel.tensors)
        compiled.insert(compiled.end(), b.languages.begin(), b.languages.end());
    fail(loc(e->key_node),
         "'defines' applies to kernels whose build takes -D values (" + join(compiled) + "), not " + k.language);
  }
  if (auto v = get(m, "defines"); v && !v->node.IsNull()) {
    Map dm = map(
        *v, {},
        "a mapping of macro names to expressions over sizes and parameters, e.g. {grid_size_x: \"ceil_div(N, BS)\"}");
    for (const Entry& e : dm.entries)
      k.defines.push_back({name_of(Item{e.key_node, v->path + "." + e.key, loc(e.key_node)}, "a macro name"),
                           expression_of(child(dm, e), "an expression over sizes and parameters"), loc(e.key_node)});
  }
  if (!traits.launch && !traits.application &&
      (!k.launch.grid.empty() || !k.launch.block.empty() || k.launch.shared_memory))
    fail(it.where, "'grid', 'block' and 'shared_memory' apply to " + languages_with(&KernelTraits::launch) +
                       " kernels, not " + k.language);
  if (auto v = get(m, "injection"))
    // A build without defines spells `defines` "none": nothing reaches it that way.
    k.injection = enum_of(*v, injection_names(), [&](const Named<Injection>& n) {
      return n.value != Injection::defines || (n.name == "none") != traits.defines;
    });
  return k;
}

// Once the sizes and parameters are known: a define named like a parameter
// would be passed twice with two values, and a name in its expression that
// is neither a size nor a parameter would fail every build.
void Loader::check_defines(const Spec& s) const {
  std::vector<std::string> names;
  for (const Parameter& p : s.parameters) names.push_back(p.name);
  for (const NamedExpression& d : s.kernel.defines)
    if (std::find(names.begin(), names.end(), d.name) != names.end())
      fail(d.where, "define '" + d.name + "' is a tuned parameter, which reaches the build as -D " + d.name +
                        " already; rename the define");
  names.insert(names.end(), s.size_names.begin(), s.size_names.end());
  for (const NamedExpression& d : s.kernel.defines)
    for (const std::string& n : d.value.variables())
      if (std::find(names.begin(), names.end(), n) == names.end())
        fail(d.value.where(),
             "define '" + d.name + "': '" + n + "' is neither a size nor a parameter" + did_you_mean(n, names));
}

// cluster: [2, 1, 1]: blocks per thread-block cluster (CUDA).
std::vector<Expression> Loader::cluster_of(const Item& it) const {
  std::vector<Expression> c = expressions_of(it, 1, 3);
  std::int64_t blocks = 1;
  bool fixed = true;
  for (std::size_t i = 0; i < c.size(); ++i) {
    auto v = constant_int(c[i]);
    if (!v) {
      fixed = false;
      continue;
    }
    if (*v < 1) fail(c[i].where(), fmt::format("cluster[{}] = {} must be at least 1", i, *v));
    blocks *= *v;
  }
  // 8 blocks is the portable size; Hopper and later take up to 16.
  if (fixed && blocks > 16)
    fail(c.front().where(), fmt::format("a cluster of {} blocks; no GPU allows more than 16", blocks));
  return c;
}

ReferenceSpec Loader::reference(const Item& it, const std::string& language) const {
  ReferenceSpec r;
  const std::string expected = "'default', 'none' or a mapping {source, entry, flags}";
  if (it.node.IsScalar()) {
    const std::string& s = it.node.Scalar();
    if (s == "default") r.kind = ReferenceSpec::Kind::default_config;
    else if (s == "none") r.kind = ReferenceSpec::Kind::none;
    else fail(content_loc(it), "bad value '" + s + "' for 'reference': expected " + expected);
    return r;
  }
  Map m =
      map(it, {"source", "python", "torch", "entry", "flags", "grid", "block", "shared_memory", "cluster"}, expected);
  r.kind = ReferenceSpec::Kind::function;
  const bool tensors = backend_for_language(language).kernel.tensors;
  for (const char* key : {"python", "torch"})
    if (const Entry* e = m.find(key); e && !tensors)
      fail(loc(e->key_node), "'reference." + std::string(key) + "' applies to " +
                                 languages_with(&KernelTraits::tensors) + " kernels, not " + language);
  if (auto v = get(m, "torch")) {
    for (const char* key : {"source", "python", "entry"})
      if (const Entry* e = m.find(key))
        fail(loc(e->key_node), "'reference.torch' is a whole reference (a torch expression over the arguments); '" +
                                   std::string(key) + "' does not go with it");
    r.torch_expression = string_of(*v, "a torch expression over the arguments, e.g. \"a.float() @ b.float()\"");
    r.where = content_loc(*v);
    return r;
  }
  if (auto v = get(m, "source")) r.source = existing_file(*v, "reference source file");
  if (auto v = get(m, "python")) r.source = existing_file(*v, "reference Python file");
  const Item entry = require(m, "entry");
  r.entry = function_name(entry);
  r.where = content_loc(entry);
  if (auto v = get(m, "flags")) r.flags = strings_of(*v);
  if (auto v = get(m, "grid")) r.launch.grid = expressions_of(*v, 1, 3);
  if (auto v = get(m, "block")) r.launch.block = expressions_of(*v, 1, 3);
  if (auto v = get(m, "shared_memory")) r.launch.shared_memory = expression_of(*v, "an expression (bytes)");
  if (r.launch.grid.empty() != r.launch.block.empty())
    fail(it.where, "'reference' needs both 'grid' and 'block', or neither (then the kernel's launch is used)");
  if (auto v = get(m, "cluster")) {
    const SourceLocation key = loc(m.find("cluster")->key_node);
    if (!backend_for_language(language).kernel.cluster)
      fail(key, "'cluster' (thread-block clusters) applies to " + languages_with(&KernelTraits::cluster) +
                    " kernels, not " + language);
    if (r.launch.grid.empty())
      fail(key,
           "'reference.cluster' needs the reference's own 'grid' and 'block' (without them the kernel's "
           "launch, its cluster included, is used)");
    r.launch.cluster = cluster_of(*v);
  }
  return r;
}

}  // namespace tunekit::spec_detail
