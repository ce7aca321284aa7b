#pragma once
// What the subcommands share about their flags: the checks that make a bad
// value bad input at its flag (exit 1), not a crash or a silent default.
#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <exception>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <CLI/CLI.hpp>

#include "tunekit/policy.hpp"
#include "tunekit/spec.hpp"
#include "tunekit/units.hpp"

namespace tunekit::cli {

// A duration flag ("10s", "5m"): bad text, or with `positive` a duration of
// 0 or less, throws InputError naming the flag.
Seconds duration_flag(const std::string& flag, const std::string& text, bool positive);

// A budget given as a share of the valid configs (--max-fraction): outside
// (0, 1] throws InputError naming the flag.
double fraction_flag(const std::string& flag, double value);

// A whole-number flag's lower bound, with a message that says so.
CLI::Validator at_least(std::uint64_t min);

// `-s,--size NAME=VALUE` on `cmd`, the same in every subcommand: repeated,
// or several names in one flag separated by commas (-s M=64,N=64), each
// NAME=VALUE into `sizes` as if given alone. A comma inside brackets stays
// (N=[1024,2048] is one value, which the size's check then says is -a's).
CLI::Option* add_size_flag(CLI::App* cmd, std::vector<std::string>& sizes, const std::string& help);

// The names a size flag (-s, -a) may give a value: the spec's sizes and
// the free names of its expressions and of an application's commands, less
// its parameters.
std::set<std::string> size_names_used(const Spec& spec);

// The keys of a --properties FILE (`properties`) against `read`, the names
// a spec reads: a key it does not read that is a near miss of one it reads
// and the file lacks ("l1d_byts" for l1d_bytes) throws InputError naming the
// file, since the machine's own value (or none) would be used unseen. Keys
// the spec does not read are otherwise fine: a `tunekit devices --json`
// object lists every property of its device.
void check_property_names(const std::set<std::string>& read, const Bindings& properties, const std::string& file);
// The device of the kernel's backend that tune and resolve use:
// --device-index's (`flag`), else the spec's (a T1 file's Device.DeviceId),
// else 0. An index the backend lists no device for is the input's error at
// whoever gave it, before anything is built; where the backend lists none
// here (a GPU's, on a machine without one), starting it says why, as it
// would for any index.
int device_index(const Spec& spec, std::optional<std::uint64_t> flag);

// This machine's properties, as its backend for `language` gives them
// (what constraints read); throws std::runtime_error where that backend
// cannot start here.
Bindings this_machines_properties(const std::string& language);

// A property that `file` gives as a string where this machine's backend for
// `language` has a number (a count, a size, a rate): bad input at the file,
// since a constraint comparing it would fail on every config. Unchecked
// where that backend cannot start here (a GPU's, on a machine without one).
void check_property_types(const Bindings& given, const std::string& language, const std::string& file);

// A size given on the command line (`flag`, as typed): a name of `known`,
// not a parameter, not a property of the machine (`machine`: its
// properties) unless the spec's sizes declare that name, and numbers; else
// InputError naming the flag.
void check_size_flag(const Spec& spec, const std::set<std::string>& known, const Bindings& machine,
                     const std::string& flag, const std::string& name, const std::vector<Value>& values);
// One size from repeated --size NAME=VALUE flags (`flags`, each as typed),
// for a command that works on one size (`command`: space, replay). Checked
// as check_size_flag() says when `spec` is given, else only as numbers; a
// name given twice is refused rather than the last value taken.
Bindings one_size_from_flags(const std::vector<std::string>& flags, const Spec* spec, const Bindings& machine,
                             const std::string& command);
// The -s and -a flags (each as typed) as axes over a spec's sizes, -s
// NAME=VALUE an axis of one value, as tune, select and emit take them: each
// value checked as a number, and a name given twice (by either flag)
// refused at its flag rather than the later flag replacing the earlier one
// in silence. Each Parameter's `where` is its flag as typed.
struct SizeAxes {
  std::vector<Parameter> overrides;  // from -s
  std::vector<Parameter> axes;       // from -a
};
SizeAxes size_axes_from_flags(const std::vector<std::string>& sizes, const std::vector<std::string>& axes);
// The number part of that check, for a command that accepts other names too.
void check_size_values(const std::string& flag, const std::string& name, const std::vector<Value>& values);

// What a command read that no file it writes may replace (an export pointed
// at the store by mistake would destroy a week of measurements): a name
// for each ("the spec") and its path.
using KeptFiles = std::vector<std::pair<std::string, std::filesystem::path>>;
// The results store `db`, the spec, the kernel's source and the reference's.
KeptFiles kept_inputs(const Spec& spec, const std::filesystem::path& db);

// A file a command will write, and who named it: a flag ("--csv"), or a
// spec's key ("output.csv", located at its line and column).
struct OutputFile {
  std::string named_by;
  SourceLocation where;
  std::filesystem::path file;
  // The file emit writes here, if it is one of those. An existing file
  // (not empty) is replaced only by an output of its own kind, as
  // emitted_kind_of() tells it: emit's output only where it is of `kind`
  // (not a tune's report, a hand-written header); any other output (a
  // tune's reports, which each run writes again) only where it is none of
  // emit's (a policy a tune's --json named by mistake is not lost).
  std::optional<EmittedKind> kind;
  static OutputFile of_flag(const std::string& flag, std::filesystem::path file) {
    return {flag, SourceLocation{flag}, std::move(file), {}};
  }
};

// InputError where `out` was named when its file is one of `kept`, is no
// file to write (unsafe_output(): a folder, an SQLite database, a name too
// long), or is an existing file of another kind than `out` writes.
void check_output_file(const OutputFile& out, const KeptFiles& kept);

// InputError when two of a command's outputs are one file: the last written
// would silently replace the other.
void check_distinct_outputs(const std::vector<OutputFile>& outputs);

// NAME=VALUE flags, each given on its own or several separated by commas:
// split at a comma only where NAME= follows it, so that a value keeps its
// own commas ("L1=GemmShape<64, 64, 128>,L0=8" is two).
std::vector<std::string> split_assignments(const std::vector<std::string>& given);

// Gives every whole-number and real-number flag of every subcommand of
// `app` a check that runs before CLI11 converts the value.
void check_numbers(CLI::App& app);

// --arg NAME:TYPE:SIZE[:FILL[:ROLE]] or --arg NAME:TYPE=EXPR (a scalar);
// InputError naming the flag.
ArgumentSpec parse_arg_option(const std::string& text);

// The spec a command reads for TARGET: a spec file, which --entry and --arg
// may not be given with (its own kernel's entry and arguments describe the
// call), or a bare source, which needs both, and is tuned (and then found
// again by select, emit and report) as the spec they make with its
// annotations.
Spec spec_of_target(const std::filesystem::path& target, const std::string& entry,
                    const std::vector<std::string>& args);

// The flags that make another kernel of a spec (they are part of its
// hash): tune takes them, and select, emit and report take them to find
// that tune's trials again.
struct KernelFlags {
  std::string compiler;
  std::string flags;      // space separated
  std::string reference;  // a function NAME, 'default' or 'none'
  std::optional<double> atol, rtol;
};
void add_kernel_flags(CLI::App* cmd, KernelFlags& k, bool as_tuned = false);
// `k` applied to `spec`, each held to what the spec's own setting may be;
// InputError naming the flag (a command kernel compares and builds nothing
// of tunekit's, so none of them applies to one).
void apply_kernel_flags(Spec& spec, const KernelFlags& k);

// Says `e` as every subcommand does, "error: MESSAGE" on stderr (on a
// terminal, on a line of its own past a progress bar drawn in place), and
// returns the exit status it calls for: 1 for bad input (InputError), 2 for
// another error.
int report_error(const std::exception& e);

}  // namespace tunekit::cli
