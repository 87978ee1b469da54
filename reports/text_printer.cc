#include "reports/text_printer.h"

#include <algorithm>
#include <ostream>
#include <string>
#include <vector>

#include "reports/report_facts.h"
#include "reports/strings.h"
#include "schema/report.pb.h"

namespace occ::reports {
namespace {

constexpr int kMinWidth = 80;
constexpr int kLabelWidth = 13;  // "Recoverable  " in the per-kernel blocks

enum class Style { kPlain, kBold, kDim, kGood, kWarn, kBad };

// Writes lines to the stream; colors (ANSI SGR) wrap already-padded text so alignment never
// depends on escape sequences.
class TextWriter {
 public:
  TextWriter(std::ostream& out, bool color, int width) : out_(out), color_(color), width_(width) {}

  int width() const { return width_; }

  std::string Styled(std::string_view text, Style style) const {
    if (!color_ || style == Style::kPlain || text.empty()) return std::string(text);
    const char* code = "";
    switch (style) {
      case Style::kBold: code = "1"; break;
      case Style::kDim: code = "2"; break;
      case Style::kGood: code = "32"; break;
      case Style::kWarn: code = "33"; break;
      case Style::kBad: code = "31"; break;
      case Style::kPlain: break;
    }
    return "\033[" + std::string(code) + "m" + std::string(text) + "\033[0m";
  }

  void Line(std::string_view text = "") { out_ << text << '\n'; }

  void Section(std::string_view title) {
    const std::string head = "── " + std::string(title) + " ";
    std::string line = head;
    for (int i = DisplayWidth(head); i < width_; ++i) line += "─";
    out_ << '\n' << Styled(line, Style::kBold) << '\n';
  }

  // "label" in a fixed column, then `value` wrapped to the remaining width; continuation lines
  // are indented under the value. `style` colors the whole value.
  void Field(std::string_view label, std::string_view value, int indent = 0,
             Style style = Style::kPlain) {
    const int value_col = indent + kLabelWidth;
    const std::vector<std::string> lines = WrapText(value, width_ - value_col);
    for (size_t i = 0; i < lines.size(); ++i) {
      std::string prefix(static_cast<size_t>(indent), ' ');
      prefix += PadRight(i == 0 ? label : "", kLabelWidth);
      out_ << prefix << Styled(lines[i], style) << '\n';
    }
  }

  // A bullet ("- ", "1. ") at `indent`, text wrapped with a hanging indent. `label`, when
  // given, is printed at column 0 of the first line (padded to `indent`).
  void Bullet(std::string_view bullet, std::string_view text, int indent,
              Style style = Style::kPlain, std::string_view label = "") {
    const int text_col = indent + DisplayWidth(bullet);
    const std::vector<std::string> lines = WrapText(text, width_ - text_col);
    for (size_t i = 0; i < lines.size(); ++i) {
      out_ << (i == 0 && !label.empty() ? PadRight(label, indent)
                                        : std::string(static_cast<size_t>(indent), ' '))
           << (i == 0 ? std::string(bullet) : std::string(static_cast<size_t>(DisplayWidth(bullet)), ' '))
           << Styled(lines[i], style) << '\n';
    }
  }

  // A paragraph wrapped to the width.
  void Paragraph(std::string_view text, Style style = Style::kPlain) {
    for (const std::string& line : WrapText(text, width_)) out_ << Styled(line, style) << '\n';
  }

