#pragma once
// Turning a config into something runnable: a variant source, then a built
// artifact, cached on disk by content hash.
#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "tunekit/measure.hpp"
#include "tunekit/resources.hpp"
#include "tunekit/spec.hpp"
#include "tunekit/status.hpp"

namespace tunekit {

// Everything that determines a build. Two equal BuildInputs give the same
// artifact, so hash() names the cache entry.
struct BuildInput {
  std::string source;                   // final text, annotations applied
  std::string source_name;              // original path, for diagnostics
  std::vector<std::string> defines;     // "NAME=value", passed as -D
  std::string entry;                    // function to call, placeholders resolved
  std::string arch;                     // device architecture (CUDA), empty for the device's own
  std::vector<ArgumentSpec> arguments;  // types and roles shape the call
  std::string language;
  std::string compiler;
  std::vector<std::string> flags;
  // A digest of the headers the source includes with #include "NAME" found
  // beside it (builder/detail/headers.hpp): an edit to one is another
  // variant. A builder compiles with the source's folder on the quote
  // include path, as if it compiled the source where it is.
  std::string headers;
  // A digest of the files the flags hand the compiler (an extra source, an
  // object, a library: builder/detail/headers.hpp, flag_files_digest), ""
  // when they name none: the flags name them, but an edit to one is
  // another variant.
  std::string files;
  // The variant's values. Left out of hash(): the source and defines carry
  // them for compiled kernels; the command backend, whose build command may
  // use them directly, adds the command it runs to its own cache key.
  Config config;
  // The problem size it is built for. Left out of hash(): only backends
  // whose build depends on it (Triton specialises on the scalar arguments'
  // values) read it, and key their own caches with what they use of it.
  Bindings size;
  // How long its compiler may run (kernel.build_timeout). Left out of
  // hash(): it decides whether a build finishes, not what it makes.
  Seconds timeout = kDefaultBuildTimeout;
  // The most registers it may spill (kernel.max_spills), for a builder
  // that knows its kernel's spills: more is a resource_limit. Left out of
  // hash(), as the timeout is.
  std::optional<std::int64_t> max_spills;

  std::string hash() const;
};

// The variant of `spec`'s kernel for `config` at `size` (injection applied,
// kernel.defines evaluated there). Throws InputError when the config names
// a tunable the source lacks, or a define cannot be evaluated.
BuildInput make_build_input(const Spec& spec, const std::string& kernel_source, const Config& config,
                            const Bindings& size);

// The config of CCCL's base variant: {TUNE_BASE: 1} and the spec's `base:`
// values, which its launch, entry, arguments and kernel.defines read and its
// build never defines (make_build_input injects TUNE_BASE alone). The store
// keys the base's trial by it, so other `base:` values measure it anew.
Config base_variant_config(const Spec& spec);

// How configs reach `source` (of `file`): `requested` (a spec's
// kernel.injection), with `automatic` resolved by what the source holds.
Injection resolve_injection(Injection requested, std::string_view source, const std::string& file);
// `entry` with each {NAME} replaced by the config's value of NAME. Throws
// InputError for a name that is not in the config.
std::string resolve_entry(const std::string& entry, const Config& config);
// The reference function's build (ReferenceSpec::Kind::function). A
// reference in the kernel's own source is built with `values` injected as a
// variant's would be (a valid config: the tuner's baseline), else with the
// spec's default config, and with kernel.defines evaluated at `size` with
// those values.
BuildInput make_reference_input(const Spec& spec, const Config* values = nullptr, const Bindings& size = {});

struct Artifact {
  std::filesystem::path path;  // shared object, cubin, ...
  std::string hash;
};

struct BuildResult {
  Status status = Status::ok;  // ok or compile_error
  // A failure's cause: the variant's source (Fault::config), or the
  // machine (a full disk, no memory, a missing compiler: Fault::environment),
  // which a resume builds again.
  Fault fault = Fault::none;
  Artifact artifact;
  std::string log;  // compiler output (errors and warnings)
  Seconds time{0};  // 0 when served from the cache
  // What the compiler says the kernel uses (a cached build's too); kept
  // with the trial.
  KernelResources resources;
  bool cached = false;
};

class Builder {
 public:
  virtual ~Builder() = default;
  // Thread-safe: the tuner calls it from a pool of threads.
  virtual BuildResult build(const BuildInput& input) = 0;
};

// Builds `inputs` with `jobs` threads (0 = one per core) and calls
// `done(index, result)` from the building thread as each one finishes.
void build_parallel(Builder& builder, std::span<const BuildInput> inputs, unsigned jobs,
                    const std::function<void(std::size_t, BuildResult)>& done);

}  // namespace tunekit
