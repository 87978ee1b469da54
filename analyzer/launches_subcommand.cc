// `occ-report launches FILE...`: one row per launch, like `nvprof --print-gpu-trace`, with the
// theoretical occupancy on the trace's GPU and the achieved occupancy where it was measured.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <map>
#include <optional>
#include <sstream>

#include "judge.h"
#include "message_text.h"
#include "occ_report.h"
#include "sqlite_db.h"
#include "trace_reader.h"
#include "trace_summary.h"

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

class LaunchesSubcommand : public Subcommand {
 public:
  std::string name() const override { return "launches"; }
  std::string description() const override {
    return "List launches one per row (start, duration, grid, block, registers, shared memory, "
           "theoretical and achieved occupancy, name), like nvprof --print-gpu-trace";
  }

  void AddFlags(CLI::App* app) override {
    app->add_option("files", files_, "occtrace traces, Nsight Systems SQLite exports or .sql dumps")
        ->required();
    app->add_option("-k,--kernel", kernel_regex_,
                    "Only kernels whose demangled name matches this POSIX extended regex");
    app->add_option("--limit", limit_, "Print at most N launches (0 = all)")->default_val(0);
    app->add_option("--format", format_, "Output format: text or csv")
        ->check(CLI::IsMember({"text", "csv"}))
        ->default_val("text");
  }

