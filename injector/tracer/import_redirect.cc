#include "injector/tracer/import_redirect.h"

#include <elf.h>
#include <link.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>

namespace occ::inj {
namespace {

#if defined(__x86_64__)
constexpr uint32_t kJumpSlot = R_X86_64_JUMP_SLOT;
constexpr uint32_t kGlobDat = R_X86_64_GLOB_DAT;
constexpr bool kSupported = true;
#elif defined(__aarch64__)
constexpr uint32_t kJumpSlot = R_AARCH64_JUMP_SLOT;
constexpr uint32_t kGlobDat = R_AARCH64_GLOB_DAT;
constexpr bool kSupported = true;
#else
constexpr uint32_t kJumpSlot = ~0u;
constexpr uint32_t kGlobDat = ~0u;
constexpr bool kSupported = false;
#endif

struct Mapping {
  uintptr_t begin = 0;
  uintptr_t end = 0;
  int prot = 0;
};

// The protection each page really has. Computing it from PT_GNU_RELRO would have to repeat the
// dynamic loader's rounding; restoring a wrong protection (read-only on a page the program
// writes) would crash the program later, so ask the kernel.
std::vector<Mapping> ReadMappings() {
  std::vector<Mapping> mappings;
  FILE* maps = std::fopen("/proc/self/maps", "re");
  if (maps == nullptr) return mappings;
  char line[512];
  while (std::fgets(line, sizeof(line), maps) != nullptr) {
    unsigned long begin = 0, end = 0;
    char perms[5] = {};
    if (std::sscanf(line, "%lx-%lx %4s", &begin, &end, perms) != 3) continue;
    Mapping m{begin, end, 0};
    if (perms[0] == 'r') m.prot |= PROT_READ;
    if (perms[1] == 'w') m.prot |= PROT_WRITE;
    if (perms[2] == 'x') m.prot |= PROT_EXEC;
    mappings.push_back(m);
  }
  std::fclose(maps);
  return mappings;
}

// The mappings and the page size, for a scan that may open read-only pages for one store.
// False when /proc/self/maps cannot be read: nothing is rewritten then.
bool ReadProtections(std::vector<Mapping>* mappings, uintptr_t* page_size) {
  *mappings = ReadMappings();
  const long size = sysconf(_SC_PAGESIZE);
  if (size > 0) *page_size = static_cast<uintptr_t>(size);
  return !mappings->empty();
}

const Mapping* FindMapping(const std::vector<Mapping>& mappings, uintptr_t address) {
  for (const Mapping& m : mappings) {
    if (address >= m.begin && address < m.end) return &m;
  }
  return nullptr;
}

struct Visit {
  std::span<const ImportRedirect> redirects;
  const std::function<bool(const std::string&)>* include = nullptr;
  std::vector<Mapping> mappings;
  uintptr_t page_size = 4096;
  RedirectReport report;
};

enum class SlotResult { kRewritten, kOtherInterposer, kFailed };

SlotResult RewriteSlot(Visit& visit, uintptr_t slot, const ImportRedirect& redirect,
                       uintptr_t object_begin, uintptr_t object_end) {
  void** slot_pointer = reinterpret_cast<void**>(slot);
  void* current = __atomic_load_n(slot_pointer, __ATOMIC_ACQUIRE);
  const auto current_address = reinterpret_cast<uintptr_t>(current);
  // Lazy binding: an unresolved slot points back into the object's own PLT.
  const bool unbound = current_address >= object_begin && current_address < object_end;
  if (current == redirect.replacement) return SlotResult::kRewritten;
  if (current != redirect.original && !unbound) return SlotResult::kOtherInterposer;

  const Mapping* mapping = FindMapping(visit.mappings, slot);
  if (mapping == nullptr) return SlotResult::kFailed;
  const bool writable = (mapping->prot & PROT_WRITE) != 0;
  void* page = reinterpret_cast<void*>(slot & ~(visit.page_size - 1));
  // Full RELRO: the GOT is read-only after relocation. Opened for this one store only.
  if (!writable && mprotect(page, visit.page_size, mapping->prot | PROT_WRITE) != 0) {
    return SlotResult::kFailed;
  }
  __atomic_store_n(slot_pointer, redirect.replacement, __ATOMIC_RELEASE);
  if (!writable) mprotect(page, visit.page_size, mapping->prot);
  return SlotResult::kRewritten;
}

// Dynamic-section pointers are absolute once glibc relocated them in place (x86-64,
// AArch64), offsets where it did not (the vDSO): accept both.
uintptr_t Absolute(uintptr_t base, ElfW(Addr) pointer) {
  return pointer < base ? base + pointer : static_cast<uintptr_t>(pointer);
}

int VisitObject(dl_phdr_info* info, size_t /*size*/, void* data) {
  auto& visit = *static_cast<Visit*>(data);
  const std::string path = info->dlpi_name != nullptr ? info->dlpi_name : "";
  if (!(*visit.include)(path)) return 0;

  const uintptr_t base = info->dlpi_addr;
  const ElfW(Dyn)* dynamic = nullptr;
  uintptr_t object_begin = UINTPTR_MAX, object_end = 0;
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)& phdr = info->dlpi_phdr[i];
    if (phdr.p_type == PT_DYNAMIC) dynamic = reinterpret_cast<const ElfW(Dyn)*>(base + phdr.p_vaddr);
    if (phdr.p_type == PT_LOAD) {
      object_begin = std::min<uintptr_t>(object_begin, base + phdr.p_vaddr);
      object_end = std::max<uintptr_t>(object_end, base + phdr.p_vaddr + phdr.p_memsz);
    }
  }
  if (dynamic == nullptr) return 0;

