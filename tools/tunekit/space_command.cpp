#include "space_command.hpp"

#include <chrono>
#include <memory>

#include <fmt/format.h>

#include "tunekit/backend.hpp"
#include "tunekit/space.hpp"
#include "tunekit/spec.hpp"

namespace tunekit::cli {

namespace fs = std::filesystem;

namespace {

struct SpaceArgs {
  std::string file;
  std::vector<std::string> sizes;
};

int run_space(const SpaceArgs& a) {
  Spec spec = is_spec_file(a.file) ? load_spec(a.file) : spec_from_source(a.file);
  auto backend = make_backend(spec.kernel.language, {fs::temp_directory_path() / "tunekit-space", false});
  Bindings constants = backend->machine().properties;
  if (!spec.sizes.empty())
    for (const auto& [k, v] : spec.sizes.front()) constants[k] = v;
  for (const auto& s : a.sizes) {
    auto [name, value] = parse_assignment(s);
    constants[name] = value;
  }
  const auto t0 = std::chrono::steady_clock::now();
  Space space(spec.parameters, spec.constraints, constants);
  const auto valid = space.count();
  const std::chrono::duration<double> took = std::chrono::steady_clock::now() - t0;
  fmt::print("parameters:  {}\nconstraints: {}\ncartesian:   {}\nvalid:       {}\nseconds:     {:.6f}\n",
             space.parameters().size(), space.constraints().size(), space.cartesian_size(), valid, took.count());
  return 0;
}

}  // namespace

SubCommand add_space_command(CLI::App& app) {
  auto args = std::make_shared<SpaceArgs>();
  auto* cmd = app.add_subcommand("space", "Count a search space: parameters, constraints, Cartesian and valid sizes");
  cmd->add_option("FILE", args->file, "Spec file or annotated source")->required()->check(CLI::ExistingFile);
  cmd->add_option("-s,--size", args->sizes, "Problem size NAME=VALUE for constraints that use sizes");
  return {cmd, [args] { return run_space(*args); }};
}

}  // namespace tunekit::cli
