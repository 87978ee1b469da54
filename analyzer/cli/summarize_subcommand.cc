// `occ-report summarize TRACE [-o OUT]`: the trace's summary (read/summary/trace_summary.h),
// written next to it so that a report over many ranks reads the summaries instead of the traces.
#include <sys/stat.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <fstream>

#include "analyzer/cli/occ_report.h"
#include "analyzer/read/registry/input_formats.h"
#include "analyzer/read/summary/trace_summary.h"

namespace occ {
namespace {

class SummarizeSubcommand : public Subcommand {
 public:
  std::string name() const override { return "summarize"; }
  std::string description() const override {
    return "Write a trace's summary (its launches summed per configuration; e.g. 278 KB "
           "for a ResNet-50 training trace) for "
           "reports across many ranks: `occ-report a.summary.json b.summary.json`";
  }

  void AddFlags(CLI::App* app) override {
    app->add_option("trace", trace_, "occtrace trace, Nsight Systems SQLite export or .sql dump")
        ->required();
    app->add_option("-o,--output", output_,
                    "Write the summary to FILE (default: the trace's name with .summary.json in "
                    "place of its extension; - for standard output)");
    app->add_flag("-f,--force,--force-overwrite", force_, "Replace an existing output file");
  }

  Status Run(const RunContext& ctx) override {
    const std::string output = output_.empty() ? DefaultSummaryPath(trace_) : output_;
    const bool to_stdout = output == "-";
    if (!to_stdout) {
      struct stat st {};
      if (stat(output.c_str(), &st) == 0) {
        if (S_ISDIR(st.st_mode)) return InvalidArgument("-o " + output + ": is a directory");
        if (!force_) {
          return InvalidArgument(output + ": file exists (use --force to replace it)");
        }
      }
    }
    OCC_ASSIGN_OR_RETURN(occtrace::TraceSummary summary, SummarizeTrace(trace_));
    OCC_ASSIGN_OR_RETURN(std::string json, SummaryToJson(summary));
    for (const auto& warning : summary.input().warnings()) {
      *ctx.err << "occ-report: warning: " << trace_ << ": " << warning << "\n";
    }
    if (to_stdout) {
      *ctx.out << json;
      ctx.out->flush();
      if (!*ctx.out) return IoError("cannot write the summary to standard output");
      return OkStatus();
    }
    // A sibling temporary renamed into place: a reader never sees half a summary.
    const std::string tmp = output + ".occ-report-tmp";
    {
      std::ofstream file(tmp, std::ios::binary | std::ios::trunc);
      if (!file) return IoError(output + ": cannot create " + tmp);
      file << json;
      file.flush();
      if (!file) {
        std::remove(tmp.c_str());
        return IoError(output + ": write failed");
      }
    }
    if (std::rename(tmp.c_str(), output.c_str()) != 0) {
      std::remove(tmp.c_str());
      return IoError(output + ": cannot replace the file");
    }
    return OkStatus();
  }

 private:
  std::string trace_;
  std::string output_;
  bool force_ = false;
};

}  // namespace

std::unique_ptr<Subcommand> MakeSummarizeSubcommand() {
  return std::make_unique<SummarizeSubcommand>();
}

}  // namespace occ
