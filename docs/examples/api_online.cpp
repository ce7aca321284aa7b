// Online tuning with the header-only tunekit/online.hpp: a program asks for
// the config of the size at hand; a size met for the first time is tuned by
// the callback and saved, so the next run starts tuned. `online_tiles(file)`
// returns the tile chosen for n = 4096 on this call, and where it came from.
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "tunekit/online.hpp"

std::pair<std::int64_t, std::string> online_tiles(const std::filesystem::path& file) {
  tunekit::online::Tuner tuner(file);  // reads `tunekit emit --json` output, if the file exists
  const tunekit::online::Size size{{"n", 4096}};
  const tunekit::online::Choice choice = tuner.get(size, [](const tunekit::online::Size& s) {
    // Tune: time each candidate on this size, return the best and its time.
    std::vector<float> data(static_cast<std::size_t>(s.at("n")), 1.0f);
    tunekit::online::Params best;
    double best_us = 0;
    volatile float sink = 0;  // keeps the sums from being optimised away
    for (std::int64_t tile : {64, 256, 1024}) {
      const auto t0 = std::chrono::steady_clock::now();
      float sum = 0;
      for (std::size_t b = 0; b < data.size(); b += static_cast<std::size_t>(tile))
        for (std::size_t i = b; i < b + static_cast<std::size_t>(tile) && i < data.size(); ++i) sum += data[i];
      sink = sink + sum;  // a read too: GCC warns of a volatile only ever written
      const double us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count();
      if (best.empty() || us < best_us) {
        best = {{"TILE", tile}};
        best_us = us;
      }
    }
    return std::pair{best, best_us};
  });
  const char* source = choice.source == tunekit::online::Choice::Source::tuned    ? "tuned"
                       : choice.source == tunekit::online::Choice::Source::stored ? "stored"
                                                                                  : "nearest";
  return {choice.params.at("TILE"), source};
}
