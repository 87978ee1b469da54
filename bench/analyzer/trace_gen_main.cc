// occ_trace_gen [--nsys] OUT.db [LAUNCHES [CONFIGS [DEVICES]]]: writes a synthetic occtrace
// trace (trace_gen.h) or, with --nsys, a synthetic Nsight Systems export (nsys_export_gen.h).
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "nsys_export_gen.h"
#include "trace_gen.h"

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  const bool nsys = !args.empty() && args[0] == "--nsys";
  if (nsys) args.erase(args.begin());
  if (args.empty() || args.size() > 4) {
    std::fprintf(stderr, "usage: occ_trace_gen [--nsys] OUT.db [LAUNCHES [CONFIGS [DEVICES]]]\n");
    return 2;
  }
  const int64_t launches = args.size() > 1 ? std::atoll(args[1].c_str()) : 10'000'000;
  const int configs = args.size() > 2 ? std::atoi(args[2].c_str()) : 5'000;
  const int devices = args.size() > 3 ? std::atoi(args[3].c_str()) : 2;
  if (launches < 0 || configs < 1 || devices < 1) {
    std::fprintf(stderr, "occ_trace_gen: LAUNCHES >= 0, CONFIGS >= 1, DEVICES >= 1\n");
    return 2;
  }
  occ::Status status;
  if (nsys) {
    occ::bench::NsysExportGenOptions options;
    options.launches = launches;
    options.configs = configs;
    options.devices = devices;
    status = occ::bench::GenerateNsysExport(args[0], options);
  } else {
    occ::bench::TraceGenOptions options;
    options.launches = launches;
    options.configs = configs;
    options.devices = devices;
    status = occ::bench::GenerateTrace(args[0], options);
  }
  if (!status.ok()) {
    std::fprintf(stderr, "occ_trace_gen: %s\n", status.message().c_str());
    return 1;
  }
  return 0;
}
