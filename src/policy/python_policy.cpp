// What tuning chose, for Python kernels: a module mapping sizes to configs,
// a triton.Config list for @triton.autotune, and vLLM's fused-MoE files.
#include <algorithm>
#include <array>
#include <map>
#include <set>
#include <stdexcept>
#include <tuple>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "policy/detail/layout.hpp"
#include "tunekit/policy.hpp"

namespace tunekit {

namespace {

// A Python literal for a value: ints and floats as such, strings quoted.
std::string python_literal(const Value& v) {
  if (v.is_int()) return std::to_string(v.as_int());
  if (v.is_string()) return nlohmann::json(v.str()).dump();  // a JSON string is a valid Python string
  const std::string text = fmt::format("{}", v.to_double());
  if (text == "inf" || text == "-inf" || text == "nan") return "float(\"" + text + "\")";
  return text.find_first_of(".e") == std::string::npos ? text + ".0" : text;
}

std::string python_dict(const std::vector<std::pair<std::string, Value>>& items) {
  std::string out = "{";
  for (const auto& [k, v] : items)
    out += (out.size() > 1 ? ", " : "") + nlohmann::json(k).dump() + ": " + python_literal(v);
  return out + "}";
}

template <class Map>
std::vector<std::pair<std::string, Value>> items_of(const Map& m) {
  return {m.begin(), m.end()};
}

constexpr std::array<const char*, 8> kLaunchOptions{"num_warps",  "num_stages",           "num_ctas",
                                                    "maxnreg",    "enable_fp_fusion",     "launch_cooperative_grid",
                                                    "launch_pdl", "num_buffers_warp_spec"};

}  // namespace

bool is_triton_launch_option(std::string_view name) {
  return std::find(kLaunchOptions.begin(), kLaunchOptions.end(), name) != kLaunchOptions.end();
}

std::string emit_python(const Policy& policy) {
  using detail::Kind;
  using detail::Ref;
  const detail::Layout l = detail::layout_of(policy);
  auto quoted = [](const std::string& text) { return nlohmann::json(text).dump(); };  // a valid Python string
  // A size is select()'s argument (`size`), an integer parameter the
  // candidate's (`c`), a machine property the tuned device's value: as in the header.
  auto spell = [&](const Ref& r) -> std::string {
    switch (r.what) {
      case Ref::What::size:
        return "size[" + quoted(l.size_names[r.index]) + "]";
      case Ref::What::param:
        return "c[" + quoted(l.param_names[r.index]) + "]";
      case Ref::What::machine:
        break;
    }
    return python_literal(*r.value);
  };
  using detail::one_line;
  std::string out = fmt::format(
      "{}{} ({}).\n"
      "# select(**size) returns the config of a tuned size; for the others: {}\n"
      "# (allowed(config, **size) says whether they allow a config). The same rule, to\n"
      "# the last bit, as the C++ header's select.\n",
      detail::kPythonOpening, one_line(policy.kernel), one_line(policy.selection),
      detail::untuned_size_rule(l, "allowed", "select returns None"));
  if (!policy.device.empty()) out += "# Tuned on " + one_line(policy.device) + ".\n";
  if (!l.checks.empty()) {
    std::vector<std::string> props;
    for (const auto& [n, v] : policy.checks.machine) props.push_back(n + " = " + v.str());
    out += fmt::format("# Constraints checked: {} of the spec's{}{}.\n", l.checks.size(),
                       props.empty() ? "" : ", with the tuned device's ", fmt::join(props, ", "));
  }
  for (const auto& text : l.unchecked) out += "# Not checked (not integer arithmetic): " + one_line(text) + "\n";
  out += detail::tuned_in_part_summary(policy, "# ");
  for (const PinnedParameter* p : l.pins)
    out += "# " + p->name + " is pinned to the size by the spec (" + one_line(p->name + " == " + p->rule.text()) +
           "):\n# an untuned size gets it computed from its own size.\n";
  out += "\nimport operator\n\nCONFIGS = [\n";
  for (const auto& e : policy.entries)
    out += "    (" + python_dict(items_of(e.size)) + ",\n     " + python_dict(items_of(e.config)) + ")," +
           detail::tuned_in_part_note(e, "  # ") + "\n";
  out += "]\n\n";
  std::vector<std::string> names, floats;
  for (std::size_t i = 0; i < l.size_names.size(); ++i) {
    names.push_back(quoted(l.size_names[i]));
    if (l.size_kinds[i] == Kind::floating) floats.push_back(quoted(l.size_names[i]));
  }
  // A one-name tuple needs its comma.
  auto tuple = [](const std::vector<std::string>& items) {
    return items.size() == 1 ? "(" + items[0] + ",)" : fmt::format("({})", fmt::join(items, ", "));
  };
  out +=
      "# The sizes in the header's argument order: the distance multiplies the\n"
      "# axes' ratios in this order, as the header does (a product, not a sum of\n"
      "# logarithms, so that ties come out as in the header).\n";
  out += "SIZE_ORDER = " + tuple(names) + "\n";
  out += "_FLOAT_SIZES = " + tuple(floats) + "  # double in the header; the others std::int64_t\n\n";
  const std::string helpers = "_";
  if (!l.pins.empty() || !l.checks.empty()) out += "\n" + python_int_helpers(helpers) + "\n";
  out += R"PY(
def _ratio(a, b):
    a = 1.0 if a < 1 else a
    b = 1.0 if b < 1 else b
    return a / b if a > b else b / a


def _float_ratio(a, b):
    """_ratio for an axis of floats: floored at the smallest positive double, not 1."""
    smallest = 2.2250738585072014e-308
    a = smallest if a < smallest else a
    b = smallest if b < smallest else b
    return a / b if a > b else b / a


def _size(size):
    """select()'s keyword arguments as the header's typed arguments."""
    unknown = sorted(set(size) - set(SIZE_ORDER))
    if unknown:
        raise TypeError(f"select() got unknown sizes {', '.join(unknown)} (the tuned sizes are {', '.join(SIZE_ORDER)})")
    out = {}
    for name in SIZE_ORDER:
        if name not in size:
            raise TypeError(f"select() needs {name} (the tuned sizes are {', '.join(SIZE_ORDER)})")
        value = size[name]
        if name in _FLOAT_SIZES:
            out[name] = float(value)
            continue
        try:
            out[name] = operator.index(value)
        except TypeError:
            raise TypeError(f"select(): size {name} must be an integer, as tuned; got {value!r}") from None
    return out


def _pinned(c, size):
    """c with its pinned parameters computed from size."""
    c = dict(c)
)PY";
  for (const PinnedParameter* p : l.pins)
    out +=
        "    c[" + quoted(p->name) + "] = " + *p->rule.to_python(detail::namer(l, policy, true, spell), helpers) + "\n";
  out += "    return c\n\n\ndef _allowed(c, size):\n";
  if (l.checks.empty()) out += "    return True\n";
  else {
    std::vector<std::string> terms;
    for (const Expression* c : l.checks)
      terms.push_back("bool(" + *c->to_python(detail::namer(l, policy, false, spell), helpers) + ")");
    out += fmt::format("    return ({})\n", fmt::join(terms, "\n            and "));
  }
  out += fmt::format(
      R"PY(

def allowed(config, **size):
    """Whether the spec's constraints that the header checks allow config at size."""
    return _allowed(config, _size(size))


def select(**size):
    """The config for `size` (keyword arguments named like the tuned sizes), or
    None for an untuned size where the spec's checks allow no tuned config."""
    size = _size(size)
    for tuned, config in CONFIGS:
        if all(tuned[name] == size[name] for name in SIZE_ORDER):
            return dict(config)
    best, best_distance = 0, 0.0
    allowed_index, allowed_distance = len(CONFIGS), 0.0  # the nearest that the checks allow
    for i, (tuned, config) in enumerate(CONFIGS):
        d = 1.0
        for name in SIZE_ORDER:
            d *= (_float_ratio if name in _FLOAT_SIZES else _ratio)(float(tuned[name]), float(size[name]))
        if i == 0 or d < best_distance:
            best, best_distance = i, d
{0}    return _pinned(CONFIGS[best][1], size)
)PY",
      l.checks.empty()
          ? ""
          : R"PY(        if _allowed(_pinned(config, size), size) and (allowed_index == len(CONFIGS) or d < allowed_distance):
            allowed_index, allowed_distance = i, d
    if allowed_index == len(CONFIGS):
        return None  # the nearest with its pins computed would be a config no build had
    best = allowed_index
)PY");
  return out;
}

