#include <algorithm>
#include <atomic>
#include <thread>

#include "core/detail/cores.hpp"
#include "tunekit/builder.hpp"

namespace tunekit {

void build_parallel(Builder& builder, std::span<const BuildInput> inputs, unsigned jobs,
                    const std::function<void(std::size_t, BuildResult)>& done) {
  if (jobs == 0) jobs = static_cast<unsigned>(detail::usable_cores());
  jobs = std::min<unsigned>(jobs, static_cast<unsigned>(std::max<std::size_t>(1, inputs.size())));
  std::atomic<std::size_t> next{0};
  auto work = [&] {
    for (std::size_t i; (i = next.fetch_add(1)) < inputs.size();) done(i, builder.build(inputs[i]));
  };
  std::vector<std::jthread> pool;
  for (unsigned t = 1; t < jobs; ++t) pool.emplace_back(work);
  work();
}

}  // namespace tunekit
