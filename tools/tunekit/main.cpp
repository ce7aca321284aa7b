// tunekit: the command line (cli.cpp).
#include "tunekit/cli.hpp"

int main(int argc, char** argv) { return tunekit::cli::run(argc, argv); }
