// GitHub-flavored Markdown for issues, PRs and Jira: a summary, the top table, then one section
// per top kernel with Nsight Compute-style `| Metric | Value |` figures. No raw HTML.
#pragma once

#include "reports/printer.h"

namespace occ::reports {

class MarkdownPrinter final : public Printer {
 protected:
  void DoPrint(const occtrace::Report& report, const PrintOptions& options,
               std::ostream& out) override;
};

}  // namespace occ::reports
