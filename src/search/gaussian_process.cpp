// The incrementally conditioned Gaussian process (detail/gaussian_process.hpp).
#include "search/detail/gaussian_process.hpp"

#include <Eigen/Cholesky>

#include <cmath>
#include <limits>

namespace tunekit::detail {

namespace {

constexpr double kNoise = 1e-4;  // of the standardised values

double matern(double r) {
  const double s = std::sqrt(5.0) * r;
  return (1.0 + s + s * s / 3.0) * std::exp(-s);
}

}  // namespace

GaussianProcess::GaussianProcess(Eigen::Index dimension, Eigen::Index capacity)
    : dimension_(dimension),
      capacity_(capacity),
      lowest_(std::numeric_limits<double>::infinity()),
      z_(dimension, capacity),
      l_(capacity, capacity),
      w_(capacity) {}

double GaussianProcess::kernel(const Eigen::Ref<const Eigen::VectorXd>& a,
                               const Eigen::Ref<const Eigen::VectorXd>& b) const {
  return matern((a - b).norm() / length_);
}

std::optional<double> GaussianProcess::fit(const Eigen::MatrixXd& z, const Eigen::VectorXd& y,
                                           std::span<const double> lengths) {
  n_ = 0;
  m_ = 0;
  lowest_ = std::numeric_limits<double>::infinity();
  const Eigen::Index n = std::min(z.cols(), capacity_);
  Eigen::MatrixXd distance(n, n);
  for (Eigen::Index j = 0; j < n; ++j)
    for (Eigen::Index i = j; i < n; ++i) distance(i, j) = (z.col(i) - z.col(j)).norm();
  Eigen::LLT<Eigen::MatrixXd> best;
  Eigen::VectorXd best_w;  // L^-1 y under the chosen length
  std::optional<double> chosen;
  double best_ll = -std::numeric_limits<double>::infinity();
  for (double length : lengths) {
    Eigen::MatrixXd k(n, n);
    for (Eigen::Index j = 0; j < n; ++j) {
      k(j, j) = 1.0 + kNoise;
      for (Eigen::Index i = j + 1; i < n; ++i) k(i, j) = matern(distance(i, j) / length);
    }
    Eigen::LLT<Eigen::MatrixXd> llt(k);  // reads the lower triangle only
    if (llt.info() != Eigen::Success) continue;
    // log p(y) up to a constant: -y^T K^-1 y / 2 - log det L.
    Eigen::VectorXd w = llt.matrixL().solve(y.head(n));
    const double ll = -0.5 * w.squaredNorm() - llt.matrixLLT().diagonal().array().log().sum();
    if (!chosen || ll > best_ll) {
      best_ll = ll;
      chosen = length;
      best = std::move(llt);
      best_w = std::move(w);
    }
  }
  if (!chosen) return std::nullopt;
  length_ = *chosen;
  n_ = n;
  z_.leftCols(n) = z.leftCols(n);
  l_.topLeftCorner(n, n) = best.matrixL();
  w_.head(n) = best_w;
  if (n > 0) lowest_ = y.head(n).minCoeff();
  return chosen;
}

Eigen::VectorXd GaussianProcess::whitened(const Eigen::VectorXd& z) const {
  Eigen::VectorXd v(n_);
  for (Eigen::Index i = 0; i < n_; ++i) v[i] = kernel(z_.col(i), z);
  l_.topLeftCorner(n_, n_).triangularView<Eigen::Lower>().solveInPlace(v);
  return v;
}

bool GaussianProcess::condition(const Eigen::VectorXd& z, double y) {
  if (full()) return false;
  const Eigen::VectorXd v = whitened(z);
  const double s2 = 1.0 + kNoise - v.squaredNorm();
  if (!(s2 > 1e-8)) return false;
  const double diagonal = std::sqrt(s2);
  l_.row(n_).head(n_) = v.transpose();
  l_(n_, n_) = diagonal;
  const double wn = (y - v.dot(w_.head(n_))) / diagonal;
  w_[n_] = wn;
  z_.col(n_) = z;
  if (m_ > 0) {
    const Eigen::VectorXd shared = vc_.topLeftCorner(n_, m_).transpose() * v;
    for (Eigen::Index j = 0; j < m_; ++j) {
      const double u = (kernel(zc_.col(j), z) - shared[j]) / diagonal;
      vc_(n_, j) = u;
      mu_[j] += u * wn;
      var_[j] -= u * u;
    }
  }
  ++n_;
  lowest_ = std::min(lowest_, y);
  return true;
}

void GaussianProcess::add_candidates(const Eigen::MatrixXd& z) {
  const Eigen::Index m = z.cols();
  if (m == 0) return;
  if (zc_.cols() < m_ + m) {
    const Eigen::Index grown = std::max<Eigen::Index>(m_ + m, 2 * zc_.cols());
    zc_.conservativeResize(dimension_, grown);
    vc_.conservativeResize(capacity_, grown);
    mu_.conservativeResize(grown);
    var_.conservativeResize(grown);
  }
  Eigen::MatrixXd k(n_, m);
  for (Eigen::Index j = 0; j < m; ++j)
    for (Eigen::Index i = 0; i < n_; ++i) k(i, j) = kernel(z_.col(i), z.col(j));
  // A few columns are solved one by one: the blocked solve packs the whole
  // factor on each call.
  const auto lower = l_.topLeftCorner(n_, n_).triangularView<Eigen::Lower>();
  if (m >= 16) {
    lower.solveInPlace(k);
  } else {
    for (Eigen::Index j = 0; j < m; ++j) {
      auto column = k.col(j);
      lower.solveInPlace(column);
    }
  }
  zc_.middleCols(m_, m) = z;
  vc_.block(0, m_, n_, m) = k;
  mu_.segment(m_, m) = k.transpose() * w_.head(n_);
  var_.segment(m_, m) = (1.0 - k.colwise().squaredNorm().array()).matrix().transpose();
  m_ += m;
}

void GaussianProcess::remove_candidate(Eigen::Index j) {
  const Eigen::Index last = m_ - 1;
  if (j != last) {
    zc_.col(j) = zc_.col(last);
    vc_.col(j).head(n_) = vc_.col(last).head(n_);
    mu_[j] = mu_[last];
    var_[j] = var_[last];
  }
  --m_;
}

std::pair<double, double> GaussianProcess::predict(const Eigen::VectorXd& z) const {
  const Eigen::VectorXd v = whitened(z);
  return {v.dot(w_.head(n_)), 1.0 - v.squaredNorm()};
}

}  // namespace tunekit::detail
