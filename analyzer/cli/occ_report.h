// occ-report's entry point, callable in-process by tests with an argv vector.
#pragma once

#include <iosfwd>
#include <memory>
#include <string>
#include <vector>

#include "base/status.h"

namespace CLI {
class App;
}

namespace occ {

// Exit codes of occ-report (docs/cli.md).
enum ExitCode : int {
  kExitOk = 0,
  kExitInternal = 1,
  kExitBadInput = 2,   // bad flags or values, unusable input file
  kExitNoKernels = 3,  // input fine, but no launch matches the filters
  kExitIoError = 4,    // cannot write the output
};
int ExitCodeFor(const Status& status);

struct RunContext {
  std::ostream* out;      // report output (stdout unless -o)
  std::ostream* err;      // one-line errors and warnings
  bool out_is_terminal;   // color and width decisions
};

// One subcommand per file pair (calc_subcommand.cc, report_subcommand.cc, ...). AddFlags is
// called once with the subcommand's CLI11 app; Run after a successful parse.
class Subcommand {
 public:
  virtual ~Subcommand() = default;
  virtual std::string name() const = 0;
  virtual std::string description() const = 0;
  virtual void AddFlags(CLI::App* app) = 0;
  virtual Status Run(const RunContext& ctx) = 0;
};

std::unique_ptr<Subcommand> MakeCalcSubcommand();
std::unique_ptr<Subcommand> MakeReportSubcommand();
std::unique_ptr<Subcommand> MakeLaunchesSubcommand();
std::unique_ptr<Subcommand> MakeSummarizeSubcommand();

// `occ-report FILE...` is `occ-report report FILE...`. Returns the process exit code.
int RunOccReport(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

}  // namespace occ
