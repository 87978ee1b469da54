// Per-function facts read from a loaded cubin (an sm_XX ELF image, e_machine EM_CUDA): what
// CUPTI's kernel record lacks or gets wrong. CUpti_ActivityKernel10.localMemoryPerThread is 0
// on CUDA 13 / H100 even for spilling kernels, and named-barrier counts are in no CUPTI record.
//
// A small bounds-checked ELF64 reader of our own (no libelf dependency): section headers,
// .symtab/.strtab names, the global .nv.info attributes keyed by symbol index
// (EIATTR_REGCOUNT, EIATTR_FRAME_SIZE, EIATTR_MIN/MAX_STACK_SIZE) and each .nv.info.<fn>
// (EIATTR_NUM_BARRIERS, EIATTR_MAX_THREADS), with the older barrier encoding (flags bits
// 20-26 of .text.<fn>, SHF_BARRIERS) as fallback. Malformed, truncated, compressed or non-ELF
// input yields ok=false and a reason; it never reads out of bounds.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace occ::inj {

struct CubinFunction {
  std::string mangled_name;
  // -1: the cubin does not say.
  int64_t barrier_count = -1;        // named barriers, ptxas -v "used N barriers"
  int64_t frame_size = -1;           // bytes of local memory per thread, ptxas "N bytes stack frame"
  int64_t min_stack_size = -1;       // EIATTR_MIN_STACK_SIZE
  int64_t max_stack_size = -1;       // EIATTR_MAX_STACK_SIZE (with callees; absent without calls)
  int64_t registers = -1;            // EIATTR_REGCOUNT, ptxas "Used N registers"
  int64_t max_threads_per_block = -1;  // __launch_bounds__ (EIATTR_MAX_THREADS x*y*z)
};

struct CubinParseResult {
  bool ok = false;
  std::string error;  // why not ok: "not an ELF image", "truncated section header table", ...
  std::vector<CubinFunction> functions;  // one per .text.<mangled> section
};

CubinParseResult ParseCubin(const uint8_t* data, size_t size);

}  // namespace occ::inj
