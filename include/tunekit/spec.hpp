#pragma once
// A tuning problem as the user declares it: in a YAML/JSON spec file, or in
// the kernel source itself (%RANGE% annotations).
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "tunekit/constraint.hpp"
#include "tunekit/measure.hpp"
#include "tunekit/space.hpp"

namespace tunekit {

enum class ElementType { f32, f64, f16, bf16, i8, i16, i32, i64, u8, u16, u32, u64 };
std::string_view to_string(ElementType t);
std::optional<ElementType> element_type_from_string(std::string_view s);
std::size_t size_of(ElementType t);
const char* c_type_name(ElementType t);  // "float", "int32_t", ...
bool is_floating(ElementType t);

enum class Fill { random, constant, sequence, zeros };
enum class Role { in, out, inout, scalar };
std::string_view to_string(Fill f);
std::string_view to_string(Role r);

struct ArgumentSpec {
  std::string name;
  ElementType type = ElementType::f32;
  Role role = Role::in;
  // Buffers: element count (an expression over sizes and parameters), fill.
  std::optional<Expression> size;
  Fill fill = Fill::random;
  double fill_value = 0;  // constant value, or the first value of a sequence
  // Scalars (role == scalar): the value, an expression.
  std::optional<Expression> value;
  SourceLocation where;
};

// How a config's values reach the source.
enum class Injection {
  automatic,      // tunable lines if the source has them, else #defines
  defines,        // -D NAME=value on the compiler command line (Kernel Tuner)
  tunable_lines,  // msKPP: "// tunable" and "// tunable: ALIAS" lines replaced
  range_defines,  // CCCL: "#define NAME value" prepended to the source
};

// How a device kernel is launched: CUDA blocks of threads, OpenCL
// work-groups of work-items. Expressions over sizes and parameters.
struct LaunchSpec {
  std::vector<Expression> grid;   // 1 to 3: blocks (work-groups) per dimension
  std::vector<Expression> block;  // 1 to 3: threads (work-items) per block
  std::optional<Expression> shared_memory;  // dynamic shared memory, bytes (CUDA)
};

struct KernelSpec {
  std::filesystem::path source;  // absolute after loading
  // The function to call. `{NAME}` is replaced by the config's value of NAME,
  // so a template kernel is named by expression: "gemm<{BM}, {BN}>".
  std::string entry;
  std::string language = "c++";  // "c++" or "c" (CPU), "cuda", "opencl"
  // CPU: the compiler command (empty: $CXX, else c++; C: $CC, else cc).
  // CUDA: "nvrtc" (default, in-process) or "nvcc".
  std::string compiler;
  std::vector<std::string> flags{"-O3", "-march=native"};  // device languages default to none
  Injection injection = Injection::automatic;
  std::string arch;  // CUDA: e.g. "sm_90a"; empty: the device's own
  LaunchSpec launch;
};

struct ReferenceSpec {
  enum class Kind { none, function, default_config } kind = Kind::default_config;
  std::filesystem::path source;  // for function; empty = the kernel's source
  std::string entry;             // for function
  std::vector<std::string> flags;
};

struct Tolerance {
  double atol = 1e-6;
  double rtol = 1e-5;
};

enum class StrategyKind { exhaustive, random };

struct SearchSettings {
  StrategyKind strategy = StrategyKind::exhaustive;
  std::optional<std::size_t> max_evaluations;
  std::optional<Seconds> max_time;
  std::uint64_t seed = 1;
};

struct OutputSettings {
  std::filesystem::path db;    // empty: <out-dir>/tunekit.db
  std::filesystem::path csv;   // empty: <out-dir>/<name>.csv
  std::filesystem::path json;  // empty: <out-dir>/<name>.json
};

struct Spec {
  std::filesystem::path file;  // the spec file; the source when there is none
  std::string name;            // for reports and the store; default: the entry
  KernelSpec kernel;
  std::vector<ArgumentSpec> arguments;
  std::vector<Bindings> sizes;  // at least one (possibly empty) binding set
  std::vector<Parameter> parameters;
  std::vector<Expression> constraints;
  std::vector<Config> configs;  // explicit list (msKPP); empty = the whole space
  std::optional<Config> default_config;
  ReferenceSpec reference;
  Tolerance tolerance;
  MeasureSettings measure;
  SearchSettings search;
  OutputSettings output;
};

// Loads a YAML or JSON spec. Paths inside it are relative to its folder.
// Throws InputError naming file, line and column for anything malformed:
// unknown keys, missing fields, wrong types, bad expressions.
Spec load_spec(const std::filesystem::path& file);

// True for the extensions a spec file has (.yaml, .yml, .json); anything
// else is taken for a kernel source.
bool is_spec_file(const std::filesystem::path& path);

// A spec for a bare source: parameters from its %RANGE% lines. The caller
// supplies the entry and arguments (from the command line).
Spec spec_from_source(const std::filesystem::path& source);

// "M=4096" -> {"M", 4096}. Values parse as int, then float, else string.
std::pair<std::string, Value> parse_assignment(std::string_view text);
// "64:256:64" (inclusive), "[1,2,4]" style lists are handled by callers.
std::vector<Value> parse_range(std::string_view text, const SourceLocation& where);

}  // namespace tunekit
