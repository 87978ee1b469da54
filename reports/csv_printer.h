// One RFC 4180 row per kernel configuration (top groups, then unjudged ones), nsys/nvprof-style
// column names plus Nsight Compute occupancy columns; CRLF line ends, header row first.
#pragma once

#include "reports/printer.h"

namespace occ::reports {

class CsvPrinter final : public Printer {
 protected:
  void DoPrint(const occtrace::Report& report, const PrintOptions& options,
               std::ostream& out) override;
};

}  // namespace occ::reports
