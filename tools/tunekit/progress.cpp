#include "progress.hpp"

#include <unistd.h>

#include <fmt/format.h>

namespace tunekit::cli {

namespace {

std::string clock_text(double seconds) {
  const auto s = static_cast<long>(seconds + 0.5);
  return s >= 3600 ? fmt::format("{}:{:02}:{:02}", s / 3600, s / 60 % 60, s % 60)
                   : fmt::format("{}:{:02}", s / 60, s % 60);
}

}  // namespace

ProgressBar::ProgressBar(std::FILE* out) : out_(out), tty_(::isatty(::fileno(out)) != 0) {}

void ProgressBar::update(const ProgressEvent& e) {
  const std::size_t total = e.total.value_or(0);
  const double frac = total ? static_cast<double>(e.done) / static_cast<double>(total) : 0.0;
  const double elapsed = e.elapsed.count();
  std::string eta = "?";
  if (e.done > 0 && total >= e.done) eta = clock_text(elapsed / static_cast<double>(e.done) * static_cast<double>(total - e.done));
  std::string best = e.best ? fmt::format("  best {:.3f} us", e.best->count()) : "";
  constexpr int width = 28;
  const int filled = static_cast<int>(frac * width);
  std::string bar = std::string(static_cast<std::size_t>(filled), '#') + std::string(static_cast<std::size_t>(width - filled), '-');
  std::string line = fmt::format("[{}] {}/{} {:3.0f}%  elapsed {}  ETA {}{}", bar, e.done, total, frac * 100,
                                 clock_text(elapsed), eta, best);
  if (tty_) {
    std::string current = e.current.size() > 60 ? e.current.substr(0, 57) + "..." : e.current;
    fmt::print(out_, "\r\033[2K{}  {}", line, current);
    std::fflush(out_);
    drawn_ = true;
  } else {
    const auto now = std::chrono::steady_clock::now();
    if (now - last_line_ >= std::chrono::seconds(5) || (total && e.done == total)) {
      fmt::print(out_, "{}\n", line);
      std::fflush(out_);
      last_line_ = now;
    }
  }
}

void ProgressBar::finish() {
  if (tty_ && drawn_) fmt::print(out_, "\n");
  drawn_ = false;
}

}  // namespace tunekit::cli
