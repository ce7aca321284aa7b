#pragma once
// The console progress bar of `tunekit tune`: redrawn in place on a
// terminal, a line every few seconds otherwise (CI logs stay readable).
#include <chrono>
#include <cstdio>

#include "tunekit/tuner.hpp"

namespace tunekit::cli {

class ProgressBar {
 public:
  explicit ProgressBar(std::FILE* out);
  void update(const ProgressEvent& e);
  void finish();

 private:
  std::FILE* out_;
  bool tty_;
  bool drawn_ = false;
  std::chrono::steady_clock::time_point last_line_{};
};

}  // namespace tunekit::cli
