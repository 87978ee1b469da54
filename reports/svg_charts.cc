#include "reports/svg_charts.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <string>
#include <vector>

#include "reports/report_facts.h"
#include "reports/strings.h"

namespace occ::reports {
namespace {

constexpr std::string_view kCurrentColor = "#e8590c";
constexpr std::string_view kSuggestedColor = "#2b8a3e";
// The model's block size where a measured configuration is the suggestion.
constexpr std::string_view kModelColor = "#868e96";
constexpr std::string_view kCurveColor = "#364fc7";
constexpr std::string_view kMeasuredColor = "#9c36b5";
constexpr std::string_view kGridColor = "#dee2e6";
constexpr std::string_view kAxisTextColor = "#495057";

std::string Num(double v) { return FormatFixed(v, 1); }

// Evenly spaced "nice" ticks (1, 2, 5 x 10^k threads) covering [0, max].
std::vector<int> BlockSizeTicks(int max_x) {
  const int target = 8;
  int step = 32;
  for (const int candidate : {32, 64, 128, 256, 512, 1024, 2048}) {
    step = candidate;
    if (max_x / candidate <= target) break;
  }
  std::vector<int> ticks;
  for (int x = 0; x <= max_x; x += step) ticks.push_back(x);
  return ticks;
}

// The curve chart's frame: its size and margins, and the scales from threads per block and
// percent to SVG units.
struct CurvePlot {
  static constexpr double kWidth = 560, kHeight = 270;
  static constexpr double kLeft = 52, kRight = 20, kTop = 16, kBottom = 46;
  static constexpr double kPlotW = kWidth - kLeft - kRight;
  static constexpr double kPlotH = kHeight - kTop - kBottom;
  int max_x = 32;  // the largest block size shown

