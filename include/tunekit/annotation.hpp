#pragma once
// Tunables declared inside kernel sources.
//  msKPP:  `constexpr int BM = 64; // tunable`      (value after '=' replaced)
//          `using Tile = T<64, 64>; // tunable: TILE` (line replaced by TILE)
//  CCCL:   `// %RANGE% TUNE_BM bm 32:256:32`         (a parameter, inclusive)
#include <string>
#include <string_view>
#include <vector>

#include "tunekit/error.hpp"
#include "tunekit/space.hpp"
#include "tunekit/spec.hpp"

namespace tunekit {

struct RangeAnnotation {
  std::string name;   // TUNE_BM
  std::string label;  // bm
  std::int64_t start = 0, end = 0, step = 1;
  int line = 0;
  int column = 0;  // of the name
};

// All %RANGE% lines of `source`. Throws InputError (file, line, column) on a
// malformed line, on a name that is reserved or a C/C++ keyword, and on a
// parameter the source defines itself (an unguarded #define, which would
// replace every config's value).
std::vector<RangeAnnotation> parse_range_annotations(std::string_view source, const std::string& file);
// The %RANGE% parameters of `source` that it names nowhere but on their own
// lines, where it includes no header of its own ("..."): each config of
// them builds the same code.
std::vector<std::string> unnamed_range_parameters(std::string_view source, const std::string& file);
std::vector<Parameter> parameters_from_ranges(const std::vector<RangeAnnotation>& ranges, const std::string& file);

bool has_tunable_lines(std::string_view source);
// Whether configs reach `source` through its tunable lines: the spec asks
// for them (injection: tunable), or leaves it to the source (automatic),
// which has some.
bool uses_tunable_lines(Injection requested, std::string_view source);
// The names a config of `source` may give: what each tunable line assigns,
// or its ALIAS; sorted. Throws InputError (file, line, column) for a
// malformed tunable line.
std::vector<std::string> tunable_names(std::string_view source, const std::string& file);
// A name's first '// tunable' line, which a config that gives the name a
// value replaces: where it is, and what every build keeps where no
// parameter names it.
struct TunableLine {
  std::string name;
  SourceLocation where;    // of the name (an alias's, in its comment)
  std::string as_written;  // the value after '=' ("64"), or an alias's whole line
  bool alias = false;
};
// Each name's first tunable line, in the order of the source. Throws as
// tunable_names() does.
std::vector<TunableLine> tunable_lines(std::string_view source, const std::string& file);
// " (its tunable names: A, B)", or " (it has none)": the tail of a message
// about a name that matches no tunable line.
std::string tunable_names_text(const std::vector<std::string>& names);

// msKPP substitution of every key of `config`. Throws InputError naming the
// key and `file` when a key matches no line.
std::string apply_tunable_lines(std::string_view source, const Config& config, const std::string& file);

// "#define NAME value" lines for each entry, then a #line directive so
// compiler messages still point into the original file.
std::string prepend_defines(std::string_view source, const Config& config, const std::string& file);

// The macro CCCL's tuning scripts define to 1 for a source's base variant,
// built without its %RANGE% defines: the benchmark's `#if TUNE_BASE` branch
// then uses CUB's own policy.
inline constexpr std::string_view kTuneBase = "TUNE_BASE";
// Whether `source` has such a branch: a preprocessor conditional (#if,
// #elif, #ifdef, #ifndef) outside comments that reads TUNE_BASE.
bool has_tune_base_branch(std::string_view source);

}  // namespace tunekit
