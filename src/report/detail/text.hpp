#pragma once
// Text helpers shared by the report writers.
#include <cstddef>
#include <string>
#include <string_view>

#include "tunekit/measure.hpp"
#include "tunekit/trial.hpp"

namespace tunekit::detail {

// First non-blank line of `text`, trimmed, cut to about `limit` characters
// (on UTF-8 character boundaries) when longer: its middle gives way to
// " ... ", since a reason's last words are often what it is about (a wrong
// result's expected value, a compiler's message after its file and line).
std::string first_line(std::string_view text, std::size_t limit);

// Why a trial was cut short by the early stop (Status::slower), in one
// line: its samples, and the bar they were all over.
std::string slower_reason(const TrialRecord& t);

// Why a trial failed (or was cut short), in one line of about `limit`
// characters: a compiler's first error line rather than its log's opening
// context, a wrong result's difference from the reference.
std::string failure_reason(const TrialRecord& t, std::size_t limit);

// `share` in percent, with as many decimals as it takes to differ from
// `other` (a noise of 0.12% "over the 0.1% target" must not read 0.1%).
std::string percent_beside(double share, double other);

}  // namespace tunekit::detail
