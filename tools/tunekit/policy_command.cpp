#include "policy_command.hpp"

#include <algorithm>
#include <iterator>
#include <cctype>
#include <charconv>
#include <cmath>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "builder/detail/compiler.hpp"
#include "core/detail/text.hpp"
#include "flags.hpp"
#include "tunekit/backend.hpp"
#include "tunekit/builder.hpp"
#include "tunekit/html_report.hpp"
#include "tunekit/machine.hpp"
#include "tunekit/measure.hpp"
#include "tunekit/output.hpp"
#include "tunekit/policy.hpp"
#include "tunekit/report.hpp"
#include "tunekit/space.hpp"
#include "tunekit/spec.hpp"
#include "tunekit/store.hpp"
#include "tunekit/tuner.hpp"

namespace tunekit::cli {

namespace fs = std::filesystem;

namespace {

struct PolicyArgs {
  std::string spec;
  std::string db;
  std::string out_dir = "tunekit-out";
  std::string mode{name_of(selection_names(), Selection::per_size)};
  double within_percent = 5;
  bool within_given = false;                                          // --within was on the command line
  std::vector<std::pair<std::string, std::string>> emit_flags_given;  // emit's flags and values, as given
  std::string header, json, name_space = "tunekit_policy";
  std::string python, triton_configs, vllm_dir, vllm_dtype, vllm_batch = "M";  // emit: Python kernels' formats
  std::string vllm_block_shape;                                                // emit: "128,128"
  std::optional<std::uint64_t> seed;
  std::string cache;
  std::string html;               // report: the page to write
  std::string device;             // --device: the device whose trials to read
  std::string toolchain;          // --toolchain: part of the text of the toolchain whose trials to read
  std::string answer = "policy";  // what the command makes of the trials, for the note on another toolchain's
  std::string entry;              // a bare source's, as tune was given them
  std::vector<std::string> args;  // (the spec they make finds its trials)
  KernelFlags kernel;             // the tune's, which make another kernel of the spec
  // select, emit: the sizes to answer for, as tune's -s and -a make them
  // (default: every size the store holds of the spec).
  std::vector<std::string> sizes, axes;
};

// What makes the kernel that was tuned, as tune was given it: a bare
// source's call, and the flags that make another kernel of a spec. The
// trials read are that kernel's.
void add_tuned_kernel(CLI::App* cmd, PolicyArgs& a) {
  cmd->add_option("--entry", a.entry, "A bare source's: the function tune called (tunekit tune --entry)");
  cmd->add_option("--arg", a.args, "A bare source's: its arguments, as tune was given them (tunekit tune --arg)");
  add_kernel_flags(cmd, a.kernel, /*as_tuned=*/true);
}

void add_toolchain_flag(CLI::App* cmd, PolicyArgs& a) {
  cmd->add_option("--toolchain", a.toolchain,
                  "Read the trials measured with the toolchain whose text holds this (the compiler's release, "
                  "NVRTC's version, the OpenCL driver: the store lists them), not this machine's (needed where "
                  "the store holds the spec's trials of several toolchains and none of this machine's, or where this "
                  "machine's hold nothing usable: the message names the toolchains whose trials ran correctly)");
}

// The results of a tune are keyed by the spec as it was tuned, input seed
// and cache mode included: a tune run with --seed or --cache is found again
// only with the same.
void add_spec_and_db(CLI::App* cmd, PolicyArgs& a) {
  cmd->add_option("SPEC", a.spec, "The spec (or the bare source, with its --entry and --arg) that was tuned")
      ->required()
      ->check(CLI::ExistingFile);
  add_tuned_kernel(cmd, a);
  cmd->add_option("--db", a.db, "Results database (default: the spec's, else OUT_DIR/tunekit.db)");
  cmd->add_option("-o,--out-dir", a.out_dir, "The tune's output folder")->capture_default_str();
  cmd->add_option("--device", a.device,
                  "The device whose results to read, by the name the store gives it ('cpu: ...', 'opencl: ...': "
                  "the report's device line), not an index as tune's --device-index (needed where the store holds "
                  "several devices' results)");
  add_toolchain_flag(cmd, a);
  cmd->add_option("--seed", a.seed, "The input seed the tune ran with (tunekit tune --seed; default: the spec's)");
  cmd->add_option("--cache", a.cache, "The cache mode the tune ran with (tunekit tune --cache; default: the spec's)")
      ->check([](const std::string& v) {
        return cache_mode_from_string(v) ? std::string()
                                         : "expected " + either(names_in(cache_mode_names())) + ", not '" + v + "'";
      });
}

// The exit statuses of the commands that answer from the store: 0 to 2,
// then what 3 means for the command.
constexpr const char* kExitStatusOfBadInput =
    "Exit status: 0; 1 for bad input (the message names the flag, or the spec's file:line:column); 2 for\n"
    "other errors; 3 when the store has nothing to answer with ";
const std::string kAnswerExitStatus =
    std::string(kExitStatusOfBadInput) + "(no config ran correctly, none at every\nsize for all-sizes).";
const std::string kRulesReportExitStatus =
    std::string(kExitStatusOfBadInput) +
    "(no trial is a rule\nconfig: the spec was tuned without search.rules, or with --no-rules).";

void add_common(CLI::App* cmd, PolicyArgs& a) {
  add_spec_and_db(cmd, a);
  cmd->footer(kAnswerExitStatus);
  cmd->add_option("--mode", a.mode,
                  "per-size: the best config of each size; all-sizes: one config for every size, the best "
                  "geometric-mean speedup over the default; cover: the fewest configs that give every size one "
                  "within --within percent of its best")
      ->check([](const std::string& v) {
        return value_named(selection_names(), v)
                   ? std::string()
                   : "expected " + either(names_in(selection_names())) + ", not '" + v + "'";
      })
      ->capture_default_str();
  add_size_flag(cmd, a.sizes,
                "Answer for these sizes only, as tune's -s makes them: NAME=VALUE replaces NAME in the spec's "
                "sizes (default: every size the store holds of the spec, those of earlier tunes' flags too)");
  cmd->add_option("-a,--axis", a.axes,
                  "Answer for these sizes only, as tune's -a makes them: NAME=[v1,v2,...], NAME=[start:end:step] or "
                  "NAME[pow2]=[lo:hi], crossed with the spec's sizes")
      ->allow_extra_args(false);
  cmd->add_option("--within", a.within_percent, "cover: tolerance in percent")
      ->each([&a](const std::string&) { a.within_given = true; })
      ->check([](const std::string& v) {
        double x = 0;
        return CLI::detail::lexical_cast(v, x) && std::isfinite(x) && x >= 0
                   ? std::string()
                   : "expected a percentage >= 0, not '" + v + "'";
      })
      ->capture_default_str();
}

// This machine's toolchain on one device of the kernel's backend.
struct OwnToolchain {
  int device = 0;
  std::string device_name;  // as `tunekit devices` lists it; empty where every device's toolchain is one
  std::string text, spec_hash;
};

struct Loaded {
  Spec spec;  // empty when the command read a whole database (report without a SPEC)
  fs::path db;
  // This machine's toolchains of the spec (with a SPEC): one per device
  // whose trials may be read (own_toolchains).
  std::vector<OwnToolchain> own;
  std::vector<TrialRecord> trials;
  // CCCL's base variant's trials (TUNE_BASE=1) of the same sizes: never a
  // config to choose, but what the all-sizes choice and the report compare with.
  std::vector<TrialRecord> base;
  std::string name;
  std::map<std::string, std::uint64_t> valid_at;  // size key -> valid configs there (with a SPEC)
  // Whose trials were read (with a SPEC): this machine's toolchains', one
  // per device, or one other toolchain's.
  std::set<std::string> read_hashes;
  // The spec's trials of every toolchain the store names: "other settings"
  // are those of none of them.
  std::set<std::string> toolchain_hashes;
  // The trials, on --device's if given, that ran correctly with each
  // toolchain but the one read: a message that finds nothing usable names
  // those holding some where it looked, since --toolchain reads them.
  struct OtherToolchain {
    std::string text;
    std::vector<TrialRecord> ok;
  };
  std::vector<OtherToolchain> other_toolchains;
  std::optional<std::set<std::string>> flagged_sizes;  // size keys -s and -a make, where given
};

// Reads a results store: a file that is not one is the input's error, named
// by the flag that chose it, not a failure of the program (exit 2).
template <typename Read>
auto read_store(const fs::path& db, const std::string& chosen_by, const Read& read) {
  try {
    const Store store(db, Store::Access::read_only);
    return read(store);
  } catch (const InputError&) {
    throw;
  } catch (const std::runtime_error& e) {
    throw InputError({chosen_by},
                     fmt::format("cannot read {} as a tunekit results database: {}", db.string(), e.what()));
  }
}

// A toolchain as a message names it.
std::string toolchain_text(const std::string& text) {
  return text.empty() ? std::string("a toolchain it could not name") : "'" + text + "'";
}

// A toolchain's trials of configs in the spec's space as it is now, and of
// those it has since left out.
struct SpaceCount {
  std::size_t in_space = 0, outside = 0;
};

// Toolchains as a message lists them, each with its trials in the space as
// it is now (those outside, which no answer holds, said apart).
std::string toolchains_text(const std::vector<const Store::Toolchain*>& toolchains,
                            const std::map<std::string, SpaceCount>& counts) {
  std::vector<std::string> listed;
  for (const Store::Toolchain* t : toolchains) {
    const auto it = counts.find(t->spec_hash);
    const SpaceCount count = it == counts.end() ? SpaceCount{t->trials, 0} : it->second;
    listed.push_back(fmt::format(
        "{} ({} trial{}{})", toolchain_text(t->text), count.in_space, count.in_space == 1 ? "" : "s",
        count.outside > 0 ? fmt::format(", and {} outside the spec's space as it is now", count.outside) : ""));
  }
  return fmt::format("{}", fmt::join(listed, ", "));
}

// The toolchains other than the one read that hold trials of the spec that
// ran correctly `where` (" at {N: 64}") as `there` picks them, as the tail
// of a message that found nothing usable in the trials read; empty where
// none does. Their trials are never mixed into the answer: the flag reads
// one toolchain's.
std::string other_toolchains_there(const Loaded& l, const std::function<bool(const TrialRecord&)>& there,
                                   const std::string& where) {
  std::vector<std::string> listed;
  for (const auto& other : l.other_toolchains)
    if (const auto n = std::count_if(other.ok.begin(), other.ok.end(), there); n > 0)
      listed.push_back(fmt::format("{} ({} trial{})", toolchain_text(other.text), n, n == 1 ? "" : "s"));
  if (listed.empty()) return {};
  return fmt::format(
      "; the database holds trials of this spec{} that ran correctly with {}: {}; --toolchain TEXT "
      "(part of {} text) reads them",
      where, listed.size() == 1 ? "another toolchain" : "other toolchains", fmt::join(listed, ", "),
      listed.size() == 1 ? "its" : "one's");
}

// Whether a trial is at one of the sizes -s and -a make (at any, without them).
bool at_flagged_size(const Loaded& l, const TrialRecord& t) {
  return !l.flagged_sizes || l.flagged_sizes->count(size_key(t.size));
}

// The other toolchains' trials that ran correctly at the sizes the command
// answers for, as other_toolchains_there() says them.
std::string other_toolchains_at_flagged_sizes(const Loaded& l) {
  return other_toolchains_there(
      l, [&](const TrialRecord& t) { return at_flagged_size(l, t); },
      l.flagged_sizes ? " at the sizes the flags make" : "");
}

// Why a database holds no trials of `spec` (no --seed or --cache given): it
// holds none of the kernel's, or holds them under another cache mode (which
// is named) or another input seed (which no trial records).
std::string no_trials_of(const Spec& spec, const std::vector<OwnToolchain>& own, const std::string& name,
                         const fs::path& db, const std::string& chosen_by) {
  std::set<std::string> hashes;
  std::size_t count = 0;
  for (const auto& t : read_store(db, chosen_by, [](const Store& s) { return s.all(); }))
    if (t.kernel == name) {
      hashes.insert(t.spec_hash);
      ++count;
    }
  const std::string none = fmt::format("the database {} has no trials of this spec (as it is now)", db.string());
  if (hashes.empty()) return none + "; tune it first";
  for (const auto& mode : cache_mode_names()) {
    Spec other = spec;
    other.measure.cache = mode.value;
    if (std::any_of(own.begin(), own.end(),
                    [&](const OwnToolchain& t) { return hashes.count(spec_hash(other, t.device)); }))
      return fmt::format("{}: its trials of '{}' were timed with --cache {}; give that here too", none, name,
                         mode.name);
  }
  // Another toolchain's trials are read (read_toolchain) where they name
  // it; those stored before schema 10 do not, and are found only where
  // the same compiler release, OpenCL driver or nvcc host compiler is.
  std::vector<std::string> toolchains;
  for (const auto& t : own) toolchains.push_back(t.text);
  const std::string toolchain = fmt::format("{}", fmt::join(toolchains, " or "));
  return fmt::format(
      "{}, but {} trial{} of '{}': tuned with another input seed, or with flags that make another kernel "
      "of it (give the tune's --seed, --flags, --compiler, --reference, --atol or --rtol here too, and its $CXX "
      "or $CC), or with another toolchain than this machine's{} by a tunekit whose store did not name it (read "
      "the database where it was tuned), or before the kernel's source or its arguments changed (tune it again)",
      none, count, count == 1 ? "" : "s", name, toolchain.empty() ? "" : " (" + toolchain + ")");
}

// Why nothing could be chosen, and, when the database holds trials of the
// kernel that ran correctly under other settings (another tolerance, say),
// that those are there: a tune run again with --rtol leaves the first
// run's failures beside its successes, and this spec reads the failures.
// Another toolchain's are not other settings: those flags would not read
// them, --toolchain does.
std::string nothing_chosen(const Loaded& l, const std::string& why) {
  std::size_t elsewhere = 0;
  for (const auto& t : read_store(l.db, "--db", [](const Store& s) { return s.all(); }))
    elsewhere += t.kernel == l.name && !l.toolchain_hashes.count(t.spec_hash) && !l.read_hashes.count(t.spec_hash) &&
                 t.status == Status::ok;
  const std::string toolchains = other_toolchains_at_flagged_sizes(l);
  if (elsewhere == 0) return why + toolchains;
  return fmt::format(
      "{}{}; the database holds {} trial{} of '{}' that ran correctly under other settings (give the tune's --seed, "
      "--flags, --compiler, --reference, --atol or --rtol here too)",
      why, toolchains, elsewhere, elsewhere == 1 ? "" : "s", l.name);
}

// The trials whose config the spec, as it is now, allows at their size:
// its parameters' values, its constraints and its configs list. spec_hash()
// leaves those out, so that a narrower or wider space resumes what it
// shares; a config the space no longer holds is not chosen, as a tune would
// not name it. A constraint that reads a name a trial's machine did not
// record (an older store) is not held against it.
std::vector<TrialRecord> allowed_now(const Spec& spec, std::vector<TrialRecord> trials,
                                     std::map<std::string, std::uint64_t>& valid_at) {
  std::set<std::string> parameters;
  for (const auto& p : spec.parameters) parameters.insert(p.name);
  std::map<std::string, std::unique_ptr<Space>> spaces;  // by machine and size
  std::erase_if(trials, [&](const TrialRecord& t) {
    if (!spec.configs.empty() && std::find(spec.configs.begin(), spec.configs.end(), t.config) == spec.configs.end())
      return true;
    std::unique_ptr<Space>& space = spaces[t.machine + '\n' + size_key(t.size)];
    if (!space) {
      Bindings constants;
      try {
        constants = machine_from_json(t.machine).properties;
      } catch (const std::invalid_argument&) {
      }
      for (const auto& [k, v] : t.size) constants[k] = v;
      std::vector<Expression> readable;
      for (const auto& c : spec.constraints)
        if (std::all_of(c.variables().begin(), c.variables().end(),
                        [&](const std::string& n) { return parameters.count(n) || constants.count(n); }))
          readable.push_back(c);
      space = std::make_unique<Space>(spec.parameters, std::move(readable), constants);
      valid_at.try_emplace(size_key(t.size), spec.configs.empty() ? space->count() : spec.configs.size());
    }
    return !space->contains(t.config);
  });
  return trials;
}

// A policy's constraints are checked against one machine's properties
// (machine_properties), so its trials must share those the constraints read: a tune under
// --properties simulates another machine on the same device name, and a
// policy mixing the two would hold configs that its own checks refuse at
// their tuned sizes.
void check_one_machine(const Loaded& l, const PolicyArgs& a) {
  std::set<std::string> read;  // the properties that matter: those the constraints read
  for (const auto& c : l.spec.constraints) read.insert(c.variables().begin(), c.variables().end());
  std::set<std::string> descriptions;  // each parsed once: trials share a handful
  for (const auto& t : l.trials) descriptions.insert(t.machine);
  std::set<Bindings> machines;
  for (const std::string& description : descriptions) try {
      Bindings seen;
      for (const auto& [name, value] : machine_from_json(description).properties)
        if (read.count(name)) seen.emplace(name, value);
      machines.insert(std::move(seen));
    } catch (const std::invalid_argument&) {  // no description recorded (older stores)
    }
  if (machines.size() < 2) return;
  const Bindings& first = *machines.begin();
  const Bindings& second = *std::next(machines.begin());
  std::vector<std::string> differ;
  for (const auto& [name, value] : first)
    if (auto it = second.find(name); it == second.end() || !(it->second == value))
      differ.push_back(
          fmt::format("{} {} or {}", name, value.repr(), it == second.end() ? std::string("none") : it->second.repr()));
  for (const auto& [name, value] : second)
    if (!first.count(name)) differ.push_back(fmt::format("{} none or {}", name, value.repr()));
  throw InputError(
      {a.spec}, fmt::format("{} holds this spec's trials on '{}' under {} sets of machine properties "
                            "({}{}): a tune with --properties simulates another machine under the same "
                            "device name, and a policy's constraints hold for one machine. Keep each "
                            "machine's tunes in its own store (--out-dir or --db)",
                            l.db.string(), l.trials.front().device, machines.size(),
                            fmt::join(differ.begin(), differ.begin() + std::min<std::size_t>(differ.size(), 4), ", "),
                            differ.size() > 4 ? ", ..." : ""));
}

// The trials of one device: --device's, or the only one the store holds for
// the spec. A policy is one device's (its times, and the machine properties
// its constraints read); `report`, which lays devices side by side, may take
// them all (`one_device` false).
void pick_device(Loaded& l, const PolicyArgs& a, bool one_device) {
  std::map<std::string, std::size_t> devices;
  for (const auto& t : l.trials) ++devices[t.device];
  if (!a.device.empty()) {
    if (!devices.count(a.device)) {
      std::vector<std::string> names;
      for (const auto& [name, count] : devices) names.push_back(fmt::format("'{}' ({} trials)", name, count));
      std::vector<std::string> plain;
      for (const auto& [name, count] : devices) plain.push_back(name);
      // An index is tune's --device-index: the store keeps the device's name.
      const bool index = std::all_of(a.device.begin(), a.device.end(), [](unsigned char c) { return std::isdigit(c); });
      throw InputError({"--device"},
                       fmt::format("{} holds no trials of this spec on '{}'{}; it has {}{}", l.db.string(), a.device,
                                   did_you_mean(a.device, plain), fmt::join(names, ", "),
                                   index ? " (--device takes a device's name as the store gives it, not the index "
                                           "that tune's --device-index takes)"
                                         : ""));
    }
    std::erase_if(l.trials, [&](const TrialRecord& t) { return t.device != a.device; });
  } else if (one_device && devices.size() > 1) {
    std::vector<std::string> names;
    for (const auto& [name, count] : devices) names.push_back(fmt::format("'{}' ({} trials)", name, count));
    throw InputError({a.spec}, fmt::format("{} holds this spec's results on {} devices: {}; a policy is one device's, "
                                           "so pick one with --device",
                                           l.db.string(), devices.size(), fmt::join(names, ", ")));
  }
}

// -s and -a narrow the trials to the sizes they make of the spec's, as
// tune's make the sizes it tunes: a store keeps every size a spec was tuned
// at (earlier flags' too), and one policy per value of an axis (vLLM's
// files per top-k, say) is made by naming that value.
void keep_flagged_sizes(Loaded& l, const PolicyArgs& a) {
  if (a.sizes.empty() && a.axes.empty()) return;
  const auto [overrides, axes] = size_axes_from_flags(a.sizes, a.axes);
  const std::set<std::string> known = size_names_used(l.spec);
  for (const auto* flagged : {&overrides, &axes})
    for (const auto& p : *flagged) check_size_flag(l.spec, known, {}, p.where.file, p.name, p.values);
  std::vector<Bindings> base = l.spec.sizes;
  if (base.empty()) base.emplace_back();
  std::set<std::string> wanted;
  for (const auto& b : apply_axes(apply_axes(base, overrides), axes)) wanted.insert(size_key(b));
  l.flagged_sizes = wanted;
  const std::size_t stored = l.trials.size();
  std::set<std::string> held;
  for (const auto& t : l.trials) held.insert(detail::shown_bindings(t.size));
  std::erase_if(l.trials, [&](const TrialRecord& t) { return !wanted.count(size_key(t.size)); });
  if (l.trials.empty() && stored > 0) {
    std::vector<std::string> shown(held.begin(), std::next(held.begin(), std::min<std::size_t>(held.size(), 8)));
    throw InputError(
        {!a.sizes.empty() ? "--size " + a.sizes.front() : "--axis " + a.axes.front()},
        fmt::format(
            "the store holds no trials of this spec{} at the sizes the flags make; it holds {}{}{}",
            l.toolchain_hashes.size() > 1 ? " measured with the toolchain read" : "", fmt::join(shown, ", "),
            held.size() > shown.size() ? fmt::format(" and {} more", held.size() - shown.size()) : std::string(),
            other_toolchains_at_flagged_sizes(l)));
  }
}

// Why --toolchain has nothing to pick from: the store names no toolchain
// of the spec's trials. Silently reading this machine's would answer a
// question that was not asked.
std::string no_toolchain_named(const Loaded& l, const std::string& chosen_by) {
  std::size_t of_kernel = 0, naming = 0;
  for (const auto& t : read_store(l.db, chosen_by, [](const Store& s) { return s.all(); }))
    if (t.kernel == l.name) {
      ++of_kernel;
      naming += !t.toolchain.empty();
    }
  const std::string picks = "picks one of the toolchains a store names for this spec's trials";
  if (of_kernel > 0 && naming == 0)
    return fmt::format(
        "{}, and the {} trial{} of '{}' in {} name none: they were stored by a tunekit before schema 10, which "
        "did not record the toolchain, and are read only where the toolchain that measured them is (leave out "
        "--toolchain)",
        picks, of_kernel, of_kernel == 1 ? "" : "s", l.name, l.db.string());
  return fmt::format("{}, and there is none: {}", picks, no_trials_of(l.spec, l.own, l.name, l.db, chosen_by));
}

// This machine's toolchains of `spec`, one per device whose trials a
// command may read. Where the backend's toolchain is its device's (OpenCL:
// each device's driver compiles), a tune on device 1 stored its trials
// under device 1's: every device this machine lists has its own, and
// --device, where this machine lists that name, reads that device's alone.
// Elsewhere device 0's stands for every device, as the toolchain is the
// machine's: the CPU's host compiler, CUDA's NVRTC version or nvcc release.
// What a CUDA build takes from its GPU, the architecture (sm_80, sm_90), is
// in each trial's device name and its build's hash, not in spec_hash, so two
// GPUs' trials are apart by device under the one toolchain.
std::vector<OwnToolchain> own_toolchains(const Spec& spec, const std::string& device_named) {
  std::vector<std::pair<int, std::string>> devices{{0, ""}};
  const BackendInfo& backend = backend_for_language(spec.kernel.language);
  if (backend.kernel.toolchain_per_device) {
    const DeviceListing listing = backend.list_devices();
    std::vector<std::pair<int, std::string>> listed, named;
    for (std::size_t i = 0; i < listing.devices.size(); ++i) {
      listed.emplace_back(static_cast<int>(i), listing.devices[i].device);
      if (listing.devices[i].device == device_named) named.push_back(listed.back());
    }
    if (!named.empty()) devices = named;
    else if (!listed.empty()) devices = listed;
  }
  std::vector<OwnToolchain> own;
  for (const auto& [device, name] : devices) {
    OwnToolchain t{device, name, detail::kernel_compiler_identity(spec, device), spec_hash(spec, device)};
    // Two devices of one model and driver share their toolchain.
    if (std::none_of(own.begin(), own.end(), [&](const OwnToolchain& o) { return o.spec_hash == t.spec_hash; }))
      own.push_back(std::move(t));
  }
  return own;
}

bool is_own(const Loaded& l, const std::string& hash) {
  return std::any_of(l.own.begin(), l.own.end(), [&](const OwnToolchain& t) { return t.spec_hash == hash; });
}

// This machine's toolchains, as a message names them.
std::string own_text(const Loaded& l) {
  std::vector<std::string> texts;
  for (const auto& t : l.own) texts.push_back(toolchain_text(t.text));
  return fmt::format("{}", fmt::join(texts, " or "));
}

// The toolchain is part of spec_hash, so that a tune never resumes a trial
// another compiler built; but a store copied from the machine that tuned
// (read on a laptop or in CI, where another compiler release is, or no
// NVRTC or OpenCL device) holds the kernel's trials under that machine's
// toolchain. Where this machine's has any, they are read, as a tune reads
// them; where it has none, the one other toolchain's are, and a note says
// whose they are; of several, --toolchain picks one, as it may where this
// machine's has trials too. One toolchain's trials answer (this machine's
// on each of its devices, where the toolchain is the device's): the
// others' that ran correctly are kept only for the messages that find
// nothing usable in them. --device reads one device's trials: a toolchain
// with none there is not one to choose.
void read_toolchain(Loaded& l, const PolicyArgs& a, const std::string& chosen_by) {
  const std::string without = spec_hash_without_toolchain(l.spec);
  std::vector<Store::Toolchain> stored;
  std::map<std::string, std::vector<TrialRecord>> trials_of;  // spec_hash -> its trials
  // One open of the store for all of them: each open checks the whole file.
  read_store(l.db, chosen_by, [&](const Store& s) {
    stored = s.toolchains(without);
    for (const auto& t : stored) trials_of[t.spec_hash] = s.trials(t.spec_hash);
    return 0;
  });
  // This machine's trials stored before schema 10 name no toolchain.
  for (const OwnToolchain& own : l.own) {
    if (trials_of.count(own.spec_hash)) continue;
    std::vector<TrialRecord> trials;
    std::copy_if(l.trials.begin(), l.trials.end(), std::back_inserter(trials),
                 [&](const TrialRecord& t) { return t.spec_hash == own.spec_hash; });
    if (trials.empty()) continue;
    stored.push_back({own.text, own.spec_hash, trials.size()});
    trials_of[own.spec_hash] = std::move(trials);
  }
  std::map<std::string, std::set<std::string>> devices_of;  // spec_hash -> the devices with its trials
  // Counted as this machine's are (load): a config the space now leaves
  // out is none an answer could hold. CCCL's base variant is no config.
  std::map<std::string, SpaceCount> counts;
  std::map<std::string, std::uint64_t> valid_at;  // unused here: load counts the trials read
  for (auto& [hash, trials] : trials_of) {
    std::vector<TrialRecord> configs;
    for (const auto& t : trials) {
      devices_of[hash].insert(t.device);
      if (!is_base_trial(t)) configs.push_back(t);
    }
    const std::size_t in_space = allowed_now(l.spec, configs, valid_at).size();
    counts[hash] = {in_space, configs.size() - in_space};
  }
  if (stored.empty()) {
    if (!a.toolchain.empty()) throw InputError({"--toolchain"}, no_toolchain_named(l, chosen_by));
    return;  // none of the kernel's: the caller says why
  }
  std::vector<const Store::Toolchain*> all, candidates, matching;
  for (const auto& t : stored) {
    all.push_back(&t);
    l.toolchain_hashes.insert(t.spec_hash);
    if (a.device.empty() || devices_of[t.spec_hash].count(a.device)) candidates.push_back(&t);
  }
  // None on --device's: pick_device refuses it, saying which devices hold
  // trials.
  const bool none_there = candidates.empty();
  const bool on_device = !none_there && candidates.size() < all.size();
  if (none_there) candidates = all;
  if (a.toolchain.empty()) {
    for (const Store::Toolchain* t : candidates)
      if (is_own(l, t->spec_hash)) matching.push_back(t);
    if (matching.empty() && candidates.size() > 1)
      throw InputError({a.spec}, fmt::format("{} holds this spec's trials{} measured with {} toolchains, none of "
                                             "them this machine's ({}): {}; pick one with --toolchain TEXT (part of "
                                             "its text)",
                                             l.db.string(), on_device ? " on '" + a.device + "'" : "",
                                             candidates.size(), own_text(l), toolchains_text(candidates, counts)));
    if (matching.empty()) matching = candidates;
  } else {
    // The whole text first: one toolchain's may be part of another's.
    for (const Store::Toolchain* t : all)
      if (t->text == a.toolchain) matching.push_back(t);
    if (matching.empty())
      for (const Store::Toolchain* t : all)
        if (t->text.find(a.toolchain) != std::string::npos) matching.push_back(t);
    if (matching.empty())
      throw InputError({"--toolchain"},
                       fmt::format("'{}' is part of none of the toolchains {} holds this spec's trials of: {}",
                                   a.toolchain, l.db.string(), toolchains_text(all, counts)));
    if (matching.size() > 1)
      throw InputError({"--toolchain"},
                       fmt::format("'{}' is part of {} of the toolchains {} holds this spec's "
                                   "trials of: {}; give more of one's text",
                                   a.toolchain, matching.size(), l.db.string(), toolchains_text(matching, counts)));
  }
  l.read_hashes.clear();
  for (const Store::Toolchain* t : matching) l.read_hashes.insert(t->spec_hash);
  if (const Store::Toolchain& chosen = *matching.front(); !is_own(l, chosen.spec_hash)) {
    l.trials = trials_of[chosen.spec_hash];
    // The toolchain this machine has for the device the trials ran on, where
    // it lists that device.
    const auto& ran_on = devices_of[chosen.spec_hash];
    const auto here = std::find_if(l.own.begin(), l.own.end(),
                                   [&](const OwnToolchain& t) { return ran_on.count(t.device_name) > 0; });
    // Where each device has its toolchain, trials of a device this machine
    // does not list differ from its own by the device, not by a compiler.
    const bool per_device =
        std::any_of(l.own.begin(), l.own.end(), [](const OwnToolchain& t) { return !t.device_name.empty(); });
    if (none_there) {
      // pick_device says which devices hold trials.
    } else if (here == l.own.end() && per_device) {
      std::vector<std::string> names;
      for (const auto& d : ran_on) names.push_back("'" + d + "'");
      fmt::print(stderr,
                 "note: the trials of this spec in {} were measured on {}, which this machine does not list "
                 "(tunekit devices): the {} is {}\n",
                 l.db.string(), fmt::join(names, ", "), a.answer,
                 names.size() == 1 ? "that device's" : "those devices'");
    } else {
      fmt::print(stderr,
                 "note: the trials of this spec in {} were measured with {}; this machine builds with {}: the {} is "
                 "theirs\n",
                 l.db.string(), toolchain_text(chosen.text),
                 here != l.own.end() ? toolchain_text(here->text) : own_text(l), a.answer);
    }
  } else {
    std::erase_if(l.trials, [&](const TrialRecord& t) { return !l.read_hashes.count(t.spec_hash); });
  }
  for (const Store::Toolchain* t : all) {
    if (l.read_hashes.count(t->spec_hash)) continue;
    std::vector<TrialRecord> ok;
    for (auto& trial : trials_of[t->spec_hash])
      if (trial.status == Status::ok && !is_base_trial(trial) && (a.device.empty() || trial.device == a.device))
        ok.push_back(std::move(trial));
    Loaded::OtherToolchain other{t->text, allowed_now(l.spec, std::move(ok), valid_at)};
    if (!other.ok.empty()) l.other_toolchains.push_back(std::move(other));
  }
}

Loaded load(const PolicyArgs& a, bool one_device = true) {
  Loaded l;
  l.spec = spec_of_target(a.spec, a.entry, a.args);
  apply_kernel_flags(l.spec, a.kernel);
  l.name = l.spec.name.empty() ? l.spec.kernel.entry : l.spec.name;
  const Spec declared = l.spec;
  if (a.seed) l.spec.search.seed = *a.seed;
  if (!a.cache.empty()) l.spec.measure.cache = *cache_mode_from_string(a.cache);
  const fs::path db = !a.db.empty()               ? fs::path(a.db)
                      : !l.spec.output.db.empty() ? l.spec.output.db
                                                  : fs::path(a.out_dir) / "tunekit.db";
  if (!fs::exists(db)) throw InputError({db.string()}, "no results database here; run `tunekit tune` first");
  l.db = db;
  const std::string chosen_by = !a.db.empty() ? "--db" : !l.spec.output.db.empty() ? a.spec : "--out-dir";
  l.own = own_toolchains(l.spec, a.device);
  read_store(db, chosen_by, [&](const Store& s) {
    for (const auto& own : l.own) {
      auto trials = s.trials(own.spec_hash);
      l.trials.insert(l.trials.end(), std::make_move_iterator(trials.begin()), std::make_move_iterator(trials.end()));
    }
    return 0;
  });
  read_toolchain(l, a, chosen_by);
  // A row shared with a spec that differs only in its name carries the label
  // of whichever stored it last; read through this spec, it is this spec's.
  for (auto& t : l.trials) t.kernel = l.name;
  if (l.trials.empty()) {
    // Name the filters that found nothing, and whether the spec's own
    // settings would have.
    std::vector<std::string> given;
    if (a.seed) given.push_back(fmt::format("--seed {}", *a.seed));
    if (!a.cache.empty()) given.push_back("--cache " + a.cache);
    if (given.empty()) throw InputError({a.spec}, no_trials_of(l.spec, l.own, l.name, db, chosen_by));
    const std::string flags = fmt::format("{}", fmt::join(given, " and "));
    throw InputError({given.front().substr(0, given.front().find(' '))},
                     fmt::format("the database {} has no trials of this spec with {}; {}", db.string(), flags,
                                 read_store(db, chosen_by,
                                            [&](const Store& s) {
                                              return std::none_of(
                                                  l.own.begin(), l.own.end(), [&](const OwnToolchain& t) {
                                                    return !s.trials(spec_hash(declared, t.device)).empty();
                                                  });
                                            })
                                     ? "give the input seed and cache mode the tune ran with, or tune it first"
                                     : "it has the spec's own (leave out " + flags + ")"));
  }
  pick_device(l, a, one_device);
  if (one_device) check_one_machine(l, a);
  keep_flagged_sizes(l, a);
  // CCCL's base variant is no config of the space, nor one to choose: not
  // one the space leaves out either. Its `base:` values are part of it (its
  // trial's config): a base stored under other values is another variant,
  // which the tune no longer measures, and never the reference here.
  const auto base_end = std::stable_partition(l.trials.begin(), l.trials.end(), is_base_trial);
  const Config base = base_variant_config(l.spec);
  std::set<std::string> base_at;
  std::vector<const TrialRecord*> other_bases;  // stored under other values
  for (auto it = l.trials.begin(); it != base_end; ++it) {
    if (it->config != base) {
      other_bases.push_back(&*it);
      continue;
    }
    base_at.insert(size_key(it->size));
    l.base.push_back(*it);
  }
  std::vector<std::string> without_base, stored_as;
  for (const TrialRecord* t : other_bases)
    if (!base_at.count(size_key(t->size))) {
      if (const std::string text = detail::shown_bindings(t->size);
          std::find(without_base.begin(), without_base.end(), text) == without_base.end())
        without_base.push_back(text);
      if (const std::string as = t->config.str(); std::find(stored_as.begin(), stored_as.end(), as) == stored_as.end())
        stored_as.push_back(as);
    }
  l.trials.erase(l.trials.begin(), base_end);
  if (!without_base.empty()) {
    constexpr std::size_t kListed = 8;  // one line, bounded
    const std::size_t count = without_base.size();
    if (count > kListed) {
      without_base.resize(kListed);
      without_base.push_back(fmt::format("and {} more", count - kListed));
    }
    fmt::print(stderr,
               "note: CCCL's base variant at {} is stored only as {}, measured under other 'base:' values than the "
               "spec gives now ({}): nothing is compared with it; tune again to measure the base with these\n",
               fmt::join(without_base, ", "), fmt::join(stored_as, " and "), base.str());
  }
  const std::size_t stored = l.trials.size();
  l.trials = allowed_now(l.spec, std::move(l.trials), l.valid_at);
  if (l.trials.empty())
    throw InputError({a.spec}, fmt::format("none of the {} stored trials of this spec in {} is in its space as it is "
                                           "now (its parameters, constraints or configs list changed since they "
                                           "ran); tune it again",
                                           stored, db.string()));
  if (l.trials.size() < stored)
    fmt::print(stderr,
               "note: {} of the {} stored trials of this spec are left out: their configs are outside its space as "
               "it is now (its parameters, constraints or configs list changed since they ran)\n",
               stored - l.trials.size(), stored);
  return l;
}

Selection selection_of(const std::string& mode) {
  return value_named(selection_names(), mode).value_or(Selection::per_size);
}

Goal goal_of(const Spec& spec) { return Goal{spec.objective, spec.metrics}; }

// The sizes tuned in part, by size key: the best of part of their valid
// configs (a budget, or a tune stopped before the size's end).
std::map<std::string, PartialTune> sizes_tuned_in_part(const Loaded& l) {
  std::map<std::string, std::set<std::string>> measured;  // size key -> configs with a trial
  for (const auto& t : l.trials)
    if (t.status != Status::invalid) measured[size_key(t.size)].insert(t.config.key());
  std::map<std::string, PartialTune> part;
  for (const auto& [key, configs] : measured) {
    const auto valid = l.valid_at.find(key);
    if (valid != l.valid_at.end() && configs.size() < valid->second)
      part.emplace(key, PartialTune{configs.size(), valid->second});
  }
  return part;
}

// Marks the entries whose size was tuned in part: every emitted file says
// so at the entry, so that a policy is not taken for the result of whole
// tunes.
void mark_sizes_tuned_in_part(const Loaded& l, Policy& p) {
  const auto part = sizes_tuned_in_part(l);
  for (auto& e : p.entries)
    if (const auto it = part.find(size_key(e.size)); it != part.end()) e.tuned_in_part = it->second;
}

// `part`, sizes tuned in part with how much was measured there, said;
// `chosen` is what was chosen from their measured configs only, for one
// size and for several.
void note_sizes_tuned_in_part(const std::vector<std::pair<Bindings, PartialTune>>& part,
                              std::pair<std::string_view, std::string_view> chosen) {
  std::vector<std::string> parts;
  for (const auto& [size, tune] : part)
    parts.push_back(fmt::format("{}: {} of {}", detail::shown_bindings(size), tune.measured, tune.valid));
  if (parts.empty()) return;
  // One line, bounded: a tune of thousands of sizes would list them all.
  constexpr std::size_t kListed = 10;
  const std::size_t count = parts.size();
  if (count > kListed) {
    parts.resize(kListed);
    parts.push_back(fmt::format("and {} more", count - kListed));
  }
  fmt::print(
      "note: at {} size{}, part of the valid configs was measured ({}); {} chosen from those only: a budget, a "
      "--where, or a tune stopped before its end (which the same command resumes)\n",
      count, count == 1 ? "" : "s", fmt::join(parts, ", "), count == 1 ? chosen.first : chosen.second);
}

// The entries mark_sizes_tuned_in_part() marked.
void note_sizes_tuned_in_part(const Policy& p) {
  std::vector<std::pair<Bindings, PartialTune>> part;
  for (const auto& e : p.entries)
    if (e.tuned_in_part) part.emplace_back(e.size, *e.tuned_in_part);
  note_sizes_tuned_in_part(part, {"its entry was", "their entries were"});
}

// The same for the one config for all sizes, at the sizes it was scored at.
void note_sizes_tuned_in_part(const Loaded& l, const UniversalChoice& c) {
  const auto tuned_in_part = sizes_tuned_in_part(l);
  std::vector<std::pair<Bindings, PartialTune>> part;
  for (const auto& s : c.per_size)
    if (const auto it = tuned_in_part.find(size_key(s.size)); it != tuned_in_part.end())
      part.emplace_back(s.size, it->second);
  note_sizes_tuned_in_part(part, {"the config for all sizes was", "the config for all sizes was"});
}

// The sizes `trials` were run at that `answered` (size keys) leaves out:
// those where no config ran correctly.
std::map<std::string, Bindings> sizes_left_out(const std::vector<TrialRecord>& trials,
                                               const std::set<std::string>& answered) {
  std::map<std::string, Bindings> left_out;
  for (const auto& t : trials)
    if (!answered.count(size_key(t.size))) left_out.emplace(size_key(t.size), t.size);
  return left_out;
}

// The sizes `answered` leaves out (`left_out`, saying what that means):
// those where no trial read ran correctly, then those only other
// toolchains ran correctly at, which are named, since --toolchain reads
// them and the answer never mixes them in.
void note_sizes_left_out(const Loaded& l, const std::set<std::string>& answered, const std::string& left_out) {
  for (const auto& [key, size] : sizes_left_out(l.trials, answered))
    fmt::print("note: no config ran correctly at {}: {}{}\n", detail::shown_bindings(size), left_out,
               other_toolchains_there(
                   l, [&key](const TrialRecord& t) { return size_key(t.size) == key; }, " there"));
  std::set<std::string> read;
  for (const auto& t : l.trials) read.insert(size_key(t.size));
  std::map<std::string, Bindings> elsewhere;
  for (const auto& other : l.other_toolchains)
    for (const auto& t : other.ok)
      if (at_flagged_size(l, t) && !read.count(size_key(t.size))) elsewhere.emplace(size_key(t.size), t.size);
  if (elsewhere.empty()) return;
  std::vector<std::string> shown;
  for (const auto& [key, size] : elsewhere)
    if (shown.size() < 8) shown.push_back(detail::shown_bindings(size));  // one line, bounded
  fmt::print(
      "note: the toolchain read has no trials at {}{}: {}{}\n", fmt::join(shown, ", "),
      elsewhere.size() > shown.size() ? fmt::format(" and {} more", elsewhere.size() - shown.size()) : std::string(),
      left_out,
      other_toolchains_there(
          l, [&](const TrialRecord& t) { return elsewhere.count(size_key(t.size)) > 0; }, " there"));
}

// Sizes the store has trials of, none of which ran correctly: the policy
// has no entry for them, and answers them as it answers an untuned size.
// Said, so that a size tuned in vain is not taken for one tuned.
void note_sizes_left_out(const Loaded& l, const Policy& p) {
  std::set<std::string> in;
  for (const auto& e : p.entries) in.insert(size_key(e.size));
  note_sizes_left_out(l, in, "it has no entry, and gets the rule of an untuned size");
}

// --within sets cover's tolerance; with another mode it would do nothing.
void check_within(const PolicyArgs& a) {
  if (a.within_given && selection_of(a.mode) != Selection::cover)
    throw InputError({"--within"}, "sets the tolerance of --mode cover, but the mode is " + a.mode);
}

// The same for one config for all sizes: the sizes its choice left out.
void note_sizes_left_out(const Loaded& l, const UniversalChoice& choice) {
  std::set<std::string> in;
  for (const auto& s : choice.per_size) in.insert(size_key(s.size));
  note_sizes_left_out(l, in, "the choice leaves it out");
}

// The one config for all sizes, scored against CCCL's base where it ran at
// every size (as the tune's summary scores it), then against the default:
// select and emit print it alike. The config chosen is the same against
// either (a geomean of ratios over the same sizes), only the speedups
// differ. Returns the choice against the default, nullopt where the spec has
// none or it did not run correctly at every size.
std::optional<UniversalChoice> print_all_sizes_choice(const Loaded& l, const Goal& goal) {
  const std::string by = goal.objective.is_time() ? "" : " by " + goal.objective.describe();
  const auto print_choice = [&](const UniversalChoice& c, std::string_view over, std::string_view baseline) {
    fmt::print("one config for all sizes: {}\ngeomean speedup over {}{}: {:.3f}x\n", c.config.str(), over, by,
               c.geomean_speedup);
    for (const auto& s : c.per_size)
      fmt::print("  {}: {} us, {} {} us, {:.3f}x\n", detail::shown_bindings(s.size), format_us(s.time), baseline,
                 format_us(s.baseline), s.speedup);
  };
  if (!l.base.empty()) {
    std::vector<TrialRecord> with_base = l.trials;
    with_base.insert(with_base.end(), l.base.begin(), l.base.end());
    if (auto over_base = best_for_all_sizes_over_base(with_base, goal))
      print_choice(*over_base, "CUB's base policy", "CUB's base");
  }
  std::optional<UniversalChoice> choice;
  if (l.spec.default_config) choice = best_for_all_sizes(l.trials, *l.spec.default_config, goal);
  if (choice) print_choice(*choice, "default", "default");
  return choice;
}

int run_select(const PolicyArgs& a) {
  check_within(a);
  Loaded l = load(a);
  const Goal goal = goal_of(l.spec);
  const std::string by = goal.objective.is_time() ? "" : " by " + goal.objective.describe();
  if (selection_of(a.mode) == Selection::all_sizes) {
    if (const auto choice = print_all_sizes_choice(l, goal)) {
      fmt::print("{}", format_unsettled(*choice));
      note_sizes_tuned_in_part(l, *choice);
      note_sizes_left_out(l, *choice);
      return 0;
    }
    // Say why there is no answer against the default, then offer the best
    // that exists: the config closest to each size's best among those that
    // ran correctly at every size.
    fmt::print("no config for all sizes against the default: {}\n",
               l.spec.default_config ? why_no_universal(l.trials, l.spec.default_config)
                                     : std::string("the spec has no 'default' to compare with"));
    auto fallback = best_valid_everywhere(l.trials, goal);
    if (!fallback) {
      fmt::print("nothing to offer instead: {}{}\n", why_no_universal(l.trials, std::nullopt),
                 other_toolchains_at_flagged_sizes(l));
      return 3;
    }
    fmt::print("best config valid at every size: {}\ngeomean of its speed relative to each size's best{}: {:.3f}x\n",
               fallback->config.str(), by, fallback->geomean_speedup);
    for (const auto& s : fallback->per_size)
      fmt::print("  {}: {} us, best {} us, {:.3f}x\n", detail::shown_bindings(s.size), format_us(s.time),
                 format_us(s.baseline), s.speedup);
    note_sizes_tuned_in_part(l, *fallback);
    note_sizes_left_out(l, *fallback);
    return 0;
  }
  Policy p;
  try {
    p = make_policy(l.name, l.trials, selection_of(a.mode), l.spec.default_config, a.within_percent / 100, goal);
  } catch (const NoPolicyError& e) {  // nothing to answer with
    fmt::print("nothing to select: {}\n", nothing_chosen(l, e.what()));
    return 3;
  }
  std::set<std::string> distinct;
  for (const auto& e : p.entries) distinct.insert(e.config.key());
  fmt::print("{} size{}, {} distinct config{} ({}){}\n", p.entries.size(), p.entries.size() == 1 ? "" : "s",
             distinct.size(), distinct.size() == 1 ? "" : "s", p.selection, by);
  mark_sizes_tuned_in_part(l, p);
  for (const auto& e : p.entries)
    fmt::print("  {}: {}{}\n", detail::shown_bindings(e.size), e.config.str(),
               e.time ? " " + format_us(*e.time) + " us" : "");
  note_sizes_tuned_in_part(p);
  note_sizes_left_out(l, p);
  return 0;
}

// A file a command writes, with the flag that named it (or would have), and
// what emit writes there: an existing file of another kind is not replaced.
struct PlannedFile {
  std::string flag;
  fs::path file;
  std::string text;
  std::optional<EmittedKind> kind;
};

// Every path is checked before anything is written, so that a bad one leaves
// no half-written set behind; a write that fails still names its flag.
void write_planned(const std::vector<PlannedFile>& files, const KeptFiles& kept) {
  std::vector<OutputFile> outputs;
  for (const auto& f : files) {
    outputs.push_back(OutputFile::of_flag(f.flag, f.file));
    outputs.back().kind = f.kind;
    check_output_file(outputs.back(), kept);
  }
  check_distinct_outputs(outputs);
  for (const auto& f : files) {
    try {
      write_file_atomically(f.file, f.text);
    } catch (const std::exception& e) {
      throw InputError({f.flag}, e.what());
    }
  }
}

// --vllm-block-shape's BLOCK_N,BLOCK_K ("128,128", or "[128, 128]" as vLLM
// prints it); empty where the flag is not `given`.
std::vector<std::int64_t> vllm_block_shape_of(const std::string& text, bool given = true) {
  if (text.empty() && !given) return {};
  std::string inner = text;
  std::erase(inner, ' ');
  if (inner.size() >= 2 && inner.front() == '[' && inner.back() == ']') inner = inner.substr(1, inner.size() - 2);
  std::vector<std::int64_t> out;
  auto bad = [&](const std::string& why) {
    return InputError({"--vllm-block-shape"},
                      "expected two positive integers BLOCK_N,BLOCK_K (128,128: the block-quantised weights' "
                      "block), got '" +
                          text + "'" + why);
  };
  std::size_t start = 0;
  while (true) {
    const std::size_t comma = inner.find(',', start);
    const std::string part = inner.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    std::int64_t v = 0;
    const auto [end, ec] = std::from_chars(part.data(), part.data() + part.size(), v);
    if (part.empty() || ec != std::errc() || end != part.data() + part.size())
      throw bad(part.empty() ? "" : ": '" + part + "' is no integer");
    if (v <= 0) throw bad(": " + part + " is not positive (vLLM names no file for a block of 0)");
    out.push_back(v);
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  if (out.size() != 2) throw bad(fmt::format(": {} value{}", out.size(), out.size() == 1 ? "" : "s"));
  return out;
}

int run_emit(const PolicyArgs& a) {
  if (auto why = namespace_problem(a.name_space)) throw InputError({"--namespace"}, *why);
  check_within(a);
  for (const auto& [flag, value] : a.emit_flags_given) {
    // the others name a file
    const bool shapes_vllm = flag == "--vllm-dtype" || flag == "--vllm-batch" || flag == "--vllm-block-shape";
    if (shapes_vllm && a.vllm_dir.empty())
      throw InputError({flag}, "shapes the files of --vllm FOLDER, which is not given");
    if (!shapes_vllm && value.empty()) throw InputError({flag}, "expected a path, got an empty one");
    if (flag == "--vllm-block-shape") (void)vllm_block_shape_of(value);  // an empty one too
  }
  // The names vLLM's (and SGLang's) fused MoE looks its files up by
  // (_get_config_dtype_str): a file named otherwise is never read, and vLLM
  // quietly runs its default configs.
  static const std::vector<std::string> kVllmDtypes{"fp8_w8a8",   "fp8_w8a16",  "int8_w8a8", "int8_w8a16",
                                                    "int4_w4a16", "mxfp4_w4a4", "float32"};
  if (!a.vllm_dtype.empty() && std::find(kVllmDtypes.begin(), kVllmDtypes.end(), a.vllm_dtype) == kVllmDtypes.end()) {
    for (const char* plain : {"bf16", "bfloat16", "fp16", "float16", "half"})
      if (a.vllm_dtype == plain)
        throw InputError({"--vllm-dtype"}, fmt::format("vLLM names no dtype in the file of a {} MoE (its name has no "
                                                       "',dtype=' part), so it would never read one named so: leave "
                                                       "--vllm-dtype out",
                                                       a.vllm_dtype));
    throw InputError({"--vllm-dtype"},
                     fmt::format("'{}' is not a dtype vLLM names its fused-MoE files by; expected {}{}", a.vllm_dtype,
                                 either(kVllmDtypes), did_you_mean(a.vllm_dtype, kVllmDtypes)));
  }
  const std::vector<std::int64_t> block_shape = vllm_block_shape_of(a.vllm_block_shape, false);
  Loaded l = load(a);
  // Both formats are read by Triton code (@triton.autotune, vLLM's fused
  // MoE): a module of another kernel's configs would import triton for
  // nothing.
  const bool python_kernel = backend_for_language(l.spec.kernel.language).kernel.tensors;
  for (const auto& [flag, given] :
       {std::pair{"--triton-configs", !a.triton_configs.empty()}, std::pair{"--vllm", !a.vllm_dir.empty()}})
    if (given && !python_kernel)
      throw InputError({flag}, fmt::format("writes configs for a Triton kernel; the spec's kernel has language: {}",
                                           l.spec.kernel.language));
  Policy p;
  try {
    p = make_spec_policy(l.spec, l.trials, selection_of(a.mode), a.within_percent / 100);
  } catch (const NoPolicyError& e) {  // nothing to answer with, as select says with the same status
    fmt::print("nothing to emit: {}\n", nothing_chosen(l, e.what()));
    return 3;
  }
  if (auto why = table_problem(p))
    throw InputError({a.spec}, *why + "; `tunekit select` lists the configs as they are");
  mark_sizes_tuned_in_part(l, p);
  // A Python module's name is an identifier: "moe-v1.2_policy.py" could not
  // be imported.
  const auto stem_for = [&](const std::string& default_name) {
    if (!default_name.ends_with(".py")) return l.name;
    std::string id = l.name;
    for (char& c : id)
      if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') c = '_';
    return id.empty() || std::isdigit(static_cast<unsigned char>(id.front())) ? "_" + id : id;
  };
  auto chosen = [&](const std::string& given, const std::string& flag, const std::string& default_name) {
    return given.empty() ? std::pair{flag + "'s default (in --out-dir)",
                                     fs::path(a.out_dir) / (stem_for(default_name) + default_name)}
                         : std::pair{flag, fs::path(given)};
  };
  std::vector<PlannedFile> files;
  std::vector<std::string> notes;         // printed once every file is written
  std::vector<std::string> vllm_in_part;  // the same, on stderr
  auto plan = [&](std::pair<std::string, fs::path> where, std::string text, EmittedKind kind) {
    files.push_back({std::move(where.first), std::move(where.second), std::move(text), kind});
  };
  plan(chosen(a.header, "--header", "_policy.hpp"), emit_header(p, {a.name_space}), EmittedKind::header);
  plan(chosen(a.json, "--json", "_policy.json"), emit_json(p), EmittedKind::json);
  // Python kernels also get a module mapping sizes to configs and a
  // triton.Config list; vLLM's MoE files when asked for.
  if (python_kernel || !a.python.empty()) {
    plan(chosen(a.python, "--python", "_policy.py"), emit_python(p), EmittedKind::python);
    notes.push_back(fmt::format("  Python: {} (select(**size) -> config)\n", files.back().file.string()));
  }
  if (python_kernel || !a.triton_configs.empty()) {
    plan(chosen(a.triton_configs, "--triton-configs", "_triton_configs.py"), emit_triton_configs(p),
         EmittedKind::triton_configs);
    notes.push_back(
        fmt::format("  triton.Config list: {} (CONFIGS, for @triton.autotune)\n", files.back().file.string()));
  }
  if (!a.vllm_dir.empty()) {
    const std::string device = l.trials.front().device;
    // vLLM names a float32 MoE's files so, and reads no other for it.
    std::string dtype = a.vllm_dtype;
    bool floating = false, all_f32 = true;
    for (const ArgumentSpec& arg : l.spec.arguments)
      if (arg.role != Role::scalar && is_floating(arg.type)) {
        floating = true;
        all_f32 = all_f32 && arg.type == ElementType::f32;
      }
    if (dtype.empty() && floating && all_f32) {
      dtype = "float32";
      notes.push_back("  (its tensors are f32: the vLLM files are named dtype=float32, as vLLM looks for them)\n");
    }
    std::vector<VllmConfigFile> vllm;
    try {
      vllm = emit_vllm_moe(p, device, dtype, a.vllm_batch, block_shape);
    } catch (const std::runtime_error& e) {  // what was tuned cannot be put in vLLM's form
      throw InputError({"--vllm"}, e.what());
    }
    for (const auto& f : vllm) {
      plan({"--vllm", fs::path(a.vllm_dir) / f.name}, f.text, EmittedKind::vllm_moe);
      notes.push_back(fmt::format("  vLLM/SGLang fused-MoE config: {}\n", files.back().file.string()));
      // vLLM reads every key as a batch size and passes a config's keys to
      // its kernel: no place in the file can say this.
      if (!f.tuned_in_part.empty())
        vllm_in_part.push_back(fmt::format(
            "note: {} holds batch size{} {} from sizes tuned in part (their configs are the best of those "
            "measured); vLLM's format has no place to mark them, the header, JSON and Python files do\n",
            files.back().file.string(), f.tuned_in_part.size() == 1 ? "" : "s", fmt::join(f.tuned_in_part, ", ")));
    }
  }
  write_planned(files, kept_inputs(l.spec, l.db));
  fmt::print("{} size{} ({}): {}, {}\n", p.entries.size(), p.entries.size() == 1 ? "" : "s", p.selection,
             files[0].file.string(), files[1].file.string());
  if (selection_of(a.mode) == Selection::all_sizes)
    if (const auto choice = print_all_sizes_choice(l, goal_of(l.spec))) fmt::print("{}", format_unsettled(*choice));
  for (const auto& n : notes) fmt::print("{}", n);
  for (const auto& pin : p.pinned)
    fmt::print("  {} is computed from the size for untuned sizes: {} == {}\n", pin.name, pin.name, pin.rule.text());
  if (!p.checks.constraints.empty())
    fmt::print("  untuned sizes skip tuned configs that {} {} there (the spec's constraints{})\n",
               p.checks.constraints.size(), p.checks.constraints.size() == 1 ? "check rejects" : "checks reject",
               p.pinned.empty() ? "" : ", and the values each computed parameter may take");
  for (const auto& text : p.checks.unchecked) fmt::print("  not checked for untuned sizes: {}\n", text);
  note_sizes_tuned_in_part(p);
  for (const auto& n : vllm_in_part) fmt::print(stderr, "{}", n);
  note_sizes_left_out(l, p);
  return 0;
}

int run_rules_report(const PolicyArgs& a) {
  Loaded l = load(a);
  auto outcomes = rule_outcomes(l.trials);
  if (outcomes.empty()) {
    fmt::print(
        "no trial of this spec is a rule config: tune it with 'search.rules' in the spec (and without "
        "--no-rules) first\n");
    return 3;
  }
  fmt::print("{}", format_rule_report(outcomes));
  return 0;
}

// The spec's sizes at which no config is valid, each with why, for the
// page: a tune's page lists them (SizeReport::error), and one written again
// from the store should too. Other sizes without trials are left out: a
// tune may have been asked for other sizes (-a, -s), and why one stopped
// (a reference that failed) only the tune said.
std::vector<std::pair<Bindings, std::string>> sizes_without_configs(const Loaded& l) {
  std::set<std::string> stored;
  for (const auto& t : l.trials) stored.insert(size_key(t.size));
  Bindings machine;
  if (!l.trials.empty()) try {
      machine = machine_from_json(l.trials.front().machine).properties;
    } catch (const std::invalid_argument&) {
    }
  std::vector<std::pair<Bindings, std::string>> out;
  for (const auto& size : l.spec.sizes) {
    if (stored.count(size_key(size))) continue;
    Bindings constants = machine;
    for (const auto& [k, v] : size) constants[k] = v;
    try {
      if (auto empty = Space(l.spec.parameters, l.spec.constraints, constants).why_empty())
        out.emplace_back(size, "no config is valid at this size: " + *empty);
    } catch (const std::exception&) {  // a constraint reads what the stored machine lacks
    }
  }
  return out;
}

int run_report(const PolicyArgs& a) {
  Loaded l;
  if (!a.spec.empty()) {
    l = load(a, /*one_device=*/false);
  } else {  // everything the database holds, whatever spec it came from
    if (a.seed || !a.cache.empty())
      throw InputError({a.seed ? "--seed" : "--cache"},
                       "picks the trials of a spec tuned with that setting: give the SPEC too");
    if (!a.entry.empty() || !a.args.empty())
      throw InputError({a.entry.empty() ? "--arg" : "--entry"},
                       "describes the call of a bare kernel source: give the SOURCE too");
    for (const auto& [flag, given] :
         {std::pair{"--compiler", !a.kernel.compiler.empty()}, std::pair{"--flags", !a.kernel.flags.empty()},
          std::pair{"--reference", !a.kernel.reference.empty()}, std::pair{"--atol", a.kernel.atol.has_value()},
          std::pair{"--rtol", a.kernel.rtol.has_value()}, std::pair{"--toolchain", !a.toolchain.empty()}})
      if (given) throw InputError({flag}, "picks the trials of a spec tuned with that setting: give the SPEC too");
    const fs::path db = !a.db.empty() ? fs::path(a.db) : fs::path(a.out_dir) / "tunekit.db";
    if (!fs::exists(db)) throw InputError({db.string()}, "no results database here; run `tunekit tune` first");
    l.trials = read_store(db, a.db.empty() ? "--out-dir" : "--db", [](const Store& s) { return s.all(); });
    l.db = db;
    l.name = "tunekit";
    if (l.trials.empty()) throw InputError({db.string()}, "the database has no trials");
  }
  // The page the tune wrote: the spec's output.html, else the writer's default.
  fs::path html = a.html;
  std::string html_given_by = "--html";
  if (html.empty() && !a.spec.empty())
    if (auto it = l.spec.output.files.find("html"); it != l.spec.output.files.end() && !it->second.empty()) {
      html = it->second;
      html_given_by = l.spec.file.string();
    }
  if (html.empty()) {
    html = fs::path(a.out_dir) / (l.name + ".html");
    html_given_by = "--out-dir";
  }
  std::string device;
  for (const auto& t : l.trials)
    if (device.find(t.device) == std::string::npos) device += (device.empty() ? "" : ", ") + t.device;
  HtmlReportOptions options;
  options.title = l.name + " on " + device;
  if (!a.spec.empty()) {
    options.baseline = l.spec.default_config;
    options.target_noise = l.spec.measure.target_noise;
    options.metrics = l.spec.metrics;
    options.objective = l.spec.objective;
    options.stopped = sizes_without_configs(l);
    // A size tuned in part is said on the page and here, as select and emit
    // say it: the store cannot tell a budget from a stop, so it names both.
    const auto part = sizes_tuned_in_part(l);
    std::vector<std::pair<Bindings, PartialTune>> listed;
    std::set<std::string> seen;
    for (const auto& t : l.trials)
      if (const auto it = part.find(size_key(t.size)); it != part.end() && seen.insert(it->first).second) {
        listed.emplace_back(t.size, it->second);
        options.best_of_part.emplace_back(
            t.size, fmt::format("the {} of its {} valid configs measured (a budget, a --where, or a tune stopped "
                                "before its end, which the same command resumes)",
                                it->second.measured, it->second.valid));
      }
    note_sizes_tuned_in_part(listed, {"its best is", "their bests are"});
  }
  // The page draws CCCL's base as the reference it is, as the tune's did.
  std::vector<TrialRecord> shown = l.trials;
  shown.insert(shown.end(), l.base.begin(), l.base.end());
  write_planned({{html_given_by, html, html_report(shown, options)}}, kept_inputs(l.spec, l.db));
  fmt::print("{}report: {}\n", format_parameter_report(l.trials), html.string());
  return 0;
}

}  // namespace

SubCommand add_select_command(CLI::App& app) {
  auto a = std::make_shared<PolicyArgs>();
  auto* cmd = app.add_subcommand("select", "Choose configs across the tuned problem sizes and print them");
  add_common(cmd, *a);
  return {cmd, [a] { return run_select(*a); }};
}

SubCommand add_emit_command(CLI::App& app) {
  auto a = std::make_shared<PolicyArgs>();
  auto* cmd = app.add_subcommand("emit",
                                 "Write what tuning chose as a self-contained C++17 header (a constexpr function from "
                                 "problem size to config) and as JSON");
  add_common(cmd, *a);
  // Each flag as given, for the checks between them (run_emit).
  auto noted = [a](std::string flag) {
    return [a, flag](const std::string& value) { a->emit_flags_given.emplace_back(flag, value); };
  };
  cmd->add_option("--header", a->header, "Header to write (default: OUT_DIR/NAME_policy.hpp)")->each(noted("--header"));
  cmd->add_option("--json", a->json, "JSON to write (default: OUT_DIR/NAME_policy.json)")->each(noted("--json"));
  cmd->add_option("--namespace", a->name_space, "Namespace of the generated code: C++ identifiers joined by ::")
      ->capture_default_str();
  cmd->add_option("--python", a->python,
                  "Python module mapping sizes to configs (select(**size)); default for Triton specs: "
                  "OUT_DIR/NAME_policy.py")
      ->each(noted("--python"));
  cmd->add_option("--triton-configs", a->triton_configs,
                  "Python module with the chosen configs as triton.Config objects (with --mode cover: the few "
                  "that serve every size); default for Triton specs: OUT_DIR/NAME_triton_configs.py")
      ->each(noted("--triton-configs"));
  cmd->add_option("--vllm", a->vllm_dir,
                  "Folder for vLLM's/SGLang's fused-MoE config files, E=..,N=..,device_name=...json, one per (E, N) "
                  "of the sizes (N halved: the spec's is the gate-up GEMM's)")
      ->each(noted("--vllm"));
  cmd->add_option("--vllm-dtype", a->vllm_dtype,
                  "The dtype part of vLLM's file name (fp8_w8a8, int8_w8a16 ...); none for bf16/fp16 (vLLM's own "
                  "rule); default float32 where the spec's tensors are all f32, else none")
      ->each(noted("--vllm-dtype"));
  cmd->add_option("--vllm-block-shape", a->vllm_block_shape,
                  "BLOCK_N,BLOCK_K of block-quantised weights (128,128): the block_shape part of vLLM's file name, "
                  "after the dtype's")
      ->each(noted("--vllm-block-shape"));
  cmd->add_option("--vllm-batch", a->vllm_batch, "The size that is vLLM's batch size (num_tokens)")
      ->capture_default_str()
      ->each(noted("--vllm-batch"));
  return {cmd, [a] { return run_emit(*a); }};
}

SubCommand add_rules_report_command(CLI::App& app) {
  auto a = std::make_shared<PolicyArgs>();
  auto* cmd = app.add_subcommand("rules-report",
                                 "How far each size's rule config (the matmul tile rules of search.rules, evaluated "
                                 "first) is from the best, and how many evaluations it took to beat it");
  add_spec_and_db(cmd, *a);
  a->answer = "report";
  cmd->footer(
      "Columns: the rule config's time; the best time; their ratio; the rule config's rank among the ok\n"
      "trials; the first faster trial in run order (evaluations so far, invalid trials not counted); the\n"
      "expected evaluations for uniform random search to beat it, (n+1)/(b+1) with n evaluations of\n"
      "which b are faster. Sizes resumed across runs are in the order their trials were first measured.\n" +
      kRulesReportExitStatus);
  return {cmd, [a] { return run_rules_report(*a); }};
}

SubCommand add_report_command(CLI::App& app) {
  auto a = std::make_shared<PolicyArgs>();
  auto* cmd = app.add_subcommand("report",
                                 "Write the HTML report of a spec's stored results (tunekit tune writes it too) and "
                                 "print how each parameter's values fared at each size");
  cmd->add_option("SPEC", a->spec,
                  "The spec (or the bare source, with its --entry and --arg) that was tuned, whose objective names "
                  "each size's best (default: every trial in the database, the fastest named best)")
      ->check(CLI::ExistingFile);
  add_tuned_kernel(cmd, *a);
  cmd->add_option("--db", a->db, "Results database (default: the spec's, else OUT_DIR/tunekit.db)");
  cmd->add_option("-o,--out-dir", a->out_dir, "The tune's output folder")->capture_default_str();
  cmd->add_option("--seed", a->seed, "The input seed the tune ran with (tunekit tune --seed; default: the spec's)");
  cmd->add_option("--cache", a->cache, "The cache mode the tune ran with (tunekit tune --cache; default: the spec's)");
  add_toolchain_flag(cmd, *a);
  a->answer = "report";
  cmd->add_option("--html", a->html, "Page to write (default: OUT_DIR/NAME.html, NAME the spec's or tunekit)");
  cmd->footer(
      "Per parameter: its spread, the slowest value's best time over the fastest value's best (largest\n"
      "first), then each value's best and median time over the ok trials that set it.\n"
      "Exit status: 0; 1 for bad input (the message names the flag, or the spec's file:line:column); 2 for\n"
      "other errors.");
  return {cmd, [a] { return run_report(*a); }};
}

}  // namespace tunekit::cli
