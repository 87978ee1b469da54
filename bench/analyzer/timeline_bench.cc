// occ_timeline_bench [--launches N] [--trace PATH] [--reps R]: the timeline export against reading
// the same trace, measured in the same run. A synthetic occtrace trace (trace_gen.h; 10,000,000
// launches by default, reused when PATH exists) is read by `occ-report TRACE` (the report: every
// launch read once) and exported by `occ-report TRACE --format trace -o X.json.gz` and `-o X.json`,
// interleaved, R times each; prints the medians, peak RSS and export / read ratios. #30 asks for
// the .json.gz export within 2x the read.
#include <sys/stat.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "subprocess_timing.h"
#include "trace_gen.h"

using namespace occ::bench;

int main(int argc, char** argv) {
  int64_t launches = 10'000'000;
  std::string trace;
  int reps = 3;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    if (flag == "--launches") launches = std::atoll(argv[i + 1]);
    if (flag == "--trace") trace = argv[i + 1];
    if (flag == "--reps") reps = std::atoi(argv[i + 1]);
  }
  if (trace.empty()) trace = "/tmp/occ_timeline_bench_" + std::to_string(launches) + ".db";
  struct stat st {};
  if (stat(trace.c_str(), &st) != 0) {
    TraceGenOptions options;
    options.launches = launches;
    std::fprintf(stderr, "generating %s (%lld launches)...\n", trace.c_str(),
                 static_cast<long long>(launches));
    occ::Status status = GenerateTrace(trace, options);
    if (!status.ok()) {
      std::fprintf(stderr, "occ_timeline_bench: %s\n", status.message().c_str());
      return 1;
    }
  }
  const std::string gz = trace + ".timeline.json.gz", json = trace + ".timeline.json";
  Series read, export_gz, export_json;
  for (int r = 0; r < reps; ++r) {
    read.Add(RunChild({OCC_REPORT_BINARY, trace}));
    export_gz.Add(RunChild({OCC_REPORT_BINARY, trace, "--format", "trace", "-o", gz, "--force"}));
    export_json.Add(RunChild({OCC_REPORT_BINARY, trace, "--format", "trace", "-o", json, "--force"}));
  }
  struct stat gz_st {}, json_st {};
  stat(gz.c_str(), &gz_st);
  stat(json.c_str(), &json_st);
  const double r = Median(read.wall), g = Median(export_gz.wall), j = Median(export_json.wall);
  std::printf("trace %s: %lld launches, %d runs each (medians)\n", trace.c_str(),
              static_cast<long long>(launches), reps);
  std::printf("read    occ-report TRACE                  %7.2f s  peak RSS %6.0f MB\n", r, static_cast<double>(read.max_rss_kb) / 1024.0);
  std::printf("export  --format trace -o X.json.gz       %7.2f s  peak RSS %6.0f MB  %7.0f MB written\n", g,
              static_cast<double>(export_gz.max_rss_kb) / 1024.0, static_cast<double>(gz_st.st_size) / 1e6);
  std::printf("export  --format trace -o X.json          %7.2f s  peak RSS %6.0f MB  %7.0f MB written\n", j,
              static_cast<double>(export_json.max_rss_kb) / 1024.0, static_cast<double>(json_st.st_size) / 1e6);
  std::printf("ratio   export .json.gz / read %.2f x, export .json / read %.2f x (target: .json.gz <= 2 x)\n",
              g / r, j / r);
  std::remove(gz.c_str());
  std::remove(json.c_str());
  return read.failed || export_gz.failed || export_json.failed ? 1 : 0;
}