  Status Run(const RunContext& ctx) override {
    if (limit_ < 0) return InvalidArgument("--limit must be >= 0 (0 = all)");
    if (!kernel_regex_.empty()) OCC_RETURN_IF_ERROR(sql::ValidateRegex(kernel_regex_));
    std::vector<std::unique_ptr<TraceReader>> readers;
    for (size_t i = 0; i < files_.size(); ++i) {
      // A summary keeps launches summed per configuration: no row per launch to list.
      if (LooksLikeSummary(files_[i])) {
        return BadInput(files_[i] + ": a trace summary has no per-launch rows; run "
                        "`occ-report launches` on the trace it summarizes");
      }
      OCC_ASSIGN_OR_RETURN(auto reader, TraceReader::Open(files_[i], static_cast<int>(i)));
      readers.push_back(std::move(reader));
    }
    const bool csv = format_ == "csv";
    const bool multi = files_.size() > 1;
    std::ostream& out = *ctx.out;
    if (csv) {
      out << (multi ? "File," : "")
          << "Start (ns),Duration (ns),GrdX,GrdY,GrdZ,BlkX,BlkY,BlkZ,Reg/Trd,StcSMem (B),"
             "DymSMem (B),Theoretical Occupancy (%),Achieved Occupancy (%),Achieved Source,"
             "PM Clean Samples,Device,Strm,CorrId,Name\n";
    } else {
      char header[256];
      std::snprintf(header, sizeof header, "%s%16s %12s %16s %14s %5s %8s %8s %6s %6s %4s %6s  %s\n",
                    multi ? "File " : "", "Start (ns)", "Duration(ns)", "Grid Size",
                    "Block Size", "Regs", "SSMem", "DSMem", "Theo%", "Ach%", "Dev", "Strm",
                    "Name");
      out << header;
    }
    int64_t printed = 0;
    int64_t remaining = limit_;
    for (size_t f = 0; f < readers.size(); ++f) {
      TraceReader& reader = *readers[f];
      std::vector<ConfigStats> configs;
      std::map<size_t, std::string> theoretical_cache;
      auto theoretical = [&](const ConfigStats& c, size_t index) -> std::string {
        if (reader.is_occtrace()) {
          auto it = theoretical_cache.find(index);
          if (it != theoretical_cache.end()) return it->second;
        }
        std::string value = "-";
        const TraceDevice* device = nullptr;
        for (const auto& d : reader.devices()) {
          if (d.device_id == c.device_id && d.known) device = &d;
        }
        if (device && c.registers_known) {
          auto params = LaunchParamsFor(c, device->props);
          if (params.ok()) {
            auto occ = ComputeOccupancy(device->props, *params);
            if (occ.ok()) value = Fixed(occ->theoretical_occupancy_pct, 1);
          }
        }
        if (reader.is_occtrace()) theoretical_cache[index] = value;
        return value;
      };
      Status status = reader.ForEachLaunch(
          kernel_regex_, remaining, &configs, [&](const LaunchRow& row) -> Status {
            const ConfigStats& c = configs[row.config];
            std::string theo = theoretical(c, row.config);
            // Replay's value for this launch, else the launch's own clean PM samples ("p"), else
            // "n/e" where PM samples touched it but too few were clean.
            const bool pm = row.achieved_pct < 0 && row.pm_pct >= 0;
            std::string ach = row.achieved_pct >= 0 ? Fixed(row.achieved_pct, 1)
                              : pm                  ? Fixed(row.pm_pct, 1) + "p"
                              : row.pm_clean_samples > 0 ? "n/e"
                              : row.achieved_status.empty() ? "-"
                                                            : "n/a";
            const std::string source = row.achieved_pct >= 0 ? "replay" : pm ? "pm" : "";
            if (csv) {
              if (multi) out << f << ',';
              out << row.start << ',' << row.duration << ',' << c.grid[0] << ',' << c.grid[1]
                  << ',' << c.grid[2] << ',' << c.block[0] << ',' << c.block[1] << ','
                  << c.block[2] << ',' << (c.registers_known ? std::to_string(c.registers_per_thread) : "")
                  << ',' << c.static_smem << ',' << c.dynamic_smem << ','
                  << (theo == "-" ? "" : theo) << ','
                  << (row.achieved_pct >= 0 ? ach : pm ? Fixed(row.pm_pct, 2) : row.achieved_status) << ','
                  << source << ','
                  << (row.pm_clean_samples > 0 ? std::to_string(row.pm_clean_samples) : "") << ',' << c.device_id
                  << ',' << row.stream_id << ',' << row.correlation_id << ',' << CsvField(c.name)
                  << '\n';
            } else {
              std::string grid = "(" + std::to_string(c.grid[0]) + " " + std::to_string(c.grid[1]) +
                                 " " + std::to_string(c.grid[2]) + ")";
              std::string block = "(" + std::to_string(c.block[0]) + " " +
                                  std::to_string(c.block[1]) + " " + std::to_string(c.block[2]) +
                                  ")";
              char line[512];
              std::snprintf(line, sizeof line, "%s%16lld %12lld %16s %14s %5s %8lld %8lld %6s %6s %4lld %6lld  ",
                            multi ? (std::to_string(f) + "    ").substr(0, 5).c_str() : "",
                            static_cast<long long>(row.start), static_cast<long long>(row.duration),
                            grid.c_str(), block.c_str(),
                            c.registers_known ? std::to_string(c.registers_per_thread).c_str() : "-",
                            static_cast<long long>(c.static_smem),
                            static_cast<long long>(c.dynamic_smem), theo.c_str(), ach.c_str(),
                            static_cast<long long>(c.device_id),
                            static_cast<long long>(row.stream_id));
              out << line << OneLine(c.name) << '\n';
            }
            ++printed;
            return OkStatus();
          });
      OCC_RETURN_IF_ERROR(status);
      for (const auto& warning : reader.info().warnings()) {
        *ctx.err << "occ-report: warning: " << reader.info().path() << ": " << warning << "\n";
      }
      if (limit_ > 0) {
        remaining = limit_ - printed;
        if (remaining <= 0) break;
      }
    }
    out.flush();
    if (!out) return IoError("cannot write to standard output");
    if (printed == 0) {
      return NotFound(kernel_regex_.empty() ? "no kernel launches in the input"
                                            : "no launch matches --kernel '" + kernel_regex_ + "'");
    }
    return OkStatus();
  }

 private:
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