  const ElfW(Sym)* symtab = nullptr;
  const char* strtab = nullptr;
  size_t strtab_size = 0;
  const ElfW(Rela)* jmprel = nullptr;
  size_t jmprel_size = 0;
  const ElfW(Rela)* rela = nullptr;
  size_t rela_size = 0;
  bool plt_uses_rela = true;
  for (const ElfW(Dyn)* d = dynamic; d->d_tag != DT_NULL; ++d) {
    switch (d->d_tag) {
      case DT_SYMTAB: symtab = reinterpret_cast<const ElfW(Sym)*>(Absolute(base, d->d_un.d_ptr)); break;
      case DT_STRTAB: strtab = reinterpret_cast<const char*>(Absolute(base, d->d_un.d_ptr)); break;
      case DT_STRSZ: strtab_size = d->d_un.d_val; break;
      case DT_JMPREL: jmprel = reinterpret_cast<const ElfW(Rela)*>(Absolute(base, d->d_un.d_ptr)); break;
      case DT_PLTRELSZ: jmprel_size = d->d_un.d_val; break;
      case DT_PLTREL: plt_uses_rela = d->d_un.d_val == DT_RELA; break;
      case DT_RELA: rela = reinterpret_cast<const ElfW(Rela)*>(Absolute(base, d->d_un.d_ptr)); break;
      case DT_RELASZ: rela_size = d->d_un.d_val; break;
      default: break;
    }
  }
  if (symtab == nullptr || strtab == nullptr || strtab_size == 0) return 0;

  bool rewritten_here = false;
  auto scan = [&](const ElfW(Rela)* table, size_t bytes) {
    if (table == nullptr) return;
    for (size_t i = 0; i < bytes / sizeof(ElfW(Rela)); ++i) {
      const ElfW(Rela)& entry = table[i];
      const auto type = static_cast<uint32_t>(ELF64_R_TYPE(entry.r_info));
      if (type != kJumpSlot && type != kGlobDat) continue;
      const ElfW(Sym)& symbol = symtab[ELF64_R_SYM(entry.r_info)];
      if (symbol.st_name >= strtab_size) continue;
      const char* name = strtab + symbol.st_name;
      for (const ImportRedirect& redirect : visit.redirects) {
        if (std::strcmp(name, redirect.symbol) != 0) continue;
        switch (RewriteSlot(visit, base + entry.r_offset, redirect, object_begin, object_end)) {
          case SlotResult::kRewritten:
            ++visit.report.rewritten;
            rewritten_here = true;
            break;
          case SlotResult::kOtherInterposer: ++visit.report.left_to_other_interposer; break;
          case SlotResult::kFailed: ++visit.report.failed; break;
        }
      }
    }
  };
  if (plt_uses_rela) scan(jmprel, jmprel_size);
  scan(rela, rela_size);
  if (rewritten_here) visit.report.objects.push_back(path.empty() ? "(main program)" : path);
  return 0;
}

