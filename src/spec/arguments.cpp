// The `arguments` section: buffers, scalars and tensor maps.
#include <algorithm>

#include "spec/detail/loader.hpp"

namespace tunekit::spec_detail {

void Loader::arguments(const Item& args, Spec& s) const {
  if (!args.node.IsSequence()) wrong_type(args, "a list of arguments, in call order");
  std::map<std::string, SourceLocation> seen;
  for (const Item& el : elements(args)) {
    ArgumentSpec a = argument(el);
    if (a.constant_memory && !backend_for_language(s.kernel.language).kernel.constant_memory)
      fail(el.where,
           "argument '" + a.name + "': 'memory: constant' applies to " +
               languages_with(&KernelTraits::constant_memory) + " kernels, not " + s.kernel.language +
               (s.kernel.language == "opencl" ? " (an OpenCL __constant argument is a buffer like any other)" : ""));
    if (!backend_for_language(s.kernel.language).kernel.tensors &&
        (!a.shape.empty() || !a.setup.empty() || (!a.passed && !a.constant_memory)))
      fail(el.where, "argument '" + a.name + "': 'shape', 'pass' and 'fill: {setup: ...}' apply to " +
                         languages_with(&KernelTraits::tensors) + " kernels, not " + s.kernel.language +
                         " (and 'pass' to an argument in constant memory)");
    if (!a.setup.empty() && a.setup.find(':') == std::string::npos)
      a.setup = s.kernel.source.string() + ":" + a.setup;  // a function of the kernel's own file
    if (auto prev = seen.find(a.name); prev != seen.end())
      fail(el.where, "duplicate argument name '" + a.name + "' (first at " + prev->second.str() + ")");
    seen.emplace(a.name, el.where);
    s.arguments.push_back(std::move(a));
  }
  check_tensor_maps(s);
}

// A tensor map is declared with `tensor_map`, not with a role.
bool not_tensor_map(const Named<Role>& r) { return r.value != Role::tensor_map; }

ArgumentSpec Loader::argument(const Item& it) const {
  Map m = map(it, {"name", "type", "size", "shape", "value", "fill", "role", "tensor_map", "pass", "memory"},
              "a mapping such as {name: A, type: f32, size: N}");
  ArgumentSpec a;
  a.where = it.where;
  a.name = name_of(require(m, "name"), "a C identifier");
  if (auto t = get(m, "tensor_map")) {
    for (const char* key : {"type", "size", "value", "fill", "role", "memory"})
      if (const Entry* e = m.find(key))
        fail(loc(e->key_node), "argument '" + a.name + "' is a tensor map: '" + key +
                                   "' does not apply (its element type is that of the buffer its 'of' names)");
    a.role = Role::tensor_map;
    a.tensor_map = tensor_map(*t, a.name);
    return a;
  }
  a.type = enum_of(require(m, "type"), element_type_names());
  auto size = get(m, "size");
  auto shape = get(m, "shape");
  auto value = get(m, "value");
  auto role = get(m, "role");
  auto fill = get(m, "fill");
  const std::string who = "argument '" + a.name + "'";
  // Triton: `shape` instead of `size`, `pass: false`, `fill: {setup: FN}`.
  const bool setup_fill = fill && fill->node.IsMap() && fill->node["setup"];
  if (size && shape) fail(shape->where, who + " has both 'size' and 'shape'; give one of them");
  if (shape) {
    a.shape = expressions_of(*shape, 1, 8);
    std::string product;  // the element count, for what reads `size`
    for (const auto& e : a.shape) product += (product.empty() ? "(" : " * (") + e.text() + ")";
    a.size = Expression::parse(product, shape->where);
  }
  if (auto p = get(m, "pass")) a.passed = enum_of<bool>(*p, {{"true", true}, {"false", false}});
  if ((size || shape) && value)
    fail(value->where, who + " has both 'size' (a buffer) and 'value' (a scalar); give one of them");
  if (!size && !shape && !value && !setup_fill)
    fail(it.where, who + " needs 'size' (a buffer's element count) or 'value' (a scalar's value)");
  if (value) {
    a.value = expression_of(*value, "an expression");
    a.role = Role::scalar;
    if (role) {
      Role r = enum_of(*role, role_names(), not_tensor_map);
      if (r != Role::scalar)
        fail(content_loc(*role),
             who + " is a scalar (it has 'value'), so its role is 'scalar', not '" + std::string(to_string(r)) + "'");
    }
    if (fill) fail(fill->where, who + " is a scalar (it has 'value'); 'fill' applies to buffers only");
    if (const Entry* e = m.find("memory"))
      fail(loc(e->key_node), who + " is a scalar (it has 'value'); 'memory' applies to buffers only");
    return a;
  }
  if (size) a.size = expression_of(*size, "an expression");
  if (role) {
    a.role = enum_of(*role, role_names(), not_tensor_map);
    if (a.role == Role::scalar)
      fail(content_loc(*role), who + " has role 'scalar' but a 'size'; a scalar has 'value' instead of 'size'");
  }
  // An output is poisoned (NaN, or a pattern for integers) before every
  // verified run, so that an element never written fails: a fill of it would
  // never be seen, and a kernel that reads it first (accumulates into it, as
  // into Kernel Tuner's numpy.zeros output) would fail verification for a
  // reason the spec does not show.
  if (fill && !setup_fill && a.role == Role::out)
    fail(fill->where, who +
                          " has role 'out', which starts as NaN (a poison pattern for integers) before each "
                          "verified run, so that an element the kernel never writes fails; its 'fill' would never "
                          "be seen. A kernel that reads the buffer before writing it (accumulates into it) needs "
                          "role: inout, which starts from its fill each time");
  if (auto mem = get(m, "memory")) {
    a.constant_memory = enum_of<bool>(*mem, {{"global", false}, {"constant", true}});
    if (a.constant_memory && a.role != Role::in)
      fail(content_loc(*mem), who + " is in constant memory, which a kernel only reads: its role must be 'in', not '" +
                                  std::string(to_string(a.role)) + "'");
    // As Kernel Tuner's cmem_args: the symbol alone, unless `pass: true`
    // passes the buffer too (as a T1 file's constant arguments are).
    if (a.constant_memory && !m.find("pass")) a.passed = false;
  }
  // A workspace starts as zeros, as a counter or flag in it must (split-K's
  // arrival counters), and costs no random numbers.
  a.fill = a.role == Role::out || a.role == Role::scratch ? Fill::zeros : Fill::random;
  if (fill) {
    // A fill is a name (random, zeros) or a mapping {name: value} for a fill
    // that takes a value (constant, sequence).
    std::vector<std::string> plain, valued;
    for (const auto& f : fill_names())
      (fill_takes_value(f.value) || fill_takes_path(f.value) ? valued : plain).emplace_back(f.name);
    std::vector<std::string> forms = plain;
    for (const auto& f : fill_names())
      if (fill_takes_value(f.value) || fill_takes_path(f.value))
        forms.push_back("{" + std::string(f.name) + (fill_takes_path(f.value) ? ": PATH}" : ": v}"));
    a.fill_where = content_loc(*fill);
    const std::string expected = either(forms);
    if (fill->node.IsScalar()) {
      const std::string& s = fill->node.Scalar();
      auto f = value_named(fill_names(), s);
      if (!f) {
        std::string msg = "bad value '" + s + "' for " + display(fill->path) + ": expected " + expected;
        if (auto near = closest_match(s, plain)) msg += "; did you mean '" + *near + "'?";
        fail(content_loc(*fill), msg);
      }
      if (fill_takes_value(*f) || fill_takes_path(*f))
        fail(content_loc(*fill),
             "fill '" + s + "' of " + who + " needs " +
                 (fill_takes_path(*f) ? "a path: {file: data.npy}"
                                      : "a value: {" + s + ": " + (*f == Fill::constant ? "1.5" : "0") + "}"));
      a.fill = *f;
      if (auto why = fill_misfit(a.type, a.fill, 0))
        fail(content_loc(*fill), "the " + s + " fill of " + who + ": " + *why);
    } else if (setup_fill) {
      Map f = map(*fill, {"setup", "python"}, "{setup: FUNCTION} (optional: python: FILE.py, default the kernel's)");
      const std::string fn = function_name(require(f, "setup"));
      a.setup = fn;  // completed with the kernel's file in arguments()
      if (auto file = get(f, "python"))
        a.setup = existing_file(*file, "setup function's Python file").string() + ":" + fn;
    } else if (fill->node.IsMap()) {
      Map f = map(*fill, valued, expected);
      if (f.entries.size() != 1) fail(fill->where, display(fill->path) + " must be " + expected + " (exactly one key)");
      const Entry& e = f.entries.front();
      a.fill = *value_named(fill_names(), e.key);
      if (fill_takes_path(a.fill)) {
        // Its type and length are checked against the argument's at each
        // size (resolve_arguments), where the length is known.
        a.fill_file = existing_file(child(f, e), "fill file");
      } else {
        a.fill_value = number_of(child(f, e), "a number");
        if (auto why = fill_misfit(a.type, a.fill, a.fill_value))
          fail(child(f, e).where, "the " + e.key + " fill of " + who + ": " + *why);
      }
    } else {
      wrong_type(*fill, expected);
    }
  }
  return a;
}

std::optional<std::int64_t> constant_int(const Expression& e) {
  if (!e.variables().empty()) return std::nullopt;
  auto v = e.evaluate(std::span<const Value>{});
  if (!v || !v->is_int()) return std::nullopt;
  return v->as_int();
}

// tensor_map: {of: A, dims: [K, M], box: [BK, BM], swizzle: 128, oob: zero, l2_promotion: 128}
TensorMapSpec Loader::tensor_map(const Item& it, const std::string& arg) const {
  const std::string expected = "a mapping {of: BUFFER, dims: [...], box: [...]} (optional: swizzle, oob, l2_promotion)";
  Map m = map(it, {"of", "dims", "box", "swizzle", "oob", "l2_promotion"}, expected);
  TensorMapSpec t;
  t.where = it.where;
  Item of = require(m, "of");
  t.of = name_of(of, "the name of a buffer argument");
  t.of_where = content_loc(of);
  Item dims = require(m, "dims");
  Item box = require(m, "box");
  t.dims = expressions_of(dims, 1, 5);
  t.box = expressions_of(box, 1, 5);
  if (t.box.size() != t.dims.size())
    fail(box.where, fmt::format("tensor map '{}': 'box' has {} extent{} but 'dims' has {}; give one per dimension "
                                "(innermost first)",
                                arg, t.box.size(), t.box.size() == 1 ? "" : "s", t.dims.size()));
  if (auto v = get(m, "swizzle")) t.swizzle = enum_of<int>(*v, {{"none", 0}, {"32", 32}, {"64", 64}, {"128", 128}});
  if (auto v = get(m, "oob")) t.oob_nan = enum_of<bool>(*v, {{"zero", false}, {"nan", true}});
  if (auto v = get(m, "l2_promotion"))
    t.l2_promotion = enum_of<int>(*v, {{"none", 0}, {"64", 64}, {"128", 128}, {"256", 256}});
  for (std::size_t i = 0; i < t.dims.size(); ++i) {
    if (auto d = constant_int(t.dims[i]); d && *d < 1)
      fail(t.dims[i].where(), fmt::format("tensor map '{}': dims[{}] = {} must be at least 1", arg, i, *d));
    if (auto b = constant_int(t.box[i]); b && (*b < 1 || *b > 256))
      fail(t.box[i].where(),
           fmt::format("tensor map '{}': box[{}] = {}; a box extent is 1 to 256 elements", arg, i, *b));
  }
  return t;
}

// What needs the other arguments: `of` names a buffer, whose element type
// is the map's, and the limits in bytes where the spec fixes the extents.
void Loader::check_tensor_maps(Spec& s) const {
  for (ArgumentSpec& a : s.arguments) {
    if (!a.tensor_map) continue;
    TensorMapSpec& t = *a.tensor_map;
    if (!backend_for_language(s.kernel.language).kernel.tensor_maps)
      fail(a.where, "argument '" + a.name + "' is a tensor map, which needs kernel.language: " +
                        languages_with(&KernelTraits::tensor_maps) + " (TMA, compute capability 9.0 on), not " +
                        s.kernel.language);
    auto of =
        std::find_if(s.arguments.begin(), s.arguments.end(), [&](const ArgumentSpec& b) { return b.name == t.of; });
    std::vector<std::string> buffers;
    for (const auto& b : s.arguments)
      if (b.role != Role::scalar && b.role != Role::tensor_map) buffers.push_back(b.name);
    if (of == s.arguments.end()) {
      std::string msg = "tensor map '" + a.name + "': 'of' names no argument: '" + t.of + "'";
      if (auto near = closest_match(t.of, buffers)) msg += "; did you mean '" + *near + "'?";
      msg += buffers.empty() ? " (the spec declares no buffer)" : " (buffers: " + join(buffers) + ")";
      fail(t.of_where, msg);
    }
    if (of->role == Role::scalar || of->role == Role::tensor_map)
      fail(t.of_where, "tensor map '" + a.name + "': 'of' must name a buffer argument (one with 'size'), but '" + t.of +
                           "' is a " + (of->role == Role::scalar ? "scalar" : "tensor map"));
    if (of->constant_memory)
      fail(t.of_where, "tensor map '" + a.name + "': '" + t.of +
                           "' is in constant memory, which a tensor map cannot "
                           "describe (TMA copies from global memory)");
    a.type = of->type;
    const auto elem = static_cast<std::int64_t>(size_of(a.type));
    if (t.oob_nan && !is_floating(a.type))
      fail(t.where, "tensor map '" + a.name + "': oob: nan needs a floating-point buffer; '" + t.of + "' is " +
                        std::string(to_string(a.type)));
    if (auto d = constant_int(t.dims[0]); d && t.dims.size() > 1 && *d * elem % 16 != 0)
      fail(t.dims[0].where(), fmt::format("tensor map '{}': a row of dims[0] = {} {} elements is {} bytes; TMA needs "
                                          "the global strides to be multiples of 16 bytes",
                                          a.name, *d, to_string(a.type), *d * elem));
    if (auto b = constant_int(t.box[0])) {
      if (*b * elem % 16 != 0)
        fail(t.box[0].where(), fmt::format("tensor map '{}': the inner box extent box[0] = {} {} elements is {} bytes; "
                                           "TMA needs a multiple of 16 bytes",
                                           a.name, *b, to_string(a.type), *b * elem));
      if (t.swizzle > 0 && *b * elem > t.swizzle)
        fail(t.box[0].where(), fmt::format("tensor map '{}': the inner box extent box[0] = {} {} elements is {} bytes, "
                                           "over the {}-byte swizzle span",
                                           a.name, *b, to_string(a.type), *b * elem, t.swizzle));
    }
  }
}

}  // namespace tunekit::spec_detail

