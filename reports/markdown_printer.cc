#include "reports/markdown_printer.h"

#include <ostream>
#include <string>
#include <vector>

#include "reports/report_facts.h"
#include "reports/strings.h"
#include "schema/report.pb.h"

namespace occ::reports {
namespace {

// GitHub-flavored Markdown that also survives Jira's Markdown paste: pipe tables, code spans
// for every name (so < > * _ render literally), no raw HTML, no HTML entities.
// Strings from the trace go through MarkdownText / MarkdownCode; our own text does not need to.

std::string Cell(std::string_view text) {
  // Inside a table cell, | must be escaped even after MarkdownText (which escapes it already).
  return MarkdownText(text);
}

void TableRow(const std::vector<std::string>& cells, std::ostream& out) {
  out << '|';
  for (const std::string& cell : cells) out << ' ' << cell << " |";
  out << '\n';
}

void TableHeader(const std::vector<std::string>& headers, const std::vector<bool>& right,
                 std::ostream& out) {
  TableRow(headers, out);
  out << '|';
  for (size_t i = 0; i < headers.size(); ++i) out << (right[i] ? " ---: |" : " --- |");
  out << '\n';
}

std::string KernelHeading(const occtrace::KernelGroup& g) {
  return "#" + std::to_string(g.rank()) + " " + MarkdownCode(ShortenKernelName(g.name(), 100), false);
}

void PrintHeader(const occtrace::Report& report, std::ostream& out) {
  const occtrace::Summary& s = report.summary();
  out << "# Occupancy report";
  if (report.devices_size() == 1) out << ": " << MarkdownText(report.devices(0).name());
  out << "\n\n";

  out << "**Summary:** " << FormatPct(s.time_below_50pct_theoretical_pct()) << " of "
      << FormatDuration(s.total_gpu_ns())
      << (KernelsRanConcurrently(s) ? " summed kernel time" : " GPU time")
      << " runs below 50% theoretical occupancy. GPU-time-weighted theoretical "
         "occupancy "
      << FormatPct(s.weighted_theoretical_occupancy_pct());
  if (AnyAchieved(report) && !TracedGpuForAchieved(report).empty()) {
    out << "; achieved " << FormatPct(s.weighted_achieved_occupancy_pct()) << ", measured on the traced "
        << MarkdownText(TracedGpuForAchieved(report))
        << " (not the what-if GPU's, not compared with its theoretical)";
  } else if (AnyAchieved(report)) {
    out << "; achieved (measured) " << FormatPct(s.weighted_achieved_occupancy_pct());
  } else {
    out << "; achieved occupancy not measured";
  }
  out << ". Recoverable: " << SummaryRecoverableText(s) << ".";
  if (const std::string tuning = TuningOverheadText(s); !tuning.empty()) {
    out << " Tuning: " << MarkdownText(tuning) << ".";
  }
  if (HasCrossRank(report)) out << " Straggler: " << MarkdownText(StragglerText(report)) << ".";
  if (s.unjudged_groups() > 0) {
    out << " " << FormatCount(s.unjudged_groups())
      << (s.unjudged_groups() == 1 ? " configuration (" : " configurations (")
        << FormatPct(UnjudgedTimePct(report)) << " " << ShareOfWords(report) << ") not judged.";
  }
  out << "\n\n";

  TableHeader({"Run", "Value"}, {false, false}, out);
  TableRow({"Tool", Cell(ToolName(report))}, out);
  for (int i = 0; i < report.devices_size(); ++i) {
    const occtrace::Device& device = report.devices(i);
    std::string value = Cell(DeviceTitle(device)) + "; " + Cell(DeviceLimits(device));
    const std::string provenance = DeviceProvenance(device);
    if (!provenance.empty()) value += ". Note: " + Cell(provenance);
    std::string label = "GPU";
    if (report.devices_size() > 1) label += " (" + DeviceTag(report, device) + ")";
    TableRow({label, value}, out);
  }
  for (int i = 0; i < report.files_size(); ++i) {
    const occtrace::InputFile& file = report.files(i);
    const std::string suffix = report.files_size() > 1 ? " " + std::to_string(i) : "";
    TableRow({"Input" + suffix, MarkdownCode(file.path(), true) + " (" + Cell(FileFacts(file)) + ")"},
             out);
    if (!file.command().empty()) {
      TableRow({"Command" + suffix, MarkdownCode(file.command(), true)}, out);
    }
    const std::string versions = FileVersions(file);
    if (!versions.empty()) TableRow({"Versions" + suffix, Cell(versions)}, out);
    TableRow({"Achieved occupancy" + suffix, Cell(AchievedModeText(file))}, out);
  }
  TableRow({"GPU time",
            FormatDuration(s.total_gpu_ns()) + " in " + FormatCount(s.launches()) +
                " launches of " + FormatCount(s.kernels()) + " kernels (" + FormatCount(s.groups()) +
                " launch configurations)"},
           out);
  if (s.span_ns() > 0) TableRow({"Trace span", FormatDuration(s.span_ns())}, out);
  if (const std::string busy = BusySpanText(s); !busy.empty()) TableRow({"Busy span", Cell(busy)}, out);
  if (!report.what_if_gpu().empty()) {
    TableRow({"What-if GPU", "occupancy re-evaluated for " + Cell(report.what_if_gpu()) +
                                 " (times are those recorded on the traced GPU)"},
             out);
  }
  out << '\n';
}

void PrintActions(const occtrace::Report& report, std::ostream& out) {
  if (report.groups_size() == 0 && report.actions_size() == 0) return;
  out << "## " << kActionsTitle << "\n\n";
  if (report.actions_size() == 0) {
    out << MarkdownText(kNoActions) << "\n\n";
    return;
  }
  int n = 0;
  for (const occtrace::Action& a : report.actions()) {
    const std::string source = SourceText(a.source());
    // The bold span holds the rank and the name: CommonMark closes `**` only after a non-space,
    // so "**#1 **" or an empty "****" (no rank) would print the asterisks.
    out << ++n << ". **" << ActionRef(a) << MarkdownCode(ShortenKernelName(a.kernel(), 72), false) << "**"
        << (source.empty() ? "" : " " + MarkdownText(source)) << " (" << MarkdownText(a.origin()) << "): "
        << MarkdownText(a.change()) << "  \n   Gain: "
        << MarkdownText(ActionGainText(a, ShareOfWords(report))) << "; confidence " << MarkdownText(a.confidence())
        << "; evidence: " << MarkdownText(a.evidence()) << "\n";
  }
  out << "\n";
}

// Actions below 1 % of GPU time each: counted in the summary, listed apart from "What to change".
void PrintMinorActions(const occtrace::Report& report, std::ostream& out) {
  if (report.minor_actions_size() == 0) return;
  out << "## " << MarkdownText(MinorActionsTitle(report)) << "\n\n";
  for (const occtrace::Action& a : report.minor_actions()) {
    const std::string source = SourceText(a.source());
    out << "- " << MarkdownText(ActionRef(a)) << MarkdownCode(ShortenKernelName(a.kernel(), 72), false)
        << (source.empty() ? "" : " " + MarkdownText(source)) << " ("
        << MarkdownText(a.origin()) << "): " << MarkdownText(a.change()) << " Gain: " << MarkdownText(ActionGainText(a, ShareOfWords(report)))
        << ".\n";
  }
  out << "\n";
}

void PrintTopTable(const occtrace::Report& report, std::ostream& out) {
  out << "## " << TopTitle(report);
  if (!report.sort().empty()) out << " (sorted by " << MarkdownText(report.sort()) << ")";
  out << "\n\n";
  if (report.groups_size() == 0) {
    out << "No kernel launches in this report.\n\n";
    return;
  }
  TableHeader({"#", "Kernel", "Time (%)", "Total Time", "Instances", "Grid", "Block", "Reg/Trd",
               "Theoretical Occupancy (%)",
               report.what_if_gpu().empty() ? "Achieved Occupancy (measured) (%)"
                                            : "Achieved Occupancy (measured on the traced GPU) (%)",
               "Limiter",
               "Recoverable"},
              {true, false, true, true, true, true, true, true, true, true, false, true}, out);
  for (const occtrace::KernelGroup& g : report.groups()) {
    TableRow({std::to_string(g.rank()), MarkdownCode(ShortenKernelName(g.name(), 72), true),
              FormatFixed(g.time_pct(), 1), FormatDuration(g.total_ns()), FormatCount(g.launches()),
              DimsText(g.grid_x(), g.grid_y(), g.grid_z()),
              DimsText(g.block_x(), g.block_y(), g.block_z()), std::to_string(g.registers_per_thread()),
              g.judged() ? FormatFixed(g.occupancy().theoretical_occupancy_pct(), 1) : "not judged",
              AchievedWideCell(g),
              g.judged() ? LimiterLabel(g.limiting_factor()) : "–",
              g.judged() ? GroupRecoverableCell(g) : "–"},
             out);
  }
  out << "\nTheoretical occupancy comes from the occupancy model; achieved occupancy is measured "
         "with hardware counters (– = not measured).";
  if (AnyPm(report)) out << ' ' << MarkdownText(std::string(kPmWideTableLegend));
  out << "\n\n";
}

void PrintKernel(const occtrace::Report& report, const occtrace::KernelGroup& g, std::ostream& out) {
  out << "### " << KernelHeading(g) << "\n\n";
  out << "Full name: " << MarkdownCode(g.name(), false) << "\n\n";
  if (const std::string source = SourceText(g.source()); !source.empty()) {
    out << "Source: " << MarkdownText(source) << ".\n\n";
  }
  if (!g.origin().empty()) out << "Owner: " << MarkdownText(OriginText(g)) << ".\n\n";
  out << "Launch: " << MarkdownText(LaunchText(g)) << ".\n\nTime: "
      << MarkdownText(TimeText(g, ShareOfWords(report))) << ".\n\n";
  if (const std::string overlap = OverlapText(g); !overlap.empty()) {
    out << "Overlap: " << MarkdownText(overlap) << ".\n\n";
  }
  if (report.devices_size() > 1 && report.what_if_gpu().empty()) {
    if (const occtrace::Device* device = FindDevice(report, g)) {
      out << "GPU: " << MarkdownText(DeviceTitle(*device)) << "\n\n";
    }
  }
  if (!g.judged()) {
    out << "**Not judged:** " << MarkdownText(g.not_judged_reason()) << "\n\n";
    return;
  }
  TableHeader({"Metric", "Value"}, {false, true}, out);
  for (const Metric& metric : OccupancyMetrics(g)) TableRow({metric.name, Cell(metric.value)}, out);
  out << '\n';

  out << "> **Limiter:** " << MarkdownText(LimiterLine(g)) << "\n\n";
  if (g.tail_blocks() > 0) {
    out << "**Waves:** " << MarkdownText(WavesText(g)) << "\n\n";
  }
  if (HasAchieved(g)) {
    out << (g.achieved().measured_on_gpu().empty() ? "**Achieved vs theoretical:** " : "**Achieved:** ")
        << MarkdownText(GapText(g)) << ".\n";
    for (const std::string& why : g.achieved().gap_explanations()) out << "- " << MarkdownText(why) << '\n';
    out << '\n';
  }
  if (const std::string throughput = ThroughputText(g); !throughput.empty()) {
    out << "**Throughput (measured):** " << MarkdownText(throughput) << "\n\n";
  }
  if (g.measured_points_size() > 0) {
    out << "**Measured in this trace**, " << MarkdownText(MeasuredWorkText(g)) << ":\n\n";
    const bool what_if = !report.what_if_gpu().empty();
    TableHeader({"Block", "Time per launch", "Launches", what_if ? "Theoretical (what-if GPU)" : "Theoretical",
                 what_if ? "Achieved (traced GPU)" : "Achieved", ""},
                {false, true, true, true, true, false}, out);
    const int fastest = FastestMeasuredPoint(g);
    for (int i = 0; i < g.measured_points_size(); ++i) {
      const occtrace::MeasuredPoint& p = g.measured_points(i);
      const MeasuredPointCells cells = MeasuredCells(p);
      std::string note = p.current() ? "this configuration" : "";
      if (i == fastest) note += note.empty() ? "**fastest**" : ", **fastest**";
      TableRow({cells.block, Cell(cells.time), Cell(FormatCount(p.launches())), Cell(cells.theoretical),
                Cell(cells.achieved), note},
               out);
    }
    out << '\n';
  }
  if (g.issues_size() > 0) {
    out << "**Issues:**\n";
    for (const std::string& issue : g.issues()) out << "- " << MarkdownText(issue) << '\n';
    out << '\n';
  }
  if (g.suggestions_size() == 0) {
    out << "**Suggestions:** none; " << MarkdownText(NoSuggestionsReason(g)) << ".\n\n";
  } else {
    out << "**Suggestions** (predictions are theoretical occupancy from the model):\n\n";
    for (int i = 0; i < g.suggestions_size(); ++i) {
      const occtrace::Suggestion& s = g.suggestions(i);
      out << i + 1 << ". " << MarkdownText(SuggestionLine(s));
      if (!s.assumptions().empty()) out << " *Assumes: " << MarkdownText(s.assumptions()) << "*";
      out << '\n';
    }
    out << '\n';
  }
  out << "**Recoverable:** " << GroupRecoverableText(g) << ".\n\n";
}

void PrintLimiterShares(const occtrace::Report& report, std::ostream& out) {
  if (report.time_by_limiter_size() == 0) return;
  out << "## GPU time by limiting factor\n\n";
  TableHeader({"Limiter (theoretical occupancy)", "Time (%)", "Total Time"}, {false, true, true}, out);
  for (const occtrace::LimiterShare& share : report.time_by_limiter()) {
    TableRow({Cell(LimiterLabel(share.limiter())), FormatFixed(share.time_pct(), 1),
              FormatDuration(share.total_ns())},
             out);
  }
  out << '\n';
}

void PrintUnjudged(const occtrace::Report& report, std::ostream& out) {
  if (report.unjudged_size() == 0) return;
  out << "## Not judged\n\n" << FormatCount(report.unjudged_size())
      << (report.unjudged_size() == 1 ? " configuration (" : " configurations (")
      << FormatPct(ListedUnjudgedTimePct(report))
      << " of GPU time) could not be judged; they are listed, never dropped.\n\n";
  TableHeader({"Kernel", "Total Time", "Instances", "Grid", "Block", "Reason"},
              {false, true, true, true, true, false}, out);
  for (const occtrace::KernelGroup& g : report.unjudged()) {
    TableRow({MarkdownCode(ShortenKernelName(g.name(), 72), true), FormatDuration(g.total_ns()),
              FormatCount(g.launches()), DimsText(g.grid_x(), g.grid_y(), g.grid_z()),
              DimsText(g.block_x(), g.block_y(), g.block_z()),
              Cell(g.not_judged_reason().empty() ? "not given" : g.not_judged_reason())},
             out);
  }
  out << '\n';
}

// --diff: the comparison alone, opening with the answer (see the text printer).
void PrintDiffReport(const occtrace::Report& report, std::ostream& out) {
  const occtrace::Diff& d = report.diff();
  out << "# Before / after (--diff)\n\n";
  out << "**Did it work?** GPU time " << MarkdownText(DiffTotalText(d)) << ". Changed: "
      << MarkdownText(DiffChangedText(d)) << ". Same: " << MarkdownText(DiffSameText(d)) << ".\n\n";
  for (const std::string& warning : d.warnings()) out << "- **Warning:** " << MarkdownText(warning) << '\n';
  if (d.warnings_size() > 0) out << '\n';

  TableHeader({"Run", "Value"}, {false, false}, out);
  TableRow({"Tool", Cell(ToolName(report))}, out);
  auto files = [&](const std::string& side, const auto& list) {
    for (int i = 0; i < list.size(); ++i) {
      const occtrace::InputFile& file = list.Get(i);
      TableRow({side, MarkdownCode(file.path(), true) + " (" + Cell(FileFacts(file)) + ")"}, out);
      if (!file.command().empty()) TableRow({"Command " + side, MarkdownCode(file.command(), true)}, out);
    }
  };
  files("before", d.base_files());
  files("after", report.files());
  for (int i = 0; i < report.devices_size(); ++i) {
    const occtrace::Device& device = report.devices(i);
    std::string label = "GPU after";
    if (report.devices_size() > 1) label += " (" + DeviceTag(report, device) + ")";
    TableRow({label, Cell(DeviceTitle(device))}, out);
  }
  out << '\n';

  out << "## " << kDiffRowsTitle << "\n\n";
  TableHeader({"Kernel", "Status", "Config before", "Config after", "Total Time before", "Total Time after",
               "Change", "Change (%)", "Theoretical Occupancy before (%)", "Theoretical Occupancy after (%)"},
              {false, false, false, false, true, true, true, true, true, true}, out);
  for (const occtrace::DiffRow& r : d.rows()) {
    const bool before = DiffHasBefore(r);
    const bool after = DiffHasAfter(r);
    TableRow({MarkdownCode(ShortenKernelName(r.name(), 72), true), Cell(r.status()),
              before ? Cell(r.config_before()) : "–", after ? Cell(r.config_after()) : "–",
              before ? FormatDuration(r.total_ns_before()) : "–",
              after ? FormatDuration(r.total_ns_after()) : "–",
              SignedDuration(r.total_ns_after() - r.total_ns_before()),
              DiffTimeChange(r).empty() ? "–" : DiffTimeChange(r),
              before ? FormatFixed(r.occupancy_before_pct(), 1) : "–",
              after ? FormatFixed(r.occupancy_after_pct(), 1) : "–"},
             out);
  }
  out << "\nTheoretical occupancy (model) is GPU-time weighted over the kernel's configurations; the "
         "configuration shown is its largest by GPU time.\n\n";

  out << "## Notes\n\n";
  for (const std::string& note : report.notes()) out << "- " << MarkdownText(note) << '\n';
  for (const auto* list : {&d.base_files(), &report.files()}) {
    for (const occtrace::InputFile& file : *list) {
      for (const std::string& warning : file.warnings()) {
        out << "- Warning (" << MarkdownCode(file.path(), false) << "): " << MarkdownText(warning) << '\n';
      }
    }
  }
  if (!report.generated_for().empty()) {
    out << "- Generated by " << MarkdownCode(report.generated_for(), false) << '\n';
  }
}

void PrintNotes(const occtrace::Report& report, std::ostream& out) {
  out << "## Notes\n\n";
  for (const std::string& note : report.notes()) out << "- " << MarkdownText(note) << '\n';
  for (int i = 0; i < report.files_size(); ++i) {
    for (const std::string& warning : report.files(i).warnings()) {
      out << "- Warning" << (report.files_size() > 1 ? " (input " + std::to_string(i) + ")" : "")
          << ": " << MarkdownText(warning) << '\n';
    }
  }
  out << "- " << MarkdownText(kTheoreticalMeaning) << '\n';
  out << "- " << MarkdownText(kAchievedMeaning) << '\n';
  if (!NotesCoverRecoverable(report)) out << "- " << MarkdownText(kRecoverableMeaning) << '\n';
  if (!report.generated_for().empty()) {
    out << "- Generated by " << MarkdownCode(report.generated_for(), false) << '\n';
  }
}

// Several input files: per-rank totals, the top configurations with one column
// each (ranks as rows, so hundreds of ranks stay a readable table), and the configurations some
// ranks did not run.
void PrintCrossRank(const occtrace::Report& report, std::ostream& out) {
  if (!HasCrossRank(report)) return;
  const occtrace::CrossRank& x = report.cross_rank();
  out << "## " << MarkdownText(CrossRankTitle(report)) << "\n\n";
  // The straggler and its cause are in the summary, which opens the report.
  out << "**Ranks:** " << MarkdownText(RankIdentityText(report)) << ".\n\n";
  TableHeader({"Rank", "GPU time", "Compute", "NCCL", "Launches", "File", "Host"},
              {false, true, true, true, true, false, false}, out);
  for (const occtrace::RankSummary& r : x.ranks()) {
    const occtrace::InputFile& file = report.files(r.file_index());
    TableRow({Cell(r.label()), FormatDuration(r.total_gpu_ns()), FormatDuration(r.compute_gpu_ns()),
              CommunicationCell(report, r.communication_gpu_ns()), FormatCount(r.launches()),
              MarkdownCode(file.path(), true), file.host().empty() ? "" : Cell(file.host())},
             out);
  }
  out << '\n'
      << (AnyCommunication(report) ? std::string(kCommunicationMeaning)
                                   : "Compute = GPU time outside NCCL kernels (none ran).")
      << "\n\n";
  if (x.kernels_size() > 0) {
    out << "### " << kCrossRankKernelsTitle << "\n\n";
    TableHeader({"", "Kernel", "Launch", "Slowest rank", "Over median", "Median", "Fastest rank"},
                {false, false, false, false, true, true, false}, out);
    for (int i = 0; i < x.kernels_size(); ++i) {
      const occtrace::RankKernel& k = x.kernels(i);
      const occtrace::RankSpread& spread = k.spread();
      std::string kernel = (k.group_rank() > 0 ? "#" + std::to_string(k.group_rank()) + " " : "") +
                           MarkdownCode(ShortenKernelName(k.name(), 72), false);
      if (!k.owner_library().empty()) kernel += " (" + Cell(k.owner_library()) + ")";
      std::string slowest = Cell(RankName(report, spread.slowest_file_index())) + " (" +
                            FormatDuration(spread.slowest_ns()) + ")";
      std::string fastest = Cell(RankName(report, spread.fastest_file_index())) + " (" +
                            FormatDuration(spread.fastest_ns()) + ")";
      if (spread.ran_on() < 2) {
        slowest = Cell(RankName(report, spread.slowest_file_index())) + " only";
        fastest = "";
      } else if (spread.slowest_ns() == spread.fastest_ns()) {
        slowest = "the same on every rank";
        fastest = "";
      } else if (spread.communication()) {
        slowest += ", NCCL: likely waiting for a peer";
      }
      TableRow({CrossRankKernelTag(i), kernel, Cell(k.launch()), slowest,
                SpreadOverMedianText(spread),
                FormatDuration(static_cast<int64_t>(spread.median_ns() + 0.5)), fastest},
               out);
    }
    out << '\n';
    std::vector<std::string> headers = {"Rank"};
    for (int i = 0; i < x.kernels_size(); ++i) headers.push_back(CrossRankKernelTag(i));
    std::vector<bool> right(headers.size(), true);
    right[0] = false;
    TableHeader(headers, right, out);
    for (const occtrace::RankSummary& r : x.ranks()) {
      std::vector<std::string> cells = {Cell(r.label())};
      for (const occtrace::RankKernel& k : x.kernels()) {
        const occtrace::RankFigures* f = FindRankFigures(k.spread(), r.file_index());
        cells.push_back(f != nullptr ? RankCellText(*f) : "–");
      }
      TableRow(cells, out);
    }
    out << '\n';
  }
  if (x.rank_only_configs_size() > 0) {
    out << "### " << kRankOnlyTitle << " (" << FormatCount(x.rank_only_configs_total()) << ")\n\n";
    for (const occtrace::RankOnlyConfig& c : x.rank_only_configs()) {
      out << "- " << (c.group_rank() > 0 ? "#" + std::to_string(c.group_rank()) + " " : "")
          << MarkdownCode(ShortenKernelName(c.name(), 72), false) << ", " << MarkdownText(c.launch())
          << ", " << MarkdownText(RankOnlyText(report, c)) << '\n';
    }
    if (x.rank_only_configs_total() > x.rank_only_configs_size()) {
      out << "- and " << FormatCount(x.rank_only_configs_total() - x.rank_only_configs_size())
          << " more (JSON: each group's rank_spread)\n";
    }
    out << '\n';
  }
  for (const std::string& warning : x.warnings()) out << "- **Warning:** " << MarkdownText(warning) << '\n';
  if (x.warnings_size() > 0) out << '\n';
}

}  // namespace

void MarkdownPrinter::DoPrint(const occtrace::Report& report, const PrintOptions&, std::ostream& out) {
  if (report.has_diff()) {
    PrintDiffReport(report, out);
    return;
  }
  PrintHeader(report, out);
  PrintActions(report, out);
  PrintTopTable(report, out);
  PrintCrossRank(report, out);
  if (report.groups_size() > 0) out << "## Top kernels in detail\n\n";
  for (const occtrace::KernelGroup& g : report.groups()) PrintKernel(report, g, out);
  PrintLimiterShares(report, out);
  PrintMinorActions(report, out);
  PrintUnjudged(report, out);
  PrintNotes(report, out);
}

}  // namespace occ::reports
