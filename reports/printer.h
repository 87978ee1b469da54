// Report printers: one class per output format over the analyzer's Report message
// (schema/report.proto). Non-virtual public API over a protected hook, as in NVBench: Print()
// is the one place that could add behaviour common to every format, DoPrint() renders.
// Printers never fail: every string from the trace is sanitized and escaped for the output
// language, and a sparse Report (no devices, no groups) still prints a complete report.
#pragma once

#include <iosfwd>
#include <memory>
#include <string>
#include <vector>

namespace occtrace {
class Report;
}

namespace occ {

struct PrintOptions {
  bool color = false;  // ANSI colors (text only; the caller sets it only on a terminal)
  int width = 100;     // text report width in columns (at least 80 is used)
};

class Printer {
 public:
  virtual ~Printer() = default;
  void Print(const occtrace::Report& report, const PrintOptions& options, std::ostream& out) {
    DoPrint(report, options, out);
  }

 protected:
  virtual void DoPrint(const occtrace::Report& report, const PrintOptions& options,
                       std::ostream& out) = 0;
};

// "text", "markdown", "html", "json", "csv"; nullptr for an unknown name.
std::unique_ptr<Printer> MakePrinter(const std::string& format);
// The names MakePrinter accepts, in the order above (for --help and error messages).
const std::vector<std::string>& PrinterFormats();
// The usual file extension for a format ("txt", "md", "html", "json", "csv"), or "" if unknown.
std::string PrinterFileExtension(const std::string& format);

}  // namespace occ