namespace tunekit {

namespace {
bool is_compared(const ArgumentSpec& a) { return (a.role == Role::out || a.role == Role::inout) && a.setup.empty(); }
}  // namespace

bool has_compared_output(const Spec& spec) {
  return std::any_of(spec.arguments.begin(), spec.arguments.end(), is_compared);
}

Tolerance default_tolerance(ElementType t) {
  switch (t) {
    case ElementType::f16:
      return {1e-5, 1e-3};
    case ElementType::bf16:
      return {1e-5, 1.6e-2};
    case ElementType::f64:
      return {1e-7, 1e-7};
    case ElementType::f32:
      return {1e-6, 1e-5};
    default:  // an integer is right or wrong: a relative bound passes an off-by-ten at 10^6
      return {0, 0};
  }
}

Tolerance applied_tolerance(const Spec& spec) {
  std::optional<Tolerance> loosest;
  for (const ArgumentSpec& a : spec.arguments) {
    if (!is_compared(a)) continue;
    const Tolerance d = default_tolerance(a.type);
    loosest = loosest ? Tolerance{std::max(loosest->atol, d.atol), std::max(loosest->rtol, d.rtol)} : d;
  }
  const Tolerance by_type = loosest.value_or(Tolerance{});
  return {spec.tolerance.atol.value_or(by_type.atol), spec.tolerance.rtol.value_or(by_type.rtol)};
}

}  // namespace tunekit
