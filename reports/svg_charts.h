// Inline SVG charts for the HTML report, drawn by us (no charting library, no network): every
// label passes through HtmlEscape, sizes are fixed in user units and scale with the viewBox.
#pragma once

#include <string>
#include <string_view>

#include "schema/report.pb.h"

namespace occ::reports {

// Theoretical occupancy vs threads per block (the group's `curve`), with the current block
// size and every suggested block size marked. Empty when the group has no curve. `what_if`: the
// curve is another GPU's than the one the measured points ran on, so they sit on the axis (their
// achieved occupancy in the tooltip, never on that curve).
std::string OccupancyCurveSvg(const occtrace::KernelGroup& group, bool what_if = false);

// Horizontal bars: share of GPU time per limiting factor (report.time_by_limiter). Empty when
// the report has none.
std::string LimiterBarsSvg(const occtrace::Report& report);

// The color the report uses for a limiter ("registers", "shared_memory", ...), as "#rrggbb".
std::string_view LimiterColor(std::string_view limiter);

}  // namespace occ::reports
