#include "reports/html_printer.h"

#include <algorithm>
#include <ostream>
#include <string>
#include <vector>

#include "reports/report_facts.h"
#include "reports/strings.h"
#include "reports/svg_charts.h"
#include "schema/report.pb.h"

namespace occ::reports {
namespace {

// One self-contained file: inline CSS, inline SVG, a small inline script, and a
// Content-Security-Policy that forbids every network request, so a report attached to a
// ticket can never phone home or break when offline. Every string from the trace is escaped
// with HtmlEscape (names contain <, >, & and quotes).

constexpr std::string_view kStyle = R"CSS(
:root{--fg:#212529;--muted:#6c757d;--line:#dee2e6;--soft:#f8f9fa;--accent:#364fc7;
--bad:#c92a2a;--warn:#e67700;--good:#2b8a3e;}
*{box-sizing:border-box}
body{margin:0;color:var(--fg);background:#fff;font:14px/1.5 system-ui,-apple-system,"Segoe UI",
Roboto,"Helvetica Neue",Arial,sans-serif}
code,.mono{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,"Liberation Mono",monospace;
font-size:12.5px}
header.top{background:#1b2559;color:#fff;padding:20px 32px}
header.top h1{margin:0;font-size:22px;font-weight:600}
header.top .sub{opacity:.85;margin-top:2px}
main{max-width:1240px;margin:0 auto;padding:8px 32px 40px}
h2{font-size:18px;margin:32px 0 12px;padding-bottom:6px;border-bottom:1px solid var(--line)}
h3{font-size:16px;margin:0 0 4px}
.cards{display:grid;grid-template-columns:repeat(auto-fit,minmax(172px,1fr));gap:12px;margin-top:20px}
.card{border:1px solid var(--line);border-radius:8px;padding:12px 16px;background:var(--soft)}
.card .k{color:var(--muted);font-size:12px;text-transform:uppercase;letter-spacing:.04em}
.card .v{font-size:24px;font-weight:600;font-variant-numeric:tabular-nums}
.card .d{color:var(--muted);font-size:12.5px}
.card .v .u{font-size:13px;font-weight:500;color:var(--muted)}
.card .v.v2{font-size:18px}
table{border-collapse:collapse;width:100%;font-variant-numeric:tabular-nums}
th,td{padding:6px 8px;border-bottom:1px solid var(--line);text-align:left;vertical-align:top}
th{background:var(--soft);font-weight:600;font-size:12.5px}
.scroll{overflow-x:auto}
td.num{text-align:right;white-space:nowrap}
td.num .note{display:block;white-space:normal;font-size:12px;color:var(--muted)}
td.num.wrap{white-space:normal;min-width:120px}
th.num{text-align:right}
table.kv th{width:200px;background:none;color:var(--muted);font-weight:500}
table.sortable th{cursor:pointer;user-select:none}
table.sortable th:hover{background:#e9ecef}
table.sortable th[aria-sort=ascending]::after{content:" \25B2";font-size:10px}
table.sortable th[aria-sort=descending]::after{content:" \25BC";font-size:10px}
table.sortable tbody tr:hover{background:#f1f3f5}
td.name{min-width:260px;max-width:440px;overflow-wrap:anywhere}
td.name a{color:var(--fg);text-decoration:none}
td.name a:hover{color:var(--accent);text-decoration:underline}
.meter{display:inline-block;width:40px;height:8px;background:#e9ecef;border-radius:4px;
margin-right:8px;vertical-align:middle;overflow:hidden}
.meter>span{display:block;height:100%}
.bad{color:var(--bad)}.warn{color:var(--warn)}.good{color:var(--good)}
.bg-bad{background:var(--bad)}.bg-warn{background:#f59f00}.bg-good{background:#37b24d}
.pill{display:inline-block;padding:1px 8px;border-radius:10px;font-size:12px;color:#fff;white-space:nowrap}
.kernel{border:1px solid var(--line);border-radius:8px;padding:16px 20px;margin:16px 0}
.kernel .meta{color:var(--muted);margin-bottom:10px}
.kernel details{margin:4px 0 10px}
.kernel summary{cursor:pointer;color:var(--accent)}
.kernel .full{overflow-wrap:anywhere;background:var(--soft);padding:8px;border-radius:6px;margin-top:4px}
.grid2{display:grid;grid-template-columns:minmax(0,1.1fr) minmax(0,1fr);gap:24px;align-items:start}
.grid2>div{min-width:0}
table.metrics td{white-space:normal;text-align:right}
table.metrics th{width:auto;white-space:nowrap}
@media (max-width:900px){.grid2{grid-template-columns:1fr}}
.callout{border-left:4px solid var(--accent);background:#edf2ff;padding:8px 12px;margin:12px 0;border-radius:0 6px 6px 0}
.callout.not{border-color:var(--warn);background:#fff4e6}
ul.tight,ol.tight{margin:4px 0 8px;padding-left:22px}
.assume{color:var(--muted);font-size:12.5px}
.legend{color:var(--muted);font-size:12.5px;margin-top:4px}
.legend i{display:inline-block;width:10px;height:10px;border-radius:50%;margin:0 4px 0 12px;vertical-align:-1px}
svg.chart{width:100%;height:auto;display:block}
svg.chart text{font:12px system-ui,-apple-system,"Segoe UI",Roboto,Arial,sans-serif;fill:#495057}
svg.chart text.axis{font-size:12px;fill:#343a40}
svg.chart text.label{font-size:13px;fill:#212529}
svg.bars{max-width:760px}
.muted{color:var(--muted)}
footer{color:var(--muted);font-size:12px;border-top:1px solid var(--line);max-width:1240px;margin:24px auto 0;padding:12px 32px 24px}
thead th{vertical-align:bottom}
)CSS";

// Sorting of every table.sortable by clicking (or Enter on) a header; numeric cells carry
// their key in data-v. The last statement marks the body so headless tests can tell that the
// script ran to the end without an error.
constexpr std::string_view kScript = R"JS(
(function () {
  'use strict';
  function key(cell) {
    var v = cell.getAttribute('data-v');
    if (v !== null && v !== '' && !isNaN(parseFloat(v))) return parseFloat(v);
    return cell.textContent.trim().toLowerCase();
  }
  function compare(a, b) {
    if (typeof a === 'number' && typeof b === 'number') return a - b;
    if (typeof a === 'number') return -1;
    if (typeof b === 'number') return 1;
    return a < b ? -1 : a > b ? 1 : 0;
  }
  var tables = document.querySelectorAll('table.sortable');
  Array.prototype.forEach.call(tables, function (table) {
    var headers = table.tHead.rows[0].cells;
    Array.prototype.forEach.call(headers, function (th, column) {
      th.tabIndex = 0;
      th.title = 'Sort by ' + th.textContent;
      function sort() {
        var numeric = th.classList.contains('num');
        var current = th.getAttribute('aria-sort');
        var ascending = current ? current === 'descending' : !numeric;
        var body = table.tBodies[0];
        var rows = Array.prototype.slice.call(body.rows);
        rows.sort(function (r1, r2) {
          var c = compare(key(r1.cells[column]), key(r2.cells[column]));
          return ascending ? c : -c;
        });
        rows.forEach(function (row) { body.appendChild(row); });
        Array.prototype.forEach.call(headers, function (h) { h.removeAttribute('aria-sort'); });
        th.setAttribute('aria-sort', ascending ? 'ascending' : 'descending');
      }
      th.addEventListener('click', sort);
      th.addEventListener('keydown', function (e) {
        if (e.key === 'Enter' || e.key === ' ') { e.preventDefault(); sort(); }
      });
    });
  });
  document.body.setAttribute('data-ok', 'tables=' + document.querySelectorAll('table').length +
      ' sortable=' + tables.length + ' charts=' + document.querySelectorAll('svg.chart').length);
})();
)JS";

std::string E(std::string_view s) { return HtmlEscape(s); }

std::string OccupancyClass(double pct) {
  if (pct < 50) return "bad";
  if (pct < 80) return "warn";
  return "good";
}

// A percentage cell with a small meter; data-v is the sort key.
// `note` (plain text, escaped here) goes under the value, wrapped: where it came from. On one
// line with it ("34.7 ± 0.9 (PM, 25 samples, 5 mixed)") the column took a quarter of the top
// table, which then overflowed its section at a 1,400 px window.
std::string PctCell(double pct, const std::string& note = "") {
  const std::string cls = OccupancyClass(pct);
  return "<td class=\"num\" data-v=\"" + FormatFixed(pct, 3) + "\"><span class=\"meter\"><span class=\"bg-" +
         cls + "\" style=\"width:" + FormatFixed(std::clamp(pct, 0.0, 100.0), 1) +
         "%\"></span></span>" + FormatFixed(pct, 1) + (note.empty() ? "" : "<span class=\"note\">" + E(note) + "</span>") +
         "</td>";
}

std::string NumCell(const std::string& text, double sort_key) {
  return "<td class=\"num\" data-v=\"" + FormatFixed(sort_key, 3) + "\">" + E(text) + "</td>";
}

std::string LimiterPill(std::string_view limiter) {
  return "<span class=\"pill\" style=\"background:" + std::string(LimiterColor(limiter)) +
         "\" title=\"" + E(LimiterLabel(limiter)) + "\">" + E(LimiterShortLabel(limiter)) + "</span>";
}

void Card(std::ostream& out, std::string_view key, const std::string& value, const std::string& detail,
          const std::string& value_class = "") {
  out << "<div class=\"card\"><div class=\"k\">" << E(key) << "</div><div class=\"v"
      << (value_class.empty() ? "" : " " + value_class) << "\">" << E(value) << "</div><div class=\"d\">"
      << E(detail) << "</div></div>\n";
}

// The Recoverable card holds the figures its text states, measured and the model's upper bound
// apart (one line each), never their sum: a measured gain and a bound are not the same kind.
void RecoverableCard(const occtrace::Summary& s, std::ostream& out) {
  const int64_t measured = s.recoverable_measured_ns(), model = s.recoverable_model_ns();
  out << "<div class=\"card\"><div class=\"k\">Recoverable</div>";
  if (measured > 0) {
    out << "<div class=\"v\">" << E(FormatDuration(measured)) << " <span class=\"u\">measured</span></div>";
  }
  if (model > 0) {
    out << "<div class=\"v" << (measured > 0 ? " v2" : "") << "\">" << (measured > 0 ? "+ " : "") << "up to "
        << E(FormatDuration(model)) << " <span class=\"u\">model bound</span></div>";
  }
  if (measured <= 0 && model <= 0) out << "<div class=\"v\">none</div>";
  out << "<div class=\"d\">" << E(SummaryRecoverableText(s)) << "</div></div>\n";
}

void KvRow(std::ostream& out, std::string_view key, const std::string& value_html) {
  out << "<tr><th>" << E(key) << "</th><td>" << value_html << "</td></tr>\n";
}

void PrintHead(const occtrace::Report& report, std::ostream& out) {
  std::string title = report.has_diff() ? "Before / after (--diff)" : "Occupancy report";
  if (report.devices_size() == 1) title += " — " + report.devices(0).name();
  out << "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
      << "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
         "style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:\">\n"
      << "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
      << "<meta name=\"generator\" content=\"" << E(ToolName(report)) << "\">\n"
      << "<title>" << E(title) << "</title>\n<style>" << kStyle << "</style>\n</head>\n<body>\n";
  out << "<header class=\"top\"><h1>" << E(title) << "</h1><div class=\"sub\">" << E(ToolName(report));
  for (const occtrace::InputFile& file : report.diff().base_files()) out << " · before: " << E(file.path());
  for (const occtrace::InputFile& file : report.files()) {
    out << " · " << (report.has_diff() ? "after: " : "") << E(file.path());
  }
  out << "</div></header>\n<main>\n";
}

void PrintSummary(const occtrace::Report& report, std::ostream& out) {
  const occtrace::Summary& s = report.summary();
  out << "<section id=\"summary\">\n<div class=\"cards\">\n";
  const std::string busy = BusySpanText(s);
  Card(out, busy.empty() ? "GPU time" : "Summed kernel time", FormatDuration(s.total_gpu_ns()),
       FormatCount(s.launches()) + " launches · " + FormatCount(s.kernels()) + " kernels · " +
           FormatCount(s.groups()) + " configurations" + (busy.empty() ? "" : " · " + busy));
  Card(out, "Below 50% theoretical", FormatPct(s.time_below_50pct_theoretical_pct()),
       ShareOfWords(report) + " runs below 50% theoretical occupancy",
       s.time_below_50pct_theoretical_pct() >= 25 ? "bad" : "");
  Card(out, "Theoretical occupancy", FormatPct(s.weighted_theoretical_occupancy_pct()),
       "GPU-time weighted; from the occupancy model",
       OccupancyClass(s.weighted_theoretical_occupancy_pct()));
  if (AnyAchieved(report) && !TracedGpuForAchieved(report).empty()) {
    Card(out, "Achieved occupancy (traced GPU)", FormatPct(s.weighted_achieved_occupancy_pct()),
         "measured on the traced " + TracedGpuForAchieved(report) +
             ": not the what-if GPU's, not compared with its theoretical");
  } else if (AnyAchieved(report)) {
    Card(out, "Achieved occupancy (measured)", FormatPct(s.weighted_achieved_occupancy_pct()),
         "GPU-time weighted over measured configurations; hardware counters");
  } else {
    Card(out, "Achieved occupancy", "not measured", "no launch was measured with hardware counters");
  }
  RecoverableCard(s, out);
  if (const std::string tuning = TuningOverheadText(s); !tuning.empty()) {
    Card(out, "Tuning overhead", FormatDuration(s.tuning_overhead_ns()), tuning);
  }
  if (HasCrossRank(report)) {
    const occtrace::CrossRank& x = report.cross_rank();
    const bool straggler = HasStraggler(report);
    const bool different_programs = !x.different_programs().empty();
    Card(out, "Straggler",
         straggler            ? RankName(report, x.slowest_file_index())
         : different_programs ? "none named"
                              : "none",
         StragglerText(report), straggler || different_programs ? "warn" : "");
  }
  if (s.unjudged_groups() > 0) {
    Card(out, "Not judged", FormatCount(s.unjudged_groups()),
         FormatPct(UnjudgedTimePct(report)) + " " + ShareOfWords(report) + "; listed below", "warn");
  }
  out << "</div>\n</section>\n";
}

void PrintRun(const occtrace::Report& report, std::ostream& out) {
  out << "<section id=\"run\">\n<h2>Run</h2>\n<table class=\"kv\">\n";
  KvRow(out, "Tool", E(ToolName(report)));
  for (int i = 0; i < report.devices_size(); ++i) {
    const occtrace::Device& device = report.devices(i);
    std::string value = "<strong>" + E(DeviceTitle(device)) + "</strong><br><span class=\"muted\">" +
                        E(DeviceLimits(device)) + "</span>";
    const std::string provenance = DeviceProvenance(device);
    if (!provenance.empty()) value += "<br><span class=\"warn\">" + E(provenance) + "</span>";
    KvRow(out, report.devices_size() > 1 ? "GPU (" + DeviceTag(report, device) + ")" : "GPU", value);
  }
  for (int i = 0; i < report.files_size(); ++i) {
    const occtrace::InputFile& file = report.files(i);
    const std::string suffix = report.files_size() > 1 ? " " + std::to_string(i) : "";
    KvRow(out, "Input" + suffix, "<code>" + E(file.path()) + "</code> — " + E(FileFacts(file)));
    if (!file.command().empty()) KvRow(out, "Command" + suffix, "<code>" + E(file.command()) + "</code>");
    const std::string versions = FileVersions(file);
    if (!versions.empty()) KvRow(out, "Versions" + suffix, E(versions));
    KvRow(out, "Achieved occupancy" + suffix, E(AchievedModeText(file)));
  }
  if (report.summary().span_ns() > 0) KvRow(out, "Trace span", E(FormatDuration(report.summary().span_ns())));
  if (!report.what_if_gpu().empty()) {
    KvRow(out, "What-if GPU", "occupancy re-evaluated for <strong>" + E(report.what_if_gpu()) +
                                  "</strong> (times are those recorded on the traced GPU)");
  }
  out << "</table>\n</section>\n";
}

void PrintLimiters(const occtrace::Report& report, std::ostream& out) {
  const std::string svg = LimiterBarsSvg(report);
  if (svg.empty()) return;
  out << "<section id=\"limiters\">\n<h2>GPU time by limiting factor</h2>\n"
      << "<p class=\"muted\">What limits the theoretical occupancy of each configuration, weighted "
         "by its GPU time.</p>\n"
      << svg << "\n</section>\n";
}

void PrintTopTable(const occtrace::Report& report, std::ostream& out) {
  out << "<section id=\"top\">\n<h2>" << E(TopTitle(report));
  if (!report.sort().empty()) out << " <span class=\"muted\">(sorted by " << E(report.sort()) << ")</span>";
  out << "</h2>\n";
  if (report.groups_size() == 0) {
    out << "<p>No kernel launches in this report.</p>\n</section>\n";
    return;
  }
  out << "<p class=\"muted\">Click a column header to sort. Theoretical occupancy comes from the "
         "occupancy model; achieved occupancy is measured with hardware counters (– = not "
         "measured).";
  if (!report.what_if_gpu().empty()) {
    out << " Theoretical occupancy is the what-if GPU's; achieved occupancy was measured on the traced "
        << E(TracedGpuForAchieved(report)) << " and is not comparable with it.";
  }
  if (AnyPm(report)) out << ' ' << E(std::string(kPmWideTableLegend));
  out << "</p>\n";
  out << "<div class=\"scroll\"><table class=\"sortable\" id=\"top-table\">\n<thead><tr>"
         "<th class=\"num\">#</th><th>Kernel</th><th class=\"num\">Time (%)</th>"
         "<th class=\"num\">Total time</th><th class=\"num\">Launches</th><th class=\"num\">Grid</th>"
         "<th class=\"num\">Block</th><th class=\"num\">Reg/Trd</th>"
         "<th class=\"num\">Theoretical occupancy (%)</th>"
      << (report.what_if_gpu().empty() ? "<th class=\"num\">Achieved, measured (%)</th>"
                                       : "<th class=\"num\">Achieved, measured on the traced GPU (%)</th>")
      << "<th>Limiter</th>"
         "<th class=\"num\">Recoverable</th></tr></thead>\n<tbody>\n";
  for (const occtrace::KernelGroup& g : report.groups()) {
    out << "<tr>" << NumCell(std::to_string(g.rank()), g.rank()) << "<td class=\"name\"><a href=\"#k"
        << g.rank() << "\"><code>" << E(ShortenKernelName(g.name(), 70)) << "</code></a></td>"
        << NumCell(FormatFixed(g.time_pct(), 1), g.time_pct())
        << NumCell(FormatDuration(g.total_ns()), static_cast<double>(g.total_ns()))
        << NumCell(FormatCount(g.launches()), static_cast<double>(g.launches()))
        << NumCell(DimsText(g.grid_x(), g.grid_y(), g.grid_z()), static_cast<double>(GridBlocks(g)))
        << NumCell(DimsText(g.block_x(), g.block_y(), g.block_z()), static_cast<double>(BlockThreads(g)))
        << NumCell(std::to_string(g.registers_per_thread()), g.registers_per_thread());
    if (g.judged()) {
      out << PctCell(g.occupancy().theoretical_occupancy_pct());
    } else {
      out << "<td class=\"num\" data-v=\"-1\">not judged</td>";
    }
    if (AchievedSource(g) == "pm") {
      out << PctCell(g.achieved().mean_pct(), PmFigureNote(g));
    } else if (PmNoFigure(g)) {
      out << "<td class=\"num wrap\" data-v=\"-1\">" << E(AchievedWideCell(g)) << "</td>";
    } else if (HasAchieved(g)) {
      out << PctCell(g.achieved().mean_pct());
    } else {
      out << "<td class=\"num\" data-v=\"-1\">–</td>";
    }
    out << "<td>" << (g.judged() ? LimiterPill(g.limiting_factor()) : "–") << "</td>"
        << NumCell(g.judged() ? GroupRecoverableCell(g) : "–", static_cast<double>(g.counted_gain_ns()))
        << "</tr>\n";
  }
  out << "</tbody>\n</table></div>\n</section>\n";
}

void PrintActions(const occtrace::Report& report, std::ostream& out) {
  if (report.groups_size() == 0 && report.actions_size() == 0) return;
  out << "<section id=\"actions\">\n<h2>" << E(kActionsTitle) << "</h2>\n";
  if (report.actions_size() == 0) {
    out << "<p>" << E(kNoActions) << "</p>\n</section>\n";
    return;
  }
  out << "<ol>\n";
  for (const occtrace::Action& a : report.actions()) {
    out << "<li>";
    if (a.group_rank() > 0) out << "<a href=\"#k" << a.group_rank() << "\">#" << a.group_rank() << "</a> ";
    const std::string source = SourceText(a.source());
    out << "<code>" << E(ShortenKernelName(a.kernel(), 90)) << "</code>" << (source.empty() ? "" : " " + E(source))
        << " (" << E(a.origin()) << "): " << E(a.change())
        << "<br>Gain: " << E(ActionGainText(a, ShareOfWords(report))) << "; confidence " << E(a.confidence()) << "; evidence: "
        << E(a.evidence()) << "</li>\n";
  }
  out << "</ol>\n</section>\n";
}

// Actions below 1 % of GPU time each: counted in the summary, listed apart from "What to change".
void PrintMinorActions(const occtrace::Report& report, std::ostream& out) {
  if (report.minor_actions_size() == 0) return;
  out << "<section id=\"minor-actions\">\n<h2>" << E(MinorActionsTitle(report)) << "</h2>\n<ul>\n";
  for (const occtrace::Action& a : report.minor_actions()) {
    const std::string source = SourceText(a.source());
    out << "<li>" << E(ActionRef(a)) << "<code>" << E(ShortenKernelName(a.kernel(), 90)) << "</code>"
        << (source.empty() ? "" : " " + E(source)) << " ("
        << E(a.origin()) << "): " << E(a.change()) << " Gain: " << E(ActionGainText(a, ShareOfWords(report))) << ".</li>\n";
  }
  out << "</ul>\n</section>\n";
}

// The heading: short and full name, source, launch, time, owner and, with several GPUs, which.
void PrintKernelHeading(const occtrace::Report& report, const occtrace::KernelGroup& g, std::ostream& out) {
  out << "<article class=\"kernel\" id=\"k" << g.rank() << "\">\n<h3>#" << g.rank() << " <code>"
      << E(ShortenKernelName(g.name(), 90)) << "</code></h3>\n";
  out << "<details><summary>Full name</summary><div class=\"full mono\">" << E(g.name())
      << "</div></details>\n";
  if (const std::string source = SourceText(g.source()); !source.empty()) {
    out << "<div class=\"meta\">Source: " << E(source) << "</div>\n";
  }
  std::string meta = LaunchText(g) + " · " + TimeText(g, ShareOfWords(report));
  if (!g.origin().empty()) meta += " · " + OriginText(g);
  if (report.devices_size() > 1 && report.what_if_gpu().empty()) {
    if (const occtrace::Device* device = FindDevice(report, g)) meta += " · " + DeviceTitle(*device);
  }
  out << "<div class=\"meta\">" << E(meta) << "</div>\n";
  if (const std::string overlap = OverlapText(g); !overlap.empty()) {
    out << "<div class=\"meta\">Overlap: " << E(overlap) << "</div>\n";
  }
}

// The occupancy metrics beside the block-size curve, with its legend.
void PrintMetricsAndCurve(const occtrace::Report& report, const occtrace::KernelGroup& g, std::ostream& out) {
  out << "<div class=\"callout\"><strong>Limiter:</strong> " << E(LimiterLine(g)) << "</div>\n";
  out << "<div class=\"grid2\">\n<div>\n<table class=\"kv metrics\">\n<thead><tr><th>Metric</th>"
         "<th class=\"num\">Value</th></tr></thead>\n<tbody>\n";
  for (const Metric& metric : OccupancyMetrics(g)) {
    out << "<tr><th>" << E(metric.name) << "</th><td class=\"num\">" << E(metric.value) << "</td></tr>\n";
  }
  out << "</tbody>\n</table>\n</div>\n<div>\n";
  const std::string chart = OccupancyCurveSvg(g, !report.what_if_gpu().empty());
  if (chart.empty()) {
    out << "<p class=\"muted\">No occupancy curve for this configuration.</p>\n";
  } else {
    out << chart << "\n<div class=\"legend\">Theoretical occupancy by threads per block "
                    "(registers and shared memory per block as launched)"
        << "<i style=\"background:#e8590c\"></i>current: " << BlockThreads(g) << " threads, "
        << E(FormatPct(g.occupancy().theoretical_occupancy_pct()));
    for (const BlockSizeMark& m : BlockSizeMarks(g)) {
      out << "<i style=\"background:" << (m.suggested ? "#2b8a3e" : "#868e96") << "\"></i>" << E(m.label);
    }
    if (g.measured_points_size() > 0) {
      out << (report.what_if_gpu().empty()
                  ? "<i style=\"background:#9c36b5\"></i>measured in the trace: achieved occupancy "
                    "(when measured) and time per launch at each block shape"
                  : "<i style=\"background:#9c36b5\"></i>measured in the trace on the traced GPU: time per "
                    "launch at each block shape (on the axis: their achieved occupancy is not this GPU's)");
    }
    out << "</div>\n";
  }
  out << "</div>\n</div>\n";
}

// The configurations of the same function measured in the trace, the fastest marked.
void PrintMeasuredPoints(const occtrace::Report& report, const occtrace::KernelGroup& g, std::ostream& out) {
  const int fastest = FastestMeasuredPoint(g);
  out << "<p><strong>Measured in this trace</strong>, " << E(MeasuredWorkText(g)) << ":</p>\n"
      << "<table class=\"metrics\">\n<thead><tr><th>Block</th><th>Time per launch</th><th>Launches</th>"
      << (report.what_if_gpu().empty() ? "<th>Theoretical</th><th>Achieved</th>"
                                       : "<th>Theoretical (what-if GPU)</th><th>Achieved (traced GPU)</th>")
      << "<th></th></tr></thead>\n<tbody>\n";
  for (int i = 0; i < g.measured_points_size(); ++i) {
    const occtrace::MeasuredPoint& p = g.measured_points(i);
    const MeasuredPointCells cells = MeasuredCells(p);
    std::string note = p.current() ? "this configuration" : "";
    if (i == fastest) note += note.empty() ? "fastest" : ", fastest";
    out << "<tr><td>" << E(cells.block) << "</td><td class=\"num\">" << E(cells.time)
        << "</td><td class=\"num\">" << E(FormatCount(p.launches())) << "</td><td class=\"num\">"
        << E(cells.theoretical) << "</td><td class=\"num\">" << E(cells.achieved) << "</td><td>"
        << E(note) << "</td></tr>\n";
  }
  out << "</tbody>\n</table>\n";
}

// Waves, achieved against theoretical with what explains the gap, throughput and issues.
void PrintFindings(const occtrace::KernelGroup& g, std::ostream& out) {
  out << "<p><strong>Waves per SM:</strong> " << E(WavesText(g)) << "</p>\n";
  if (HasAchieved(g)) {
    out << (g.achieved().measured_on_gpu().empty() ? "<p><strong>Achieved vs theoretical:</strong> "
                                                   : "<p><strong>Achieved:</strong> ")
        << E(GapText(g)) << ".</p>\n";
    if (g.achieved().gap_explanations_size() > 0) {
      out << "<ul class=\"tight\">\n";
      for (const std::string& why : g.achieved().gap_explanations()) out << "<li>" << E(why) << "</li>\n";
      out << "</ul>\n";
    }
  }
  if (const std::string throughput = ThroughputText(g); !throughput.empty()) {
    out << "<p><strong>Throughput (measured):</strong> " << E(throughput) << "</p>\n";
  }
  if (g.issues_size() > 0) {
    out << "<p><strong>Issues</strong></p>\n<ul class=\"tight\">\n";
    for (const std::string& issue : g.issues()) out << "<li>" << E(issue) << "</li>\n";
    out << "</ul>\n";
  }
}

void PrintSuggestions(const occtrace::KernelGroup& g, std::ostream& out) {
  if (g.suggestions_size() == 0) {
    out << "<p><strong>Suggestions:</strong> none; " << E(NoSuggestionsReason(g)) << ".</p>\n";
  } else {
    out << "<p><strong>Suggestions</strong> <span class=\"muted\">(predictions are theoretical "
           "occupancy from the model)</span></p>\n<ol class=\"tight\">\n";
    for (const occtrace::Suggestion& s : g.suggestions()) {
      out << "<li>" << E(SuggestionLine(s));
      if (!s.assumptions().empty()) {
        out << "<br><span class=\"assume\">Assumes: " << E(s.assumptions()) << "</span>";
      }
      out << "</li>\n";
    }
    out << "</ol>\n";
  }
}

void PrintKernel(const occtrace::Report& report, const occtrace::KernelGroup& g, std::ostream& out) {
  PrintKernelHeading(report, g, out);
  if (!g.judged()) {
    out << "<div class=\"callout not\"><strong>Not judged:</strong> " << E(g.not_judged_reason())
        << "</div>\n</article>\n";
    return;
  }
  PrintMetricsAndCurve(report, g, out);
  if (g.measured_points_size() > 0) PrintMeasuredPoints(report, g, out);
  PrintFindings(g, out);
  PrintSuggestions(g, out);
  out << "<p><strong>Recoverable:</strong> " << E(GroupRecoverableText(g))
      << "</p>\n</article>\n";
}

void PrintUnjudged(const occtrace::Report& report, std::ostream& out) {
  if (report.unjudged_size() == 0) return;
  out << "<section id=\"unjudged\">\n<h2>Not judged</h2>\n<p>" << FormatCount(report.unjudged_size())
      << (report.unjudged_size() == 1 ? " configuration (" : " configurations (")
      << E(FormatPct(ListedUnjudgedTimePct(report)))
      << " of GPU time) could not be judged; they are listed, never dropped.</p>\n"
      << "<table class=\"sortable\" id=\"unjudged-table\">\n<thead><tr><th>Kernel</th>"
         "<th class=\"num\">Total time</th><th class=\"num\">Launches</th><th class=\"num\">Grid</th>"
         "<th class=\"num\">Block</th><th>Reason</th></tr></thead>\n<tbody>\n";
  for (const occtrace::KernelGroup& g : report.unjudged()) {
    out << "<tr><td class=\"name\"><code title=\"" << E(g.name()) << "\">"
        << E(ShortenKernelName(g.name(), 70)) << "</code></td>"
        << NumCell(FormatDuration(g.total_ns()), static_cast<double>(g.total_ns()))
        << NumCell(FormatCount(g.launches()), static_cast<double>(g.launches()))
        << NumCell(DimsText(g.grid_x(), g.grid_y(), g.grid_z()), static_cast<double>(GridBlocks(g)))
        << NumCell(DimsText(g.block_x(), g.block_y(), g.block_z()), static_cast<double>(BlockThreads(g)))
        << "<td>" << E(g.not_judged_reason().empty() ? "not given" : g.not_judged_reason())
        << "</td></tr>\n";
  }
  out << "</tbody>\n</table>\n</section>\n";
}

// --diff: the comparison alone, opening with the answer (see the text printer).
void PrintDiffReport(const occtrace::Report& report, std::ostream& out) {
  const occtrace::Diff& d = report.diff();
  const int64_t delta = d.total_ns_after() - d.total_ns_before();
  out << "<section id=\"diff-summary\">\n<h2>Did it work?</h2>\n<div class=\"cards\">\n";
  Card(out, "GPU time before → after", SignedDuration(delta), DiffTotalText(d),
       delta < 0 ? "good" : delta > 0 ? "bad" : "");
  Card(out, "Changed kernels", SignedDuration(d.changed_delta_ns()), DiffChangedText(d));
  Card(out, "Same configuration", SignedDuration(d.same_delta_ns()), DiffSameText(d));
  out << "</div>\n";
  for (const std::string& warning : d.warnings()) out << "<p class=\"warn\">Warning: " << E(warning) << "</p>\n";
  out << "</section>\n";

  out << "<section id=\"run\">\n<h2>Run</h2>\n<table class=\"kv\">\n";
  KvRow(out, "Tool", E(ToolName(report)));
  auto files = [&](const std::string& side, const auto& list) {
    for (int i = 0; i < list.size(); ++i) {
      const occtrace::InputFile& file = list.Get(i);
      KvRow(out, side, "<code>" + E(file.path()) + "</code> — " + E(FileFacts(file)));
      if (!file.command().empty()) KvRow(out, "Command " + side, "<code>" + E(file.command()) + "</code>");
    }
  };
  files("before", d.base_files());
  files("after", report.files());
  for (int i = 0; i < report.devices_size(); ++i) {
    const occtrace::Device& device = report.devices(i);
    KvRow(out, report.devices_size() > 1 ? "GPU after (" + DeviceTag(report, device) + ")" : "GPU after",
          E(DeviceTitle(device)));
  }
  out << "</table>\n</section>\n";

  out << "<section id=\"diff\">\n<h2>" << E(kDiffRowsTitle) << "</h2>\n<div class=\"scroll\"><table "
         "class=\"sortable\" id=\"diff-table\">\n<thead><tr><th>Kernel</th><th>Status</th>"
         "<th>Config before</th><th>Config after</th><th class=\"num\">Total time before</th>"
         "<th class=\"num\">Total time after</th><th class=\"num\">Change</th>"
         "<th class=\"num\">Change (%)</th><th class=\"num\">Theoretical before (%)</th>"
         "<th class=\"num\">Theoretical after (%)</th></tr></thead>\n<tbody>\n";
  for (const occtrace::DiffRow& r : d.rows()) {
    const bool before = DiffHasBefore(r);
    const bool after = DiffHasAfter(r);
    const int64_t change_ns = r.total_ns_after() - r.total_ns_before();
    const std::string change = DiffTimeChange(r);
    double change_key = 0;
    if (!change.empty()) {
      change_key = static_cast<double>(change_ns) / static_cast<double>(r.total_ns_before());
    }
    const char* tone = change_ns < 0 ? " good" : change_ns > 0 ? " bad" : "";
    out << "<tr><td class=\"name\"><code title=\"" << E(r.name()) << "\">"
        << E(ShortenKernelName(r.name(), 70)) << "</code></td><td>" << E(r.status()) << "</td><td>"
        << (before ? E(r.config_before()) : "–") << "</td><td>" << (after ? E(r.config_after()) : "–")
        << "</td>"
        << NumCell(before ? FormatDuration(r.total_ns_before()) : "–", static_cast<double>(r.total_ns_before()))
        << NumCell(after ? FormatDuration(r.total_ns_after()) : "–", static_cast<double>(r.total_ns_after()))
        << "<td class=\"num" << tone << "\" data-v=\"" << change_ns << "\">" << E(SignedDuration(change_ns))
        << "</td><td class=\"num" << tone << "\" data-v=\"" << FormatFixed(change_key, 6) << "\">"
        << (change.empty() ? "–" : E(change)) << "</td>"
        << NumCell(before ? FormatFixed(r.occupancy_before_pct(), 1) : "–", before ? r.occupancy_before_pct() : -1)
        << NumCell(after ? FormatFixed(r.occupancy_after_pct(), 1) : "–", after ? r.occupancy_after_pct() : -1)
        << "</tr>\n";
  }
  out << "</tbody>\n</table></div>\n<p class=\"muted\">Theoretical occupancy (model) is GPU-time weighted "
         "over the kernel's configurations; the configuration shown is its largest by GPU time.</p>\n"
         "</section>\n";

  bool any_warning = false;
  for (const auto* list : {&d.base_files(), &report.files()}) {
    for (const occtrace::InputFile& file : *list) any_warning = any_warning || file.warnings_size() > 0;
  }
  if (report.notes_size() == 0 && !any_warning) return;
  out << "<section id=\"notes\">\n<h2>Notes</h2>\n<ul class=\"tight\">\n";
  for (const std::string& note : report.notes()) out << "<li>" << E(note) << "</li>\n";
  for (const auto* list : {&d.base_files(), &report.files()}) {
    for (const occtrace::InputFile& file : *list) {
      for (const std::string& warning : file.warnings()) {
        out << "<li class=\"warn\">Warning (<code>" << E(file.path()) << "</code>): " << E(warning) << "</li>\n";
      }
    }
  }
  out << "</ul>\n</section>\n";
}

void PrintNotes(const occtrace::Report& report, std::ostream& out) {
  out << "<section id=\"notes\">\n<h2>Notes</h2>\n<ul class=\"tight\">\n";
  for (const std::string& note : report.notes()) out << "<li>" << E(note) << "</li>\n";
  for (int i = 0; i < report.files_size(); ++i) {
    for (const std::string& warning : report.files(i).warnings()) {
      out << "<li class=\"warn\">Warning" << (report.files_size() > 1 ? " (input " + std::to_string(i) + ")" : "")
          << ": " << E(warning) << "</li>\n";
    }
  }
  out << "<li>" << E(kTheoreticalMeaning) << "</li>\n<li>" << E(kAchievedMeaning) << "</li>\n";
  if (!NotesCoverRecoverable(report)) out << "<li>" << E(kRecoverableMeaning) << "</li>\n";
  out << "</ul>\n</section>\n";
}


// The per-rank totals (sortable), the straggler's row marked.
void PrintRankTable(const occtrace::Report& report, std::ostream& out) {
  const occtrace::CrossRank& x = report.cross_rank();
  const bool straggler = HasStraggler(report);
  out << "<div class=\"scroll\"><table class=\"sortable\" id=\"rank-table\">\n<thead><tr>"
         "<th>Rank</th><th class=\"num\">GPU time</th><th class=\"num\">Compute</th>"
         "<th class=\"num\">NCCL</th><th class=\"num\">Launches</th><th>File</th><th>Host</th>"
         "</tr></thead>\n<tbody>\n";
  for (const occtrace::RankSummary& r : x.ranks()) {
    const occtrace::InputFile& file = report.files(r.file_index());
    const bool slow = straggler && r.file_index() == x.slowest_file_index();
    out << "<tr" << (slow ? " class=\"warn\"" : "") << "><td>" << E(r.label()) << "</td>"
        << NumCell(FormatDuration(r.total_gpu_ns()), static_cast<double>(r.total_gpu_ns()))
        << NumCell(FormatDuration(r.compute_gpu_ns()), static_cast<double>(r.compute_gpu_ns()))
        << NumCell(CommunicationCell(report, r.communication_gpu_ns()),
                   static_cast<double>(r.communication_gpu_ns()))
        << NumCell(FormatCount(r.launches()), static_cast<double>(r.launches())) << "<td><code>"
        << E(file.path()) << "</code></td><td>" << E(file.host()) << "</td></tr>\n";
  }
  out << "</tbody>\n</table></div>\n<p class=\"muted\">"
      << E(AnyCommunication(report) ? std::string(kCommunicationMeaning)
                                    : "Compute = GPU time outside NCCL kernels (none ran).")
      << "</p>\n";
}

// The top configurations by GPU time, each with its spread across ranks.
void PrintCrossRankKernels(const occtrace::Report& report, std::ostream& out) {
  const occtrace::CrossRank& x = report.cross_rank();
  out << "<h3>" << E(kCrossRankKernelsTitle) << "</h3>\n<div class=\"scroll\"><table>\n<thead><tr>"
         "<th></th><th>Kernel</th><th>Launch</th><th>Across ranks</th></tr></thead>\n<tbody>\n";
  for (int i = 0; i < x.kernels_size(); ++i) {
    const occtrace::RankKernel& k = x.kernels(i);
    const occtrace::RankSpread& spread = k.spread();
    const bool slow = SpreadStraggles(report, spread);
    out << "<tr><td>" << E(CrossRankKernelTag(i)) << "</td><td class=\"name\">";
    if (k.group_rank() > 0) {
      out << "<a href=\"#k" << k.group_rank() << "\">#" << k.group_rank() << "</a> ";
    }
    out << "<code>" << E(ShortenKernelName(k.name(), 70)) << "</code>";
    if (!k.owner_library().empty()) out << " <span class=\"muted\">(" << E(k.owner_library()) << ")</span>";
    out << "</td><td>" << E(k.launch()) << "</td><td" << (slow ? " class=\"warn\"" : "") << ">"
        << E(SpreadText(report, spread)) << "</td></tr>\n";
  }
  out << "</tbody>\n</table></div>\n";
}

// Ranks as rows, the top configurations as columns (sortable by any), each rank's slowest marked.
void PrintRankKernelTable(const occtrace::CrossRank& x, std::ostream& out) {
  out << "<div class=\"scroll\"><table class=\"sortable\" "
         "id=\"rank-kernel-table\">\n<thead><tr><th>Rank</th>";
  for (int i = 0; i < x.kernels_size(); ++i) out << "<th class=\"num\">" << E(CrossRankKernelTag(i)) << "</th>";
  out << "</tr></thead>\n<tbody>\n";
  for (const occtrace::RankSummary& r : x.ranks()) {
    out << "<tr><td>" << E(r.label()) << "</td>";
    for (const occtrace::RankKernel& k : x.kernels()) {
      const occtrace::RankFigures* f = FindRankFigures(k.spread(), r.file_index());
      if (f == nullptr) {
        out << "<td class=\"num\" data-v=\"-1\">–</td>";
        continue;
      }
      const bool slowest = k.spread().ran_on() >= 2 && f->file_index() == k.spread().slowest_file_index();
      out << "<td class=\"num" << (slowest ? " warn" : "") << "\" data-v=\""
          << FormatFixed(static_cast<double>(f->total_ns()), 3) << "\">" << E(RankCellText(*f)) << "</td>";
    }
    out << "</tr>\n";
  }
  out << "</tbody>\n</table></div>\n";
}

void PrintRankOnlyConfigs(const occtrace::Report& report, std::ostream& out) {
  const occtrace::CrossRank& x = report.cross_rank();
  out << "<h3>" << E(kRankOnlyTitle) << " (" << E(FormatCount(x.rank_only_configs_total()))
      << ")</h3>\n<ul>\n";
  for (const occtrace::RankOnlyConfig& c : x.rank_only_configs()) {
    out << "<li>";
    if (c.group_rank() > 0) out << "<a href=\"#k" << c.group_rank() << "\">#" << c.group_rank() << "</a> ";
    out << "<code>" << E(ShortenKernelName(c.name(), 70)) << "</code>, " << E(c.launch()) << ", "
        << E(RankOnlyText(report, c)) << "</li>\n";
  }
  if (x.rank_only_configs_total() > x.rank_only_configs_size()) {
    out << "<li class=\"muted\">and "
        << E(FormatCount(x.rank_only_configs_total() - x.rank_only_configs_size()))
        << " more (JSON: each group's rank_spread)</li>\n";
  }
  out << "</ul>\n";
}

// Several input files: per-rank totals (sortable), the straggler, the top configurations and a
// rank × configuration table (ranks as rows, sortable by any configuration), and the
// configurations some ranks did not run.
void PrintCrossRank(const occtrace::Report& report, std::ostream& out) {
  if (!HasCrossRank(report)) return;
  const occtrace::CrossRank& x = report.cross_rank();
  out << "<section id=\"ranks\">\n<h2>" << E(CrossRankTitle(report)) << "</h2>\n<table class=\"kv\">\n";
  KvRow(out, "Ranks", E(RankIdentityText(report)));
  // The straggler and its cause are in the summary's cards, which open the report.
  out << "</table>\n";
  PrintRankTable(report, out);
  if (x.kernels_size() > 0) {
    PrintCrossRankKernels(report, out);
    PrintRankKernelTable(x, out);
  }
  if (x.rank_only_configs_size() > 0) PrintRankOnlyConfigs(report, out);
  for (const std::string& warning : x.warnings()) {
    out << "<p class=\"warn\">Warning: " << E(warning) << "</p>\n";
  }
  out << "</section>\n";
}

// The report's sections, in reading order.
void PrintBody(const occtrace::Report& report, std::ostream& out) {
  PrintActions(report, out);
  PrintSummary(report, out);
  PrintRun(report, out);
  PrintLimiters(report, out);
  PrintTopTable(report, out);
  PrintCrossRank(report, out);
  if (report.groups_size() > 0) out << "<section id=\"kernels\">\n<h2>Top kernels in detail</h2>\n";
  for (const occtrace::KernelGroup& g : report.groups()) PrintKernel(report, g, out);
  if (report.groups_size() > 0) out << "</section>\n";
  PrintMinorActions(report, out);
  PrintUnjudged(report, out);
  PrintNotes(report, out);
}

}  // namespace

void HtmlPrinter::DoPrint(const occtrace::Report& report, const PrintOptions&, std::ostream& out) {
  PrintHead(report, out);
  if (report.has_diff()) {
    PrintDiffReport(report, out);
  } else {
    PrintBody(report, out);
  }
  out << "</main>\n<footer>Generated by " << E(ToolName(report));
  if (!report.generated_for().empty()) out << " · <code>" << E(report.generated_for()) << "</code>";
  out << " · self-contained: no network requests.</footer>\n<script>" << kScript
      << "</script>\n</body>\n</html>\n";
}

}  // namespace occ::reports
