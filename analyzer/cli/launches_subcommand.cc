// `occ-report launches FILE...`: one row per launch, like `nvprof --print-gpu-trace`, with the
// report's theoretical occupancy for the launch's configuration (launch_occupancy.h) and the
// achieved occupancy where it was measured; starts count from the trace's first timed launch.
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <optional>
#include <sstream>

#include "analyzer/cli/launch_occupancy.h"
#include "analyzer/model/message_text.h"
#include "analyzer/read/pm_attribution.h"
#include "analyzer/cli/occ_report.h"
#include "sqlite/sqlite_db.h"
#include "analyzer/read/registry/input_formats.h"

namespace occ {
namespace {

std::string CsvField(const std::string& s) {
  if (s.find_first_of(",\"\n\r") == std::string::npos) return s;
  std::string out = "\"";
  for (char c : s) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

// Text-table cells stay on one line whatever the kernel name holds.
std::string OneLine(const std::string& s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) out += (static_cast<unsigned char>(c) < 0x20) ? ' ' : c;
  return out;
}

// At the one decimal every format prints: a launch is above only where the printed figures say so.
bool AboveTheoretical(double achieved_pct, double theoretical_pct) {
  return std::lround(achieved_pct * 10) > std::lround(theoretical_pct * 10);
}

std::string JsonText(const std::string& s) {
  rapidjson::StringBuffer buffer;
  rapidjson::Writer<rapidjson::StringBuffer> writer(buffer);
  writer.String(s.data(), static_cast<rapidjson::SizeType>(s.size()));
  return buffer.GetString();
}

// Shortest text that reads back as the same double: JSON readers get the report's exact figure.
std::string JsonNumber(double v) {
  rapidjson::StringBuffer buffer;
  rapidjson::Writer<rapidjson::StringBuffer> writer(buffer);
  writer.Double(v);
  return buffer.GetString();
}

// One launch as every format shows it: the report's figures for its configuration
// (launch_occupancy.h) beside the launch's own measurement.
struct LaunchFacts {
  const occtrace::KernelGroup* group = nullptr;  // the report's configuration; null when none
  std::string kernel;       // the report's name for the kernel (Numba's without its ABI tags)
  bool judged = false;
  double theo_pct = -1;
  std::string theo;         // "-" when not judged
  bool replay = false;      // achieved occupancy replayed for this launch
  bool pm = false;          // else from the launch's own clean PM samples
  double ach_pct = -1;
  bool is_above = false;    // achieved above theoretical, as printed
  std::string ach;          // "p" for PM, "n/e" too few clean samples, "!" above theoretical
  std::string source;       // "replay", "pm" or ""
  bool timed = false;       // a replayed launch has no CUPTI timestamp (start 0)
  int64_t start = 0;        // after the file's first timed launch
};

LaunchFacts FactsOf(const LaunchRow& row, const ConfigStats& c, const occtrace::KernelGroup* group,
                    int64_t origin) {
  LaunchFacts l;
  l.group = group;
  l.judged = group != nullptr && group->judged();
  l.kernel = group != nullptr ? group->name() : c.name;
  l.theo_pct = l.judged ? group->occupancy().theoretical_occupancy_pct() : -1;
  l.theo = l.judged ? Fixed(l.theo_pct, 1) : "-";
  // Replay's value for this launch, else the launch's own clean PM samples ("p"), else
  // "n/e" where it had clean PM samples but their error is too large to show a figure.
  l.replay = row.achieved_pct >= 0;
  l.pm = !l.replay && row.pm_pct >= 0;
  l.ach_pct = l.replay ? row.achieved_pct : l.pm ? row.pm_pct : -1;
  l.is_above = l.judged && l.ach_pct >= 0 && AboveTheoretical(l.ach_pct, l.theo_pct);
  l.ach = l.replay ? Fixed(row.achieved_pct, 1)
          : l.pm   ? Fixed(row.pm_pct, 1) + "p"
          : row.pm_clean_samples > 0 ? "n/e"
          : row.achieved_status.empty() ? "-"
                                        : "n/a";
  if (l.is_above) l.ach += "!";
  l.source = l.replay ? "replay" : l.pm ? "pm" : "";
  l.timed = row.start > 0;
  l.start = l.timed ? row.start - origin : 0;
  return l;
}

// Why a launch of `file` has no achieved occupancy and no OCC_ACHIEVED row (Ach% "-"), from how
// the trace measured it, in the words of the report's Input section (AchievedModeText).
std::string NotMeasuredReason(const occtrace::InputFile& file) {
  const std::string& mode = file.achieved_mode();
  if (mode == "sample") return "the tracer replays sampled launches only, and did not sample these";
  if (mode == "all") return "the tracer replayed every launch but recorded nothing for these";
  if (mode == "off") return "tracing ran with achieved occupancy off";
  if (mode == "pm") {
    if (!file.pm_status().empty() && file.pm_status() != "on") return "PM sampling was off (" + file.pm_status() + ")";
    return "no PM sample in which the launch ran alone (shorter than the sampling interval, or beside "
           "other kernels)";
  }
  return "the input records no achieved occupancy";
}

// What the legend under the text table counts.
struct Tally {
  int64_t printed = 0;
  int64_t untimed = 0;
  int64_t above = 0;
  int64_t not_judged = 0;
  double above_by = 0;  // the most achieved exceeds theoretical by, in points
  int64_t pm_no_figure = 0;  // Ach% "n/e"
  int64_t failed = 0;        // Ach% "n/a"
  std::map<std::string, int64_t> not_measured;  // Ach% "-", by NotMeasuredReason

