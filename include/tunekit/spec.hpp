#pragma once
// A tuning problem as the user declares it: in a YAML/JSON spec file, or in
// the kernel source itself (%RANGE% annotations).
#include <filesystem>
#include <map>
#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "tunekit/constraint.hpp"
#include "tunekit/measure.hpp"
#include "tunekit/names.hpp"
#include "tunekit/objective.hpp"
#include "tunekit/options.hpp"
#include "tunekit/rules.hpp"
#include "tunekit/space.hpp"

namespace tunekit {

enum class ElementType { f32, f64, f16, bf16, i8, i16, i32, i64, u8, u16, u32, u64 };
NameTable<ElementType> element_type_names();
std::string_view to_string(ElementType t);
std::optional<ElementType> element_type_from_string(std::string_view s);
std::size_t size_of(ElementType t);
const char* c_type_name(ElementType t);  // "float", "int32_t", ...
bool is_floating(ElementType t);
// The values an integer element type holds (u64's upper end capped at
// int64's, which is all a Value holds); nullopt for floating types.
std::optional<std::pair<std::int64_t, std::int64_t>> integer_range(ElementType t);

enum class Fill { random, constant, sequence, zeros, file, normal };
// `scratch`: a workspace (cuBLAS's and CUB's word) the kernel may write and
// read as it likes; it starts from its fill each config, as an input does,
// but is neither compared nor checked for writes, as an `in` buffer is.
enum class Role { in, out, inout, scalar, tensor_map, scratch };
// Buffers each config starts from as generated: inputs and workspaces.
inline bool starts_as_generated(Role r) { return r == Role::in || r == Role::scratch; }
NameTable<Fill> fill_names();
NameTable<Role> role_names();  // tensor_map last: a buffer's or scalar's role is one of the others
std::string_view to_string(Fill f);
inline bool fill_takes_value(Fill f) { return f == Fill::constant || f == Fill::sequence; }
// `fill: {file: PATH}`: the values of a NumPy .npy file, or the raw bytes of
// any other file, as they are.
inline bool fill_takes_path(Fill f) { return f == Fill::file; }
// Why a buffer of `t` cannot take `value` as its constant fill or its
// sequence's start (not finite; not whole, or out of range, for an integer
// type; past a floating type's largest value), or nullopt when it can.
// Converted anyway, 1000 would reach an i8 kernel as -24.
std::optional<std::string> fill_misfit(ElementType t, Fill f, double value);
std::string_view to_string(Role r);

// A TMA tensor map (CUDA, compute capability 9.0 on): a tiled view of the
// buffer argument `of`, encoded with cuTensorMapEncodeTiled once the buffer
// is on the device and passed to the kernel by value (a 128-byte CUtensorMap,
// declared `const __grid_constant__ CUtensorMap`). The global array is dense
// and row-major: strides are dims[0] * element size, times dims[1], ...
struct TensorMapSpec {
  std::string of;                // the buffer argument it describes
  std::vector<Expression> dims;  // 1 to 5, innermost first: the array's extents, in elements
  std::vector<Expression> box;   // as many: the box (the shared-memory tile) a copy moves
  int swizzle = 0;               // bytes: 0 (none), 32, 64 or 128
  bool oob_nan = false;          // out-of-bounds elements read as NaN instead of zero
  int l2_promotion = 128;        // bytes: 0 (none), 64, 128 or 256
  SourceLocation where;          // the mapping
  SourceLocation of_where;       // its `of`
};

struct ArgumentSpec {
  std::string name;
  ElementType type = ElementType::f32;
  Role role = Role::in;
  // Buffers: element count (an expression over sizes and parameters), fill.
  std::optional<Expression> size;
  Fill fill = Fill::random;
  double fill_value = 0;            // constant value, or the first value of a sequence
  std::filesystem::path fill_file;  // Fill::file: absolute
  SourceLocation fill_where;        // where the fill is written (a file that does not fit is said there)
  // Scalars (role == scalar): the value, an expression.
  std::optional<Expression> value;
  // Triton: a tensor's shape (expressions, outermost first); `size` is then
  // their product. Empty: a flat buffer of `size` elements.
  std::vector<Expression> shape;
  // Triton: `fill: {setup: fn}`: the value comes from the Python function
  // "path.py:fn", called with the other arguments and the meta-parameters.
  std::string setup;
  // False (`pass: false`) for an input the kernel does not take: Triton's
  // that only the setup function and the reference read, and by default a
  // CUDA argument in constant memory.
  bool passed = true;
  // Tensor maps (role == tensor_map; CUDA only): `type` is the element type
  // of the buffer it describes.
  std::optional<TensorMapSpec> tensor_map;
  // CUDA (`memory: constant`, Kernel Tuner's cmem_args): an input copied
  // into the kernel's __constant__ symbol of the argument's name before it
  // runs; passed as well only where `passed` (`pass: true`).
  bool constant_memory = false;
  SourceLocation where;
};

// How a config's values reach the source.
enum class Injection {
  automatic,      // tunable lines if the source has them, else #defines
  defines,        // -D NAME=value on the compiler command line (Kernel Tuner)
  tunable_lines,  // msKPP: "// tunable" and "// tunable: ALIAS" lines replaced
  range_defines,  // CCCL: "#define NAME value" prepended to the source
};
// "auto", "defines", "tunable", "range"; "none" spells `defines` for a
// backend whose build takes no defines (its kernel reads no -D values).
NameTable<Injection> injection_names();

// How a device kernel is launched: CUDA blocks of threads, OpenCL
// work-groups of work-items. Expressions over sizes and parameters.
struct LaunchSpec {
  std::vector<Expression> grid;             // 1 to 3: blocks (work-groups) per dimension
  std::vector<Expression> block;            // 1 to 3: threads (work-items) per block
  std::optional<Expression> shared_memory;  // dynamic shared memory, bytes (CUDA)
  std::vector<Expression> cluster;          // CUDA: 1 to 3, blocks per thread-block cluster; empty: no cluster
};

// A name given a value by expression: a Triton tl.constexpr the problem
// size fixes (HEAD_DIM: D), or a define the build passes beside the
// config's (grid_size_x: "ceil_div(N, BS)").
struct NamedExpression {
  std::string name;
  Expression value;      // over sizes and parameters
  SourceLocation where;  // its key in the spec, for errors
};
using ConstexprSpec = NamedExpression;

// How long one build may run before it is killed (kernel.build_timeout,
// application.build_timeout), unless the spec says otherwise.
inline constexpr Seconds kDefaultBuildTimeout{300.0};

struct KernelSpec {
  std::filesystem::path source;  // absolute after loading
  // The function to call. `{NAME}` is replaced by the config's value of NAME,
  // so a template kernel is named by expression: "gemm<{BM}, {BN}>".
  std::string entry;
  SourceLocation entry_where;    // where the spec names it (for errors)
  std::string language = "c++";  // "c++" or "c" (CPU), "cuda", "opencl", "command" (an application)
  // CPU: the compiler command (empty: $CXX, else c++; C: $CC, else cc).
  // CUDA: "nvrtc" (default, in-process) or "nvcc".
  std::string compiler;
  std::vector<std::string> flags{"-O3", "-march=native"};  // device languages default to none
  // Where the compiler and the flags were given (a spec line, or a flag such
  // as --compiler); empty for the defaults. A build that fails names them.
  SourceLocation compiler_where, flags_where;
  // How long the compiler may run a build (kernels whose traits say
  // build_timeout); past it, the build is the config's compile_error.
  // None: the backend's default (KernelTraits::default_build_timeout:
  // Triton's is 10 minutes), for a spec built in code as for one loaded.
  std::optional<Seconds> build_timeout;
  Injection injection = Injection::automatic;
  std::string arch;  // CUDA: e.g. "sm_90a"; empty: the device's own
  LaunchSpec launch;
  // Triton: tl.constexpr values the problem size fixes, in spec order.
  std::vector<ConstexprSpec> constexprs;
  // kernel.defines: values each variant's build passes as -D NAME=value
  // after the config's, evaluated at the variant's size (Kernel Tuner's
  // `defines`; a T1 file's block and grid sizes, as Kernel Tuner defines
  // them for its kernels).
  std::vector<NamedExpression> defines;
  // Triton: a config whose compiled kernel spills more registers than this
  // is a resource_limit; none: spills are recorded, never refused.
  std::optional<std::int64_t> max_spills;
};

struct ReferenceSpec {
  enum class Kind { none, function, default_config } kind = Kind::default_config;
  std::filesystem::path source;  // for function; empty = the kernel's source
  std::string entry;             // for function
  // Where the spec names the entry, or gives the torch expression (its
  // text's first character), for errors.
  SourceLocation where;
  std::vector<std::string> flags;
  // Device kernels: the reference function's own launch; empty grid/block
  // mean the kernel's launch expressions.
  LaunchSpec launch;
  // Triton: `reference: {torch: EXPR}`, a torch expression over the
  // arguments (kind function, no source, no entry).
  std::string torch_expression;
};

// An element passes when |got - expected| <= atol + rtol * |expected|.
struct Tolerance {
  double atol = 1e-6;
  double rtol = 1e-5;
};
// What a spec's `tolerance` (or --atol, --rtol) gives; what it leaves out
// follows the outputs' element type (applied_tolerance).
struct ToleranceSetting {
  std::optional<double> atol, rtol;
};
// The default for outputs of `t`. A 16-bit float's rounding alone is ~1e-3
// (f16) or ~8e-3 (bf16) of the value, so f32's 1e-5 failed every f16 or
// bf16 kernel that rounds once differently from the reference; f64's is
// tighter, as a sum taken in float is off by more after a few terms. Integer types are
// compared exactly (0, 0): a whole number is right or wrong. torch.testing.assert_close's
// values for f16, bf16 and f64.
Tolerance default_tolerance(ElementType t);

struct SearchSettings {
  std::string strategy = "auto";     // a name in strategies() (strategy.hpp)
  SourceLocation strategy_where;     // where it was named, for errors
  // The name it was given by where that is an alias (Kernel Tuner's
  // greedy_ils for local), else empty: an option of Kernel Tuner's that
  // means another thing there is then refused (strategy_options).
  std::string strategy_alias;
  std::vector<OptionValue> options;  // the strategy's options (search.options), checked at load
  std::optional<std::size_t> max_evaluations;
  SourceLocation max_evaluations_where;  // where it was given (a replay refuses one larger than its space)
  // The budget is where Kernel Tuner's strategy stops by itself (a T1
  // Search without a Budget), not one the user gave: a smaller space caps
  // it, as Kernel Tuner stops when the space runs out, and another strategy
  // named on the command line drops it with the strategy.
  bool budget_is_strategys_stop = false;
  // The budget as a share of each size's valid configs (rounded up), for a
  // spec whose sizes prune the space differently. A spec gives one of the
  // two; set both here, the smaller budget holds.
  std::optional<double> max_fraction;
  std::optional<Seconds> max_time;
  std::uint64_t seed = 1;
  std::vector<MatmulRule> rules;  // non-empty: every size's search starts from the rule config (rules.hpp)
  // search.seeds: configs a kernel engineer knows to try, proposed after the
  // rule config and before the search, at each size where they are valid
  // (named in part in the spec; the default config fills in the rest).
  std::vector<Config> seeds;
  // Transfer across sizes: each size's search starts with this many of the
  // fastest configs of the nearest sizes tuned before (0: none).
  std::size_t transfer = 3;
};

struct OutputSettings {
  std::filesystem::path db;  // empty: <out-dir>/tunekit.db
  // Per output writer (output.hpp), by name: the file it writes instead of
  // its default, e.g. {"csv", "results/gemm.csv"}; an empty path (`csv:
  // true` in a spec) is the writer's default file.
  std::map<std::string, std::filesystem::path, std::less<>> files;
  // Writers switched off (`json: false`), even those that write by default.
  std::set<std::string, std::less<>> off;
  // Where the spec gives each file of `files` and `db` (errors about the
  // file point there); none for one a flag gave.
  std::map<std::string, SourceLocation, std::less<>> where;
};

// The placeholders a command kernel's build sets to the variant's paths
// (below); no parameter or size may take their names.
inline constexpr std::string_view kVariantPlaceholders[] = {"source", "dir", "binary"};

// Application-level tuning (kernel.language: command, msKPP autotune_v2):
// each variant of the source is built by the user's build command and
// measured by running the user's program. Every argv element may hold
// placeholders: {source} (the variant's source file), {dir} (the variant's
// folder), {binary} ({dir}/app), {NAME} for a parameter (and, in `run`, a
// problem size); `{{` and `}}` are literal braces. Arguments are passed to
// the program as they are, never through a shell.
struct TimeSource {
  enum class Kind { wall, regex, json } kind = Kind::wall;
  std::string pattern;  // regex: the first group (else the whole match) of its last match;
                        // json: a dotted path such as "result.time" or "runs[0].us"
  double to_us = 1.0;   // multiplier from the printed unit to microseconds
  SourceLocation where;
};

struct ApplicationSpec {
  std::vector<std::string> build;  // argv; empty: nothing to build
  std::vector<std::string> run;    // argv; required
  SourceLocation run_where;        // where `run` is written (its placeholders are checked once the sizes are known)
  TimeSource time;                 // default: the run's wall time
  std::size_t warmup = 1;          // runs before the timed ones
  Seconds build_timeout = kDefaultBuildTimeout;
  std::optional<Seconds> run_timeout;  // per run; default: measure.timeout
  std::filesystem::path workdir;       // absolute; the working directory of build and run (default: the spec's folder)
  SourceLocation where;
};

// The {NAME} placeholders of one argv element, in order. Throws InputError
// at `where` for an unclosed '{', a stray '}' or a NAME that is not an
// identifier.
std::vector<std::string> placeholder_names(std::string_view text, const SourceLocation& where = {});
// `text` with each {NAME} replaced by the value of NAME (Value::str()).
// Throws InputError at `where` as above, and for a NAME `values` lacks.
std::string substitute_placeholders(std::string_view text, const Bindings& values, const SourceLocation& where = {});

struct Spec {
  std::filesystem::path file;  // the spec file; the source when there is none
  std::string name;            // for reports and the store; default: the entry
  KernelSpec kernel;
  std::vector<ArgumentSpec> arguments;
  std::vector<Bindings> sizes;          // at least one (possibly empty) binding set
  std::vector<std::string> size_names;  // the sizes' names in the order the spec declares them
  std::vector<Parameter> parameters;
  std::vector<Expression> constraints;
  std::vector<Config> configs;  // explicit list (msKPP); empty = the whole space
  std::optional<Config> default_config;
  SourceLocation default_config_where;  // where `default:` is written (its problems are said there)
  // `base:`: CCCL's base variant (TUNE_BASE=1) sets no parameter, yet a
  // launch, entry, argument or kernel.defines may read one; these are the
  // values it reads there (CUB's own policy's). Never defined in the base's
  // build. Empty when not given.
  Config base_values;
  SourceLocation base_values_where;
  ReferenceSpec reference;
  ToleranceSetting tolerance;
  MeasureSettings measure;
  SearchSettings search;
  OutputSettings output;
  std::optional<ApplicationSpec> application;  // kernel.language: command
  std::vector<Metric> metrics;                 // user metrics (metrics:), in declaration order
  Objective objective;                         // what "best" means (objective:); default: the median time
  // What loading found worth saying but not refusing (a backend's check
  // that could not run, and why): the tune warns with each.
  std::vector<std::string> warnings;
  // The device the file was written for (a T1 file's Device.Name), where it
  // names one: a tune on a device whose name does not hold it warns.
  std::string intended_device;
  SourceLocation intended_device_where;
  // The device the file picks (a T1 file's Device.DeviceId: an index among
  // the backend's devices, as `tunekit devices` lists them), where it picks
  // one: the tune runs there unless `tune --device-index` says otherwise.
  std::optional<std::int64_t> device;
  SourceLocation device_where;
};

// Loads a YAML or JSON spec. Paths inside it are relative to its folder.
// Throws InputError naming file, line and column for anything malformed:
// unknown keys, missing fields, wrong types, bad expressions.
Spec load_spec(const std::filesystem::path& file);

// What a Kernel Tuner T1 file says of its search, read as load_spec reads
// a T1 file's for a tune: Search (the strategy, Kernel Tuner's names taken,
// and its options) and Budget (else the count Kernel Tuner's strategy stops
// at by itself) into `search`. For `tunekit replay --t1`, whose space is
// load_t1's, so the file may describe a space alone. Throws InputError
// located in the file, as load_spec does.
struct T1Search {
  SearchSettings search;    // "auto" and no budget where the file gives neither
  bool has_search = false;  // the file has a Search
  // What was left out, each message located in the file: of Search's
  // options, and of Budget (or the note that it has none).
  std::vector<std::string> search_warnings, budget_warnings;
  std::string kernel_name;  // KernelSpecification.KernelName; empty where it gives none
  SourceLocation kernel_name_where;
};
T1Search load_t1_search(const std::filesystem::path& file);

// Why the spec's default config is not valid at `size` on a machine with
// these properties: a value outside its parameter's list, or the first
// constraint it breaks, with the values that constraint saw, machine
// properties named as such ("... breaks `l1d_bytes // 2 <= KC * NR * 4`
// (file:line:col) with KC = 256, NR = 16 and this machine's l1d_bytes =
// 49152"). nullopt when it is valid, or the spec has no default.
std::optional<std::string> default_config_problem(const Spec& spec, const Bindings& size,
                                                  const Bindings& machine_properties);

// True where some argument's values are compared with the reference: an
// `out` or `inout` one, not made by a Triton setup function (whose outputs
// are inputs the kernel reads). Without one a reference has nothing to
// verify, and a trial that passed would say nothing.
bool has_compared_output(const Spec& spec);
// The tolerance the outputs are compared with: the spec's atol and rtol,
// and for either it does not give, the largest default of its compared
// outputs' types (f32's where none is compared).
Tolerance applied_tolerance(const Spec& spec);

// Every expression of `spec` whose names take values at a trial: the
// constraints, the kernel's and the reference's launch geometry (grid,
// block, cluster, shared memory) and the arguments' sizes, values, shapes
// and tensor maps.
std::vector<const Expression*> trial_expressions(const Spec& spec);

// Throws InputError, located at the expression, for the first name in
// trial_expressions(spec) that is neither a parameter nor one of `known`
// (a size's names and the machine's properties), with the nearest name.
// Without it such a typo fails every trial, each one stored as the
// config's failure.
void check_expression_names(const Spec& spec, const Bindings& known);

// Throws InputError, located at the parameter, for a parameter named like
// one of the machine's `properties`: its value would silently replace the
// machine's in every constraint and argument that names it.
void check_parameter_names(const Spec& spec, const Bindings& properties);

// True for the extensions a spec file has (.yaml, .yml, .json); anything
// else is taken for a kernel source.
bool is_spec_file(const std::filesystem::path& path);

// A spec for a bare source: parameters from its %RANGE% lines. The caller
// supplies the entry and arguments (from the command line).
Spec spec_from_source(const std::filesystem::path& source);

// Every combination of the axes' values, the first axis varying slowest.
std::vector<Bindings> size_grid(const std::vector<Parameter>& axes);

// An nvbench-style axis from the command line: "M=[1,4,16]",
// "N=[1024:8192:1024]" (inclusive), "K[pow2]=[7:12]" (2^7 ... 2^12) or
// "M=64". Throws InputError saying what is expected.
Parameter parse_axis(std::string_view text);

// The spec's sizes with the given axes applied: each size is repeated for
// every combination of the axes' values, which replace the same names.
std::vector<Bindings> apply_axes(const std::vector<Bindings>& sizes, const std::vector<Parameter>& axes);

// "M=4096" -> {"M", 4096}. A value reads as an unquoted one in a spec: an
// int (4096, 0x1000, 0o10000), then a float (1e3), else a string; an
// infinity, a NaN or an int beyond 64 bits is an error. Errors are located
// at `where` (the flag that gave the text).
std::pair<std::string, Value> parse_assignment(std::string_view text, const SourceLocation& where = {});
// "64:256:64" (inclusive), "[1,2,4]" style lists are handled by callers.
std::vector<Value> parse_range(std::string_view text, const SourceLocation& where);

}  // namespace tunekit
