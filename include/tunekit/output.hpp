#pragma once
// Output writers: what a tune's results become. Each is a plugin in the
// writers() registry: the console summary, CSV, JSON, the HTML report and
// msKPP's results table ship with tunekit. tune() writes no report file;
// whoever runs it (the `tunekit tune` command) picks the writers and where
// they write.
//
// Adding a writer: a WriterInfo in src/report/ and one line in
// src/report/writers.cpp (or writers().add(info) in a program).
#include <chrono>
#include <filesystem>
#include <functional>
#include <optional>
#include <ostream>
#include <string>

#include "tunekit/registry.hpp"
#include "tunekit/tuner.hpp"

namespace tunekit {

struct OutputContext {
  std::filesystem::path out_dir;               // where default files go
  std::chrono::system_clock::time_point when;  // for names that carry a time
  // Added to the default files' names before the extension: a run narrowed
  // by `--where` writes NAME.where-KC_256.csv, so that the full run's files
  // stay as they were.
  std::string suffix;
};

struct WriterInfo {
  std::string name;         // as in `--output NAME` and the spec's `output:` keys
  std::string summary;      // one line, for `tunekit plugins` and the docs
  bool writes_file = true;  // false: it writes to the console
  // The file it writes when none is given (writes_file only).
  std::function<std::filesystem::path(const TuneReport&, const OutputContext&)> default_file;
  // Whether `tunekit tune` runs it when the user picks no writers (none:
  // only when picked).
  std::function<bool(const TuneReport&)> by_default;
  std::function<void(const TuneReport&, std::ostream&)> write;

  // The required parts it lacks ("" when none): see Registry::add.
  std::string missing() const {
    if (!write) return "write";
    if (writes_file && !default_file) return "default_file (it writes a file)";
    return "";
  }
};

// The process-wide registry, with the built-in writers.
Registry<WriterInfo>& writers();

// A writer with the file it writes (empty for the console).
struct PlannedOutput {
  const WriterInfo* writer = nullptr;
  std::filesystem::path file;
};

// The writers to run for `report`: those named in `names` (InputError at
// `where` for an unknown one), else those whose by_default() says so or whose
// file `settings` names; each writes the file `settings` names, else its
// default file.
std::vector<PlannedOutput> plan_outputs(const TuneReport& report, const OutputSettings& settings,
                                        const OutputContext& context, const std::vector<std::string>& names = {},
                                        const SourceLocation& where = {});

// Why `file` must not be written as an output, or nullopt: it is a folder,
// lies under something that is not one, or is an SQLite database (a results
// store). write_output() refuses such a file; a command checks its output
// flags with it before it does any work.
std::optional<std::string> unsafe_output(const std::filesystem::path& file);

// Writes `content` beside `file` and renames it into place, so that a reader
// never sees half of it; creates its folder. Throws std::runtime_error that
// names the file and the system's reason.
void write_file_atomically(const std::filesystem::path& file, const std::string& content);

// Runs the planned writers: the files first, each recorded in report.files,
// then the console writers into `console`, so that a summary can say where
// the files went.
void write_outputs(TuneReport& report, const std::vector<PlannedOutput>& outputs, std::ostream& console);

// Runs `writer` into `file`, written beside it and renamed into place so a
// reader never sees half of it (its folder is created), or into `console`
// when the writer writes no file. Throws std::runtime_error when the file
// cannot be written.
void write_output(const WriterInfo& writer, const TuneReport& report, const std::filesystem::path& file,
                  std::ostream& console);

}  // namespace tunekit