  void Count(const LaunchFacts& l, const occtrace::InputFile& file) {
    if (!l.judged) ++not_judged;
    if (l.is_above) {
      ++above;
      above_by = std::max(above_by, l.ach_pct - l.theo_pct);
    }
    if (!l.timed) ++untimed;
    if (l.ach == "n/e") ++pm_no_figure;
    if (l.ach == "n/a") ++failed;
    if (l.ach == "-") ++not_measured[NotMeasuredReason(file)];
  }
};

void WriteCsvRow(bool multi, size_t file, const LaunchRow& row, const ConfigStats& c,
                 const LaunchFacts& l, std::ostream& out) {
  if (multi) out << file << ',';
  out << (l.timed ? std::to_string(l.start) : "") << ',' << row.duration << ','
      << c.grid[0] << ',' << c.grid[1] << ',' << c.grid[2] << ',' << c.block[0] << ','
      << c.block[1] << ',' << c.block[2] << ','
      << (c.registers_known ? std::to_string(c.registers_per_thread) : "") << ','
      << c.static_smem << ',' << c.dynamic_smem << ',' << (l.judged ? l.theo : "") << ','
      << (l.replay ? l.ach.substr(0, l.ach.find('!')) : l.pm ? Fixed(row.pm_pct, 2) : row.achieved_status) << ','
      << l.source << ',' << (l.is_above ? "yes" : "") << ','
      << (row.pm_clean_samples > 0 ? std::to_string(row.pm_clean_samples) : "") << ','
      << c.device_id << ',' << row.stream_id << ',' << row.correlation_id << ','
      << CsvField(l.kernel) << '\n';
}

// `first`: the first launch of the array.
void WriteJsonRow(bool first, size_t file, const LaunchRow& row, const ConfigStats& c,
                  const LaunchFacts& l, std::ostream& out) {
  out << (first ? "\n    {" : ",\n    {") << "\"file_index\": " << file
      << ", \"start_ns\": " << (l.timed ? std::to_string(l.start) : "null")
      << ", \"duration_ns\": " << row.duration << ", \"grid\": [" << c.grid[0] << ", "
      << c.grid[1] << ", " << c.grid[2] << "], \"block\": [" << c.block[0] << ", "
      << c.block[1] << ", " << c.block[2] << "], \"cluster\": [" << c.cluster[0] << ", "
      << c.cluster[1] << ", " << c.cluster[2] << "], \"registers_per_thread\": "
      << (c.registers_known ? std::to_string(c.registers_per_thread) : "null")
      << ", \"static_shared_mem\": " << c.static_smem
      << ", \"dynamic_shared_mem\": " << c.dynamic_smem
      << ", \"shared_mem_executed\": " << c.smem_executed
      << ", \"device_id\": " << c.device_id << ", \"stream_id\": " << row.stream_id
      << ", \"correlation_id\": " << row.correlation_id
      << ", \"name\": " << JsonText(l.kernel) << ", \"theoretical_occupancy_pct\": "
      << (l.judged ? JsonNumber(l.theo_pct) : "null");
  if (l.group != nullptr) {
    // The report's configuration the launch is counted in: a replayed launch's
    // own executed carveout is not the program's (launch_occupancy.h).
    out << ", \"configuration\": {\"shared_mem_executed\": " << l.group->shared_mem_executed()
        << ", \"launches\": " << l.group->launches() << "}";
    if (!l.judged) out << ", \"not_judged_reason\": " << JsonText(l.group->not_judged_reason());
  }
  out << ", \"achieved_occupancy_pct\": " << (l.ach_pct >= 0 ? JsonNumber(l.ach_pct) : "null")
      << ", \"achieved_source\": " << JsonText(l.source)
      << ", \"achieved_status\": " << JsonText(row.achieved_status)
      << ", \"pm_clean_samples\": " << row.pm_clean_samples
      << ", \"achieved_above_theoretical\": " << (l.is_above ? "true" : "false") << "}";
}

void WriteTextRow(bool multi, size_t file, const LaunchRow& row, const ConfigStats& c,
                  const LaunchFacts& l, std::ostream& out) {
  std::string grid = "(" + std::to_string(c.grid[0]) + " " + std::to_string(c.grid[1]) +
                     " " + std::to_string(c.grid[2]) + ")";
  std::string block = "(" + std::to_string(c.block[0]) + " " +
                      std::to_string(c.block[1]) + " " + std::to_string(c.block[2]) +
                      ")";
  char line[512];
  std::snprintf(line, sizeof line, "%s%16s %12lld %16s %14s %5s %8lld %8lld %6s %7s %4lld %6lld  ",
                multi ? (std::to_string(file) + "    ").substr(0, 5).c_str() : "",
                l.timed ? std::to_string(l.start).c_str() : "-",
                static_cast<long long>(row.duration), grid.c_str(), block.c_str(),
                c.registers_known ? std::to_string(c.registers_per_thread).c_str() : "-",
                static_cast<long long>(c.static_smem),
                static_cast<long long>(c.dynamic_smem), l.theo.c_str(), l.ach.c_str(),
                static_cast<long long>(c.device_id),
                static_cast<long long>(row.stream_id));
  out << line << OneLine(l.kernel) << '\n';
}

std::string Launches(int64_t n) { return std::to_string(n) + (n == 1 ? " launch" : " launches"); }

// The Ach% marks the listed launches carry, one line each, with how many and why.
void WriteAchievedMarks(const Tally& tally, std::ostream& out) {
  if (tally.pm_no_figure > 0) {
    out << "\n  n/e: " << Launches(tally.pm_no_figure)
        << " ran alone in PM samples, too few or too noisy for a figure (its 95% interval would be wider "
           "than ±"
        << Fixed(1.96 * kMaxPmStandardErrorPoints, 1) << " points).";
  }
  for (const auto& [reason, n] : tally.not_measured) {
    out << "\n  -: " << Launches(n) << " not measured: " << reason << ".";
  }
  if (tally.failed > 0) {
    out << "\n  n/a: " << Launches(tally.failed)
        << " the tracer tried to measure, without a figure (achieved_status in --format csv or json says "
           "why).";
  }
}

// What the text table's columns and marks mean, for the launches it listed.
void WriteTextLegend(bool multi, const Tally& tally, std::ostream& out) {
  out << "\nStart: ns after " << (multi ? "each file's" : "the trace's") << " first timed launch";
  if (tally.untimed > 0) {
    out << "; - : " << tally.untimed << (tally.untimed == 1 ? " launch" : " launches")
        << " replayed by the profiler, which records no start (duration: the profiler's)";
  }
  out << ".\nTheo%: the report's theoretical occupancy for the launch's configuration";
  if (tally.not_judged > 0) out << " (-: not judged; `occ-report` says why)";
  out << ".\nAch%: achieved occupancy, measured by replay, or p: from the PM samples in which the launch ran "
         "alone.";
  WriteAchievedMarks(tally, out);
  out << "\n";
  if (tally.above > 0) {
    out << "!: " << tally.above << (tally.above == 1 ? " launch reads" : " launches read")
        << " achieved occupancy above theoretical (by up to " << Fixed(tally.above_by, 1)
        << " points). No SM can hold more warps than that, so the measurement overstates it "
           "(sampling noise, or a launch that was not alone on the GPU), or the model lacks "
           "an input (named barriers, a carveout) the trace did not record.\n";
  }
}

class LaunchesSubcommand : public Subcommand {
 public:
  std::string name() const override { return "launches"; }
  std::string description() const override {
    return "List launches one per row (start after the trace's first launch, duration, grid, "
           "block, registers, shared memory, the report's theoretical occupancy for the "
           "configuration, achieved occupancy, name), like nvprof --print-gpu-trace";
  }

