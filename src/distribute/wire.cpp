// The distributed tune's messages: trials and size reports as JSON, every
// field kept, so that rank 0 stores and reports exactly what a rank measured.
#include <cmath>
#include <limits>
#include <stdexcept>

#include "distribute/detail/job.hpp"
#include "store/detail/json_value.hpp"

namespace tunekit::detail {

namespace {

// JSON has no infinity or NaN; a measurement can hold them (a noise over
// no samples), and a message must not turn them into 0.
ojson number(double d) {
  if (std::isfinite(d)) return d;
  return std::isnan(d) ? "nan" : d > 0 ? "inf" : "-inf";
}

double number(const ojson& j) {
  if (j.is_number()) return j.get<double>();
  const std::string s = j.get<std::string>();
  if (s == "inf") return std::numeric_limits<double>::infinity();
  if (s == "-inf") return -std::numeric_limits<double>::infinity();
  if (s == "nan") return std::numeric_limits<double>::quiet_NaN();
  throw std::runtime_error("not a number in a message: " + j.dump());
}

template <class Duration>
Duration duration(const ojson& j) {
  return Duration(number(j));
}

template <class Enum>
Enum named(const ojson& j, std::optional<Enum> (*from)(std::string_view), const char* what) {
  const std::string s = j.get<std::string>();
  if (auto e = from(s)) return *e;
  throw std::runtime_error(std::string("unknown ") + what + " '" + s + "' in a message");
}

std::optional<std::size_t> index_from(const ojson& j) {
  if (j.is_null()) return std::nullopt;
  return j.get<std::size_t>();
}

ojson stopped_part_way_to_json(const std::optional<StoppedPartWay>& part) {
  if (!part) return nullptr;
  return {{"time_budget", part->cause == StoppedPartWay::Cause::time_budget},
          {"measured", part->measured},
          {"resumed", part->resumed},
          {"valid", part->valid ? ojson(*part->valid) : ojson(nullptr)}};
}

// A note on the best, newer than the rest of a size's report: a rank of a
// tunekit from before it (or before "resumed") sends none, and its absence
// costs the note, not the rank's trials.
std::optional<StoppedPartWay> stopped_part_way_from_json(const ojson& size) {
  const auto it = size.find("stopped_part_way");
  if (it == size.end() || it->is_null()) return std::nullopt;
  const ojson& j = *it;
  StoppedPartWay part;
  part.cause =
      j.value("time_budget", false) ? StoppedPartWay::Cause::time_budget : StoppedPartWay::Cause::stop_requested;
  part.measured = j.value("measured", std::size_t{0});
  part.resumed = j.value("resumed", std::size_t{0});
  if (j.contains("valid") && !j.at("valid").is_null()) part.valid = j.at("valid").get<std::uint64_t>();
  return part;
}

}  // namespace

ojson trial_to_json(const TrialRecord& t) {
  ojson samples = ojson::array();
  for (const auto& s : t.samples) samples.push_back(number(s.count()));
  ojson j{
      {"id", t.id},
      {"spec_hash", t.spec_hash},
      {"hash_without_toolchain", t.hash_without_toolchain},
      {"toolchain", t.toolchain},
      {"kernel", t.kernel},
      {"device", t.device},
      {"size", bindings_to_json(t.size)},
      {"config", config_to_json(t.config)},
      {"status", to_string(t.status)},
      {"error", t.error},
      {"stats",
       {{"median", number(t.stats.median.count())},
        {"min", number(t.stats.min.count())},
        {"max", number(t.stats.max.count())},
        {"mean", number(t.stats.mean.count())},
        {"noise", number(t.stats.noise)},
        {"spread", number(t.stats.spread)},
        {"bimodal", t.stats.bimodal},
        {"count", t.stats.count}}},
      {"samples", std::move(samples)},
      {"verification",
       {{"checked", t.verification.checked},
        {"passed", t.verification.passed},
        {"max_abs_diff", number(t.verification.max_abs_diff)},
        {"max_rel_err", number(t.verification.max_rel_err)},
        {"detail", t.verification.detail}}},
      {"build_time", number(t.build_time.count())},
      {"eval_time", number(t.eval_time.count())},
      {"verify_time", number(t.verify_time.count())},
      {"machine", t.machine},
      {"created_at", t.created_at},
      {"origin", t.origin},
      {"fault", to_string(t.fault)},
      {"settings", t.settings},
      {"confirmed", t.confirmed},
      {"resources", t.resources},
      {"cpu_wait_share", number(t.cpu_wait_share)},
  };
  if (t.slower_than)
    j["slower_than"] = {{"factor", number(t.slower_than->factor)}, {"best", number(t.slower_than->best.count())}};
  return j;
}

TrialRecord trial_from_json(const ojson& j) {
  TrialRecord t;
  t.id = j.at("id").get<std::int64_t>();
  t.spec_hash = j.at("spec_hash").get<std::string>();
  t.hash_without_toolchain = j.at("hash_without_toolchain").get<std::string>();
  t.toolchain = j.at("toolchain").get<std::string>();
  t.kernel = j.at("kernel").get<std::string>();
  t.device = j.at("device").get<std::string>();
  t.size = bindings_from_json(j.at("size"));
  t.config = config_from_json(j.at("config"));
  t.status = named<Status>(j.at("status"), status_from_string, "status");
  t.error = j.at("error").get<std::string>();
  const ojson& st = j.at("stats");
  t.stats.median = duration<Microseconds>(st.at("median"));
  t.stats.min = duration<Microseconds>(st.at("min"));
  t.stats.max = duration<Microseconds>(st.at("max"));
  t.stats.mean = duration<Microseconds>(st.at("mean"));
  t.stats.noise = number(st.at("noise"));
  t.stats.spread = number(st.at("spread"));
  t.stats.bimodal = st.at("bimodal").get<bool>();
  t.stats.count = st.at("count").get<std::size_t>();
  for (const auto& s : j.at("samples")) t.samples.push_back(duration<Microseconds>(s));
  const ojson& v = j.at("verification");
  t.verification.checked = v.at("checked").get<bool>();
  t.verification.passed = v.at("passed").get<bool>();
  t.verification.max_abs_diff = number(v.at("max_abs_diff"));
  t.verification.max_rel_err = number(v.at("max_rel_err"));
  t.verification.detail = v.at("detail").get<std::string>();
  t.build_time = duration<Seconds>(j.at("build_time"));
  t.eval_time = duration<Seconds>(j.at("eval_time"));
  t.verify_time = duration<Seconds>(j.at("verify_time"));
  t.machine = j.at("machine").get<std::string>();
  t.created_at = j.at("created_at").get<std::string>();
  t.origin = j.at("origin").get<std::string>();
  t.fault = named<Fault>(j.at("fault"), fault_from_string, "fault");
  t.settings = j.at("settings").get<std::string>();
  t.confirmed = j.at("confirmed").get<bool>();
  t.resources = j.at("resources").get<KernelResources>();
  t.cpu_wait_share = number(j.at("cpu_wait_share"));
  if (j.contains("slower_than")) {
    const ojson& s = j.at("slower_than");
    t.slower_than = SlowerThan{number(s.at("factor")), duration<Microseconds>(s.at("best"))};
  }
  return t;
}

ojson size_report_to_json(const SizeReport& s) {
  ojson trials = ojson::array();
  for (const auto& t : s.trials) trials.push_back(trial_to_json(t));
  auto index = [](const std::optional<std::size_t>& i) { return i ? ojson(*i) : ojson(nullptr); };
  return {
      {"size", bindings_to_json(s.size)},
      {"trials", std::move(trials)},
      {"best", index(s.best)},
      {"baseline", index(s.baseline)},
      {"baseline_is_spec_default", s.baseline_is_spec_default},
      {"base", index(s.base)},
      {"error", s.error},
      {"commands", s.commands},
      {"confirmed", s.confirmed},
      {"strategy", s.strategy},
      {"stopped_part_way", stopped_part_way_to_json(s.stopped_part_way)},
  };
}

SizeReport size_report_from_json(const ojson& j) {
  SizeReport s;
  s.size = bindings_from_json(j.at("size"));
  for (const auto& t : j.at("trials")) s.trials.push_back(trial_from_json(t));
  s.best = index_from(j.at("best"));
  s.baseline = index_from(j.at("baseline"));
  s.baseline_is_spec_default = j.at("baseline_is_spec_default").get<bool>();
  s.base = index_from(j.at("base"));
  s.error = j.at("error").get<std::string>();
  s.commands = j.at("commands").get<std::vector<std::vector<std::string>>>();
  s.confirmed = j.at("confirmed").get<std::vector<std::size_t>>();
  s.strategy = j.at("strategy").get<std::string>();
  s.stopped_part_way = stopped_part_way_from_json(j);
  return s;
}

}  // namespace tunekit::detail
