#pragma once
// A Gaussian process of standardised values over feature vectors (Matérn 5/2,
// unit prior variance, a small noise), conditioned one point at a time, with a
// pool of candidates whose posterior mean and variance follow each point.
//
// Why one point at a time: a fit costs O(n^3) for n points and scoring m
// candidates O(n^2 m), which at n = 160 is milliseconds for each step of a
// search. Conditioning on one more point adds a row to the Cholesky factor
// and to each candidate's L^-1 k, and updates every candidate's posterior in
// O(n m); the result is the posterior a fit on all the points would give.
#include <Eigen/Dense>

#include <optional>
#include <span>
#include <utility>

namespace tunekit::detail {

class GaussianProcess {
 public:
  // `capacity`: the points it can hold, what fit() takes and condition() adds.
  GaussianProcess(Eigen::Index dimension, Eigen::Index capacity);

  // Fits on the columns of `z` with values `y` (at most capacity), with the
  // length scale among `lengths` that has the highest marginal likelihood,
  // and drops the candidates. Returns that length, or none when no kernel
  // matrix was positive definite (then the process is empty).
  std::optional<double> fit(const Eigen::MatrixXd& z, const Eigen::VectorXd& y, std::span<const double> lengths);

  // Conditions on one more point. False, and nothing changes, when the
  // process is full or the point is numerically one it has.
  bool condition(const Eigen::VectorXd& z, double y);

  Eigen::Index points() const { return n_; }
  bool full() const { return n_ == capacity_; }
  // The lowest value among the points (+infinity when there are none).
  double lowest() const { return lowest_; }

  // Candidates are appended in order; remove_candidate moves the last one
  // into the place it frees.
  void add_candidates(const Eigen::MatrixXd& z);
  void remove_candidate(Eigen::Index j);
  Eigen::Index candidates() const { return m_; }
  double mean(Eigen::Index j) const { return mu_[j]; }
  double variance(Eigen::Index j) const { return var_[j]; }

  // The posterior mean and variance at `z`, computed afresh: O(n^2).
  std::pair<double, double> predict(const Eigen::VectorXd& z) const;

 private:
  double kernel(const Eigen::Ref<const Eigen::VectorXd>& a, const Eigen::Ref<const Eigen::VectorXd>& b) const;
  // L^-1 k(points, z): O(n^2).
  Eigen::VectorXd whitened(const Eigen::VectorXd& z) const;

  Eigen::Index dimension_, capacity_;
  double length_ = 1;
  double lowest_;
  Eigen::Index n_ = 0;  // points
  Eigen::MatrixXd z_;   // their features (columns)
  Eigen::MatrixXd l_;   // the lower Cholesky factor of their kernel matrix plus noise
  Eigen::VectorXd w_;   // L^-1 y

  Eigen::Index m_ = 0;  // candidates
  Eigen::MatrixXd zc_;  // their features (columns)
  Eigen::MatrixXd vc_;  // L^-1 k(points, candidate) (columns)
  Eigen::VectorXd mu_, var_;
};

}  // namespace tunekit::detail
