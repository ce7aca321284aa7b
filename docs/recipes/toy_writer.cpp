// An output writer: the best config of each size as a Markdown table. One
// file; `add_markdown_writer()` is its registration line.
#include "tunekit/output.hpp"

void add_markdown_writer() {
  tunekit::WriterInfo w;
  w.name = "markdown";
  w.summary = "the best config of each size, as a Markdown table";
  // c.suffix names a narrowed run's file apart (--where), so that it does
  // not replace the full run's.
  w.default_file = [](const tunekit::TuneReport& r, const tunekit::OutputContext& c) {
    return c.out_dir / (r.kernel + c.suffix + ".md");
  };
  w.by_default = [](const tunekit::TuneReport&) { return false; };  // only when asked for: --output markdown
  w.write = [](const tunekit::TuneReport& report, std::ostream& out) {
    out << "| size | best config | time (us) |\n|---|---|---|\n";
    for (const auto& s : report.sizes) {
      std::string size;
      for (const auto& [name, value] : s.size) size += (size.empty() ? "" : ", ") + name + "=" + value.str();
      if (!s.best) {
        out << "| " << size << " | none ran correctly | |\n";
        continue;
      }
      const auto& t = s.trials[*s.best];
      out << "| " << size << " | " << t.config.str() << " | " << t.stats.median.count() << " |\n";
    }
  };
  tunekit::writers().add(std::move(w));
}
