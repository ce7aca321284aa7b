#pragma once
// A list of parameter values kept distinct by Python's equality (Value's
// ==), the one rule for a spec's parameters, its configs: list and a T1
// file's values (docs/spec-format.md: "a list of distinct values"): 1, 1.0
// and True are one value, so are 0.0 and -0.0, and a NaN equals nothing.
#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "tunekit/value.hpp"

namespace tunekit::detail {

class DistinctValues {
 public:
  // The index of an earlier value equal to `v`; else nullopt, and `v` is
  // kept, as the next index.
  std::optional<std::size_t> add(const Value& v) {
    // Equal numbers are equal doubles (and 0.0, -0.0 hash alike): a bucket
    // holds the earlier values a value may equal. Linear, for long lists.
    auto& bucket =
        buckets_[v.is_string() ? std::hash<std::string>{}(v.as_string()) : std::hash<double>{}(v.to_double())];
    for (std::size_t j : bucket)
      if (values_[j] == v) return j;
    bucket.push_back(values_.size());
    values_.push_back(v);
    return std::nullopt;
  }

  const Value& operator[](std::size_t i) const { return values_[i]; }

 private:
  std::vector<Value> values_;
  std::unordered_map<std::size_t, std::vector<std::size_t>> buckets_;
};

}  // namespace tunekit::detail
