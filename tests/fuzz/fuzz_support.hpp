#pragma once
// Shared by the libFuzzer targets: a private scratch folder per process (the
// loaders read files), and the input written there.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>

namespace tunekit::fuzz {

// Removed when the fuzzer exits (libFuzzer ends with exit(), which runs
// static destructors), so runs leave nothing in /tmp.
class Scratch {
 public:
  Scratch() : dir_(std::filesystem::temp_directory_path() / ("tunekit-fuzz-" + std::to_string(::getpid()))) {
    std::filesystem::create_directories(dir_);
    // A kernel source for specs that name one.
    std::ofstream(dir_ / "k.cpp") << "extern \"C\" void f(float* y, int n) { for (int i = 0; i < n; ++i) y[i] = 1; }\n";
  }
  ~Scratch() {
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }
  const std::filesystem::path& dir() const { return dir_; }

 private:
  std::filesystem::path dir_;
};

inline const std::filesystem::path& scratch() {
  static const Scratch s;
  return s.dir();
}

inline std::filesystem::path write_input(const char* name, const std::uint8_t* data, std::size_t size) {
  const auto file = scratch() / name;
  std::ofstream(file, std::ios::binary | std::ios::trunc)
      .write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  return file;
}

}  // namespace tunekit::fuzz
