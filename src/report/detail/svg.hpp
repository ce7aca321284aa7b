#pragma once
// Inline SVG charts for the HTML report: a frame with axes, ticks and
// labels that maps data coordinates to pixels, and the marks drawn in it.
// Nothing here knows about trials.
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace tunekit::detail {

// `&`, `<`, `>`, `"` and `'` as entities: safe in HTML text and in quoted
// attribute values.
std::string html_escape(std::string_view s);

struct Axis {
  double lo = 0, hi = 1;  // the data range shown
  bool log = false;       // log10 scale (lo > 0)
  std::string label;
  bool counts = false;  // a count (a rank, evaluations): ticks at whole numbers only
};

// An axis for values in [lo, hi]: log scale when hi / lo > 4 and lo > 0,
// with a margin of 5% of the range (or of the log range) on each side; a
// range within rounding of zero gets 5% of the value instead.
Axis fit_axis(double lo, double hi, std::string label);

// Tick positions inside [axis.lo, axis.hi]: steps of 1, 2 or 5 times a
// power of ten, at most about 7 of them; on a log axis 1, 2 and 5 times the
// powers of ten (only the powers when the range spans more than 3 decades).
// Never more than 16 on a linear axis; none on an axis that is not finite.
// A count's steps are 1 or more.
std::vector<double> nice_ticks(const Axis& axis);

class SvgChart {
 public:
  SvgChart(int width, int height, Axis x, Axis y);

  // Ticks with labels along x (categories) instead of numeric ones.
  void x_categories(const std::vector<std::pair<double, std::string>>& ticks);
  void circle(double x, double y, double radius, std::string_view css_class);
  void polyline(const std::vector<std::pair<double, double>>& points, std::string_view css_class);
  // A horizontal stroke from x0 to x1 at y (data coordinates).
  void segment(double x0, double x1, double y, std::string_view css_class);

  // The whole <svg> element with `title` (escaped) as its accessible name.
  std::string str(std::string_view title) const;

 private:
  double px(double x) const;
  double py(double y) const;

  int width_, height_;
  Axis x_, y_;
  std::vector<std::pair<double, std::string>> categories_;
  std::string marks_;
};

}  // namespace tunekit::detail
