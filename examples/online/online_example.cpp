// Online tuning: the program tunes a blocked reduction for each input size
// the first time it meets it, keeps the result in a JSON file, and reuses it
// on later runs. Run it twice: the second run tunes nothing.
//
//   online_example tuned.json 100000 3000000
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "tunekit/online.hpp"

namespace {

// Sums x in blocks of `block` elements with `lanes` independent partial sums.
double blocked_sum(const std::vector<float>& x, std::int64_t block, std::int64_t lanes) {
  double total = 0;
  std::vector<double> partial(static_cast<std::size_t>(lanes));
  for (std::size_t b = 0; b < x.size(); b += static_cast<std::size_t>(block)) {
    const std::size_t end = std::min(x.size(), b + static_cast<std::size_t>(block));
    std::fill(partial.begin(), partial.end(), 0.0);
    for (std::size_t i = b; i < end; ++i) partial[i % static_cast<std::size_t>(lanes)] += x[i];
    for (double p : partial) total += p;
  }
  return total;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: %s FILE.json N [N ...]\n", argv[0]);
    return 2;
  }
  tunekit::online::Tuner tuner(argv[1]);
  for (int a = 2; a < argc; ++a) {
    const std::int64_t n = std::atoll(argv[a]);
    std::vector<float> x(static_cast<std::size_t>(n), 1.0f);
    auto choice = tuner.get({{"N", n}}, [&](const tunekit::online::Size&) {
      std::vector<tunekit::online::Params> candidates;
      for (std::int64_t block : {256, 4096, 65536})
        for (std::int64_t lanes : {1, 4, 8}) candidates.push_back({{"BLOCK", block}, {"LANES", lanes}});
      return tunekit::online::fastest(candidates, [&](const tunekit::online::Params& p) {
        volatile double s = blocked_sum(x, p.at("BLOCK"), p.at("LANES"));
        (void)s;
      });
    });
    const double sum = blocked_sum(x, choice.params.at("BLOCK"), choice.params.at("LANES"));
    const char* how = choice.source == tunekit::online::Choice::Source::tuned ? "tuned now" : "from the file";
    std::printf("N=%lld: BLOCK=%lld LANES=%lld (%s), sum=%.0f\n", static_cast<long long>(n),
                static_cast<long long>(choice.params.at("BLOCK")), static_cast<long long>(choice.params.at("LANES")),
                how, sum);
    if (sum != static_cast<double>(n)) return 1;
  }
  return 0;
}
