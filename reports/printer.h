// Report printers: one class per output format over the analyzer's Report message
// (schema/report.proto). Non-virtual public API over a protected hook, as in NVBench.
#pragma once

#include <iosfwd>
#include <memory>
#include <string>

namespace occtrace {
class Report;
}

namespace occ {

struct PrintOptions {
  bool color = false;  // ANSI colors (text only, and only on a terminal)
  int width = 100;     // text report width
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

}  // namespace occ
