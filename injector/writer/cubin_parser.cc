#include "injector/writer/cubin_parser.h"

#include <cstring>
#include <optional>
#include <string_view>
#include <unordered_map>

namespace occ::inj {
namespace {

// ELF64 constants (elf.h names) and NVIDIA's .nv.info encoding, as cuobjdump -elf prints it.
constexpr uint16_t kEmCuda = 190;
constexpr uint32_t kShtSymtab = 2;
constexpr uint32_t kShtNobits = 8;
constexpr uint64_t kShfCompressed = 0x800;
constexpr size_t kEhdrSize = 64;
constexpr size_t kShdrSize = 64;
constexpr size_t kSymSize = 24;
// .nv.info entry: format byte, attribute byte, then 2 bytes (value or payload size).
constexpr uint8_t kEifmtBval = 2;
constexpr uint8_t kEifmtHval = 3;
constexpr uint8_t kEifmtSval = 4;
constexpr uint8_t kEiattrMaxThreads = 0x05;    // per function: x, y, z (u32 each)
constexpr uint8_t kEiattrFrameSize = 0x11;     // global: symbol index, bytes
constexpr uint8_t kEiattrMinStackSize = 0x12;  // global: symbol index, bytes
constexpr uint8_t kEiattrMaxStackSize = 0x23;  // global: symbol index, bytes
constexpr uint8_t kEiattrRegcount = 0x2f;      // global: symbol index, registers
constexpr uint8_t kEiattrNumBarriers = 0x4c;   // per function (BVAL): ptxas "used N barriers"
// Older cubins: the barrier count lives in .text.<fn> sh_flags bits 20-26 (SHF_BARRIERS).
constexpr int kShfBarriersShift = 20;
constexpr uint64_t kShfBarriersMask = 0x7f;

class Bytes {
 public:
  Bytes(const uint8_t* data, size_t size) : data_(data), size_(size) {}
  bool Has(uint64_t offset, uint64_t length) const {
    return offset <= size_ && length <= size_ - offset;
  }
  template <typename T>
  std::optional<T> Read(uint64_t offset) const {
    if (!Has(offset, sizeof(T))) return std::nullopt;
    T value;
    std::memcpy(&value, data_ + offset, sizeof(T));
    return value;
  }
  const uint8_t* At(uint64_t offset) const { return data_ + offset; }