struct PointerVisit {
  std::span<const ImportRedirect> redirects;
  const std::function<bool(const std::string&, uintptr_t)>* include = nullptr;
  std::vector<Mapping> mappings;
  uintptr_t page_size = 4096;
  uintptr_t lowest = UINTPTR_MAX;  // of the originals: most words fail this range check
  uintptr_t highest = 0;
  RedirectReport report;
};

// Reads every word of whole segments, including AddressSanitizer's redzones between globals in
// an instrumented build (the tests'): such reads are the point here, not overflows.
__attribute__((no_sanitize_address)) void ScanWords(PointerVisit& visit, uintptr_t begin, uintptr_t end,
                                                    bool* rewritten_here) {
  begin = (begin + sizeof(void*) - 1) & ~(sizeof(void*) - 1);
  uintptr_t address = begin;
  while (address + sizeof(void*) <= end) {
    // Only pages the kernel says are mapped and readable (a segment's tail may not be).
    const Mapping* mapping = FindMapping(visit.mappings, address);
    if (mapping == nullptr || (mapping->prot & PROT_READ) == 0) {
      address = mapping == nullptr ? (address | (visit.page_size - 1)) + 1 : mapping->end;
      continue;
    }
    const uintptr_t stop = std::min(end, mapping->end);
    for (; address + sizeof(void*) <= stop; address += sizeof(void*)) {
      const auto word = __atomic_load_n(reinterpret_cast<uintptr_t*>(address), __ATOMIC_RELAXED);
      if (word < visit.lowest || word > visit.highest) continue;
      for (const ImportRedirect& redirect : visit.redirects) {
        if (word != reinterpret_cast<uintptr_t>(redirect.original)) continue;
        const bool writable = (mapping->prot & PROT_WRITE) != 0;
        void* page = reinterpret_cast<void*>(address & ~(visit.page_size - 1));
        if (!writable && mprotect(page, visit.page_size, mapping->prot | PROT_WRITE) != 0) {
          ++visit.report.failed;
          break;
        }
        __atomic_store_n(reinterpret_cast<void**>(address), redirect.replacement, __ATOMIC_RELEASE);
        if (!writable) mprotect(page, visit.page_size, mapping->prot);
        ++visit.report.rewritten;
        *rewritten_here = true;
        break;
      }
    }
  }
}

int VisitObjectData(dl_phdr_info* info, size_t /*size*/, void* data) {
  auto& visit = *static_cast<PointerVisit*>(data);
  const std::string path = info->dlpi_name != nullptr ? info->dlpi_name : "";
  if (!(*visit.include)(path, info->dlpi_addr)) return 0;
  bool rewritten_here = false;
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)& phdr = info->dlpi_phdr[i];
    if (phdr.p_type != PT_LOAD || (phdr.p_flags & PF_W) == 0) continue;
    const uintptr_t begin = info->dlpi_addr + phdr.p_vaddr;
    ScanWords(visit, begin, begin + phdr.p_memsz, &rewritten_here);
  }
  if (rewritten_here) visit.report.objects.push_back(path.empty() ? "(main program)" : path);
  return 0;
}

}  // namespace

RedirectReport RedirectStoredPointers(std::span<const ImportRedirect> redirects,
                                      const std::function<bool(const std::string& path, uintptr_t base)>& include) {
  PointerVisit visit;
  if (!kSupported || redirects.empty()) return visit.report;
  visit.redirects = redirects;
  visit.include = &include;
  for (const ImportRedirect& redirect : redirects) {
    const auto original = reinterpret_cast<uintptr_t>(redirect.original);
    if (original == 0) continue;
    visit.lowest = std::min(visit.lowest, original);
    visit.highest = std::max(visit.highest, original);
  }
  if (visit.highest == 0 || !ReadProtections(&visit.mappings, &visit.page_size)) return visit.report;
  dl_iterate_phdr(VisitObjectData, &visit);
  return visit.report;
}

RedirectReport RedirectImports(std::span<const ImportRedirect> redirects,
                               const std::function<bool(const std::string& path)>& include) {
  Visit visit;
  if (!kSupported || redirects.empty()) return visit.report;
  visit.redirects = redirects;
  visit.include = &include;
  if (!ReadProtections(&visit.mappings, &visit.page_size)) return visit.report;
  // dl_iterate_phdr holds the loader lock: no object is unloaded while its tables are read.
  dl_iterate_phdr(VisitObject, &visit);
  return visit.report;
}

}  // namespace occ::inj
