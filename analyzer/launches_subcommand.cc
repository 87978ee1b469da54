// Placeholder until the launches subcommand lands; replaced by its owner.
#include <CLI/CLI.hpp>

#include "occ_report.h"

namespace occ {
namespace {
class LaunchesSubcommand : public Subcommand {
 public:
  std::string name() const override { return "launches"; }
  std::string description() const override { return "(not built yet)"; }
  void AddFlags(CLI::App* app) override { app->allow_extras(); }
  Status Run(const RunContext&) override { return Internal("launches: not implemented yet"); }
};
}  // namespace
std::unique_ptr<Subcommand> MakeLaunchesSubcommand() { return std::make_unique<LaunchesSubcommand>(); }
}  // namespace occ
