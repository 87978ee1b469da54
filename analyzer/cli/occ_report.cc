#include "analyzer/cli/occ_report.h"

#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <iostream>

namespace occ {

int ExitCodeFor(const Status& status) {
  switch (status.code()) {
    case StatusCode::kOk: return kExitOk;
    case StatusCode::kInvalidArgument:
    case StatusCode::kBadInput: return kExitBadInput;
    case StatusCode::kNotFound: return kExitNoKernels;
    case StatusCode::kIoError: return kExitIoError;
    case StatusCode::kInternal: return kExitInternal;
  }
  return kExitInternal;
}

int RunOccReport(const std::vector<std::string>& args_in, std::ostream& out, std::ostream& err) {
  std::vector<std::unique_ptr<Subcommand>> subcommands;
  subcommands.push_back(MakeReportSubcommand());
  subcommands.push_back(MakeLaunchesSubcommand());
  subcommands.push_back(MakeCalcSubcommand());
  subcommands.push_back(MakeSummarizeSubcommand());

  std::vector<std::string> args = args_in;
  auto is_subcommand = [&](const std::string& word) {
    return std::any_of(subcommands.begin(), subcommands.end(),
                       [&](const auto& s) { return s->name() == word; });
  };
  // `occ-report trace.db ...` means `occ-report report trace.db ...`.
  if (!args.empty() && !is_subcommand(args[0]) && args[0] != "-h" && args[0] != "--help" &&
      args[0] != "--version") {
    args.insert(args.begin(), "report");
  }

  CLI::App app{"occ-report: explain and fix GPU occupancy from occtrace / Nsight Systems traces",
               "occ-report"};
  app.set_version_flag("--version", std::string("occ-report ") + OCC_VERSION);
  app.require_subcommand(1);
  app.footer("Run `occ-report SUBCOMMAND --help` for a subcommand's flags. "
             "`occ-report trace.db` is `occ-report report trace.db`.");
  std::vector<std::pair<CLI::App*, Subcommand*>> apps;
  for (auto& s : subcommands) {
    CLI::App* sub = app.add_subcommand(s->name(), s->description());
    s->AddFlags(sub);
    apps.emplace_back(sub, s.get());
  }

  // CLI11 wants argv order reversed when given a vector.
  std::vector<std::string> reversed(args.rbegin(), args.rend());
  try {
    app.parse(reversed);
  } catch (const CLI::CallForHelp&) {
    out << app.help();
    return kExitOk;
  } catch (const CLI::CallForAllHelp&) {
    out << app.help("", CLI::AppFormatMode::All);
    return kExitOk;
  } catch (const CLI::CallForVersion&) {
    out << "occ-report " << OCC_VERSION << "\n";
    return kExitOk;
  } catch (const CLI::ParseError& e) {
    // Help for a subcommand arrives as CallForHelp from the subcommand itself.
    if (e.get_exit_code() == 0) {
      for (auto& [sub, s] : apps) {
        if (sub->parsed()) { out << sub->help(); return kExitOk; }
      }
      out << app.help();
      return kExitOk;
    }
    err << "occ-report: " << e.what() << "\n";
    return kExitBadInput;
  }

  RunContext ctx{&out, &err, &out == &std::cout && isatty(STDOUT_FILENO) == 1};
  for (auto& [sub, s] : apps) {
    if (!sub->parsed()) continue;
    Status status = s->Run(ctx);
    if (!status.ok()) {
      err << "occ-report: " << status.message() << "\n";
      return ExitCodeFor(status);
    }
    return kExitOk;
  }
  return kExitInternal;
}

}  // namespace occ
