// The base of the guided strategies (detail/indexed.hpp).
#include <algorithm>
#include <cmath>

#include "search/detail/builtin.hpp"
#include "search/detail/indexed.hpp"

namespace tunekit::detail {

namespace {
constexpr std::uint64_t kDenseRanks = std::uint64_t{1} << 27;
}

RankSet::RankSet(std::uint64_t n) : dense_(n <= kDenseRanks) {
  if (dense_) bits_.assign(static_cast<std::size_t>((n + 63) / 64), 0);
}

bool RankSet::contains(std::uint64_t r) const {
  if (dense_) return (bits_[r >> 6] >> (r & 63)) & 1;
  return set_.count(r) != 0;
}

bool RankSet::insert(std::uint64_t r) {
  if (dense_) {
    std::uint64_t& w = bits_[r >> 6];
    const std::uint64_t bit = std::uint64_t{1} << (r & 63);
    if (w & bit) return false;
    w |= bit;
  } else if (!set_.insert(r).second) {
    return false;
  }
  ++count_;
  return true;
}

double uniform01(std::mt19937_64& rng) { return static_cast<double>(rng() >> 11) * 0x1.0p-53; }

bool has_usable_index(const Space& space) { return space.indexable() && space.count() != UINT64_MAX; }

std::unique_ptr<Strategy> random_fallback(const StrategyContext& c) { return random_strategy().make(c); }

IndexedSearch::IndexedSearch(const Space& space, std::uint64_t seed, std::optional<std::uint64_t> budget)
    : space_(space), rng_(seed), size_(space.size()), budget_(budget), tried_(size_), observed_(size_) {
  for (const auto& p : space.parameters()) cardinality_.push_back(static_cast<std::uint32_t>(p.values.size()));
}

std::size_t batch_limit(std::optional<std::uint64_t> budget, std::size_t n) {
  if (!budget) return n;
  return std::min<std::size_t>(n, static_cast<std::size_t>(std::max<std::uint64_t>(1, (*budget + 9) / 10)));
}

std::vector<Config> IndexedSearch::next(std::size_t n) {
  std::vector<Config> out;
  if (n == 0 || untried() == 0) return out;
  std::vector<std::uint64_t> ranks;
  n = batch_limit(budget_, n);
  propose(n, ranks);
  // A strategy with nothing in mind while nothing is pending would stop the
  // search early: it gets a random config instead.
  if (ranks.empty() && untried() > 0)
    if (auto r = draw_untried(); r && claim(*r)) ranks.push_back(*r);
  out.reserve(ranks.size());
  for (std::uint64_t r : ranks) out.push_back(space_.at(r));
  pending_ += ranks.size();
  return out;
}

void IndexedSearch::observe(const Config& config, const Outcome& outcome) {
  auto x = space_.indices_of(config);
  if (!x) return;  // not a config of this space (an explicit list's invalid entry)
  auto rank = space_.index_of(std::span<const std::uint32_t>(*x));
  if (!rank) return;  // violates the constraints
  if (!observed_.insert(*rank)) return;
  if (!tried_.insert(*rank)) {
    if (pending_ > 0) --pending_;
  }
  Observation o;
  o.rank = *rank;
  o.x = std::move(*x);
  if (outcome.status == Status::ok && outcome.cost && std::isfinite(*outcome.cost)) o.cost = *outcome.cost;
  observations_.push_back(std::move(o));
  const Observation& back = observations_.back();
  if (back.cost && (best_ < 0 || *back.cost < *observations_[static_cast<std::size_t>(best_)].cost))
    best_ = static_cast<std::int64_t>(observations_.size() - 1);
  learn(back);
}

bool IndexedSearch::claim(std::uint64_t rank) { return tried_.insert(rank); }

std::optional<std::uint64_t> IndexedSearch::draw_untried() {
  auto at = [&](std::uint64_t i) {
    auto it = moved_.find(i);
    return it == moved_.end() ? i : it->second;
  };
  while (shuffled_ < size_ && untried() > 0) {
    const std::uint64_t j = shuffled_ + uniform_below(rng_, size_ - shuffled_);
    const std::uint64_t picked = at(j);
    moved_[j] = at(shuffled_);
    moved_.erase(shuffled_);
    ++shuffled_;
    // A rank tried by other means is skipped: each is skipped once at most.
    if (!tried(picked)) return picked;
  }
  return std::nullopt;
}

Indices IndexedSearch::indices(std::uint64_t rank) const { return space_.indices_at(rank); }

std::optional<std::uint64_t> IndexedSearch::rank_of(std::span<const std::uint32_t> x) const {
  return space_.index_of(x);
}

Indices IndexedSearch::recombine(std::span<const std::uint32_t> from, std::span<const std::uint32_t> to, double rate) {
  Indices child(from.begin(), from.end());
  std::vector<std::size_t> differing;
  for (std::size_t p = 0; p < child.size(); ++p)
    if (from[p] != to[p] && uniform01(rng_) < rate) differing.push_back(p);
  for (std::size_t i = differing.size(); i > 1; --i) std::swap(differing[i - 1], differing[uniform_below(rng_, i)]);
  // One pass, then another for the moves the first one's later moves made
  // valid: constraints often tie two parameters (a block and its tile).
  for (int pass = 0; pass < 2 && !differing.empty(); ++pass) {
    std::vector<std::size_t> left;
    for (std::size_t p : differing) {
      const std::uint32_t keep = child[p];
      child[p] = to[p];
      if (!valid(child)) {
        child[p] = keep;
        left.push_back(p);
      }
    }
    if (left.size() == differing.size()) break;
    differing = std::move(left);
  }
  return child;
}

std::optional<Indices> IndexedSearch::random_neighbour(std::span<const std::uint32_t> x) {
  std::vector<std::size_t> order;
  for (std::size_t p = 0; p < cardinality_.size(); ++p)
    if (cardinality_[p] > 1) order.push_back(p);
  Indices y(x.begin(), x.end());
  std::vector<std::uint32_t> values;
  // Parameters in a random order; the first with another valid value moves.
  for (std::size_t i = order.size(); i > 0; --i) {
    const std::size_t k = uniform_below(rng_, i);
    const std::size_t p = order[k];
    order[k] = order[i - 1];
    values.clear();
    for (std::uint32_t v = 0; v < cardinality_[p]; ++v) {
      if (v == x[p]) continue;
      y[p] = v;
      if (valid(y)) values.push_back(v);
    }
    y[p] = x[p];
    if (!values.empty()) {
      y[p] = values[uniform_below(rng_, values.size())];
      return y;
    }
  }
  return std::nullopt;
}

std::optional<std::uint64_t> IndexedSearch::untried_neighbour(std::span<const std::uint32_t> x, bool adjacent_first) {
  for (int round = adjacent_first ? 0 : 1; round < 2; ++round) {
    auto near = neighbours(x, round == 0 ? Neighbourhood::adjacent : Neighbourhood::hamming);
    std::vector<std::uint64_t> fresh;
    for (const auto& n : near)
      if (auto r = rank_of(n); r && !tried(*r)) fresh.push_back(*r);
    if (!fresh.empty()) return fresh[uniform_below(rng_, fresh.size())];
  }
  return std::nullopt;
}

}  // namespace tunekit::detail