  void AddFlags(CLI::App* app) override {
    app->add_option("files", files_, "occtrace traces, Nsight Systems SQLite exports or .sql dumps")
        ->required();
    app->add_option("-k,--kernel", kernel_regex_,
                    "Only kernels whose demangled name matches this POSIX extended regex");
    app->add_option("--limit", limit_, "Print at most N launches (0 = all)")->default_val(0);
    app->add_option("--format", format_, "Output format: text, csv or json")
        ->check(CLI::IsMember({"text", "csv", "json"}))
        ->default_val("text");
  }

  Status Run(const RunContext& ctx) override {
    if (limit_ < 0) return InvalidArgument("--limit must be >= 0 (0 = all)");
    if (!kernel_regex_.empty()) OCC_RETURN_IF_ERROR(sql::ValidateRegex(kernel_regex_));
    std::vector<std::unique_ptr<AnalysisInput>> readers;
    std::vector<TraceInput*> reader_list;
    for (size_t i = 0; i < files_.size(); ++i) {
      OCC_ASSIGN_OR_RETURN(auto reader, OpenInput(files_[i], static_cast<int>(i)));
      // A summary keeps launches summed per configuration: no row per launch to list.
      if (reader->AsTrace() == nullptr) {
        return BadInput(files_[i] + ": a trace summary has no per-launch rows; run "
                        "`occ-report launches` on the trace it summarizes");
      }
      reader_list.push_back(reader->AsTrace());
      readers.push_back(std::move(reader));
    }
    // The report's groups and verdicts: every launch's theoretical occupancy is its
    // configuration's figure in the report, never one of its own (launch_occupancy.h).
    OCC_ASSIGN_OR_RETURN(LaunchOccupancy model, LaunchOccupancy::Build(reader_list));
    std::ostream& out = *ctx.out;
    std::vector<int64_t> origins;
    for (size_t f = 0; f < reader_list.size(); ++f) origins.push_back(model.first_start(f));
    WriteHeader(reader_list, origins, out);
    Tally tally;
    int64_t remaining = limit_;
    for (size_t f = 0; f < readers.size(); ++f) {
      TraceInput& reader = *reader_list[f];
      std::vector<ConfigStats> configs;
      Status status = reader.ForEachLaunch(
          kernel_regex_, remaining, &configs, [&](const LaunchRow& row) -> Status {
            const ConfigStats& c = configs[row.config];
            const LaunchFacts facts = FactsOf(row, c, model.Find(c, reader.devices()), origins[f]);
            tally.Count(facts, reader.info());
            WriteRow(f, row, c, facts, tally.printed == 0, out);
            ++tally.printed;
            return OkStatus();
          });
      OCC_RETURN_IF_ERROR(status);
      for (const auto& warning : reader.info().warnings()) {
        *ctx.err << "occ-report: warning: " << reader.info().path() << ": " << warning << "\n";
      }
      if (limit_ > 0) {
        remaining = limit_ - tally.printed;
        if (remaining <= 0) break;
      }
    }
    if (format_ == "json") {
      out << (tally.printed ? "\n  ]" : "]") << ",\n  \"achieved_above_theoretical\": " << tally.above
          << "\n}\n";
    } else if (format_ == "text" && tally.printed > 0) {
      WriteTextLegend(files_.size() > 1, tally, out);
    }
    out.flush();
    if (!out) return IoError("cannot write to standard output");
    if (tally.printed == 0) {
      return NotFound(kernel_regex_.empty() ? "no kernel launches in the input"
                                            : "no launch matches --kernel '" + kernel_regex_ + "'");
    }
    return OkStatus();
  }

