// Placeholder until the report subcommand lands; replaced by its owner.
#include <CLI/CLI.hpp>

#include "occ_report.h"

namespace occ {
namespace {
class ReportSubcommand : public Subcommand {
 public:
  std::string name() const override { return "report"; }
  std::string description() const override { return "(not built yet)"; }
  void AddFlags(CLI::App* app) override { app->allow_extras(); }
  Status Run(const RunContext&) override { return Internal("report: not implemented yet"); }
};
}  // namespace
std::unique_ptr<Subcommand> MakeReportSubcommand() { return std::make_unique<ReportSubcommand>(); }
}  // namespace occ