std::string emit_triton_configs(const Policy& policy) {
  std::vector<Config> distinct;
  for (const auto& e : policy.entries)
    if (std::none_of(distinct.begin(), distinct.end(), [&](const Config& c) { return c == e.config; }))
      distinct.push_back(e.config);
  std::string out = fmt::format(
      "{}{} distinct config{} tuning chose for {} ({}), as\n"
      "# triton.Config objects for @triton.autotune(configs=CONFIGS, key=[...]).\n\nimport triton\n\nCONFIGS = [\n",
      detail::kTritonOpening, distinct.size(), distinct.size() == 1 ? "" : "s", policy.kernel, policy.selection);
  for (const auto& c : distinct) {
    std::vector<std::pair<std::string, Value>> meta;
    std::string options;
    for (const auto& [k, v] : c) {
      // triton.Config takes these as its own arguments; the other launch
      // options (enable_fp_fusion, launch_pdl, ...) reach the launch from
      // its kwargs, as the meta-parameters do (Config.all_kwargs).
      if (k == "num_warps" || k == "num_stages" || k == "num_ctas" || k == "maxnreg")
        options += ", " + k + "=" + python_literal(v);
      else meta.emplace_back(k, v);
    }
    out += "    triton.Config(" + python_dict(meta) + options + "),\n";
  }
  return out + "]\n";
}

