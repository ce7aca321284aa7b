#pragma once
// One trial: a config measured at one problem size on one device, with its
// status, statistics and verification. The light record that the store,
// selection, policies and reports share; none of them needs the evaluator.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "tunekit/config.hpp"
#include "tunekit/resources.hpp"
#include "tunekit/statistics.hpp"
#include "tunekit/status.hpp"
#include "tunekit/units.hpp"
#include "tunekit/value.hpp"

namespace tunekit {

struct Verification {
  bool checked = false;
  bool passed = true;
  double max_abs_diff = 0;
  double max_rel_err = 0;
  std::string detail;  // first mismatch, when failed
};

// What cut a Status::slower trial short: its first samples were all slower
// than factor x best, the best median at its size when it ran.
struct SlowerThan {
  double factor = 0;
  Microseconds best{0};
  bool operator==(const SlowerThan&) const = default;
};

// Origins of a trial other than a seed provider's name.
inline constexpr std::string_view kOriginSearch = "search";
inline constexpr std::string_view kOriginBaseline = "default";
// CCCL's base variant of a %RANGE% source (has_tune_base_branch): built
// with TUNE_BASE=1 and none of the config's defines, so CUB's own policy.
// Its config is {TUNE_BASE: 1} and the spec's `base:` values, no config of
// the space; it is the baseline of the speedups, never a candidate for best.
inline constexpr std::string_view kOriginBase = "base";

struct TrialRecord {
  std::int64_t id = 0;    // row id, assigned by insert()
  std::string spec_hash;  // what was tuned (see Tuner)
  // The same without the toolchain that built it (spec_hash_without_toolchain),
  // and that toolchain as text (the compiler's release, NVRTC's version, the
  // OpenCL driver): a store read where another toolchain is still answers
  // select, emit and report with these trials, and names whose they are.
  // Both '' in stores before schema 10, whose trials are found only by
  // spec_hash.
  std::string hash_without_toolchain;
  std::string toolchain;
  std::string kernel;     // spec name
  std::string device;
  Bindings size;
  Config config;
  Status status = Status::ok;
  std::string error;
  Statistics stats;
  std::vector<Microseconds> samples;
  Verification verification;
  Seconds build_time{0};
  // Where the rest of the trial's cost went (0: not recorded, as in stores
  // before schema 6): the evaluator's whole time for it (arguments, loading,
  // the verification run and check, warm-up, samples, the worker's round
  // trip), and of that the comparison with the reference.
  Seconds eval_time{0};
  Seconds verify_time{0};
  std::string machine;     // JSON description of the machine
  std::string created_at;  // ISO 8601 UTC, set by insert() when empty
  // Why the config was evaluated: kOriginSearch (the strategy proposed it),
  // kOriginBaseline (the default config), kOriginBase (CCCL's base
  // variant, TUNE_BASE=1), or the name of the seed provider
  // that proposed it ("rules", "spec", ...). See Store::put() for how a
  // stored origin is kept.
  std::string origin{kOriginSearch};
  // Whose fault a failure is (Fault::none when ok), and the settings the
  // outcome depends on beyond the spec's hash (settings_key()): a resume
  // reuses a config's failure only under the same settings, and never an
  // environment's.
  Fault fault = Fault::none;
  std::string settings;
  // Status::slower only: the bar it was cut against. Its samples and stats
  // are the few it took (partial).
  std::optional<SlowerThan> slower_than;
  // Measured again side by side with the fastest of its size (measure.confirm),
  // its statistics pooling every sample: a resumed size whose best is not
  // confirmed (the run was stopped first) is confirmed then.
  bool confirmed = false;
  // What its build uses (registers, spills, shared memory), where the
  // backend's compiler says; empty in stores before schema 8.
  KernelResources resources;
  // The share of its worker's time spent waiting for a CPU while it was
  // measured (TrialResult::cpu_wait_share; 0 in stores before schema 9). At
  // kBusyCpuWait or more it was measured on a busy machine, and every report
  // of it says so, a resumed run's too: its times may be inflated.
  double cpu_wait_share = 0;
};

inline bool is_base_trial(const TrialRecord& t) { return t.origin == kOriginBase; }

// Whether `t` may be named the best of its size, `confirmed_here` saying
// whether any ok trial of that size was confirmed (measure.confirm). There,
// only confirmed trials compete: each was measured again side by side with
// its rivals, while an unconfirmed one that looks faster was measured once,
// at another time, and the leaders measured again ran slower than they
// first had. The tuner, select, emit and the reports all name the best so.
// CCCL's base variant never competes: it is no config of the space, and
// nothing could emit or ship it.
inline bool competes_for_best(const TrialRecord& t, bool confirmed_here) {
  return t.status == Status::ok && !is_base_trial(t) && (t.confirmed || !confirmed_here);
}

// A trial of a list of records or of pointers to them, so that the rules
// over one size's trials below take either.
inline const TrialRecord& record_of(const TrialRecord& t) { return t; }
inline const TrialRecord& record_of(const TrialRecord* t) { return *t; }

// `confirmed_here` for one size's trials (records or pointers to them).
template <typename Trials>
bool any_confirmed(const Trials& trials) {
  for (const auto& t : trials)
    if (record_of(t).status == Status::ok && record_of(t).confirmed && !is_base_trial(record_of(t))) return true;
  return false;
}

// Canonical key of a problem size (names sorted).
std::string size_key(const Bindings& size);

}  // namespace tunekit
