// The synthetic inputs' random numbers: splitmix64, deterministic across platforms and standard
// libraries (unlike std:: distributions), so a generated file is the same everywhere.
#pragma once

#include <cstdint>

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

}  // namespace occ::bench
