// The constraint language: the parser takes any text (a program or an
// InputError), and a program evaluates under any bindings of its names to a
// value or a failure, never a crash (UBSan watches the arithmetic).
#include <string>
#include <vector>

#include "tunekit/constraint.hpp"
#include "tunekit/error.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  tunekit::Expression e;
  try {
    e = tunekit::Expression::parse(text);
  } catch (const tunekit::InputError&) {
    return 0;
  }
  using tunekit::Value;
  const std::vector<Value> kinds{Value(std::int64_t{0}),
                                 Value(std::int64_t{1}),
                                 Value(std::int64_t{-3}),
                                 Value(std::int64_t{INT64_MAX}),
                                 Value(std::int64_t{INT64_MIN}),
                                 Value(2.5),
                                 Value(-0.0),
                                 Value(std::string("s"))};
  const std::size_t n = e.variables().size();
  for (std::size_t k = 0; k < kinds.size(); ++k) {
    std::vector<Value> values(n);
    for (std::size_t i = 0; i < n; ++i) values[i] = kinds[(k + i) % kinds.size()];
    (void)e.evaluate(values);
    (void)e.test(values);
    tunekit::Bindings env;
    for (std::size_t i = 0; i < n; ++i) env[e.variables()[i]] = values[i];
    try {
      (void)e.evaluate(env);
      (void)e.bind(env);
    } catch (const tunekit::InputError&) {
    }
  }
  return 0;
}