  double X(double x) const { return kLeft + x / max_x * kPlotW; }
  double Y(double pct) const { return kTop + (1.0 - std::clamp(pct, 0.0, 100.0) / 100.0) * kPlotH; }
};

// Grid lines at every 25 %, block-size ticks, the axes and their titles.
void AppendAxes(const CurvePlot& plot, bool any_measured, std::string* svg) {
  constexpr double kLeft = CurvePlot::kLeft, kTop = CurvePlot::kTop;
  constexpr double plot_w = CurvePlot::kPlotW, plot_h = CurvePlot::kPlotH;
  for (int pct = 0; pct <= 100; pct += 25) {
    const std::string y = Num(plot.Y(pct));
    *svg += "<line x1=\"" + Num(kLeft) + "\" x2=\"" + Num(kLeft + plot_w) + "\" y1=\"" + y +
            "\" y2=\"" + y + "\" stroke=\"" + std::string(kGridColor) + "\"/>";
    *svg += "<text x=\"" + Num(kLeft - 8) + "\" y=\"" + Num(plot.Y(pct) + 4) +
            "\" text-anchor=\"end\" class=\"tick\">" + std::to_string(pct) + "%</text>";
  }
  for (const int x : BlockSizeTicks(plot.max_x)) {
    *svg += "<line x1=\"" + Num(plot.X(x)) + "\" x2=\"" + Num(plot.X(x)) + "\" y1=\"" + Num(kTop + plot_h) +
            "\" y2=\"" + Num(kTop + plot_h + 5) + "\" stroke=\"" + std::string(kAxisTextColor) + "\"/>";
    *svg += "<text x=\"" + Num(plot.X(x)) + "\" y=\"" + Num(kTop + plot_h + 18) +
            "\" text-anchor=\"middle\" class=\"tick\">" + std::to_string(x) + "</text>";
  }
  *svg += "<line x1=\"" + Num(kLeft) + "\" x2=\"" + Num(kLeft + plot_w) + "\" y1=\"" +
          Num(kTop + plot_h) + "\" y2=\"" + Num(kTop + plot_h) + "\" stroke=\"" +
          std::string(kAxisTextColor) + "\"/>";
  *svg += "<text x=\"" + Num(kLeft + plot_w / 2) + "\" y=\"" + Num(CurvePlot::kHeight - 6) +
          "\" text-anchor=\"middle\" class=\"axis\">Threads per block</text>";
  *svg += "<text transform=\"translate(14 " + Num(kTop + plot_h / 2) +
          ") rotate(-90)\" text-anchor=\"middle\" class=\"axis\">" +
          std::string(any_measured ? "Occupancy" : "Theoretical occupancy") + "</text>";
}

// The curve: a step function of the block size, drawn through the computed points.
void AppendCurve(const CurvePlot& plot, const occtrace::KernelGroup& group, std::string* svg) {
  std::string points;
  for (const occtrace::BlockSizePoint& p : group.curve()) {
    points += Num(plot.X(p.block_size())) + "," + Num(plot.Y(p.occupancy_pct())) + " ";
  }
  if (!points.empty()) points.pop_back();
  *svg += "<polyline fill=\"none\" stroke=\"" + std::string(kCurveColor) +
          "\" stroke-width=\"2\" stroke-linejoin=\"round\" points=\"" + points + "\"/>";
  for (const occtrace::BlockSizePoint& p : group.curve()) {
    *svg += "<circle cx=\"" + Num(plot.X(p.block_size())) + "\" cy=\"" + Num(plot.Y(p.occupancy_pct())) +
            "\" r=\"2.6\" fill=\"" + std::string(kCurveColor) + "\"><title>" +
            std::to_string(p.block_size()) + " threads: " + FormatPct(p.occupancy_pct()) + " (" +
            std::to_string(p.active_blocks_per_sm()) + " blocks/SM)</title></circle>";
  }
}

// Markers: each suggested block size, then the current configuration.
void AppendMarkers(const CurvePlot& plot, const occtrace::KernelGroup& group, int current,
                   std::string* svg) {
  auto marker = [&](int x, double pct, std::string_view color, const std::string& tip) {
    *svg += "<line x1=\"" + Num(plot.X(x)) + "\" x2=\"" + Num(plot.X(x)) + "\" y1=\"" +
            Num(CurvePlot::kTop) + "\" y2=\"" + Num(CurvePlot::kTop + CurvePlot::kPlotH) +
            "\" stroke=\"" + std::string(color) + "\" stroke-width=\"1.5\" stroke-dasharray=\"5 4\"/>";
    *svg += "<circle cx=\"" + Num(plot.X(x)) + "\" cy=\"" + Num(plot.Y(pct)) +
            "\" r=\"6\" fill=\"#fff\" stroke=\"" + std::string(color) + "\" stroke-width=\"3\"><title>" +
            HtmlEscape(tip) + "</title></circle>";
  };
  for (const BlockSizeMark& m : BlockSizeMarks(group)) {
    marker(m.block_size, m.theoretical_pct, m.suggested ? kSuggestedColor : kModelColor, m.label);
  }
  marker(current, group.occupancy().theoretical_occupancy_pct(), kCurrentColor,
         "current: " + std::to_string(current) + " threads, " +
             FormatPct(group.occupancy().theoretical_occupancy_pct()));
}

// A label's box in chart units, for keeping labels apart. SVG text has no layout of its own, so
// the width is estimated: a 12 px label's digits, units and spaces average under 0.6 em.
struct LabelBox {
  double left, right, top, bottom;
  bool Overlaps(const LabelBox& o) const {
    return left < o.right && o.left < right && top < o.bottom && o.top < bottom;
  }
};
constexpr double kLabelCharWidth = 7.2, kLabelAscent = 11, kLabelDescent = 3;

// Where a measured point's label goes: centred on the point (moved inward at the plot's edges),
// on the first baseline above or below the point, nearest first, whose box stays in the plot
// and overlaps no label placed before. nullopt when none does: the point's tooltip keeps it.
std::optional<LabelBox> PlaceLabel(double x, double y, size_t chars, const std::vector<LabelBox>& placed) {
  const double half = kLabelCharWidth * static_cast<double>(chars) / 2;
  const double center = std::clamp(x, CurvePlot::kLeft + half, CurvePlot::kWidth - 2 - half);
  for (const double offset : {-8.0, 18.0, -22.0, 32.0, -36.0, 46.0}) {
    const LabelBox box{center - half, center + half, y + offset - kLabelAscent, y + offset + kLabelDescent};
    if (box.top < 0 || box.bottom > CurvePlot::kTop + CurvePlot::kPlotH) continue;
    if (std::none_of(placed.begin(), placed.end(), [&](const LabelBox& p) { return p.Overlaps(box); })) return box;
  }
  return std::nullopt;
}

// Measured points: the same work at other block sizes, at their achieved occupancy (a square)
// with their time per launch beside it (PlaceLabel: labels never overlap, as close block sizes'
// would on one line); on the axis when achieved occupancy was not measured, or under --gpu.
void AppendMeasuredPoints(const CurvePlot& plot, const occtrace::KernelGroup& group, bool what_if,
                          std::string* svg) {
  std::vector<LabelBox> placed;
  for (const occtrace::MeasuredPoint& p : group.measured_points()) {
    const double y = p.achieved_pct() >= 0 && !what_if ? plot.Y(p.achieved_pct())
                                                       : CurvePlot::kTop + CurvePlot::kPlotH;
    const double x = plot.X(p.block_size());
    const std::string time = FormatDuration(static_cast<int64_t>(p.mean_ns() + 0.5));
    *svg += "<rect x=\"" + Num(x - 4.5) + "\" y=\"" + Num(y - 4.5) +
            "\" width=\"9\" height=\"9\" fill=\"" + std::string(kMeasuredColor) + "\"><title>" +
            HtmlEscape("measured: " + MeasuredCells(p).block + " (" + std::to_string(p.block_size()) + " threads), " + time + " per launch, " +
                       (p.achieved_pct() >= 0 ? "achieved " + FormatPct(p.achieved_pct()) +
                                                  (what_if ? " on the traced GPU, not this curve's" : "")
                                            : "achieved not measured")) +
            "</title></rect>";
    // "µ" is two bytes and one character.
    const size_t chars = time.size() - (time.find("µ") != std::string::npos ? 1 : 0);
    const std::optional<LabelBox> box = PlaceLabel(x, y, chars, placed);
    if (!box) continue;
    placed.push_back(*box);
    *svg += "<text x=\"" + Num((box->left + box->right) / 2) + "\" y=\"" + Num(box->bottom - kLabelDescent) +
            "\" text-anchor=\"middle\" class=\"tick\" fill=\"" + std::string(kMeasuredColor) + "\">" +
            HtmlEscape(time) + "</text>";
  }
}

}  // namespace

std::string_view LimiterColor(std::string_view limiter) {
  if (limiter == "registers") return "#4263eb";
  if (limiter == "shared_memory") return "#7048e8";
  if (limiter == "warps") return "#1098ad";
  if (limiter == "blocks") return "#f08c00";
  if (limiter == "barriers") return "#d6336c";
  if (limiter == "none") return "#2f9e44";
  if (limiter == "cannot_run") return "#c92a2a";
  if (limiter == "unjudged") return "#adb5bd";
  return "#868e96";
}

std::string OccupancyCurveSvg(const occtrace::KernelGroup& group, bool what_if) {
  if (group.curve_size() == 0) return "";
  const int current = static_cast<int>(BlockThreads(group));
  CurvePlot plot;
  int max_x = group.curve(group.curve_size() - 1).block_size();
  max_x = std::max(max_x, current);
  for (const BlockSizeMark& m : BlockSizeMarks(group)) max_x = std::max(max_x, m.block_size);
  for (const occtrace::MeasuredPoint& p : group.measured_points()) max_x = std::max(max_x, p.block_size());
  plot.max_x = std::max(max_x, 32);

  const std::string name = ShortenKernelName(group.name(), 80);
  std::string svg;
  svg += "<svg class=\"chart curve\" viewBox=\"0 0 " + Num(CurvePlot::kWidth) + " " + Num(CurvePlot::kHeight) +
         "\" role=\"img\" aria-label=\"" +
         HtmlEscape("Theoretical occupancy versus threads per block for " + name) + "\">";
  svg += "<title>" + HtmlEscape("Theoretical occupancy vs block size: " + name) + "</title>";
  AppendAxes(plot, group.measured_points_size() > 0, &svg);
  AppendCurve(plot, group, &svg);
  AppendMarkers(plot, group, current, &svg);
  AppendMeasuredPoints(plot, group, what_if, &svg);
  svg += "</svg>";
  return svg;
}

std::string LimiterBarsSvg(const occtrace::Report& report) {
  if (report.time_by_limiter_size() == 0) return "";
  constexpr double kWidth = 720, kRow = 30, kLabel = 170, kValue = 170, kTop = 8;
  const double bar_w = kWidth - kLabel - kValue;
  const double height = kTop * 2 + kRow * report.time_by_limiter_size();
  std::string svg = "<svg class=\"chart bars\" viewBox=\"0 0 " + Num(kWidth) + " " + Num(height) +
                    "\" role=\"img\" aria-label=\"GPU time by limiting factor\">"
                    "<title>GPU time by limiting factor of theoretical occupancy</title>";
  double y = kTop;
  for (const occtrace::LimiterShare& share : report.time_by_limiter()) {
    const double pct = std::clamp(share.time_pct(), 0.0, 100.0);
    const double w = std::max(pct / 100.0 * bar_w, pct > 0 ? 2.0 : 0.0);
    const std::string label = LimiterLabel(share.limiter());
    svg += "<g><title>" + HtmlEscape(label + ": " + FormatPct(share.time_pct()) + " of GPU time (" +
                                     FormatDuration(share.total_ns()) + ")") + "</title>";
    svg += "<text x=\"" + Num(kLabel - 10) + "\" y=\"" + Num(y + kRow / 2 + 4) +
           "\" text-anchor=\"end\" class=\"label\">" + HtmlEscape(label) + "</text>";
    svg += "<rect x=\"" + Num(kLabel) + "\" y=\"" + Num(y + 5) + "\" width=\"" + Num(bar_w) +
           "\" height=\"" + Num(kRow - 10) + "\" rx=\"3\" fill=\"#f1f3f5\"/>";
    svg += "<rect x=\"" + Num(kLabel) + "\" y=\"" + Num(y + 5) + "\" width=\"" + Num(w) +
           "\" height=\"" + Num(kRow - 10) + "\" rx=\"3\" fill=\"" +
           std::string(LimiterColor(share.limiter())) + "\"/>";
    svg += "<text x=\"" + Num(kLabel + bar_w + 10) + "\" y=\"" + Num(y + kRow / 2 + 4) +
           "\" class=\"value\">" + HtmlEscape(FormatPct(share.time_pct()) + " · " +
                                              FormatDuration(share.total_ns())) +
           "</text></g>";
    y += kRow;
  }
  svg += "</svg>";
  return svg;
}

}  // namespace occ::reports
