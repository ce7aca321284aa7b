#include "report/detail/svg.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

namespace tunekit::detail {

namespace {

// Plot area margins in pixels: room for the y tick labels and axis label on
// the left, the x ones below.
constexpr double kLeft = 58, kRight = 12, kTop = 10, kBottom = 40;

double scaled(double v, bool log) { return log ? std::log10(v) : v; }

std::string number(double v) { return fmt::format("{:g}", v); }

}  // namespace

std::string html_escape(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

Axis fit_axis(double lo, double hi, std::string label) {
  Axis a;
  a.label = std::move(label);
  if (hi < lo) std::swap(lo, hi);
  a.log = lo > 0 && hi / lo > 4;
  if (a.log) {
    const double margin = 0.05 * (std::log10(hi) - std::log10(lo));
    a.lo = lo / std::pow(10.0, margin);
    a.hi = hi * std::pow(10.0, margin);
  } else {
    // A range lost in the values' last digits (two medians a rounding
    // apart) is drawn as one value: its ticks would be a rounding apart too.
    double margin = 0.05 * (hi - lo);
    if (!(hi - lo > 1e-9 * std::max(std::abs(lo), std::abs(hi)))) margin = lo == 0 ? 1 : 0.05 * std::abs(lo);
    a.lo = lo - margin;
    a.hi = hi + margin;
  }
  return a;
}

std::vector<double> nice_ticks(const Axis& a) {
  std::vector<double> ticks;
  if (!std::isfinite(a.lo) || !std::isfinite(a.hi) || (a.log && !(a.lo > 0))) return ticks;
  if (a.log) {
    const int first = static_cast<int>(std::floor(std::log10(a.lo)));
    const int last = static_cast<int>(std::ceil(std::log10(a.hi)));
    const bool decades_only = std::log10(a.hi / a.lo) > 3;
    for (int e = first; e <= last; ++e)
      for (double m : {1.0, 2.0, 5.0}) {
        if (decades_only && m != 1.0) continue;
        const double v = m * std::pow(10.0, e);
        if (v >= a.lo && v <= a.hi) ticks.push_back(v);
      }
    return ticks;
  }
  const double range = a.hi - a.lo;
  if (!(range > 0)) return {a.lo};
  const double raw = range / 6;
  const double power = std::pow(10.0, std::floor(std::log10(raw)));
  double step = power;
  for (double m : {1.0, 2.0, 5.0, 10.0})
    if (m * power >= raw) {
      step = m * power;
      break;
    }
  // A rank of 1.5 is no rank: a count of 1 to 3 got ticks at 0.5, 1, ... 3.5.
  if (a.counts) step = std::max(step, 1.0);
  // Counted, not stepped until past the end: a step below the values'
  // precision would never get there (a tune whose two medians differed in
  // their last digits grew the list until memory ran out).
  const double first = std::ceil(a.lo / step);
  const double count = std::floor(a.hi / step + 1e-9) - first + 1;
  for (double i = 0; i < std::min(count, 16.0); ++i) {
    const double v = (first + i) * step;
    ticks.push_back(std::abs(v) < step * 1e-9 ? 0.0 : v);
  }
  return ticks;
}

SvgChart::SvgChart(int width, int height, Axis x, Axis y)
    : width_(width), height_(height), x_(std::move(x)), y_(std::move(y)) {}

double SvgChart::px(double x) const {
  const double lo = scaled(x_.lo, x_.log), hi = scaled(x_.hi, x_.log);
  return kLeft + (scaled(x, x_.log) - lo) / (hi - lo) * (width_ - kLeft - kRight);
}

double SvgChart::py(double y) const {
  const double lo = scaled(y_.lo, y_.log), hi = scaled(y_.hi, y_.log);
  return height_ - kBottom - (scaled(y, y_.log) - lo) / (hi - lo) * (height_ - kTop - kBottom);
}

void SvgChart::x_categories(const std::vector<std::pair<double, std::string>>& ticks) { categories_ = ticks; }

void SvgChart::circle(double x, double y, double radius, std::string_view css_class) {
  marks_ += fmt::format("<circle class=\"{}\" cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"{}\"/>", css_class, px(x), py(y), radius);
}

void SvgChart::polyline(const std::vector<std::pair<double, double>>& points, std::string_view css_class) {
  if (points.empty()) return;
  marks_ += fmt::format("<polyline class=\"{}\" points=\"", css_class);
  for (const auto& [x, y] : points) marks_ += fmt::format("{:.1f},{:.1f} ", px(x), py(y));
  marks_ += "\"/>";
}

void SvgChart::segment(double x0, double x1, double y, std::string_view css_class) {
  marks_ += fmt::format("<line class=\"{}\" x1=\"{:.1f}\" x2=\"{:.1f}\" y1=\"{:.1f}\" y2=\"{:.1f}\"/>", css_class,
                        px(x0), px(x1), py(y), py(y));
}

std::string SvgChart::str(std::string_view title) const {
  const double left = kLeft, right = width_ - kRight, top = kTop, bottom = height_ - kBottom;
  std::string s = fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{}\" height=\"{}\" viewBox=\"0 0 {} {}\" role=\"img\">"
      "<title>{}</title>",
      width_, height_, width_, height_, html_escape(title));
  s += fmt::format("<rect class=\"frame\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\"/>", left, top, right - left,
                   bottom - top);
  for (double v : nice_ticks(y_)) {
    const double y = py(v);
    s += fmt::format("<line class=\"grid\" x1=\"{}\" x2=\"{}\" y1=\"{:.1f}\" y2=\"{:.1f}\"/>", left, right, y, y);
    s += fmt::format("<text class=\"tick\" x=\"{}\" y=\"{:.1f}\" text-anchor=\"end\">{}</text>", left - 4, y + 4,
                     number(v));
  }
  const auto& xs = categories_;
  std::vector<std::pair<double, std::string>> numeric;
  if (xs.empty())
    for (double v : nice_ticks(x_)) numeric.emplace_back(v, number(v));
  for (const auto& [v, label] : xs.empty() ? numeric : xs)
    s += fmt::format("<text class=\"tick\" x=\"{:.1f}\" y=\"{}\" text-anchor=\"middle\">{}</text>", px(v), bottom + 14,
                     html_escape(label));
  s += fmt::format("<text class=\"label\" x=\"{:.1f}\" y=\"{}\" text-anchor=\"middle\">{}</text>", (left + right) / 2,
                   height_ - 6, html_escape(x_.label));
  s += fmt::format(
      "<text class=\"label\" transform=\"translate(14,{:.1f}) rotate(-90)\" text-anchor=\"middle\">{}</text>",
      (top + bottom) / 2, html_escape(y_.label));
  s += marks_;
  return s + "</svg>";
}

}  // namespace tunekit::detail
