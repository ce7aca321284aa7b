#pragma once
// The output comparison of compare_outputs() (tunekit/evaluator.hpp), with
// the number of parts it runs in given: tests use it to split an output on
// any machine.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "tunekit/evaluator.hpp"

namespace tunekit::detail {

// A part is at least this many elements (a thread costs tens of
// microseconds; a million elements take milliseconds), and an output is
// compared in at most kVerifyMaxParts parts.
inline constexpr std::uint64_t kVerifyPartElements = std::uint64_t{1} << 20;
inline constexpr std::size_t kVerifyMaxParts = 8;

// compare_outputs() in up to `parts` contiguous parts, each (but the
// first) on a thread of its own; the result does not depend on `parts`.
Verification compare_outputs_in_parts(ElementType type, const void* got, const void* expected, std::uint64_t count,
                                      const Tolerance& tol, std::string_view name, std::size_t parts);

}  // namespace tunekit::detail
