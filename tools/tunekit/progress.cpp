#include "progress.hpp"

#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>

#include <fmt/format.h>

#include "tunekit/report.hpp"

namespace tunekit::cli {

namespace {

std::string clock_text(double seconds) {
  const auto s = static_cast<long>(seconds + 0.5);
  return s >= 3600 ? fmt::format("{}:{:02}:{:02}", s / 3600, s / 60 % 60, s % 60)
                   : fmt::format("{}:{:02}", s / 60, s % 60);
}

// At most `limit` bytes, not splitting a UTF-8 character.
std::string clip(std::string text, std::size_t limit) {
  if (text.size() <= limit) return text;
  std::size_t cut = limit;
  while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;
  return text.substr(0, cut);
}

}  // namespace

std::string progress_line(const ProgressEvent& e, std::size_t columns) {
  const std::size_t room = columns > 1 ? columns - 1 : 0;
  const std::size_t total = e.total.value_or(0);
  const double elapsed = e.elapsed.count();
  double frac = total ? static_cast<double>(e.done) / static_cast<double>(total) : 0.0;
  // A run that a time budget ends is as far along as its clock, when that
  // is further than its count.
  if (e.time_left && elapsed + e.time_left->count() > 0)
    frac = std::min(1.0, std::max(frac, elapsed / (elapsed + e.time_left->count())));
  std::string eta = "?";
  std::optional<double> to_go;
  if (e.done > 0 && total >= e.done)
    to_go = elapsed / static_cast<double>(e.done) * static_cast<double>(total - e.done);
  // A time budget ends the run by then, whatever the count to go says.
  if (e.time_left) to_go = std::min(to_go.value_or(e.time_left->count()), e.time_left->count());
  if (to_go) eta = clock_text(*to_go);
  // An event without a total (a library caller's own) shows the count alone;
  // under a time budget the total is only the most that may run.
  const std::string counts = !e.total         ? fmt::format(" {} trials", e.done)
                             : e.time_bounded ? fmt::format(" {} of at most {} {:3.0f}%", e.done, total, frac * 100)
                                              : fmt::format(" {}/{} {:3.0f}%", e.done, total, frac * 100);
  const std::string elapsed_text = "  elapsed " + clock_text(elapsed);
  const std::string eta_text = "  ETA " + eta;
  const std::string best = e.best ? "  best " + format_us(*e.best) + " us" : "";
  auto bar = [&](std::size_t width) {
    const auto filled = static_cast<std::size_t>(frac * static_cast<double>(width));
    return "[" + std::string(filled, '#') + std::string(width - filled, '-') + "]";
  };
  // Drop parts, least useful first, until the line fits.
  for (int drop = 0; drop < 4; ++drop) {
    const std::string tail = (drop < 3 ? elapsed_text : "") + eta_text + (drop < 2 ? best : "");
    const std::string current = drop < 1 && !e.current.empty() ? "  " + e.current : "";
    for (std::size_t width : {std::size_t{28}, std::size_t{20}, std::size_t{10}}) {
      std::string line = bar(width) + counts + tail;
      if (line.size() > room) continue;
      // What is happening takes the rest of the line, cut if need be.
      if (!current.empty()) line += clip(current, room - line.size());
      return line;
    }
  }
  return clip(bar(10) + counts + eta_text, room);
}

std::size_t terminal_columns(std::FILE* out) {
  struct winsize w {};
  if (::ioctl(::fileno(out), TIOCGWINSZ, &w) == 0 && w.ws_col > 0) return w.ws_col;
  if (const char* env = std::getenv("COLUMNS")) {
    const long c = std::strtol(env, nullptr, 10);
    if (c > 0) return static_cast<std::size_t>(c);
  }
  return 80;
}

ProgressBar::ProgressBar(std::FILE* out) : out_(out), tty_(::isatty(::fileno(out)) != 0) {}

void ProgressBar::update(const ProgressEvent& e) {
  if (tty_) {
    fmt::print(out_, "\r\033[2K{}", progress_line(e, terminal_columns(out_)));
    std::fflush(out_);
    drawn_ = true;
  } else {
    const auto now = std::chrono::steady_clock::now();
    const std::size_t total = e.total.value_or(0);
    // The line that reaches the total comes at once, but once: what follows
    // it (confirming the fastest, a rank's size ending) adds no count.
    const bool reached = total && e.done == total && printed_done_ != e.done;
    if (now - last_line_ >= std::chrono::seconds(5) || reached) {
      // A log has no width: the whole line, without what is happening.
      ProgressEvent quiet = e;
      quiet.current.clear();
      fmt::print(out_, "{}\n", progress_line(quiet, 1000));
      std::fflush(out_);
      last_line_ = now;
      printed_done_ = e.done;
    }
  }
}

void ProgressBar::finish() {
  if (tty_ && drawn_) fmt::print(out_, "\n");
  drawn_ = false;
}

}  // namespace tunekit::cli