 private:
  // The CSV header row, the JSON document up to its launches array, or the text table's header.
  void WriteHeader(const std::vector<TraceInput*>& readers, const std::vector<int64_t>& origins,
                   std::ostream& out) const {
    const bool multi = files_.size() > 1;
    if (format_ == "csv") {
      out << (multi ? "File," : "")
          << "Start (ns),Duration (ns),GrdX,GrdY,GrdZ,BlkX,BlkY,BlkZ,Reg/Trd,StcSMem (B),"
             "DymSMem (B),Theoretical Occupancy (%),Achieved Occupancy (%),Achieved Source,"
             "Achieved Above Theoretical,PM Clean Samples,Device,Strm,CorrId,Name\n";
    } else if (format_ == "json") {
      out << "{\n  \"files\": [";
      for (size_t f = 0; f < readers.size(); ++f) {
        out << (f ? ",\n    " : "\n    ") << "{\"file_index\": " << f
            << ", \"path\": " << JsonText(readers[f]->info().path())
            << ", \"first_start_ns\": " << origins[f] << "}";
      }
      out << "\n  ],\n  \"launches\": [";
    } else {
      char header[256];
      std::snprintf(header, sizeof header, "%s%16s %12s %16s %14s %5s %8s %8s %6s %7s %4s %6s  %s\n",
                    multi ? "File " : "", "Start (ns)", "Duration(ns)", "Grid Size",
                    "Block Size", "Regs", "SSMem", "DSMem", "Theo%", "Ach%", "Dev", "Strm",
                    "Name");
      out << header;
    }
  }

  void WriteRow(size_t file, const LaunchRow& row, const ConfigStats& c, const LaunchFacts& facts,
                bool first, std::ostream& out) const {
    const bool multi = files_.size() > 1;
    if (format_ == "csv") {
      WriteCsvRow(multi, file, row, c, facts, out);
    } else if (format_ == "json") {
      WriteJsonRow(first, file, row, c, facts, out);
    } else {
      WriteTextRow(multi, file, row, c, facts, out);
    }
  }

  std::vector<std::string> files_;
  std::string kernel_regex_;
  int64_t limit_ = 0;
  std::string format_ = "text";
};

}  // namespace

std::unique_ptr<Subcommand> MakeLaunchesSubcommand() {
  return std::make_unique<LaunchesSubcommand>();
}

}  // namespace occ
