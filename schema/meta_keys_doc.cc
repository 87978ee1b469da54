#include "schema/meta_keys_doc.h"

#include <array>
#include <utility>

#include "schema/meta_keys.h"

namespace occ::meta {
namespace {

std::string_view UnitName(Unit unit) {
  switch (unit) {
    case kText: return "text";
    case kInteger: return "integer";
    case kCount: return "count";
    case kFlag: return "0/1";
    case kNs: return "ns";
    case kUs: return "µs";
    case kMs: return "ms";
    case kSeconds: return "s";
    case kBytes: return "bytes";
    case kPercent: return "%";
    case kShare: return "share of 1";
    case kMsSpread: return "count, median ms, max ms";
  }
  return "?";
}

// The writers' names as the docs show them, in bit order.
constexpr std::array<std::pair<Writer, std::string_view>, 7> kWriterNames = {{
    {kWriter, "writer"},
    {kSession, "session"},
    {kTracer, "tracer"},
    {kLight, "light"},
    {kPm, "pm"},
    {kReplay, "replay"},
    {kTorchImport, "torch import"},
}};

std::string WriterNames(uint16_t writers) {
  std::string names;
  for (const auto& [bit, name] : kWriterNames) {
    if ((writers & bit) == 0) continue;
    if (!names.empty()) names += ", ";
    names += name;
  }
  return names;
}

std::string Row(const MetaKey& key, bool with_writers) {
  std::string row = "| `" + std::string(key.name) + "` | " + std::string(UnitName(key.unit)) + " | ";
  if (with_writers) row += WriterNames(key.writers) + " | ";
  return row + std::string(key.description) + " |\n";
}

}  // namespace

std::string MetaKeysMarkdown() {
  std::string text =
      "Written by: the injector's folder that writes the row — `writer`, `session`, `tracer`, `light` "
      "(`injector/<name>/`), `pm`, `replay` (`injector/achieved/<name>/`) — or `torch import` (occ-report "
      "reading a torch.profiler trace, which it converts to this schema). `{n}` in a name stands for a "
      "number.\n\n"
      "| name | unit | written by | value |\n"
      "| --- | --- | --- | --- |\n";
  for (const MetaKey& key : kMetaKeys) {
    if (key.writers != kRetired) text += Row(key, true);
  }
  text +=
      "\nWritten only by occtrace before 2026-11-28 (kernel replay's re-attach after sampling, quiet "
      "parking, CUPTI buffer settings, all since deleted); older traces still hold them:\n\n"
      "| name | unit | value |\n"
      "| --- | --- | --- |\n";
  for (const MetaKey& key : kMetaKeys) {
    if (key.writers == kRetired) text += Row(key, false);
  }
  return text;
}

std::optional<std::string_view> GeneratedPart(std::string_view doc) {
  const size_t begin = doc.find(kGeneratedBegin);
  if (begin == std::string_view::npos) return std::nullopt;
  const size_t from = begin + kGeneratedBegin.size();
  const size_t end = doc.find(kGeneratedEnd, from);
  if (end == std::string_view::npos) return std::nullopt;
  return doc.substr(from, end - from);
}

std::optional<std::string> WithGeneratedMetaKeys(std::string_view doc) {
  const std::optional<std::string_view> part = GeneratedPart(doc);
  if (!part) return std::nullopt;
  const size_t from = static_cast<size_t>(part->data() - doc.data());
  return std::string(doc.substr(0, from)) + MetaKeysMarkdown() + std::string(doc.substr(from + part->size()));
}

}  // namespace occ::meta
