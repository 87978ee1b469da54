// One self-contained HTML file (no network requests): summary cards, a sortable table, SVG
// charts (occupancy vs block size per kernel, GPU time by limiter). Everything escaped.
#pragma once

#include "reports/printer.h"

namespace occ::reports {

class HtmlPrinter final : public Printer {
 protected:
  void DoPrint(const occtrace::Report& report, const PrintOptions& options,
               std::ostream& out) override;
};

}  // namespace occ::reports