 private:
  std::ostream& out_;
  bool color_;
  int width_;
};

Style OccupancyStyle(double pct) {
  if (pct < 50) return Style::kBad;
  if (pct < 80) return Style::kWarn;
  return Style::kGood;
}

struct Column {
  std::string header;
  int width;
  bool right;
};

void PrintHeader(const occtrace::Report& report, TextWriter& w) {
  w.Line(w.Styled(ToolName(report) + " — kernel occupancy report", Style::kBold));
  for (int i = 0; i < report.files_size(); ++i) {
    const occtrace::InputFile& file = report.files(i);
    const std::string label = i == 0 ? "Input" : "";
    const std::string tag = report.files_size() > 1 ? "[" + std::to_string(i) + "] " : "";
    w.Field(label, tag + SanitizeForDisplay(file.path()) + ": " + SanitizeForDisplay(FileFacts(file)));
    if (!file.command().empty()) w.Field("", "command: " + SanitizeForDisplay(file.command()));
    const std::string versions = FileVersions(file);
    if (!versions.empty()) w.Field("", SanitizeForDisplay(versions));
    w.Field("", "achieved occupancy: " + SanitizeForDisplay(AchievedModeText(file)));
  }
  if (report.files_size() == 0) w.Field("Input", "(no input files recorded)");
  for (int i = 0; i < report.devices_size(); ++i) {
    const occtrace::Device& device = report.devices(i);
    std::string tag;
    if (report.devices_size() > 1 || device.device_id() != 0) {
      tag = "[" + DeviceTag(report, device) + "] ";
    }
    w.Field(i == 0 ? "GPU" : "", tag + SanitizeForDisplay(DeviceTitle(device)));
    w.Field("", DeviceLimits(device));
    const std::string provenance = DeviceProvenance(device);
    if (!provenance.empty()) w.Field("", "note: " + SanitizeForDisplay(provenance), 0, Style::kWarn);
  }
  if (report.devices_size() == 0) w.Field("GPU", "(no device recorded)");
  if (!report.what_if_gpu().empty()) {
    w.Field("What-if GPU",
            "occupancy re-evaluated for " + SanitizeForDisplay(report.what_if_gpu()) +
                " (the times are still those recorded on the traced GPU)",
            0, Style::kWarn);
  }
}

void PrintSummary(const occtrace::Report& report, TextWriter& w) {
  const occtrace::Summary& s = report.summary();
  w.Section("Summary");
  w.Field("GPU time", FormatDuration(s.total_gpu_ns()) + " in " + FormatCount(s.launches()) +
                          " launches of " + FormatCount(s.kernels()) + " kernels (" +
                          FormatCount(s.groups()) + " launch configurations)" +
                          (s.span_ns() > 0 ? "; trace span " + FormatDuration(s.span_ns()) : ""));
  if (const std::string busy = BusySpanText(s); !busy.empty()) w.Field("", busy);
  w.Field("Below 50%", FormatPct(s.time_below_50pct_theoretical_pct()) + " " + ShareOfWords(report) +
                           " runs below 50% theoretical occupancy",
          0, s.time_below_50pct_theoretical_pct() >= 25 ? Style::kWarn : Style::kPlain);
  std::string occupancy =
      FormatPct(s.weighted_theoretical_occupancy_pct()) + " theoretical (GPU-time weighted); ";
  const std::string traced = TracedGpuForAchieved(report);
  occupancy += !AnyAchieved(report) ? "achieved not measured"
               : traced.empty()
                   ? FormatPct(s.weighted_achieved_occupancy_pct()) +
                         " achieved (measured, GPU-time weighted over measured configurations)"
                   : FormatPct(s.weighted_achieved_occupancy_pct()) + " achieved, measured on the traced " +
                         traced + ": not the what-if GPU's, not compared with its theoretical";
  w.Field("Occupancy", occupancy);
  w.Field("Recoverable", SummaryRecoverableText(s));
  if (const std::string tuning = TuningOverheadText(s); !tuning.empty()) w.Field("Tuning", tuning);
  if (HasCrossRank(report)) {
    // Several ranks: the straggler and its cause open the report, before any table.
    const bool warn = HasStraggler(report) || !report.cross_rank().different_programs().empty();
    w.Field("Straggler", SanitizeForDisplay(StragglerText(report)), 0, warn ? Style::kWarn : Style::kPlain);
  }
  if (s.unjudged_groups() > 0) {
    const int n = s.unjudged_groups();
    w.Field("Not judged", FormatCount(n) + (n == 1 ? " configuration (" : " configurations (") +
                              FormatPct(UnjudgedTimePct(report)) + " " + ShareOfWords(report) +
                              "), listed under \"Not judged\"",
            0, Style::kWarn);
  }
}

void PrintTopTable(const occtrace::Report& report, TextWriter& w) {
  std::string title = TopTitle(report);
  if (!report.sort().empty()) title += ", sorted by " + SanitizeForDisplay(report.sort());
  w.Section(title);
  if (report.groups_size() == 0) {
    w.Line("(no kernel launches in this report)");
    return;
  }
  // Fixed columns take 65 of the width; the kernel name gets the rest (35 at 100 columns).
  std::vector<Column> cols = {{"#", 3, true},       {"Kernel", 0, false},  {"Time%", 5, true},
                              {"Total", 8, true},   {"Launches", 9, true}, {"Block", 6, true},
                              {"Regs", 4, true},    {"Theo%", 5, true},    {"Ach%", 5, true},
                              {"Limiter", 10, false}};
  int fixed = 0;
  for (const Column& c : cols) fixed += c.width + 1;
  cols[1].width = std::max(14, w.width() - fixed);

  auto row = [&](const std::vector<std::string>& cells, const std::vector<Style>& styles) {
    std::string line;
    for (size_t i = 0; i < cols.size(); ++i) {
      if (i > 0) line += ' ';
      std::string cell = TruncateToWidth(cells[i], cols[i].width);
      cell = cols[i].right ? PadLeft(cell, cols[i].width) : PadRight(cell, cols[i].width);
      if (i + 1 == cols.size()) {
        while (!cell.empty() && cell.back() == ' ') cell.pop_back();
      }
      line += w.Styled(cell, styles.empty() ? Style::kPlain : styles[i]);
    }
    w.Line(line);
  };
  std::vector<std::string> headers;
  for (const Column& c : cols) headers.push_back(c.header);
  row(headers, std::vector<Style>(cols.size(), Style::kBold));
  for (const occtrace::KernelGroup& g : report.groups()) {
    const double theo = g.occupancy().theoretical_occupancy_pct();
    std::vector<Style> styles(cols.size(), Style::kPlain);
    styles[7] = g.judged() ? OccupancyStyle(theo) : Style::kDim;
    row({std::to_string(g.rank()), ShortenKernelName(g.name(), cols[1].width),
         FormatFixed(g.time_pct(), 1), FormatDuration(g.total_ns()), FormatCount(g.launches()),
         DimsText(g.block_x(), g.block_y(), g.block_z()), std::to_string(g.registers_per_thread()),
         g.judged() ? FormatFixed(theo, 1) : "–",
         AchievedNarrowCell(g),
         g.judged() ? LimiterShortLabel(g.limiting_factor()) : "not judged"},
        styles);
  }
  const std::string traced = TracedGpuForAchieved(report);
  w.Paragraph(std::string(traced.empty() ? "Theo% = theoretical occupancy (model); Ach% = achieved occupancy, measured "
                                           "(– = not measured)."
                                         : "Theo% = theoretical occupancy (model) on the what-if GPU; Ach% = achieved "
                                           "occupancy measured on the traced " + traced +
                                               ", not comparable with Theo% (– = not measured).") +
                  (AnyPm(report) ? " " + std::string(kPmTableLegend) : ""),
              Style::kDim);
}

void PrintActions(const occtrace::Report& report, TextWriter& w) {
  if (report.groups_size() == 0 && report.actions_size() == 0) return;
  w.Section(kActionsTitle);
  if (report.actions_size() == 0) {
    w.Field("", std::string(kNoActions));
    return;
  }
  int n = 0;
  for (const occtrace::Action& a : report.actions()) {
    w.Field(std::to_string(++n) + ".", ActionRef(a) +
                                            SanitizeForDisplay(ShortenKernelName(a.kernel(), w.width() - 20)) +
                                            " [" + a.origin() + "]");
    if (const std::string source = SourceText(a.source()); !source.empty()) w.Field("", SanitizeForDisplay(source));
    w.Field("", SanitizeForDisplay(a.change()));
    w.Field("", "Gain: " + ActionGainText(a, ShareOfWords(report)) + "; confidence " + a.confidence() + "; evidence: " +
                    SanitizeForDisplay(a.evidence()));
  }
}

// The same work at every block size the trace ran it with: time per launch as bars (the longest
// fills the bar width), the model's and the measured occupancy beside them.
void PrintMeasuredPoints(const occtrace::Report& report, const occtrace::KernelGroup& g, TextWriter& w,
                         int indent) {
  if (g.measured_points_size() < 2) return;
  const std::string traced = TracedGpuForAchieved(report);
  w.Field("Measured", "this function at each block shape it ran with, " + MeasuredWorkText(g) +
                          (traced.empty() ? " (time per launch; theoretical / achieved occupancy)"
                                          : " (time per launch and achieved occupancy on the traced " + traced +
                                                "; theoretical on the what-if GPU)"),
          indent);
  double slowest = 0;
  for (const auto& p : g.measured_points()) slowest = std::max(slowest, p.mean_ns());
  const int fastest = FastestMeasuredPoint(g);
  // A shape label such as "block (8, 8, 4)" takes its room from the bars: the line keeps its width.
  // So does a time marked "alone" (the mean of the launches no other kernel overlapped).
  int label = 11, time_width = 9;
  for (const auto& p : g.measured_points()) {
    label = std::max(label, DisplayWidth(MeasuredCells(p).block) + 1);
    time_width = std::max(time_width, DisplayWidth(MeasuredCells(p).time));
  }
  const int bar_width = std::max(8, 24 - (label - 11) - (time_width - 9));
  const std::string pad(static_cast<size_t>(indent + kLabelWidth), ' ');
  for (int i = 0; i < g.measured_points_size(); ++i) {
    const occtrace::MeasuredPoint& p = g.measured_points(i);
    const MeasuredPointCells cells = MeasuredCells(p);
    const int bar = slowest > 0 ? std::max(1, static_cast<int>(bar_width * p.mean_ns() / slowest + 0.5)) : 1;
    std::string bars;
    for (int b = 0; b < bar; ++b) bars += "█";
    std::string line = PadRight(cells.block, label) + PadLeft(cells.time, time_width) + "  " +
                       PadRight(bars, bar_width) +
                       "  " + PadLeft(cells.theoretical, 6) + " / " + PadLeft(cells.achieved, 6);
    if (p.current()) line += "  (this)";
    if (i == fastest) line += "  fastest";
    // Not wrapped: the columns must stay aligned.
    w.Line(pad + w.Styled(line, i == fastest ? Style::kGood : Style::kPlain));
  }
}

void PrintKernel(const occtrace::Report& report, const occtrace::KernelGroup& g, TextWriter& w) {
  constexpr int kIndent = 2;
  const int title_room = w.width() - 12;
  w.Section("#" + std::to_string(g.rank()) + "  " + ShortenKernelName(g.name(), title_room));
  const std::string bare = StripSignature(SanitizeForDisplay(g.name()));
  if (bare != ShortenKernelName(g.name(), title_room)) {
    // The full name, at most three lines: enough to tell instantiations apart.
    const std::vector<std::string> lines = WrapText(bare, w.width() - kIndent - kLabelWidth);
    std::string shown;
    for (size_t i = 0; i < lines.size() && i < 3; ++i) shown += (i > 0 ? " " : "") + lines[i];
    if (lines.size() > 3) shown += " …";
    w.Field("Name", shown, kIndent);
  }
  if (const std::string source = SourceText(g.source()); !source.empty()) {
    w.Field("Source", SanitizeForDisplay(source), kIndent);
  }
  const occtrace::Device* device = FindDevice(report, g);
  std::string launch = LaunchText(g);
  if (device != nullptr && report.devices_size() > 1 && report.what_if_gpu().empty()) {
    launch += "; on " + SanitizeForDisplay(DeviceTitle(*device));
  }
  w.Field("Launch", launch, kIndent);
  if (!g.origin().empty()) w.Field("Owner", SanitizeForDisplay(OriginText(g)), kIndent);
  w.Field("Time", TimeText(g, ShareOfWords(report)), kIndent);
  if (const std::string overlap = OverlapText(g); !overlap.empty()) w.Field("Overlap", overlap, kIndent);
  if (!g.judged()) {
    w.Field("Not judged", SanitizeForDisplay(g.not_judged_reason()), kIndent, Style::kWarn);
    return;
  }
  const occtrace::Occupancy& occ = g.occupancy();
  w.Field("Occupancy", SanitizeForDisplay(LimiterLine(g)), kIndent,
          OccupancyStyle(occ.theoretical_occupancy_pct()));
  w.Field("Block limits",
          "registers " + BlockLimitText(occ.block_limit_registers()) + ", shared memory " +
              SharedMemLimitText(occ) + ", warps " + BlockLimitText(occ.block_limit_warps()) +
              ", SM " + BlockLimitText(occ.block_limit_blocks()) + ", barriers " +
              BarrierLimitText(occ),
          kIndent);
  std::string achieved = AchievedText(g);
  if (HasAchieved(g)) {
    achieved += "; " + GapText(g);
  }
  w.Field("Achieved", SanitizeForDisplay(achieved), kIndent);
  for (const std::string& why : g.achieved().gap_explanations()) {
    w.Bullet("- ", SanitizeForDisplay(why), kIndent + kLabelWidth);
  }
  if (const std::string throughput = ThroughputText(g); !throughput.empty()) {
    w.Field("Throughput", throughput, kIndent);
  }
  w.Field("Waves per SM", WavesText(g), kIndent);
  PrintMeasuredPoints(report, g, w, kIndent);
  const std::string label_pad(static_cast<size_t>(kIndent), ' ');
  for (int i = 0; i < g.issues_size(); ++i) {
    w.Bullet("- ", SanitizeForDisplay(g.issues(i)), kIndent + kLabelWidth, Style::kWarn,
             i == 0 ? label_pad + "Issues" : "");
  }
  if (g.suggestions_size() == 0) {
    w.Field("Suggestions", "none: " + NoSuggestionsReason(g), kIndent);
  }
  for (int i = 0; i < g.suggestions_size(); ++i) {
    const occtrace::Suggestion& s = g.suggestions(i);
    const int col = kIndent + kLabelWidth;
    const std::string bullet = std::to_string(i + 1) + ". ";
    w.Bullet(bullet, SanitizeForDisplay(SuggestionLine(s)), col, Style::kPlain,
             i == 0 ? label_pad + "Suggestions" : "");
    if (!s.assumptions().empty()) {
      w.Bullet("", "Assumes: " + SanitizeForDisplay(s.assumptions()), col + DisplayWidth(bullet),
               Style::kDim);
    }
  }
  w.Field("Recoverable", GroupRecoverableText(g), kIndent);
}

// The cross-rank section's listings start this many columns in.
constexpr int kCrossRankIndent = 2;

// Per-rank totals, the straggler's row marked; each file by what tells it from the others.
void PrintRankTable(const occtrace::Report& report, TextWriter& w) {
  const occtrace::CrossRank& x = report.cross_rank();
  constexpr int kLabel = 16, kTime = 10, kLaunches = 10;
  auto row = [&](const std::string& label, const std::string& total, const std::string& compute,
                 const std::string& nccl, const std::string& launches, const std::string& file,
                 Style style) {
    std::string line = std::string(kCrossRankIndent, ' ') +
                       PadRight(TruncateToWidth(label, kLabel), kLabel) + PadLeft(total, kTime) + " " +
                       PadLeft(compute, kTime) + " " + PadLeft(nccl, kTime) + " " +
                       PadLeft(launches, kLaunches) + "  " + file;
    line = TruncateToWidth(line, w.width());
    while (!line.empty() && line.back() == ' ') line.pop_back();
    w.Line(w.Styled(line, style));
  };
  row("Rank", "GPU time", "Compute", "NCCL", "Launches", "File (host)", Style::kBold);
  // The file column keeps what tells the files apart (several ranks' paths often share their
  // directory and most of their names).
  std::vector<std::string> paths;
  size_t host_width = 0;
  for (const occtrace::InputFile& file : report.files()) {
    paths.push_back(SanitizeForDisplay(file.path()));
    if (!file.host().empty()) host_width = std::max(host_width, SanitizeForDisplay(file.host()).size() + 3);
  }
  const int file_width = w.width() - (kCrossRankIndent + kLabel + 3 * (kTime + 1) + kLaunches + 2) -
                         static_cast<int>(host_width);
  const std::vector<std::string> names = DistinctFileNames(paths, std::max(file_width, 12));
  for (const occtrace::RankSummary& r : x.ranks()) {
    const occtrace::InputFile& file = report.files(r.file_index());
    std::string where = names[static_cast<size_t>(r.file_index())];
    if (!file.host().empty()) where += " (" + SanitizeForDisplay(file.host()) + ")";
    const bool straggler = HasStraggler(report) && r.file_index() == x.slowest_file_index();
    row(SanitizeForDisplay(r.label()), FormatDuration(r.total_gpu_ns()),
        FormatDuration(r.compute_gpu_ns()), CommunicationCell(report, r.communication_gpu_ns()),
        FormatCount(r.launches()), where, straggler ? Style::kWarn : Style::kPlain);
  }
  w.Paragraph(AnyCommunication(report) ? std::string(kCommunicationMeaning)
                                       : "Compute = GPU time outside NCCL kernels (none ran).",
              Style::kDim);
}

// The top configurations by GPU time, each with its spread and its time on each rank; beyond
// 16 ranks, its slowest and fastest.
void PrintCrossRankKernels(const occtrace::Report& report, TextWriter& w) {
  const occtrace::CrossRank& x = report.cross_rank();
  constexpr int kMaxRanksListed = 16;
  w.Line();
  w.Paragraph(std::string(kCrossRankKernelsTitle), Style::kBold);
  for (int i = 0; i < x.kernels_size(); ++i) {
    const occtrace::RankKernel& k = x.kernels(i);
    const std::string tag = PadRight(CrossRankKernelTag(i), 4);
    const std::string shown = k.group_rank() > 0 ? "#" + std::to_string(k.group_rank()) + " " : "";
    std::string title = shown + ShortenKernelName(k.name(), w.width() - 40);
    if (!k.owner_library().empty()) title += " [" + k.owner_library() + "]";
    w.Bullet(tag, SanitizeForDisplay(title) + ", " + k.launch(), kCrossRankIndent);
    const int col = kCrossRankIndent + DisplayWidth(tag);
    const occtrace::RankSpread& spread = k.spread();
    const bool straggling = SpreadStraggles(report, spread);
    w.Bullet("", SanitizeForDisplay(SpreadText(report, spread)), col,
             straggling ? Style::kWarn : Style::kPlain);
    std::string cells;
    const std::vector<int> listed = ShownRankFigures(spread, kMaxRanksListed);
    for (int index : listed) {
      const occtrace::RankFigures& f = spread.per_rank(index);
      cells += (cells.empty() ? "" : " · ") + SanitizeForDisplay(RankName(report, f.file_index())) +
               " " + RankCellText(f);
    }
    if (static_cast<int>(listed.size()) < spread.per_rank_size()) {
      cells += " (slowest and fastest of " + FormatCount(spread.per_rank_size()) + " ranks)";
    }
    w.Bullet("", cells, col, Style::kDim);
  }
}

void PrintRankOnlyConfigs(const occtrace::Report& report, TextWriter& w) {
  const occtrace::CrossRank& x = report.cross_rank();
  w.Line();
  w.Paragraph(std::string(kRankOnlyTitle) + " (" + FormatCount(x.rank_only_configs_total()) + ")",
              Style::kBold);
  for (const occtrace::RankOnlyConfig& c : x.rank_only_configs()) {
    const std::string shown = c.group_rank() > 0 ? "#" + std::to_string(c.group_rank()) + " " : "";
    w.Bullet("- ", SanitizeForDisplay(shown + ShortenKernelName(c.name(), w.width() - 40) + ", " +
                                      c.launch() + ", " + RankOnlyText(report, c)),
             kCrossRankIndent);
  }
  if (x.rank_only_configs_total() > x.rank_only_configs_size()) {
    w.Bullet("- ", "and " + FormatCount(x.rank_only_configs_total() - x.rank_only_configs_size()) +
                       " more (JSON: each group's rank_spread)",
             kCrossRankIndent, Style::kDim);
  }
}

// Several input files: per-rank totals, the straggler, the top configurations on each rank, and
// the configurations some ranks did not run. Every per-rank listing wraps, so it holds any
// number of ranks; beyond 16 a configuration lists its slowest and fastest ranks.
void PrintCrossRank(const occtrace::Report& report, TextWriter& w) {
  if (!HasCrossRank(report)) return;
  const occtrace::CrossRank& x = report.cross_rank();
  w.Section(CrossRankTitle(report));
  w.Field("Ranks", SanitizeForDisplay(RankIdentityText(report)));
  // The straggler and its cause are in the summary, which opens the report.
  w.Line();
  PrintRankTable(report, w);
  if (x.kernels_size() > 0) PrintCrossRankKernels(report, w);
  if (x.rank_only_configs_size() > 0) PrintRankOnlyConfigs(report, w);
  for (const std::string& warning : x.warnings()) {
    w.Bullet("- ", "warning: " + SanitizeForDisplay(warning), 0, Style::kWarn);
  }
}

void PrintLimiterShares(const occtrace::Report& report, TextWriter& w) {
  if (report.time_by_limiter_size() == 0) return;
  w.Section("GPU time by limiting factor (theoretical occupancy)");
  constexpr int kLabel = 22;
  const int bar_room = w.width() - kLabel - 20;
  double max_pct = 0;
  for (const occtrace::LimiterShare& share : report.time_by_limiter()) {
    max_pct = std::max(max_pct, share.time_pct());
  }
  for (const occtrace::LimiterShare& share : report.time_by_limiter()) {
    const int bar = max_pct > 0 ? static_cast<int>(share.time_pct() / max_pct * bar_room + 0.5) : 0;
    std::string bar_text;
    for (int i = 0; i < bar; ++i) bar_text += "█";
    if (bar == 0 && share.time_pct() > 0) bar_text = "▏";  // visible, however small
    w.Line(PadRight(LimiterLabel(share.limiter()), kLabel) + PadLeft(FormatPct(share.time_pct()), 7) +
           PadLeft(FormatDuration(share.total_ns()), 11) + "  " + bar_text);
  }
}

void PrintUnjudged(const occtrace::Report& report, TextWriter& w) {
  if (report.unjudged_size() == 0) return;
  w.Section("Not judged (" + FormatCount(report.unjudged_size()) +
            (report.unjudged_size() == 1 ? " configuration, " : " configurations, ") +
            FormatPct(ListedUnjudgedTimePct(report)) + " of GPU time)");
  for (const occtrace::KernelGroup& g : report.unjudged()) {
    w.Bullet("- ", ShortenKernelName(g.name(), w.width() - 4) + ": " + FormatDuration(g.total_ns()) +
                       " in " + FormatCount(g.launches()) +
                       (g.launches() == 1 ? " launch, grid " : " launches, grid ") +
                       DimsText(g.grid_x(), g.grid_y(), g.grid_z()) + " × block " +
                       DimsText(g.block_x(), g.block_y(), g.block_z()) + ". Why: " +
                       SanitizeForDisplay(g.not_judged_reason().empty() ? "not given"
                                                                        : g.not_judged_reason()),
             0);
  }
}

// --diff: the comparison alone. It opens with the answer (total GPU time before → after, what
// the changed kernels and the rest contributed, and whether the two traces compare at all), then
// one row per kernel, changed ones first, by the time each saved or cost.
void PrintDiffReport(const occtrace::Report& report, TextWriter& w) {
  const occtrace::Diff& d = report.diff();
  w.Line(w.Styled(ToolName(report) + " — before / after (--diff)", Style::kBold));
  auto files = [&](const std::string& label, const auto& list) {
    for (int i = 0; i < list.size(); ++i) {
      const occtrace::InputFile& file = list.Get(i);
      w.Field(i == 0 ? label : "", SanitizeForDisplay(file.path()) + ": " + SanitizeForDisplay(FileFacts(file)));
      if (!file.command().empty()) w.Field("", "command: " + SanitizeForDisplay(file.command()));
    }
  };
  files("Before", d.base_files());
  files("After", report.files());
  for (int i = 0; i < report.devices_size(); ++i) {
    const occtrace::Device& device = report.devices(i);
    const std::string tag = report.devices_size() > 1 || device.device_id() != 0
                                ? "[" + DeviceTag(report, device) + "] "
                                : "";
    w.Field(i == 0 ? "GPU (after)" : "", tag + SanitizeForDisplay(DeviceTitle(device)));
  }

  w.Section("Did it work?");
  w.Field("GPU time", DiffTotalText(d));
  // Right under the answer it qualifies.
  for (const std::string& warning : d.warnings()) {
    w.Field("Warning", SanitizeForDisplay(warning), 0, Style::kWarn);
  }
  w.Field("Changed", DiffChangedText(d));
  w.Field("Same", DiffSameText(d), 0, Style::kDim);

  w.Section(std::string(kDiffRowsTitle));
  constexpr int kStatus = 7, kTime = 21, kChange = 10, kPct = 7, kTheo = 13;
  const int name_width = w.width() - 2 - kStatus - kTime - kChange - kPct - kTheo - 5;
  auto row = [&](const std::string& name, const std::string& status, const std::string& time,
                 const std::string& change, const std::string& pct, const std::string& theo, Style style) {
    std::string line = "  " + PadRight(TruncateToWidth(name, name_width), name_width) + " " +
                       PadRight(status, kStatus) + " " + PadLeft(time, kTime) + " " +
                       PadLeft(change, kChange) + " " + PadLeft(pct, kPct) + " " + PadLeft(theo, kTheo);
    while (!line.empty() && line.back() == ' ') line.pop_back();
    w.Line(w.Styled(line, style));
  };
  row("Kernel", "Status", "Time before → after", "Change", "%", "Theo% b → a", Style::kBold);
  for (const occtrace::DiffRow& r : d.rows()) {
    const bool before = DiffHasBefore(r);
    const bool after = DiffHasAfter(r);
    const std::string time = (before ? FormatDuration(r.total_ns_before()) : "–") + " → " +
                             (after ? FormatDuration(r.total_ns_after()) : "–");
    const std::string theo = (before ? FormatFixed(r.occupancy_before_pct(), 1) : "–") + " → " +
                             (after ? FormatFixed(r.occupancy_after_pct(), 1) : "–");
    row(SanitizeForDisplay(ShortenKernelName(r.name(), name_width)), SanitizeForDisplay(r.status()), time,
        SignedDuration(r.total_ns_after() - r.total_ns_before()), DiffTimeChange(r), theo,
        r.status() == "same" ? Style::kDim : Style::kPlain);
    const std::string config = DiffConfigChange(r);
    if (!config.empty()) w.Bullet("", config, 4, Style::kDim);
  }
  w.Paragraph("Theo% = theoretical occupancy (model), GPU-time weighted over the kernel's "
              "configurations; a kernel's configuration is its largest by GPU time.",
              Style::kDim);

  w.Section("Notes");
  for (const std::string& note : report.notes()) w.Bullet("- ", SanitizeForDisplay(note), 0);
  for (const auto* list : {&d.base_files(), &report.files()}) {
    for (const occtrace::InputFile& file : *list) {
      for (const std::string& warning : file.warnings()) {
        w.Bullet("- ", "warning: " + SanitizeForDisplay(file.path()) + ": " + SanitizeForDisplay(warning), 0,
                 Style::kWarn);
      }
    }
  }
  if (!report.generated_for().empty()) {
    w.Bullet("- ", "generated by: " + SanitizeForDisplay(report.generated_for()), 0, Style::kDim);
  }
}

// Actions below 1 % of GPU time each: counted in the summary, listed apart from "What to change".
void PrintMinorActions(const occtrace::Report& report, TextWriter& w) {
  if (report.minor_actions_size() == 0) return;
  w.Section(MinorActionsTitle(report));
  for (const occtrace::Action& a : report.minor_actions()) {
    const std::string source = SourceText(a.source());
    w.Bullet("- ", ActionRef(a) + SanitizeForDisplay(ShortenKernelName(a.kernel(), w.width() - 20)) +
                       (source.empty() ? "" : " " + SanitizeForDisplay(source)) + " [" +
                       a.origin() + "]: " + SanitizeForDisplay(a.change()) + " Gain: " + ActionGainText(a, ShareOfWords(report)) + ".",
             0);
  }
}

void PrintNotes(const occtrace::Report& report, TextWriter& w) {
  w.Section("Notes");
  for (const std::string& note : report.notes()) w.Bullet("- ", SanitizeForDisplay(note), 0);
  for (int i = 0; i < report.files_size(); ++i) {
    for (const std::string& warning : report.files(i).warnings()) {
      const std::string tag = report.files_size() > 1 ? "[" + std::to_string(i) + "] " : "";
      w.Bullet("- ", "warning: " + tag + SanitizeForDisplay(warning), 0, Style::kWarn);
    }
  }
  w.Bullet("- ", std::string(kTheoreticalMeaning), 0, Style::kDim);
  w.Bullet("- ", std::string(kAchievedMeaning), 0, Style::kDim);
  if (!NotesCoverRecoverable(report)) w.Bullet("- ", std::string(kRecoverableMeaning), 0, Style::kDim);
  if (!report.generated_for().empty()) {
    w.Bullet("- ", "generated by: " + SanitizeForDisplay(report.generated_for()), 0, Style::kDim);
  }
}

}  // namespace

void TextPrinter::DoPrint(const occtrace::Report& report, const PrintOptions& options,
                          std::ostream& out) {
  TextWriter w(out, options.color, std::max(options.width, kMinWidth));
  if (report.has_diff()) {
    PrintDiffReport(report, w);
    return;
  }
  PrintHeader(report, w);
  PrintActions(report, w);
  PrintSummary(report, w);
  PrintTopTable(report, w);
  PrintCrossRank(report, w);
  for (const occtrace::KernelGroup& group : report.groups()) PrintKernel(report, group, w);
  PrintLimiterShares(report, w);
  PrintMinorActions(report, w);
  PrintUnjudged(report, w);
  PrintNotes(report, w);
}

}  // namespace occ::reports
