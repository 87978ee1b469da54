#include "reports/printer.h"

namespace occ {
// Placeholder until the printers land; replaced by the reports owner.
std::unique_ptr<Printer> MakePrinter(const std::string&) { return nullptr; }
}  // namespace occ
