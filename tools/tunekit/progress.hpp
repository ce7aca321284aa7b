#pragma once
// The console progress bar of `tunekit tune`: redrawn in place on a
// terminal, a line every few seconds otherwise (CI logs stay readable).
#include <chrono>
#include <cstdio>
#include <optional>
#include <string>

#include "tunekit/tuner.hpp"

namespace tunekit::cli {

// The bar's line for a terminal `columns` wide: never longer than
// columns - 1, so that it never wraps (a wrapped line is not redrawn in
// place). What does not fit goes first: what is happening, then the best
// time, then the elapsed time; the bar shrinks to 10 marks before that.
// Under a time budget the total reads "of at most N", and the bar fills
// with the budget's time as well as with the count.
std::string progress_line(const ProgressEvent& e, std::size_t columns);

// The width of the terminal `out` writes to (asked again on every call, so
// a resized window is followed), else $COLUMNS, else 80.
std::size_t terminal_columns(std::FILE* out);

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
  std::optional<std::size_t> printed_done_;  // the count of the last line printed (not a terminal)
};

}  // namespace tunekit::cli
