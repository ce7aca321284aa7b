// A backend: "kernels" whose time is a formula of the config, for trying a
// strategy without a device. One folder's worth of code; `add_formula_backend()`
// is its registration line. A real backend builds the variant in its Builder
// and runs it in a worker process from its Evaluator (src/backend/cpu/).
#include "tunekit/backend.hpp"

namespace {

// Nothing to compile: the artifact is the variant's hash.
class FormulaBuilder : public tunekit::Builder {
 public:
  tunekit::BuildResult build(const tunekit::BuildInput& input) override {
    tunekit::BuildResult r;
    r.artifact.hash = input.hash();
    return r;
  }
};

// The "time" of a config: the spec's `entry` names a parameter X; the time
// is 10 + (X - 5)^2 microseconds, so X = 5 is the best.
class FormulaEvaluator : public tunekit::Evaluator {
 public:
  tunekit::TrialResult evaluate(const tunekit::TrialRequest& request) override {
    tunekit::TrialResult r;
    const double x = request.values.at(request.entry).to_double();
    const tunekit::Microseconds t{10 + (x - 5) * (x - 5)};
    r.samples = {t, t, t};
    r.stats = tunekit::summarize(r.samples);
    return r;
  }
};

class FormulaBackend : public tunekit::Backend {
 public:
  FormulaBackend() { machine_.device = "formula"; }
  std::string_view name() const override { return "formula"; }
  const tunekit::MachineInfo& machine() const override { return machine_; }
  std::unique_ptr<tunekit::Builder> make_builder() override { return std::make_unique<FormulaBuilder>(); }
  std::unique_ptr<tunekit::Evaluator> make_evaluator() override { return std::make_unique<FormulaEvaluator>(); }
  bool measures_while_building() const override { return true; }

 private:
  tunekit::MachineInfo machine_;
};

}  // namespace

void add_formula_backend() {
  tunekit::BackendInfo b;
  b.name = "formula";
  b.languages = {"formula"};
  b.summary = "a time computed from the config (for trying strategies)";
  b.kernel.defines = false;  // what the spec's kernel section takes: an entry, no compiler or launch
  b.make = [](const tunekit::BackendOptions&) -> std::unique_ptr<tunekit::Backend> {
    return std::make_unique<FormulaBackend>();
  };
  b.list_devices = [] { return tunekit::DeviceListing{"formula", {FormulaBackend().machine()}, {}}; };
  tunekit::backends().add(std::move(b));
}
