// Search-space construction benchmark (issue #3).
//
// For each space file (neutral JSON of shared/spaces, T1, or a spec) this
// times, single-threaded, the whole construction from the parameter lists
// and the constraint strings: parsing the constraints, Space's constructor
// and building the index (after which every valid config is reachable by
// index). Files are read and their JSON parsed before the clock starts, as
// Kernel Tuner's Searchspace also gets Python lists and strings.
//
//   space_bench [--repeat N] [--json] FILE...
//
// Prints, per space and in total: the first (cold) build time, the median of
// N builds, the valid count (checked against the file's "expected" when it
// has one: exit status 1 on a mismatch), the index's bytes and bytes per
// valid config, and the median time to build and also materialise every
// valid config (for_each into a flat array, one byte or more per value
// index, as Kernel Tuner's list of configs). --json prints one JSON object
// per line instead.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "tunekit/space.hpp"
#include "tunekit/t1.hpp"

using namespace tunekit;

namespace {

struct Input {
  std::string file, name;
  std::vector<Parameter> params;
  std::vector<std::pair<std::string, SourceLocation>> constraints;  // text, location
  Bindings constants;
  std::optional<std::uint64_t> expected_valid;
};

struct Result {
  double first_ms = 0, median_ms = 0, min_ms = 0, materialise_ms = 0;
  std::uint64_t cartesian = 0, valid = 0;
  std::size_t bytes = 0;
  bool indexable = false;
};

Result build(const Input& in, int repeat) {
  Result r;
  std::vector<double> ms;
  for (int k = 0; k < repeat; ++k) {
    const auto t0 = std::chrono::steady_clock::now();
    std::vector<Expression> constraints;
    constraints.reserve(in.constraints.size());
    for (const auto& [text, where] : in.constraints) constraints.push_back(Expression::parse(text, where));
    Space space(in.params, std::move(constraints), in.constants);
    const bool ok = space.build();
    const std::uint64_t valid = space.count();
    const auto t1 = std::chrono::steady_clock::now();
    ms.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
    if (k == 0) {
      r.valid = valid;
      r.cartesian = space.cartesian_size();
      r.indexable = ok;
      r.bytes = space.memory_bytes();
    }
  }
  r.first_ms = ms.front();
  std::sort(ms.begin(), ms.end());
  r.median_ms = ms[ms.size() / 2];
  r.min_ms = ms.front();

  // Build, then write every valid config as value indices into one array.
  std::vector<double> mat;
  std::vector<std::uint8_t> flat;
  for (int k = 0; k < std::max(1, repeat / 5); ++k) {
    const auto t0 = std::chrono::steady_clock::now();
    std::vector<Expression> constraints;
    for (const auto& [text, where] : in.constraints) constraints.push_back(Expression::parse(text, where));
    Space space(in.params, std::move(constraints), in.constants);
    bool narrow = true;
    for (const auto& p : in.params) narrow = narrow && p.values.size() <= 256;
    const std::size_t width = in.params.size() * (narrow ? 1 : 4);
    flat.assign(static_cast<std::size_t>(std::min<std::uint64_t>(space.count(), 1u << 26)) * width, 0);
    std::size_t at = 0;
    space.for_each([&](std::span<const std::uint32_t> ix) {
      if (at + width > flat.size()) return false;
      std::uint8_t* out = flat.data() + at;
      if (narrow) {
        for (std::size_t k = 0; k < ix.size(); ++k) out[k] = static_cast<std::uint8_t>(ix[k]);
      } else {
        std::memcpy(out, ix.data(), ix.size() * 4);
      }
      at += width;
      return true;
    });
    flat.resize(at);
    const auto t1 = std::chrono::steady_clock::now();
    mat.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
    if (flat.size() != r.valid * width)
      std::fprintf(stderr, "space_bench: materialised %zu bytes, expected %llu\n", flat.size(),
                   static_cast<unsigned long long>(r.valid * width));
  }
  std::sort(mat.begin(), mat.end());
  r.materialise_ms = mat[mat.size() / 2];
  return r;
}

}  // namespace

int usage() {
  std::fputs("usage: space_bench [--repeat N] [--json] FILE...\n", stderr);
  return 2;
}

