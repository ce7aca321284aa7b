// Online tuning: the program tunes a blocked reduction for each input size
// the first time it meets it, keeps the result in a JSON file, and reuses it
// on later runs. Run it twice: the second run tunes nothing.
//
//   online_example tuned.json 100000 3000000
//
// Exit status: 0 when every sum is right; 1 when one is wrong; 2 for a bad
// command line (no lengths, or a length that is not an integer in
// 1..kMaxLength); 3 when the tuning file cannot be read, parsed or saved, or
// holds a BLOCK or LANES that is not an integer. Each failure says why on stderr.
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <optional>
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

// Sums a vector of ones of each length with the tuned BLOCK and LANES;
// 1 when a sum is wrong, else 0.
int run(const char* file, const std::vector<std::int64_t>& lengths) {
  tunekit::online::Tuner tuner(file);
  for (const std::int64_t n : lengths) {
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

// The vector is allocated whole: a length beyond this (4 GiB of floats)
// would fail to allocate rather than be summed.
constexpr std::int64_t kMaxLength = std::int64_t{1} << 30;

// A vector length from the command line; nullopt, said on stderr, for
// anything but a whole number in 1..kMaxLength.
std::optional<std::int64_t> parse_length(const char* text) {
  char* end = nullptr;
  errno = 0;
  const long long n = std::strtoll(text, &end, 10);
  if (end == text || *end != '\0' || errno == ERANGE || n < 1 || n > kMaxLength) {
    std::fprintf(stderr, "online_example: the length '%s' is not an integer from 1 to %lld\n", text,
                 static_cast<long long>(kMaxLength));
    return std::nullopt;
  }
  return n;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: %s FILE.json N [N ...]  (N: a vector length, 1 to %lld)\n", argv[0],
                 static_cast<long long>(kMaxLength));
    return 2;
  }
  // Every length is checked before anything is tuned or saved.
  std::vector<std::int64_t> lengths;
  for (int a = 2; a < argc; ++a) {
    auto n = parse_length(argv[a]);
    if (!n) return 2;
    lengths.push_back(*n);
  }
  try {
    return run(argv[1], lengths);
  } catch (const std::exception& e) {
    // tunekit::online::FileError (named file, line and column), or a config
    // in the file whose BLOCK or LANES is not an integer.
    std::fprintf(stderr, "online_example: %s\n", e.what());
    return 3;
  }
}
