// Report fixtures for the printer tests: textproto files under testdata/, parsed at run time.
#pragma once

#include <string>

#include "schema/report.pb.h"

namespace occ::reports::testing {

// Parses testdata/<name> (a text-format occtrace.Report); fails the calling test on error.
occtrace::Report LoadReport(const std::string& name);
// Parses a text-format Report given inline; fails the calling test on error.
occtrace::Report ParseReport(const std::string& textproto);
// Renders `report` with the printer for `format`.
std::string Render(const std::string& format, const occtrace::Report& report, bool color = false,
                   int width = 100);

}  // namespace occ::reports::testing
