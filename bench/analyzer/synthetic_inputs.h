// What both synthetic-input generators (trace_gen.h, nsys_export_gen.h) draw from: splitmix64,
// deterministic across platforms and standard libraries (unlike std:: distributions), so a
// generated file is the same everywhere, and the kernel names and launch shapes they pick.
#pragma once

#include <array>
#include <cstdint>
#include <string>

namespace occ::bench {

struct Rng {
  uint64_t state;
  uint64_t Next() {
    uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  int64_t Below(int64_t n) { return static_cast<int64_t>(Next() % static_cast<uint64_t>(n)); }
};

// A kernel's demangled, short and mangled names, as StringIds rows hold them.
inline std::array<std::string, 3> KernelNameForms(const std::string& base) {
  return {"void " + base + "<float, 128>(float const*, float*, int)", base,
          "_Z" + std::to_string(base.size()) + base + "PKfPfi"};
}

// Block sizes, register counts and shared-memory sizes the generated configurations draw from.
inline constexpr int kBlockSizes[] = {32, 64, 96, 128, 192, 256, 384, 512, 768, 1024, 48, 160};
inline constexpr int kRegisterCounts[] = {16, 24, 32, 40, 48, 64, 72, 96, 128, 168, 255};
inline constexpr int kSharedMemorySizes[] = {0, 0, 0, 1024, 4096, 16384, 49152, 65536, 100000};

}  // namespace occ::bench
