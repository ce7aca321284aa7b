// The tunekit command line with a strategy of the program's own
// (docs/recipes/toy_strategy.cpp), built against an installed tunekit.
#include "tunekit/cli.hpp"

void add_backwards_strategy();

int main(int argc, char** argv) {
  add_backwards_strategy();
  return tunekit::cli::run(argc, argv);
}
