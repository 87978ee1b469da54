// Placeholder until the calc subcommand lands; replaced by its owner.
#include <CLI/CLI.hpp>

#include "occ_report.h"

namespace occ {
namespace {
class CalcSubcommand : public Subcommand {
 public:
  std::string name() const override { return "calc"; }
  std::string description() const override { return "(not built yet)"; }
  void AddFlags(CLI::App* app) override { app->allow_extras(); }
  Status Run(const RunContext&) override { return Internal("calc: not implemented yet"); }
};
}  // namespace
std::unique_ptr<Subcommand> MakeCalcSubcommand() { return std::make_unique<CalcSubcommand>(); }
}  // namespace occ
