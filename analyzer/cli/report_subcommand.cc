// `occ-report report FILE...` (also `occ-report FILE...`): the ranked occupancy report.
#include <google/protobuf/util/json_util.h>
#include <sys/stat.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cctype>
#include <string_view>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "analyzer/analyze/analysis.h"
#include "analyzer/read/registry/input_paths.h"
#include "analyzer/cli/timeline_export.h"
#include "analyzer/cli/occ_report.h"
#include "reports/printer.h"

namespace occ {
namespace {


StatusOr<std::string> FormatFromExtension(const std::string& path) {
  auto dot = path.find_last_of('.');
  auto slash = path.find_last_of('/');
  std::string ext = (dot == std::string::npos || (slash != std::string::npos && dot < slash))
                        ? ""
                        : path.substr(dot + 1);
  for (auto& ch : ext) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  if (ext == "txt" || ext == "text") return std::string("text");
  if (ext == "md" || ext == "markdown") return std::string("markdown");
  if (ext == "html" || ext == "htm") return std::string("html");
  if (ext == "json") return std::string("json");
  if (ext == "csv") return std::string("csv");
  if (ext == "gz") return std::string("trace");  // run.json.gz: the timeline export
  return InvalidArgument("-o " + path + ": cannot tell the format from the extension '" + ext +
                         "' (.txt .md .html .json .csv, .json.gz for --format trace); pass --format");
}

// Renders `report` with the format's printer. JSON falls back to the Protobuf JSON mapping
// itself when the reports library has no JSON printer (same output contract).
Status Render(const occtrace::Report& report, const std::string& format, const PrintOptions& po,
              std::ostream& out) {
  if (auto printer = MakePrinter(format)) {
    printer->Print(report, po, out);
    return OkStatus();
  }
  if (format == "json") {
    google::protobuf::util::JsonPrintOptions options;
    options.add_whitespace = true;
    options.preserve_proto_field_names = true;
    options.always_print_primitive_fields = true;
    std::string json;
    auto status = google::protobuf::util::MessageToJsonString(report, &json, options);
    if (!status.ok()) return Internal("cannot render JSON: " + status.ToString());
    out << json;
    if (json.empty() || json.back() != '\n') out << '\n';
    return OkStatus();
  }
  return Internal("no " + format + " printer in this build of occ-report");
}

// A word as a POSIX shell would need it to retype the command.
std::string ShellQuote(const std::string& word) {
  bool plain = !word.empty();
  for (char c : word) {
    plain &= std::isalnum(static_cast<unsigned char>(c)) != 0 ||
             std::string_view("_./:=,+-@%").find(c) != std::string_view::npos;
  }
  if (plain) return word;
  std::string out = "'";
  for (char c : word) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

class ReportSubcommand : public Subcommand {
 public:
  std::string name() const override { return "report"; }
  std::string description() const override {
    return "Rank kernel configurations by wasted occupancy, explain why, suggest fixes "
           "(default subcommand)";
  }

  void AddFlags(CLI::App* app) override {
    app_ = app;
    app->add_option("files", options_.inputs,
                    "occtrace traces, Nsight Systems SQLite exports, .sql text dumps or their "
                    "summaries (occ-report summarize), or directories of them; several files "
                    "(e.g. one per rank) are analyzed together")
        ->required();
    app->add_option("--top", options_.top, "Show the N highest-ranked groups (0 = all)")
        ->default_val(20);
    app->add_option("-k,--kernel", options_.kernel_regex,
                    "Only kernels whose demangled name matches this POSIX extended regex");
    app->add_option("--sort", options_.sort,
                    "Ranking: time (GPU time, the default), priority (GPU-time share x "
                    "headroom or measured gain), recoverable (counted gain), owner, headroom, "
                    "launches, name")
        ->default_val("time");
    app->add_option("--min-time-pct", options_.min_time_pct,
                    "Hide groups below this share of the GPU time (percent)")
        ->default_val(0);
    app->add_option("--gpu", options_.gpu,
                    "Re-evaluate every kernel on another GPU (name such as H100, A100, RTX4090, or "
                    "a compute capability such as sm_90)");
    app->add_option("--diff", options_.diff_base,
                    "Did it work? Compare against a baseline trace (or its summary): the output is "
                    "the comparison alone, total GPU time before -> after and every kernel by the "
                    "time it saved or cost (--top and --kernel pick the rows shown)");
    jobs_option_ = app->add_option(
        "-j,--jobs", options_.jobs,
        "Threads that read each input's launch table (0 = one per core; small tables use one); "
        "the report is the same for every value")
        ->default_val(0);
    app->add_option("--format", format_,
                    "Output format: text, markdown, html, json, csv, or trace (a timeline of every "
                    "launch for Perfetto and HTA, Chrome Trace Event JSON; needs -o FILE.json or "
                    "FILE.json.gz, or -o DIR with several inputs)")
        ->check(CLI::IsMember({"text", "markdown", "html", "json", "csv", "trace"}));
    app->add_option("-o,--output", output_,
                    "Write the report to FILE (format from its extension unless --format)");
    flags_.push_back(app->add_flag("-f,--force,--force-overwrite", force_,
                                   "Replace an existing -o FILE"));
    flags_.push_back(app->add_flag("--no-color", no_color_,
                                   "No ANSI colors in text output (also NO_COLOR=1)"));
  }

  Status Run(const RunContext& ctx) override {
    options_.command_line = CommandLine();
    std::string format = format_;
    if (format.empty() && !output_.empty() && EndsWith(output_, ".gz")) format = "trace";
    if (format == "trace") {
      if (!options_.diff_base.empty()) {
        return InvalidArgument("--diff compares two traces: --format trace exports one trace's launches");
      }
      return RunTimelineExport(ctx);
    }
    if (!output_.empty()) {
      if (format.empty()) {
        OCC_ASSIGN_OR_RETURN(format, FormatFromExtension(output_));
      }
      struct stat st {};
      if (stat(output_.c_str(), &st) == 0) {
        if (S_ISDIR(st.st_mode)) return InvalidArgument("-o " + output_ + ": is a directory");
        if (!force_) {
          return InvalidArgument("-o " + output_ + ": file exists (use --force to replace it)");
        }
      }
    }
    if (format.empty()) format = "text";

    OCC_ASSIGN_OR_RETURN(occtrace::Report report, BuildReport(options_));
    for (const auto& file : report.files()) {
      for (const auto& warning : file.warnings()) {
        *ctx.err << "occ-report: warning: " << file.path() << ": " << warning << "\n";
      }
    }
    for (const auto& file : report.diff().base_files()) {
      for (const auto& warning : file.warnings()) {
        *ctx.err << "occ-report: warning: --diff base " << file.path() << ": " << warning << "\n";
      }
    }

    PrintOptions po;
    const char* no_color_env = std::getenv("NO_COLOR");
    po.color = format == "text" && output_.empty() && ctx.out_is_terminal && !no_color_ &&
               (no_color_env == nullptr || *no_color_env == '\0');
    std::ostringstream rendered;
    OCC_RETURN_IF_ERROR(Render(report, format, po, rendered));

    if (output_.empty()) {
      *ctx.out << rendered.str();
      ctx.out->flush();
      if (!*ctx.out) return IoError("cannot write the report to standard output");
      return OkStatus();
    }
    // Written to a sibling temporary and renamed: a failed write never leaves half a report
    // in place of an existing file.
    std::string tmp = output_ + ".occ-report-tmp";
    {
      std::ofstream file(tmp, std::ios::binary | std::ios::trunc);
      if (!file) return IoError("-o " + output_ + ": cannot create " + tmp);
      file << rendered.str();
      file.flush();
      if (!file) {
        std::remove(tmp.c_str());
        return IoError("-o " + output_ + ": write failed");
      }
    }
    if (std::rename(tmp.c_str(), output_.c_str()) != 0) {
      std::remove(tmp.c_str());
      return IoError("-o " + output_ + ": cannot replace the file");
    }
    return OkStatus();
  }

 private:
  // The invocation as the user could retype it, for Report.generated_for.
  std::string CommandLine() const {
    std::string line = "occ-report";
    for (const auto& f : options_.inputs) line += " " + ShellQuote(f);
    if (app_ == nullptr) return line;
    for (const CLI::Option* opt : app_->get_options()) {
      if (opt->get_positional() || opt->count() == 0 || opt->get_name() == "--help") continue;
      // Left out: the report does not depend on it, so reports made with any --jobs compare
      // equal.
      if (opt == jobs_option_) continue;
      std::string name = opt->get_lnames().empty() ? opt->get_name()
                                                   : "--" + opt->get_lnames().front();
      if (std::find(flags_.begin(), flags_.end(), opt) != flags_.end()) {
        line += " " + name;
      } else {
        for (const auto& value : opt->results()) line += " " + name + " " + ShellQuote(value);
      }
    }
    return line;
  }

  static bool EndsWith(const std::string& s, const std::string& suffix) {
    return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
  }

  // --format trace: not a view of the report but every launch, streamed (timeline_export.h).
  Status RunTimelineExport(const RunContext& ctx) {
    OCC_ASSIGN_OR_RETURN(std::vector<std::string> inputs, ExpandInputPaths(options_.inputs));
    OCC_ASSIGN_OR_RETURN(TimelineExportStats stats,
                         ExportTimeline(inputs, output_, options_.kernel_regex, force_));
    if (stats.skipped_untimed > 0) {
      *ctx.err << "occ-report: warning: " << stats.skipped_untimed
               << " launches without a start time (replayed by the profiler) are not on the "
                  "timeline\n";
    }
    if (stats.slices == 0) return NotFound("no kernel launch to export");
    return OkStatus();
  }

  CLI::App* app_ = nullptr;
  const CLI::Option* jobs_option_ = nullptr;
  std::vector<const CLI::Option*> flags_;
  ReportOptions options_;
  std::string format_;
  std::string output_;
  bool force_ = false;
  bool no_color_ = false;
};

}  // namespace

std::unique_ptr<Subcommand> MakeReportSubcommand() { return std::make_unique<ReportSubcommand>(); }

}  // namespace occ
