// The Protobuf JSON mapping of occtrace.Report with the proto field names (snake_case) and
// every field printed, zeros included: the machine-readable contract (schema/report.proto).
#pragma once

#include "reports/printer.h"

namespace occ::reports {

class JsonPrinter final : public Printer {
 protected:
  void DoPrint(const occtrace::Report& report, const PrintOptions& options,
               std::ostream& out) override;
};

}  // namespace occ::reports