std::vector<VllmConfigFile> emit_vllm_moe(const Policy& policy, const std::string& device, const std::string& dtype,
                                          const std::string& batch_axis, const std::vector<std::int64_t>& block_shape) {
  // vLLM writes Python's list, spaces dropped: ",block_shape=[128,128]"; it
  // leaves the part out where a value is 0, so that shape has no file.
  if (!block_shape.empty() &&
      (block_shape.size() != 2 || std::any_of(block_shape.begin(), block_shape.end(), [](auto v) { return v <= 0; })))
    throw std::invalid_argument(fmt::format("vLLM's block_shape is two positive integers [block_n, block_k], not [{}]",
                                            fmt::join(block_shape, ", ")));
  static const std::array<const char*, 6> keys{"BLOCK_SIZE_M", "BLOCK_SIZE_N", "BLOCK_SIZE_K",
                                               "GROUP_SIZE_M", "num_warps",    "num_stages"};
  // The device as torch names it: without the last " (...)", which the
  // Triton backend appends ("(triton 3.6.0, torch 2.11)"); a GPU's own name
  // may hold a " (" before it.
  std::string device_name = device;
  if (const auto open = device.rfind(" ("); open != std::string::npos && device.ends_with(')'))
    device_name.resize(open);
  std::replace(device_name.begin(), device_name.end(), ' ', '_');
  // vLLM reads one file for the whole H200 family ("NVIDIA H200 NVL" too):
  // its name has the word H200, its file is NVIDIA_H200's.
  if (("_" + device_name + "_").find("_H200_") != std::string::npos) device_name = "NVIDIA_H200";
  // (E, N) -> batch size -> config
  std::map<std::pair<std::int64_t, std::int64_t>, std::map<std::int64_t, nlohmann::ordered_json>> files;
  // The tuned size behind each file entry: two sizes that differ in another
  // axis (K, say) would share one, and the last would silently win.
  std::map<std::tuple<std::int64_t, std::int64_t, std::int64_t>, const Bindings*> from;
  std::map<std::pair<std::int64_t, std::int64_t>, std::vector<std::int64_t>> in_part;  // (E, N) -> batch sizes
  for (const auto& e : policy.entries) {
    auto get = [&](const std::string& name) -> std::int64_t {
      auto it = e.size.find(name);
      if (it == e.size.end() || !it->second.is_int())
        throw std::runtime_error("vLLM's MoE files need integer sizes E, N and " + batch_axis +
                                 "; a tuned size lacks " + name);
      return it->second.as_int();
    };
    nlohmann::ordered_json config;
    for (const char* k : keys) {
      const Value* v = e.config.find(k);
      if (!v)
        throw std::runtime_error(std::string("vLLM's MoE files need ") + k + " in every config; " + e.config.str() +
                                 " lacks it");
      if (!v->is_int())
        throw std::runtime_error(
            fmt::format("vLLM's MoE files hold integers; {} is {} in {}", k, v->repr(), e.config.str()));
      config[k] = v->as_int();
    }
    // vLLM passes a config's entries to its fused_moe_kernel as keyword
    // arguments: a tuned launch option (maxnreg, num_ctas) goes with them;
    // a parameter of this kernel that vLLM's does not take would make its
    // launch fail, and left out, vLLM would run a config other than the one
    // measured.
    for (const auto& [k, v] : e.config) {
      // (No lambda capturing k: clang before 16 cannot capture a structured binding.)
      if (std::find(keys.begin(), keys.end(), k) != keys.end()) continue;
      if (!is_triton_launch_option(k))
        throw std::runtime_error(fmt::format(
            "vLLM's MoE files hold BLOCK_SIZE_M/N/K, GROUP_SIZE_M and Triton launch options, which vLLM passes "
            "to its fused_moe_kernel; the tuned parameter {} is none of these (in {}): give it its one value in "
            "kernel.constexprs instead, or ship the Python policy",
            k, e.config.str()));
      if (!v.is_int())
        throw std::runtime_error(
            fmt::format("vLLM's MoE files hold integers; {} is {} in {}", k, v.repr(), e.config.str()));
      config[k] = v.as_int();
    }
    const auto key = std::make_tuple(get("E"), get("N"), get(batch_axis));
    // vLLM names a file by the intermediate size, half the N of the fused
    // gate-and-up matmul that is tuned here.
    if (std::get<1>(key) % 2 != 0)
      throw std::runtime_error(
          fmt::format("vLLM's MoE files are named by N / 2 (N being the fused gate-and-up matmul's width, twice the "
                      "intermediate size), but the tuned size {} has an odd N",
                      size_key(e.size)));
    if (auto [it, fresh] = from.try_emplace(key, &e.size); !fresh)
      throw std::runtime_error(fmt::format(
          "vLLM's MoE files hold one config per E, N and {}, but the tuned sizes {} and {} differ only in other "
          "axes; emit them one at a time, naming one value of those axes (emit -s NAME=VALUE)",
          batch_axis, size_key(*it->second), size_key(e.size)));
    files[{std::get<0>(key), std::get<1>(key)}][std::get<2>(key)] = config;
    if (e.tuned_in_part) in_part[{std::get<0>(key), std::get<1>(key)}].push_back(std::get<2>(key));
  }
  std::vector<VllmConfigFile> out;
  for (const auto& [en, batches] : files) {
    nlohmann::ordered_json j;
    for (const auto& [m, c] : batches) j[std::to_string(m)] = c;
    std::string name = fmt::format("E={},N={},device_name={}", en.first, en.second / 2, device_name);
    if (!dtype.empty()) name += ",dtype=" + dtype;
    if (!block_shape.empty()) name += fmt::format(",block_shape=[{},{}]", block_shape[0], block_shape[1]);
    std::vector<std::int64_t> part = in_part[en];
    std::sort(part.begin(), part.end());
    out.push_back({name + ".json", j.dump(4) + "\n", std::move(part)});
  }
  return out;
}

}  // namespace tunekit
