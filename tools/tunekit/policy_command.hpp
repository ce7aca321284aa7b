#pragma once
// `tunekit select` and `tunekit emit`: choose configs across the tuned
// problem sizes, and ship them as a C++ policy header and JSON.
#include "space_command.hpp"

namespace tunekit::cli {

SubCommand add_select_command(CLI::App& app);
SubCommand add_emit_command(CLI::App& app);
// `tunekit rules-report`: how each size's rule config (search.rules) fared,
// from the results database.
SubCommand add_rules_report_command(CLI::App& app);
// `tunekit report`: the HTML report and the parameter tables of a spec's
// stored results.
SubCommand add_report_command(CLI::App& app);

}  // namespace tunekit::cli