int main(int argc, char** argv) {
  int repeat = 21;
  bool json = false;
  std::vector<std::string> files;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--repeat") {
      if (i + 1 >= argc) {
        std::fputs("space_bench: --repeat needs a value\n", stderr);
        return 2;
      }
      const std::string v = argv[++i];
      // A median of no builds is no figure: refuse 0 rather than print inf.
      char* end = nullptr;
      const long n = std::strtol(v.c_str(), &end, 10);
      if (v.empty() || *end != '\0' || n < 1 || n > 1000000) {
        std::fprintf(stderr, "space_bench: --repeat: '%s' is not a whole number of 1 or more\n", v.c_str());
        return 2;
      }
      repeat = static_cast<int>(n);
    } else if (a == "--json") json = true;
    else if (a == "-h" || a == "--help") {
      std::puts("usage: space_bench [--repeat N] [--json] FILE...");
      return 0;
    } else if (a.size() > 1 && a[0] == '-') {
      std::fprintf(stderr, "space_bench: unknown flag %s (expected --repeat N, --json or space files)\n", a.c_str());
      return 2;
    } else files.push_back(a);
  }
  if (files.empty()) {
    std::fputs("space_bench: no space files given\n", stderr);
    return usage();
  }
  std::vector<Input> inputs;
  for (const auto& f : files) {
    SpaceDefinition d;
    try {
      d = load_space_definition(f);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "space_bench: %s\n", e.what());
      return 2;
    }
    Input in;
    in.file = f;
    in.name = d.name;
    in.params = d.parameters;
    for (const auto& c : d.constraints) in.constraints.emplace_back(c.text(), c.where());
    in.constants = d.constants;
    in.expected_valid = d.expected_valid;
    inputs.push_back(std::move(in));
  }

  int status = 0;
  double total_first = 0, total_median = 0, total_min = 0, total_mat = 0;
  std::uint64_t total_valid = 0;
  std::size_t total_bytes = 0;
  if (!json)
    std::printf("%-14s %5s %5s %12s %10s %10s %10s %10s %11s %9s %12s\n", "space", "params", "cons", "cartesian",
                "valid", "first ms", "median ms", "min ms", "index bytes", "B/config", "+all ms");
  for (const auto& in : inputs) {
    Result r = build(in, repeat);
    const bool mismatch = in.expected_valid && *in.expected_valid != r.valid;
    if (mismatch) status = 1;
    total_first += r.first_ms;
    total_median += r.median_ms;
    total_min += r.min_ms;
    total_mat += r.materialise_ms;
    total_valid += r.valid;
    total_bytes += r.bytes;
    const double per = r.valid ? static_cast<double>(r.bytes) / static_cast<double>(r.valid) : 0.0;
    if (json) {
      std::printf(
          "{\"space\": \"%s\", \"parameters\": %zu, \"constraints\": %zu, \"cartesian\": %llu, \"valid\": %llu, "
          "\"expected_valid\": %lld, \"first_ms\": %.4f, \"median_ms\": %.4f, \"min_ms\": %.4f, \"bytes\": %zu, "
          "\"bytes_per_config\": %.3f, \"indexable\": %s, \"materialise_ms\": %.4f}\n",
          in.name.c_str(), in.params.size(), in.constraints.size(), static_cast<unsigned long long>(r.cartesian),
          static_cast<unsigned long long>(r.valid),
          in.expected_valid ? static_cast<long long>(*in.expected_valid) : -1LL, r.first_ms, r.median_ms, r.min_ms,
          r.bytes, per, r.indexable ? "true" : "false", r.materialise_ms);
    } else {
      const std::string note = mismatch ? "  MISMATCH (expected " + std::to_string(*in.expected_valid) + ")" : "";
      std::printf("%-14s %5zu %5zu %12llu %10llu %10.3f %10.3f %10.3f %11zu %9.2f %12.3f%s\n", in.name.c_str(),
                  in.params.size(), in.constraints.size(), static_cast<unsigned long long>(r.cartesian),
                  static_cast<unsigned long long>(r.valid), r.first_ms, r.median_ms, r.min_ms, r.bytes, per,
                  r.materialise_ms, note.c_str());
    }
  }
  if (json) {
    std::printf(
        "{\"space\": \"total\", \"valid\": %llu, \"first_ms\": %.4f, \"median_ms\": %.4f, \"min_ms\": %.4f, "
        "\"bytes\": %zu, \"repeat\": %d, \"materialise_ms\": %.4f}\n",
        static_cast<unsigned long long>(total_valid), total_first, total_median, total_min, total_bytes, repeat,
        total_mat);
  } else {
    std::printf("%-14s %5s %5s %12s %10llu %10.3f %10.3f %10.3f %11zu %9s %12.3f\n", "total", "", "", "",
                static_cast<unsigned long long>(total_valid), total_first, total_median, total_min, total_bytes, "",
                total_mat);
    std::printf(
        "(times in ms: parse constraints + Space + index build, single thread; median/min of %d builds;\n"
        " +all: build and materialise every valid config into a flat array, median of %d)\n",
        repeat, std::max(1, repeat / 5));
  }
  return status;
}
