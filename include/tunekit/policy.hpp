#pragma once
// What tuning learned, shipped as code: a self-contained C++17 header with a
// constexpr function from problem size to config, and the same as JSON.
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "tunekit/constraint.hpp"
#include "tunekit/names.hpp"
#include "tunekit/select.hpp"
#include "tunekit/space.hpp"
#include "tunekit/spec.hpp"

namespace tunekit {

// How much of a size's space a tune measured, where it stopped part way (a
// budget, a --where, a stop before the size's end).
struct PartialTune {
  std::uint64_t measured = 0;  // configs with a trial at the size
  std::uint64_t valid = 0;     // configs the space allows there
};

struct PolicyEntry {
  Bindings size;
  Config config;
  std::optional<Microseconds> time;  // the config's time at this size
  // Set where the size was tuned in part: the config is the best of those
  // measured, which every emitted file says at its entry.
  std::optional<PartialTune> tuned_in_part;
};

// A parameter that a constraint fixes as a function of the problem size (a
// term `NAME == E` with E over sizes only), such as a tile pinned to the
// smallest allowed value >= M. For a size never tuned, the header computes
// it from that size instead of copying the nearest tuned size's value, which
// the constraint would reject.
struct PinnedParameter {
  std::string name;
  Expression rule;  // E
};

// The spec's constraints as the header checks them for a size never tuned:
// a tuned config they reject at that size is passed over for the next
// nearest (a cluster that needs an even number of tile rows, say, or a
// persistent grid that needs more tiles than SMs). Machine properties take
// the tuned device's values.
struct PolicyChecks {
  std::vector<Expression> constraints;  // over sizes, integer parameters and integer properties
  std::vector<std::string> unchecked;   // the text of those C++ cannot check (floats, strings, other names)
  Bindings machine;                     // the properties they read, with the tuned device's values
};

struct Policy {
  std::string kernel;  // names the generated types and function
  // The spec's size names in declaration order: `<kernel>_select` takes the
  // sizes in this order (names it lacks follow, sorted).
  std::vector<std::string> size_order;
  std::string selection;  // how the configs were chosen: "per-size", "all-sizes", "cover"
  // The device the trials ran on, as the store names it: the best values
  // differ per chip, so a shipped policy says which one it was tuned for.
  std::string device;
  std::vector<PolicyEntry> entries;
  std::vector<PinnedParameter> pinned;
  PolicyChecks checks;
  // The spec's values of each parameter, where known: a header field's type
  // follows them, not only the values that won, so that code using the
  // policy compiles against every retune.
  std::map<std::string, std::vector<Value>> declared;
};

enum class Selection { per_size, all_sizes, cover };
NameTable<Selection> selection_names();  // "per-size", "all-sizes", "cover"

// Builds the policy for `trials` (one kernel, one device), best by `goal`.
// Selection::all_sizes compares with `baseline` (the default config); where
// that did not run correctly at every size, it takes the config closest to
// each size's best among those valid everywhere, and says so in `selection`.
// `tolerance` is Selection::cover's. Throws NoPolicyError, saying why, when
// the selection finds nothing.
struct NoPolicyError : std::runtime_error {
  using std::runtime_error::runtime_error;
};
Policy make_policy(const std::string& kernel, const std::vector<TrialRecord>& trials, Selection selection,
                   const std::optional<Config>& baseline, double tolerance = 0.05, const Goal& goal = {});

// The policy `tunekit emit` writes for `spec`'s trials: make_policy by the
// spec's name (else its entry), default config and objective, with the
// spec's size order, its pinned parameters and its checks, read with the
// properties of the machine the trials ran on.
Policy make_spec_policy(const Spec& spec, const std::vector<TrialRecord>& trials, Selection selection,
                        double tolerance = 0.05);

// The integer parameters of the policy's configs that `constraints` (the
// spec's) pin to its sizes, where the rule can be written as C++.
std::vector<PinnedParameter> pinned_parameters(const std::vector<Expression>& constraints, const Policy& policy);

// For each pinned parameter, the check that its value, computed from an
// untuned size, is one of the parameter's own values (`parameters`, the
// spec's): a rule such as V == n // 1000 computes values no config has (0
// below 1000), which the constraints alone would allow. To be checked with
// the constraints (policy_checks). A step range is one comparison, not a
// list.
std::vector<Expression> pinned_value_checks(const std::vector<Parameter>& parameters,
                                            const std::vector<PinnedParameter>& pinned);

// The properties of the device `trials` ran on, read from their machine
// description (the first that has one); empty if none does.
Bindings machine_properties(const std::vector<TrialRecord>& trials);

// Sorts `constraints` (the spec's) into those the header can check for the
// policy's configs and sizes, with `machine` (the tuned device's properties)
// as constants, and those it cannot; with them, pinned_value_checks of the
// policy's pinned parameters among `parameters` (the spec's).
PolicyChecks policy_checks(const std::vector<Expression>& constraints, const std::vector<Parameter>& parameters,
                           const Policy& policy, const Bindings& machine);

// The rule for a size never tuned, as the header documents it.
inline constexpr const char* kUntunedSizeRule =
    "a size never tuned gets the config of the tuned size nearest in log space: the one with the smallest "
    "product over the axes of max(a, b) / min(a, b) (values below 1 count as 1); ties go to the earlier entry";
// With an axis of floats (a sparsity of 0.5, where a floor of 1 would make
// every value one): the addition to that rule.
inline constexpr const char* kFloatAxisRule =
    "; on an axis of floats, the values below the smallest positive double (2.2250738585072014e-308), "
    "not those below 1, count as it";
// With checks: the addition to that rule. Where the checks allow no tuned
// config, each emitted file says in its own way that it has none (after the
// colon): the nearest with its pins computed would be a config no build had.
inline constexpr const char* kCheckedSizeRule =
    "; among the tuned configs, only those that the spec's constraints allow at that size count "
    "(<kernel>_allowed() says which), and where none does there is no config for that size: ";

struct HeaderOptions {
  std::string name_space = "tunekit_policy";  // C++ identifiers joined by "::"
};

// Why `name` cannot be the header's namespace (it must be C++ identifiers
// joined by "::", none of them a keyword); nullopt when it can.
std::optional<std::string> namespace_problem(std::string_view name);

// Why no emitted table (header, JSON, Python) can look this policy's sizes
// up: an untuned size is matched by numeric distance, which a string size
// has none of. nullopt when they can; the emit_* functions throw
// std::invalid_argument with this reason.
std::optional<std::string> table_problem(const Policy& policy);

// A C++17 header: `<kernel>_config`, `<kernel>_select(sizes...)`, and the
// tables behind it. Names from users become valid identifiers; string
// values are escaped. Throws std::invalid_argument for a namespace that
// namespace_problem() refuses. Pinned parameters are recomputed for untuned sizes;
// with checks, `<kernel>_allowed(config, sizes...)` evaluates them, and
// `<kernel>_has_config(sizes...)` is false at an untuned size where they
// allow no tuned config (`<kernel>_select` then returns the nearest tuned
// config as it was tuned, which they reject there; true without checks).
std::string emit_header(const Policy& policy, const HeaderOptions& options = {});
// The same as JSON, for online.hpp and other readers: the entries, the
// header's size order, and its checks and pins as text and as trees
// (Expression::to_tree) that a reader without tunekit's parser evaluates.
std::string emit_json(const Policy& policy);

// ---- For Python kernels (Triton) ---------------------------------------------

// A Python module: CONFIGS, a list of (size, config) pairs, and
// select(**size), which returns the config of that size, or for another the
// config emit_header's select returns (the same checks, pins, arithmetic and
// order: kUntunedSizeRule, with kCheckedSizeRule when there are checks), or
// None where the header's <kernel>_has_config is false; and
// allowed(config, **size), the header's <kernel>_allowed. Throws as
// emit_header does for entries that no table can hold.
std::string emit_python(const Policy& policy);

// The launch options of Triton's CUDA backend that a config may hold; every
// other parameter is a tl.constexpr meta-parameter.
bool is_triton_launch_option(std::string_view name);

// A Python module with CONFIGS, the policy's distinct configs as
// triton.Config objects, for @triton.autotune(configs=CONFIGS, key=...):
// with Selection::cover, the few configs that serve every size.
std::string emit_triton_configs(const Policy& policy);

// vLLM's and SGLang's tuned fused-MoE config files: for each (E, N) of the
// policy's sizes, the file name vLLM looks up,
// "E=<E>,N=<N / 2>,device_name=<device, spaces as _>[,dtype=<dtype>]
// [,block_shape=[<n>,<k>]].json" (N halved: the spec's N is the gate-up
// GEMM's, vLLM's the intermediate size; `block_shape`, [block_n, block_k] of
// block-quantised weights, written as vLLM's get_config_file_name writes
// it, is empty for weights quantised otherwise or not at all),
// mapping each batch size (size `batch_axis`) to BLOCK_SIZE_M/N/K,
// GROUP_SIZE_M, num_warps and num_stages, and any other Triton launch option
// the config tuned (vLLM passes the entries to its kernel's launch). Throws
// std::runtime_error when the sizes lack E, N or the batch axis, a config
// lacks one of those keys, or it tuned a parameter that is neither one of
// them nor a launch option (vLLM's kernel would not take it), and
// std::invalid_argument for a block_shape that is not two positive integers.
struct VllmConfigFile {
  std::string name;
  std::string text;
  // Its batch sizes whose size was tuned in part: vLLM's format has no room
  // to say so (a key is a batch size, a config's keys go to the kernel), so
  // the caller does.
  std::vector<std::int64_t> tuned_in_part;
};
std::vector<VllmConfigFile> emit_vllm_moe(const Policy& policy, const std::string& device, const std::string& dtype,
                                          const std::string& batch_axis = "M",
                                          const std::vector<std::int64_t>& block_shape = {});

// The files `tunekit emit` writes.
enum class EmittedKind { header, json, python, triton_configs, vllm_moe };
// As messages name it: "a policy header", "a vLLM fused-MoE config" ...
std::string_view emitted_kind_name(EmittedKind kind);
// Whether `text`, a file's, is one of `kind` as emit (this tunekit or an
// earlier one) writes it: a JSON also as online.hpp saves it, a vLLM config
// also as vLLM ships it. `tunekit emit` replaces no other existing file (a
// tune's report, a hand-written header), so that a path given by mistake
// loses nothing.
bool is_emitted(std::string_view text, EmittedKind kind);
// Which of them `text` is, by the same test; nullopt for any other file.
// Every output's check reads it (flags.hpp's check_output_file): a file emit
// wrote is replaced only by emit's output of its kind, never by a tune's
// report.
std::optional<EmittedKind> emitted_kind_of(std::string_view text);

// A valid C++ identifier from any text: other characters become '_', a
// leading digit or a keyword gets '_' added.
std::string cpp_identifier(std::string_view text);
// A C++ string literal for any text.
std::string cpp_string_literal(std::string_view text);

}  // namespace tunekit
