// Plain-text report for terminals: aligned, fits PrintOptions.width (100) columns, long C++
// names shortened (full names are in the other formats), ANSI color only when options.color.
#pragma once

#include "reports/printer.h"

namespace occ::reports {

class TextPrinter final : public Printer {
 protected:
  void DoPrint(const occtrace::Report& report, const PrintOptions& options,
               std::ostream& out) override;
};

}  // namespace occ::reports
