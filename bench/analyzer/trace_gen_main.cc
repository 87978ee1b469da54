// occ_trace_gen OUT.db [LAUNCHES [CONFIGS [DEVICES]]]: writes a synthetic trace (trace_gen.h).
#include <cstdio>
#include <cstdlib>
#include <string>

#include "trace_gen.h"

int main(int argc, char** argv) {
  if (argc < 2 || argc > 5) {
    std::fprintf(stderr, "usage: occ_trace_gen OUT.db [LAUNCHES [CONFIGS [DEVICES]]]\n");
    return 2;
  }
  occ::bench::TraceGenOptions options;
  if (argc > 2) options.launches = std::atoll(argv[2]);
  if (argc > 3) options.configs = std::atoi(argv[3]);
  if (argc > 4) options.devices = std::atoi(argv[4]);
  if (options.launches < 0 || options.configs < 1 || options.devices < 1) {
    std::fprintf(stderr, "occ_trace_gen: LAUNCHES >= 0, CONFIGS >= 1, DEVICES >= 1\n");
    return 2;
  }
  occ::Status status = occ::bench::GenerateTrace(argv[1], options);
  if (!status.ok()) {
    std::fprintf(stderr, "occ_trace_gen: %s\n", status.message().c_str());
    return 1;
  }
  return 0;
}
