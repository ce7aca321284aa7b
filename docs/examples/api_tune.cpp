// Tuning from C++ with libtunekit: load a spec, tune it, read the report,
// write the files the command line writes, and choose across the sizes.
// `tune_from_cpp(spec, out)` prints what it found and returns the best
// config of the first size ("{TILE_I: 16, TILE_J: 64}"), or "" if none ran.
#include <chrono>
#include <filesystem>
#include <iostream>
#include <string>

#include "tunekit/objective.hpp"
#include "tunekit/output.hpp"
#include "tunekit/select.hpp"
#include "tunekit/spec.hpp"
#include "tunekit/tuner.hpp"

std::string tune_from_cpp(const std::filesystem::path& spec_file, const std::filesystem::path& out_dir) {
  // A bad spec throws tunekit::InputError, whose what() is "file:line:col: message".
  tunekit::Spec spec = tunekit::load_spec(spec_file);
  spec.search.strategy = "random";  // what --strategy sets
  spec.search.max_evaluations = 4;  // what --max-evals sets: per size

  tunekit::TuneOptions options;
  options.out_dir = out_dir;  // the store (tunekit.db) and the build cache
  const auto progress = [](const tunekit::ProgressEvent& e) {
    if (e.total) std::cout << "\r" << e.done << "/" << *e.total << std::flush;
  };
  tunekit::TuneReport report = tunekit::tune(spec, options, progress);
  std::cout << "\n";

  std::string first_best;
  for (const tunekit::SizeReport& size : report.sizes) {
    if (!size.best) continue;  // nothing ran correctly at this size
    const tunekit::TrialRecord& best = size.trials[*size.best];
    std::cout << "best " << best.config.str() << ": median " << best.stats.median.count() << " us, min "
              << best.stats.min.count() << " us, noise " << 100 * best.stats.noise << "%";
    for (const auto& [name, value] : tunekit::metric_values(report.metrics, best))
      if (value) std::cout << ", " << name << " " << *value;
    std::cout << "\n";
    if (first_best.empty()) first_best = best.config.str();
  }
  for (const std::string& warning : report.warnings) std::cout << "warning: " << warning << "\n";

  // The writers `tunekit tune` runs: the console summary, CSV, JSON, HTML.
  const tunekit::OutputContext context{out_dir, std::chrono::system_clock::now(), ""};
  tunekit::write_outputs(report, tunekit::plan_outputs(report, spec.output, context), std::cout);

  // Every trial of this spec is in the store, this run's and earlier runs':
  // what `tunekit select` reads.
  const tunekit::Store store(report.db);
  for (const tunekit::SizeBest& b :
       tunekit::best_per_size(store.trials(report.spec_hash), {spec.objective, spec.metrics}))
    std::cout << "stored best at " << tunekit::Config({b.size.begin(), b.size.end()}).str() << ": " << b.config.str()
              << "\n";
  return first_best;
}
