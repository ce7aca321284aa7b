// The built-in output writers, one entry each, and the one way they are run.
#include <fcntl.h>
#include <unistd.h>

#include <climits>
#include <cerrno>
#include <cstring>
#include <exception>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string_view>
#include <system_error>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/detail/process.hpp"
#include "report/detail/files.hpp"
#include "tunekit/html_report.hpp"
#include "tunekit/output.hpp"
#include "tunekit/report.hpp"

namespace tunekit {

namespace {

namespace fs = std::filesystem;

// A writer of `<kernel><extension>` in the out folder, written by default.
WriterInfo file_writer(std::string name, std::string summary, std::string extension,
                       std::function<void(const TuneReport&, std::ostream&)> write) {
  WriterInfo w;
  w.name = std::move(name);
  w.summary = std::move(summary);
  w.default_file = [extension](const TuneReport& r, const OutputContext& c) {
    return c.out_dir / (r.kernel + c.suffix + extension);
  };
  w.by_default = [](const TuneReport&) { return true; };
  w.write = std::move(write);
  return w;
}

void register_builtin_writers(Registry<WriterInfo>& r) {
  WriterInfo console;
  console.name = "console";
  console.summary = "one line per trial, the best config, its speedup over the default, and where results went";
  console.writes_file = false;
  console.by_default = [](const TuneReport&) { return true; };
  console.write = [](const TuneReport& report, std::ostream& out) { out << format_summary(report); };
  r.add(std::move(console));

  r.add(file_writer(
      "csv",
      "one row per trial: config, time, status, verification, noise, size, error, then a column per "
      "metric, size and parameter, and per resource its build reported (registers, spills); Origin last where "
      "CCCL's base variant is among the trials. Each column's name is once in the header: a metric, size, "
      "parameter or resource named like a column before it, or `Origin` where that column is there, gets its kind "
      "after its name (`Status (parameter)`, `Noise (metric)`, `Origin (parameter)`). Units: `Time(us)` (the "
      "median) and `Min(us)` in microseconds; `Noise` (the half-width of the median's 95% confidence interval; under "
      "6 samples, of their range, which holds the median less surely: 50% at 2 samples, 93.75% at 5) "
      "and `Spread` (the standard deviation) as fractions of the time, 0.02 being 2%; `MaxAbsDiff` in the "
      "output's own units and `MaxRelErr` as a fraction; `Samples` a count",
      ".csv",
      [](const TuneReport& report, std::ostream& out) { out << format_csv(report.all_trials(), columns_of(report)); }));
  r.add(file_writer(
      "json",
      "the whole report: per size the best, the baseline, seeds and every trial; each time's key "
      "gives its unit (`time_us`, `min_us`, `samples_us` in microseconds, `build_s`, `eval_s` in "
      "seconds), and `noise`, `spread` and `max_rel_err` are fractions as in the CSV (`noise_level`, the level of "
      "the noise's interval: 0.95 or more from 6 samples on); a trial's "
      "`verified` says its outputs matched the reference's, `compared` that they were compared at all "
      "(a `wrong_result` of a comparison: `verified` false, `compared` true; nothing compared: both "
      "false)",
      ".json", [](const TuneReport& report, std::ostream& out) { out << format_json(report); }));
  r.add(file_writer("html", "a self-contained page with plots: fastest configs, convergence, parameters, failures",
                    ".html", [](const TuneReport& report, std::ostream& out) {
                      HtmlReportOptions o;
                      o.title = report.kernel + " on " + report.device;
                      o.target_noise = report.target_noise;
                      o.metrics = report.metrics;
                      o.objective = report.objective;
                      o.warnings = report.warnings;
                      for (const auto& s : report.sizes)
                        if (!s.error.empty()) o.stopped.emplace_back(s.size, s.error);
                      for (const auto& s : report.sizes)
                        if (s.stopped_part_way)
                          o.best_of_part.emplace_back(s.size, stopped_part_way_text(*s.stopped_part_way));
                      for (const auto& s : report.sizes)
                        if (s.baseline && s.baseline_is_spec_default) {
                          o.baseline = s.trials[*s.baseline].config;
                          break;
                        }
                      out << html_report(report.all_trials(), o);
                    }));

  WriterInfo t4 =
      file_writer("t4",
                  "the T4 results file Kernel Tuner writes (schema 1.0.0), for the tools that read it; "
                  "each trial with its problem size",
                  ".t4.json", [](const TuneReport& report, std::ostream& out) { out << format_t4(report); });
  t4.by_default = [](const TuneReport&) { return false; };
  r.add(std::move(t4));

  WriterInfo mskpp;
  mskpp.name = "mskpp";
  mskpp.summary = "msKPP's results table TUNEKIT_RESULTS_<time>.csv: No., Config, Duration(us), Args";
  // A file per run, as msKPP writes: two runs within one second (a --where
  // rerun) take _2, _3, ... rather than replace the first's table.
  mskpp.default_file = [](const TuneReport&, const OutputContext& c) {
    const std::string name = results_file_name(c.when);
    const std::string stem = name.substr(0, name.size() - std::string_view(".csv").size());
    fs::path file = c.out_dir / name;
    std::error_code ec;
    for (int k = 2; fs::exists(file, ec); ++k) file = c.out_dir / fmt::format("{}_{}.csv", stem, k);
    return file;
  };
  mskpp.by_default = [](const TuneReport& report) { return report.application; };
  mskpp.write = [](const TuneReport& report, std::ostream& out) {
    std::vector<std::vector<std::string>> commands;
    for (const auto& s : report.sizes) commands.insert(commands.end(), s.commands.begin(), s.commands.end());
    out << format_results_csv(report.all_trials(), commands);
  };
  r.add(std::move(mskpp));
}

}  // namespace

Registry<WriterInfo>& writers() {
  static Registry<WriterInfo>& registry = []() -> Registry<WriterInfo>& {
    static Registry<WriterInfo> r("output writer",
                                  {{"db", "the spec's output: {db: FILE} names the results store's file"}});
    register_builtin_writers(r);
    return r;
  }();
  return registry;
}

std::vector<PlannedOutput> plan_outputs(const TuneReport& report, const OutputSettings& settings,
                                        const OutputContext& context, const std::vector<std::string>& names,
                                        const SourceLocation& where) {
  std::vector<const WriterInfo*> picked;
  if (names.empty()) {
    for (const WriterInfo& w : writers().entries())
      if (!settings.off.count(w.name) && ((w.by_default && w.by_default(report)) || settings.files.count(w.name)))
        picked.push_back(&w);
  } else {
    for (const auto& name : names) picked.push_back(&writers().get(name, where));
  }
  std::vector<PlannedOutput> out;
  for (const WriterInfo* w : picked) {
    PlannedOutput o{w, {}};
    if (w->writes_file) {
      auto given = settings.files.find(w->name);
      o.file =
          given != settings.files.end() && !given->second.empty() ? given->second : w->default_file(report, context);
    }
    out.push_back(std::move(o));
  }
  return out;
}

void write_outputs(TuneReport& report, const std::vector<PlannedOutput>& outputs, std::ostream& console) {
  // The files first, so that the console lists those written; a file that
  // cannot be written (a full disk) costs neither the others nor the
  // console, and its failure is raised after them.
  std::vector<std::exception_ptr> failed;
  std::vector<std::string> why;
  for (const auto& o : outputs) {
    if (!o.writer->writes_file) continue;
    try {
      write_output(*o.writer, report, o.file, console);
      report.files.emplace_back(o.writer->name, o.file);
    } catch (const std::exception& e) {
      failed.push_back(std::current_exception());
      why.push_back(e.what());
    }
  }
  for (const auto& o : outputs)
    if (!o.writer->writes_file) write_output(*o.writer, report, o.file, console);
  if (failed.size() == 1) std::rethrow_exception(failed.front());
  // One exception, which the caller prints as one "error: " line: the
  // lines past the first carry their own, so that each reads as the error
  // it is (a log's grep for "error:" finds every file).
  if (!failed.empty()) throw std::runtime_error(fmt::format("{}", fmt::join(why, "\nerror: ")));
}

std::optional<std::string> unsafe_output(const fs::path& file) {
  std::error_code ec;
  // "-" reads as standard output elsewhere; here it would be a file named so.
  if (file == "-")
    return "'-' would be a file named '-', not standard output: every export is written to a file; give its path "
           "(the console shows the summary)";
  // Said now, not as an error of some later call (a long spec name makes
  // long default file names).
  for (const auto& part : file)
    if (part.native().size() > NAME_MAX)
      return fmt::format("'{}' has a name of {} bytes; a file system takes at most {}", file.string(),
                         part.native().size(), NAME_MAX);
  if (fs::is_directory(file, ec)) return "'" + file.string() + "' is a folder; expected the path of a file to write";
  // A file is written beside its path and renamed over it: a device (as
  // root, /dev/null) would become a regular file.
  if (const auto st = fs::status(file, ec); fs::exists(st) && !fs::is_regular_file(st))
    return "'" + file.string() +
           "' is not a regular file (a device, a pipe or a socket); expected the path of a file "
           "to write";
  fs::path folder = ".";  // the nearest folder there is: the file, or the folders to make for it, go there
  for (fs::path up = file.parent_path(); !up.empty(); up = up.parent_path()) {
    if (fs::exists(up, ec)) {
      if (!fs::is_directory(up, ec))
        return "'" + up.string() + "' is not a folder, so '" + file.string() + "' cannot be written under it";
      folder = up;
      break;
    }
    if (up == up.parent_path()) break;
  }
  // Tried, not judged from the mode bits: root passes every access() check,
  // and /proc or a read-only mount still refuse. Said before a tune of hours,
  // not after it.
  const fs::path probe = folder / (".tunekit-probe." + detail::unique_suffix());
  if (const int fd = ::open(probe.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600); fd >= 0) {
    ::close(fd);
    fs::remove(probe, ec);
  } else {
    return fmt::format("'{}' cannot be written: {} cannot hold a new file ({})", file.string(), folder.string(),
                       std::strerror(errno));
  }
  std::ifstream f(file, std::ios::binary);
  char header[16] = {};
  if (f && f.read(header, sizeof header) &&
      std::string_view(header, sizeof header) == std::string_view("SQLite format 3\0", 16))
    return "'" + file.string() + "' is an SQLite database (a results store?); an output may not replace it";
  return std::nullopt;
}

void write_output(const WriterInfo& writer, const TuneReport& report, const fs::path& file, std::ostream& console) {
  // A writer may be a plugin: its failure says whose it is.
  auto write = [&](std::ostream& out) {
    try {
      writer.write(report, out);
    } catch (const std::exception& e) {
      throw std::runtime_error(fmt::format("the output writer '{}' failed: {}", writer.name, e.what()));
    }
  };
  if (!writer.writes_file) {
    write(console);
    return;
  }
  if (auto why = unsafe_output(file)) throw InputError({"output " + writer.name}, *why);
  std::ostringstream text;
  write(text);
  write_file_atomically(file, text.str());
}

void write_file_atomically(const std::filesystem::path& path, const std::string& content) {
  std::error_code ec;
  // A link is written through: the file it names is replaced, not the link.
  // Followed by hand: a link to a file not written yet is written through
  // too (weakly_canonical would keep the link's own name).
  fs::path file = path;
  for (int hops = 0; fs::is_symlink(fs::symlink_status(file, ec)); ++hops) {
    const fs::path target = fs::read_symlink(file, ec);
    if (ec || hops == 40)
      throw std::runtime_error(fmt::format("cannot write {}: {}", path.string(),
                                           ec ? ec.message() : std::string("too many levels of links")));
    file = target.is_absolute() ? target : file.parent_path() / target;
  }
  if (const auto st = fs::status(file, ec); fs::exists(st) && !fs::is_regular_file(st))
    throw std::runtime_error(fmt::format("cannot write {}: it is not a regular file", path.string()));
  if (auto parent = file.parent_path(); !parent.empty()) {
    std::filesystem::create_directories(parent, ec);
    if (ec) throw std::runtime_error(fmt::format("cannot create directory {}: {}", parent.string(), ec.message()));
  }
  // A name of this call's own: two tuners writing the same report into a
  // shared folder each rename a whole file in.
  std::filesystem::path tmp = file;
  tmp += "." + detail::unique_suffix() + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) throw std::runtime_error(fmt::format("cannot write {}: {}", file.string(), std::strerror(errno)));
    out << content;
    out.flush();
    if (!out) {
      const std::string reason = std::strerror(errno);  // before the removal sets errno
      out.close();
      std::error_code ignored;  // a part written to a full disk is not left behind
      std::filesystem::remove(tmp, ignored);
      throw std::runtime_error(fmt::format("cannot write {}: {}", file.string(), reason));
    }
  }
  std::filesystem::rename(tmp, file, ec);
  if (ec) {
    std::error_code ignored;  // the rename's reason is the one to report
    std::filesystem::remove(tmp, ignored);
    throw std::runtime_error(fmt::format("cannot write {}: {}", file.string(), ec.message()));
  }
}

}  // namespace tunekit
