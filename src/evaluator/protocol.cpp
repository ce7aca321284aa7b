#include "evaluator/detail/protocol.hpp"

namespace tunekit::detail {

using json = nlohmann::json;

namespace {

// JSON has no infinity: it travels as null.
json finite_or_null(double v) { return std::isfinite(v) ? json(v) : json(nullptr); }
double number_or_inf(const json& j) { return j.is_null() ? INFINITY : j.get<double>(); }

template <class E>
E enum_from(const json& j, std::initializer_list<E> all) {
  const auto s = j.get<std::string>();
  for (E e : all)
    if (to_string(e) == s) return e;
  throw std::invalid_argument("bad enum value '" + s + "' in a worker message");
}

}  // namespace

json to_json(const ResolvedArgument& a) {
  json j{{"name", a.name},   {"type", std::string(to_string(a.type))}, {"role", std::string(to_string(a.role))},
         {"count", a.count}, {"fill", std::string(to_string(a.fill))}, {"fill_value", a.fill_value}};
  if (a.role == Role::scalar) {
    if (a.scalar.is_int()) j["scalar"] = a.scalar.as_int();
    else j["scalar"] = a.scalar.to_double();
  }
  // Triton's fields only where set, so the keys of other backends' requests
  // (reference caches) stay as they were.
  if (!a.shape.empty()) j["shape"] = a.shape;
  if (!a.setup.empty()) j["setup"] = a.setup;
  if (!a.passed) j["pass"] = false;
  if (a.constant_memory) j["constant_memory"] = true;
  if (a.sized_by_config) j["sized_by_config"] = true;
  if (a.fill == Fill::file)
    j["fill_file"] = {{"path", a.fill_file}, {"offset", a.fill_offset}, {"stamp", a.fill_stamp}};
  if (a.tensor_map) {
    const ResolvedTensorMap& m = *a.tensor_map;
    j["tensor_map"] = {{"of", m.of},           {"dims", m.dims},       {"box", m.box},
                       {"swizzle", m.swizzle}, {"oob_nan", m.oob_nan}, {"l2_promotion", m.l2_promotion}};
  }
  return j;
}

ResolvedArgument argument_from_json(const json& j) {
  ResolvedArgument a;
  a.name = j.at("name").get<std::string>();
  const auto type = element_type_from_string(j.at("type").get<std::string>());
  if (!type) throw std::invalid_argument("bad element type in a worker message");
  a.type = *type;
  a.role = enum_from(j.at("role"), {Role::in, Role::out, Role::inout, Role::scalar, Role::tensor_map, Role::scratch});
  a.fill =
      enum_from(j.at("fill"), {Fill::random, Fill::constant, Fill::sequence, Fill::zeros, Fill::file, Fill::normal});
  a.count = j.at("count").get<std::uint64_t>();
  a.fill_value = j.at("fill_value").get<double>();
  if (j.contains("scalar")) {
    const auto& s = j["scalar"];
    a.scalar = s.is_number_integer() ? Value(s.get<std::int64_t>()) : Value(s.get<double>());
  }
  if (j.contains("shape")) a.shape = j["shape"].get<std::vector<std::int64_t>>();
  a.setup = j.value("setup", std::string());
  a.passed = j.value("pass", true);
  a.constant_memory = j.value("constant_memory", false);
  a.sized_by_config = j.value("sized_by_config", false);
  if (j.contains("fill_file")) {
    const auto& f = j["fill_file"];
    a.fill_file = f.at("path").get<std::string>();
    a.fill_offset = f.at("offset").get<std::uint64_t>();
    a.fill_stamp = f.at("stamp").get<std::string>();
  }
  if (j.contains("tensor_map")) {
    const auto& t = j["tensor_map"];
    ResolvedTensorMap m;
    m.of = t.at("of").get<std::string>();
    m.dims = t.at("dims").get<std::vector<std::int64_t>>();
    m.box = t.at("box").get<std::vector<std::int64_t>>();
    m.swizzle = t.at("swizzle").get<int>();
    m.oob_nan = t.at("oob_nan").get<bool>();
    m.l2_promotion = t.at("l2_promotion").get<int>();
    a.tensor_map = std::move(m);
  }
  return a;
}

json to_json(const WorkerRequest& r) {
  json args = json::array();
  for (const auto& a : r.arguments) args.push_back(to_json(a));
  const auto& m = r.measure;
  json j{{"op", r.op == WorkerRequest::Op::reference ? "reference" : "trial"},
         {"artifact", r.artifact.path.string()},
         {"hash", r.artifact.hash},
         {"entry", r.entry},
         {"grid", r.launch.grid},
         {"block", r.launch.block},
         {"shared_memory", r.launch.shared_memory},
         {"args", args},
         {"reference_file", r.reference_file},
         {"atol", r.tolerance.atol},
         {"rtol", r.tolerance.rtol},
         {"measure",
          {{"warmup_us", m.warmup.count()},
           {"min_samples", m.min_samples},
           {"max_samples", m.max_samples},
           {"max_time_s", m.max_time.count()},
           {"target_noise", m.target_noise},
           {"cache", std::string(to_string(m.cache))},
           {"timeout_s", m.timeout.count()},
           {"early_stop", m.early_stop},
           {"best_so_far_us", m.best_so_far ? json(m.best_so_far->count()) : json(nullptr)}}},
         {"seed", r.seed},
         {"flush_bytes", r.flush_bytes}};
  // Only when there is one, so the keys of requests without (reference
  // caches) stay as they were.
  if (r.launch.clustered()) j["cluster"] = r.launch.cluster;
  if (m.graph) j["measure"]["graph"] = true;
  return j;
}

WorkerRequest request_from_json(const json& j) {
  WorkerRequest r;
  r.op = j.at("op") == "reference" ? WorkerRequest::Op::reference : WorkerRequest::Op::trial;
  r.artifact.path = j.at("artifact").get<std::string>();
  r.artifact.hash = j.at("hash").get<std::string>();
  r.entry = j.at("entry").get<std::string>();
  r.launch.grid = j.at("grid").get<std::array<std::uint64_t, 3>>();
  r.launch.block = j.at("block").get<std::array<std::uint64_t, 3>>();
  r.launch.shared_memory = j.at("shared_memory").get<std::uint64_t>();
  if (j.contains("cluster")) r.launch.cluster = j["cluster"].get<std::array<std::uint64_t, 3>>();
  for (const auto& a : j.at("args")) r.arguments.push_back(argument_from_json(a));
  r.reference_file = j.at("reference_file").get<std::string>();
  r.tolerance = {j.at("atol").get<double>(), j.at("rtol").get<double>()};
  const auto& m = j.at("measure");
  r.measure.warmup = Microseconds(m.at("warmup_us").get<double>());
  r.measure.min_samples = m.at("min_samples").get<std::size_t>();
  r.measure.max_samples = m.at("max_samples").get<std::size_t>();
  r.measure.max_time = Seconds(m.at("max_time_s").get<double>());
  r.measure.target_noise = m.at("target_noise").get<double>();
  r.measure.cache = enum_from(m.at("cache"), {CacheMode::cold, CacheMode::hot, CacheMode::cold_read});
  r.measure.timeout = Seconds(m.at("timeout_s").get<double>());
  r.measure.graph = m.value("graph", false);
  r.measure.early_stop = m.at("early_stop").get<double>();
  if (const auto& best = m.at("best_so_far_us"); !best.is_null())
    r.measure.best_so_far = Microseconds(best.get<double>());
  r.seed = j.at("seed").get<std::uint64_t>();
  r.flush_bytes = j.at("flush_bytes").get<std::uint64_t>();
  return r;
}

json to_json(const WorkerAnswer& a) {
  const TrialResult& r = a.result;
  json samples = json::array();
  for (auto s : r.samples) samples.push_back(s.count());
  json j{{"status", std::string(to_string(r.status))},
         {"error", r.error},
         {"samples_us", samples},
         {"busy_us", Microseconds(r.device_busy).count()},
         {"flush_us", Microseconds(r.flush).count()},
         {"verify_us", Microseconds(r.verify).count()},
         {"restart", a.restart}};
  if (r.fault != Fault::none) j["fault"] = std::string(to_string(r.fault));
  if (r.verification.checked)
    j["verification"] = {{"passed", r.verification.passed},
                         {"max_abs_diff", finite_or_null(r.verification.max_abs_diff)},
                         {"max_rel_err", finite_or_null(r.verification.max_rel_err)},
                         {"detail", r.verification.detail}};
  return j;
}

WorkerAnswer answer_from_json(const json& j) {
  WorkerAnswer a;
  TrialResult& r = a.result;
  r.status = status_from_string(j.at("status").get<std::string>()).value_or(Status::launch_error);
  r.error = j.value("error", std::string());
  for (double us : j.value("samples_us", std::vector<double>{})) r.samples.emplace_back(us);
  r.stats = summarize(r.samples);
  r.device_busy = Microseconds(j.value("busy_us", 0.0));
  r.flush = Microseconds(j.value("flush_us", 0.0));
  r.verify = Microseconds(j.value("verify_us", 0.0));
  a.restart = j.value("restart", false);
  if (j.contains("fault")) r.fault = fault_from_string(j["fault"].get<std::string>()).value_or(Fault::config);
  if (j.contains("verification")) {
    const auto& v = j["verification"];
    r.verification.checked = true;
    r.verification.passed = v.at("passed").get<bool>();
    r.verification.max_abs_diff = number_or_inf(v.at("max_abs_diff"));
    r.verification.max_rel_err = number_or_inf(v.at("max_rel_err"));
    r.verification.detail = v.value("detail", std::string());
  }
  return a;
}

namespace {

std::string excerpt(std::string_view line) {
  std::string text(line.substr(0, 200));
  for (char& c : text)
    if (static_cast<unsigned char>(c) < 0x20) c = '?';
  return text + (line.size() > 200 ? "..." : "");
}

// The JSON object of a reply line, or why there is none. `line` loses its
// token.
std::variant<json, std::string> reply_object(std::string_view& line, std::string_view token) {
  if (!token.empty()) {
    if (line.size() <= token.size() || line.substr(0, token.size()) != token || line[token.size()] != ' ')
      return "a line on the reply channel that is not the worker's: '" + excerpt(line) + "'";
    line.remove_prefix(token.size() + 1);
  }
  try {
    json j = json::parse(line);
    if (!j.is_object()) return "a reply that is not a JSON object: '" + excerpt(line) + "'";
    return j;
  } catch (const std::exception& e) {
    return std::string("a malformed reply (") + e.what() + "): '" + excerpt(line) + "'";
  }
}

}  // namespace

std::variant<WorkerAnswer, std::string> parse_answer(std::string_view line, std::string_view token) {
  auto j = reply_object(line, token);
  if (auto* why = std::get_if<std::string>(&j)) return std::move(*why);
  try {
    return answer_from_json(std::get<json>(j));
  } catch (const std::exception& e) {
    return std::string("a malformed reply (") + e.what() + "): '" + excerpt(line) + "'";
  }
}

std::string ready_line(std::string_view token) {
  return (token.empty() ? std::string() : std::string(token) + " ") + R"({"ready":true})";
}

std::optional<std::string> not_ready(std::string_view line, std::string_view token) {
  auto j = reply_object(line, token);
  if (auto* why = std::get_if<std::string>(&j)) return std::move(*why);
  const json& o = std::get<json>(j);
  if (auto it = o.find("ready"); it != o.end() && *it == true) return std::nullopt;
  return "a first line that is not {\"ready\": true}: '" + excerpt(line) + "'";
}

}  // namespace tunekit::detail
