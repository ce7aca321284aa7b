// The incrementally conditioned Gaussian process gives the posterior of a fit
// on all its points, for the candidates it tracks as for a fresh prediction.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "search/detail/gaussian_process.hpp"

namespace {

using tunekit::detail::GaussianProcess;

Eigen::MatrixXd random_points(std::mt19937_64& rng, Eigen::Index dimension, Eigen::Index n) {
  std::uniform_real_distribution<double> u(0.0, 1.0);
  Eigen::MatrixXd z(dimension, n);
  for (Eigen::Index j = 0; j < n; ++j)
    for (Eigen::Index i = 0; i < dimension; ++i) z(i, j) = u(rng);
  return z;
}

// A smooth function of the features, with values of unit scale.
Eigen::VectorXd values(const Eigen::MatrixXd& z) {
  Eigen::VectorXd y(z.cols());
  for (Eigen::Index j = 0; j < z.cols(); ++j) y[j] = std::sin(3.0 * z(0, j)) + z.col(j).squaredNorm() - 1.0;
  return y;
}

TEST(GaussianProcess, ConditioningPointByPointGivesTheFitOnAllPoints) {
  std::mt19937_64 rng(7);
  const Eigen::Index d = 4, n = 40, first = 12, m = 25;
  const Eigen::MatrixXd z = random_points(rng, d, n);
  const Eigen::VectorXd y = values(z);
  const Eigen::MatrixXd early = random_points(rng, d, m);  // pooled before the conditioning
  const Eigen::MatrixXd late = random_points(rng, d, 3);   // pooled halfway, a few (solved one by one)
  const double length[] = {0.8};

  GaussianProcess incremental(d, n);
  ASSERT_TRUE(incremental.fit(z.leftCols(first), y.head(first), length));
  incremental.add_candidates(early);
  for (Eigen::Index i = first; i < n; ++i) {
    if (i == 26) incremental.add_candidates(late);
    ASSERT_TRUE(incremental.condition(z.col(i), y[i])) << "point " << i;
  }
  EXPECT_EQ(incremental.points(), n);
  EXPECT_TRUE(incremental.full());
  EXPECT_FALSE(incremental.condition(z.col(0), 0.0));  // full: nothing changes
  EXPECT_DOUBLE_EQ(incremental.lowest(), y.minCoeff());

  GaussianProcess whole(d, n);
  ASSERT_TRUE(whole.fit(z, y, length));
  ASSERT_EQ(incremental.candidates(), m + 3);
  for (Eigen::Index j = 0; j < m + 3; ++j) {
    const Eigen::VectorXd c = j < m ? Eigen::VectorXd(early.col(j)) : Eigen::VectorXd(late.col(j - m));
    const auto [mean, variance] = whole.predict(c);
    EXPECT_NEAR(incremental.mean(j), mean, 1e-8) << "candidate " << j;
    EXPECT_NEAR(incremental.variance(j), variance, 1e-8) << "candidate " << j;
    // A candidate near the data is known better than the prior.
    EXPECT_LT(incremental.variance(j), 1.0);
  }
  // The data itself: the posterior mean at a point is close to its value.
  const auto [at_point, var_at_point] = whole.predict(z.col(5));
  EXPECT_NEAR(at_point, y[5], 0.01);
  EXPECT_LT(var_at_point, 0.01);
}

TEST(GaussianProcess, RemovingACandidateMovesTheLastIntoItsPlace) {
  std::mt19937_64 rng(11);
  const Eigen::Index d = 3;
  const Eigen::MatrixXd z = random_points(rng, d, 10);
  const Eigen::MatrixXd c = random_points(rng, d, 20);
  const double length[] = {0.5};
  GaussianProcess process(d, 12);
  ASSERT_TRUE(process.fit(z, values(z), length));
  process.add_candidates(c);
  const double last_mean = process.mean(19), last_variance = process.variance(19);
  process.remove_candidate(4);
  ASSERT_EQ(process.candidates(), 19);
  EXPECT_DOUBLE_EQ(process.mean(4), last_mean);
  EXPECT_DOUBLE_EQ(process.variance(4), last_variance);
  // Conditioning afterwards still updates the moved candidate correctly.
  const Eigen::MatrixXd more = random_points(rng, d, 2);
  const Eigen::VectorXd more_y = values(more);
  ASSERT_TRUE(process.condition(more.col(0), more_y[0]));
  ASSERT_TRUE(process.condition(more.col(1), more_y[1]));
  Eigen::MatrixXd all(d, 12);
  all << z, more;
  Eigen::VectorXd all_y(12);
  all_y << values(z), more_y;
  GaussianProcess whole(d, 12);
  ASSERT_TRUE(whole.fit(all, all_y, length));
  const auto [mean, variance] = whole.predict(c.col(19));
  EXPECT_NEAR(process.mean(4), mean, 1e-8);
  EXPECT_NEAR(process.variance(4), variance, 1e-8);
}

TEST(GaussianProcess, TheLengthScaleIsTheOneTheDataLikesBest) {
  std::mt19937_64 rng(3);
  const Eigen::Index d = 2;
  const Eigen::MatrixXd z = random_points(rng, d, 30);
  // A slowly varying function: a length far below the points' spacing
  // explains it worse than one of the order of the box.
  Eigen::VectorXd y(z.cols());
  for (Eigen::Index j = 0; j < z.cols(); ++j) y[j] = z(0, j) + 0.5 * z(1, j) - 0.75;
  y /= std::sqrt(y.squaredNorm() / static_cast<double>(y.size()));
  const double lengths[] = {0.01, 1.0};
  GaussianProcess process(d, 30);
  const auto chosen = process.fit(z, y, lengths);
  ASSERT_TRUE(chosen);
  EXPECT_EQ(*chosen, 1.0);
}

TEST(GaussianProcess, ARepeatedMeasurementIsTakenAndTheMeanMovesTowardsIt) {
  std::mt19937_64 rng(5);
  const Eigen::MatrixXd z = random_points(rng, 2, 6);
  const Eigen::VectorXd y = values(z);
  const double length[] = {0.5};
  GaussianProcess process(2, 10);
  ASSERT_TRUE(process.fit(z, y, length));
  // The noise (1e-4) leaves room for a second measurement of a point: the
  // posterior there goes to the mean of the two values.
  const double again = y[2] + 0.2;
  ASSERT_TRUE(process.condition(z.col(2), again));
  EXPECT_EQ(process.points(), 7);
  const auto [mean, variance] = process.predict(z.col(2));
  EXPECT_NEAR(mean, (y[2] + again) / 2, 0.01);
  EXPECT_GE(variance, 0.0);
  EXPECT_LT(variance, 1e-3);
}

}  // namespace
