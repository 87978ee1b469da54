#include "reports/printer.h"

#include "reports/csv_printer.h"
#include "reports/html_printer.h"
#include "reports/json_printer.h"
#include "reports/markdown_printer.h"
#include "reports/text_printer.h"

namespace occ {

std::unique_ptr<Printer> MakePrinter(const std::string& format) {
  if (format == "text") return std::make_unique<reports::TextPrinter>();
  if (format == "markdown") return std::make_unique<reports::MarkdownPrinter>();
  if (format == "html") return std::make_unique<reports::HtmlPrinter>();
  if (format == "json") return std::make_unique<reports::JsonPrinter>();
  if (format == "csv") return std::make_unique<reports::CsvPrinter>();
  return nullptr;
}

const std::vector<std::string>& PrinterFormats() {
  static const std::vector<std::string> kFormats = {"text", "markdown", "html", "json", "csv"};
  return kFormats;
}

std::string PrinterFileExtension(const std::string& format) {
  if (format == "text") return "txt";
  if (format == "markdown") return "md";
  if (format == "html" || format == "json" || format == "csv") return format;
  return "";
}

}  // namespace occ