 private:
  const uint8_t* data_;
  size_t size_;
};

struct Section {
  uint32_t name = 0;
  uint32_t type = 0;
  uint64_t flags = 0;
  uint64_t offset = 0;
  uint64_t size = 0;
  uint32_t link = 0;
  std::string_view name_text;
  bool readable = false;  // contents within the image and not compressed
};

// A NUL-terminated name inside a string table section, or empty if it runs out of bounds.
std::string_view NameAt(const Bytes& bytes, const Section& table, uint64_t index) {
  if (!table.readable || index >= table.size) return {};
  const auto* start = reinterpret_cast<const char*>(bytes.At(table.offset + index));
  const void* end = std::memchr(start, '\0', static_cast<size_t>(table.size - index));
  if (end == nullptr) return {};
  return std::string_view(start, static_cast<size_t>(static_cast<const char*>(end) - start));
}

// Calls visit(attribute, format, payload, payload_size) for every entry; stops at the first
// entry that would run past the section.
template <typename Visit>
void ForEachAttribute(const Bytes& bytes, const Section& section, Visit visit) {
  if (!section.readable) return;
  uint64_t pos = 0;
  while (pos + 4 <= section.size) {
    const uint64_t at = section.offset + pos;
    const uint8_t format = *bytes.At(at);
    const uint8_t attribute = *bytes.At(at + 1);
    uint16_t half = 0;
    std::memcpy(&half, bytes.At(at + 2), sizeof(half));
    if (format == kEifmtSval) {
      if (pos + 4 + half > section.size) return;
      visit(attribute, format, bytes.At(at + 4), static_cast<size_t>(half));
      pos += 4 + uint64_t{half};
    } else {
      visit(attribute, format, bytes.At(at + 2), size_t{2});
      pos += 4;
    }
  }
}

uint32_t LoadU32(const uint8_t* p) {
  uint32_t value = 0;
  std::memcpy(&value, p, sizeof(value));
  return value;
}

// The section headers, names resolved. Empty when the section name table is unreadable.
std::vector<Section> ReadSections(const Bytes& bytes, uint64_t shoff, uint16_t shnum, uint16_t shstrndx) {
  std::vector<Section> sections(shnum);
  for (uint16_t i = 0; i < shnum; ++i) {
    const uint64_t at = shoff + uint64_t{i} * kShdrSize;
    Section& s = sections[i];
    s.name = *bytes.Read<uint32_t>(at);
    s.type = *bytes.Read<uint32_t>(at + 4);
    s.flags = *bytes.Read<uint64_t>(at + 8);
    s.offset = *bytes.Read<uint64_t>(at + 24);
    s.size = *bytes.Read<uint64_t>(at + 32);
    s.link = *bytes.Read<uint32_t>(at + 40);
    s.readable = s.type != kShtNobits && (s.flags & kShfCompressed) == 0 && bytes.Has(s.offset, s.size);
  }
  if (!sections[shstrndx].readable) return {};
  for (Section& s : sections) s.name_text = NameAt(bytes, sections[shstrndx], s.name);
  return sections;
}

// Symbol index -> name (the global .nv.info keys its per-function entries by symbol).
std::unordered_map<uint32_t, std::string_view> SymbolNames(const Bytes& bytes, const std::vector<Section>& sections) {
  std::unordered_map<uint32_t, std::string_view> symbol_names;
  for (const Section& s : sections) {
    if (s.type != kShtSymtab || !s.readable || s.link >= sections.size()) continue;
    const Section& strings = sections[s.link];
    const uint64_t count = s.size / kSymSize;
    for (uint64_t k = 0; k < count && k <= UINT32_MAX; ++k) {
      const uint32_t name_index = *bytes.Read<uint32_t>(s.offset + k * kSymSize);
      std::string_view name = NameAt(bytes, strings, name_index);
      if (!name.empty()) symbol_names.emplace(static_cast<uint32_t>(k), name);
    }
    break;
  }
  return symbol_names;
}

constexpr std::string_view kText = ".text.";
constexpr std::string_view kInfo = ".nv.info.";

// The global .nv.info section's per-function entries: registers, frame and stack sizes.
template <typename Find>
void ReadGlobalInfo(const Bytes& bytes, const Section& s,
                    const std::unordered_map<uint32_t, std::string_view>& symbol_names, Find find) {
  ForEachAttribute(bytes, s, [&](uint8_t attribute, uint8_t format, const uint8_t* payload, size_t length) {
    if (format != kEifmtSval || length < 8) return;
    auto symbol = symbol_names.find(LoadU32(payload));
    if (symbol == symbol_names.end()) return;
    CubinFunction* function = find(symbol->second);
    if (function == nullptr) return;
    const int64_t value = LoadU32(payload + 4);
    switch (attribute) {
      case kEiattrRegcount: function->registers = value; break;
      case kEiattrFrameSize: function->frame_size = value; break;
      case kEiattrMinStackSize: function->min_stack_size = value; break;
      case kEiattrMaxStackSize: function->max_stack_size = value; break;
      default: break;
    }
  });
}

// A function's own .nv.info.NAME section: named barriers and launch bounds.
void ReadFunctionInfo(const Bytes& bytes, const Section& s, CubinFunction* function) {
  ForEachAttribute(bytes, s, [&](uint8_t attribute, uint8_t format, const uint8_t* payload, size_t length) {
    if (attribute == kEiattrNumBarriers && (format == kEifmtBval || format == kEifmtHval)) {
      function->barrier_count = format == kEifmtBval ? payload[0] : (payload[0] | (payload[1] << 8));
    } else if (attribute == kEiattrMaxThreads && format == kEifmtSval && length >= 12) {
      const int64_t x = LoadU32(payload), y = LoadU32(payload + 4), z = LoadU32(payload + 8);
      // Block dimensions are at most 1024; larger values mean a corrupt entry (and could
      // overflow the product).
      constexpr int64_t kMaxDimension = 1 << 16;
      if (x <= kMaxDimension && y <= kMaxDimension && z <= kMaxDimension) {
        function->max_threads_per_block = x * y * z;
      }
    }
  });
}

}  // namespace

CubinParseResult ParseCubin(const uint8_t* data, size_t size) {
  CubinParseResult result;
  auto fail = [&result](const char* why) {
    result.ok = false;
    result.error = why;
    result.functions.clear();
    return result;
  };
  if (data == nullptr) return fail("no image");
  const Bytes bytes(data, size);
  if (size < kEhdrSize || std::memcmp(data, "\x7f" "ELF", 4) != 0) return fail("not an ELF image");
  if (data[4] != 2 || data[5] != 1) return fail("not a little-endian ELF64 image");
  if (bytes.Read<uint16_t>(18).value_or(0) != kEmCuda) return fail("not a CUDA ELF image (e_machine)");
  const uint64_t shoff = bytes.Read<uint64_t>(0x28).value_or(0);
  const uint16_t shentsize = bytes.Read<uint16_t>(0x3a).value_or(0);
  const uint16_t shnum = bytes.Read<uint16_t>(0x3c).value_or(0);
  const uint16_t shstrndx = bytes.Read<uint16_t>(0x3e).value_or(0);
  if (shnum == 0 || shentsize != kShdrSize) return fail("no usable section header table");
  if (!bytes.Has(shoff, uint64_t{shnum} * kShdrSize)) return fail("truncated section header table");
  if (shstrndx >= shnum) return fail("bad section name table index");

  const std::vector<Section> sections = ReadSections(bytes, shoff, shnum, shstrndx);
  if (sections.empty()) return fail("section name table out of bounds");
  const std::unordered_map<uint32_t, std::string_view> symbol_names = SymbolNames(bytes, sections);

  std::unordered_map<std::string_view, size_t> by_name;
  for (const Section& s : sections) {
    if (s.name_text.size() <= kText.size() || s.name_text.substr(0, kText.size()) != kText) continue;
    CubinFunction function;
    function.mangled_name = std::string(s.name_text.substr(kText.size()));
    const uint64_t flag_barriers = (s.flags >> kShfBarriersShift) & kShfBarriersMask;
    function.barrier_count = static_cast<int64_t>(flag_barriers);
    by_name.emplace(s.name_text.substr(kText.size()), result.functions.size());
    result.functions.push_back(std::move(function));
  }
  auto find = [&](std::string_view name) -> CubinFunction* {
    auto it = by_name.find(name);
    return it == by_name.end() ? nullptr : &result.functions[it->second];
  };

  for (const Section& s : sections) {
    if (s.name_text == ".nv.info") {
      ReadGlobalInfo(bytes, s, symbol_names, find);
    } else if (s.name_text.size() > kInfo.size() && s.name_text.substr(0, kInfo.size()) == kInfo) {
      if (CubinFunction* function = find(s.name_text.substr(kInfo.size()))) ReadFunctionInfo(bytes, s, function);
    }
  }
  result.ok = true;
  return result;
}

}  // namespace occ::inj
