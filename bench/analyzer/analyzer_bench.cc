// Scale benchmark of occ-report (targets: report <= 5 s wall and <= 512 MB peak RSS on 10 M
// launches of 5,000 configurations; `launches --limit 100` <= 1 s). Each figure is the median
// of interleaved subprocess runs, next to a baseline measured in the same run: a bare SQLite
// scan of the launch table (the least any reader pays) and a bare `LIMIT 100` query.
// --nsys: the same for an Nsight Systems export (nsys_export_gen.h): `occ-report` with its
// automatic thread count and with --jobs 1, against a bare single-threaded SQLite scan of the
// kernel-table columns the report reads.
//
//   occ_analyzer_bench [--nsys] [--trace PATH] [--runs N] [--launches N] [--configs N]
//                      [--regenerate]
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <string>
#include <vector>

#include "nsys_export_gen.h"
#include "sqlite/sqlite_db.h"
#include "subprocess_timing.h"
#include "trace_gen.h"

namespace {

using occ::bench::Median;
using occ::bench::RunChild;
using occ::bench::Series;

// Baseline modes, run as children of this same binary.
int BaselineScan(const std::string& path, bool head) {
  auto db = occ::sql::Db::OpenReadOnly(path);
  if (!db.ok()) return 1;
  auto stmt = db->Prepare(head ? "SELECT start, duration, configId, streamId, correlationId FROM "
                                 "OCC_LAUNCH LIMIT 100"
                               : "SELECT configId, start, duration, correlationId FROM OCC_LAUNCH");
  if (!stmt.ok()) return 1;
  int64_t sum = 0;
  while (true) {
    auto row = stmt->Step();
    if (!row.ok()) return 1;
    if (!*row) break;
    sum += stmt->Int64(0) + stmt->Int64(2);
  }
  std::printf("%lld\n", static_cast<long long>(sum));
  return 0;
}

// The columns occ-report's nsys scan reads (analyzer/read/nsys/read_nsys_export.cc), read once
// each per row.
int NsysBaselineScan(const std::string& path) {
  auto db = occ::sql::Db::OpenReadOnly(path);
  if (!db.ok()) return 1;
  static const char* kColumns[] = {
      "deviceId", "demangledName", "shortName", "mangledName", "gridX", "gridY", "gridZ",
      "blockX", "blockY", "blockZ", "registersPerThread", "staticSharedMemory",
      "dynamicSharedMemory", "localMemoryPerThread", "sharedMemoryExecuted",
      "sharedMemoryLimitConfig", "sharedMemoryRequestedPercentage", "cacheConfig", "clusterX",
      "clusterY", "clusterZ", "graphId", "contextId", "start", "\"end\""};
  std::string query = "SELECT ";
  for (const char* column : kColumns) query += std::string(column) + ", ";
  query.resize(query.size() - 2);
  auto stmt = db->Prepare(query + " FROM CUPTI_ACTIVITY_KIND_KERNEL");
  if (!stmt.ok()) return 1;
  const int count = static_cast<int>(std::size(kColumns));
  int64_t sum = 0;
  while (true) {
    auto row = stmt->Step();
    if (!row.ok()) return 1;
    if (!*row) break;
    for (int i = 0; i < count; ++i) sum += stmt->Int64(i);
  }
  std::printf("%lld\n", static_cast<long long>(sum));
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  std::string trace;
  int runs = 5;
  bool regenerate = false;
  bool nsys = false;
  occ::bench::TraceGenOptions gen;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto next = [&]() -> std::string { return i + 1 < argc ? argv[++i] : ""; };
    if (a == "--scan-baseline") return BaselineScan(next(), false);
    if (a == "--head-baseline") return BaselineScan(next(), true);
    if (a == "--nsys-scan-baseline") return NsysBaselineScan(next());
    if (a == "--nsys") nsys = true;
    else if (a == "--trace") trace = next();
    else if (a == "--runs") runs = std::max(1, std::atoi(next().c_str()));
    else if (a == "--launches") gen.launches = std::atoll(next().c_str());
    else if (a == "--configs") gen.configs = std::atoi(next().c_str());
    else if (a == "--regenerate") regenerate = true;
    else {
      std::fprintf(stderr, "usage: occ_analyzer_bench [--nsys] [--trace PATH] [--runs N] "
                           "[--launches N] [--configs N] [--regenerate]\n");
      return 2;
    }
  }
  if (trace.empty()) trace = nsys ? "/tmp/occ_nsys_10M.sqlite" : "/tmp/occ_bench_10M.db";
  // A trace generated earlier with other sizes is not reused blindly: the name carries them.
  std::string stamp = trace + ".params";
  std::string params = std::string(nsys ? "nsys " : "") + std::to_string(gen.launches) + " " +
                       std::to_string(gen.configs) + " " + std::to_string(gen.devices);
  struct stat st {};
  bool reuse = !regenerate && stat(trace.c_str(), &st) == 0;
  if (reuse) {
    FILE* f = std::fopen(stamp.c_str(), "r");
    char buffer[128] = {};
    if (f == nullptr || std::fgets(buffer, sizeof buffer, f) == nullptr || params != buffer) {
      reuse = false;
    }
    if (f) std::fclose(f);
  }
  double gen_s = 0;
  if (!reuse) {
    std::printf("generating %s: %lld launches, %d configurations, %d devices...\n", trace.c_str(),
                static_cast<long long>(gen.launches), gen.configs, gen.devices);
    std::fflush(stdout);
    auto t0 = std::chrono::steady_clock::now();
    occ::Status status = occ::OkStatus();
    if (nsys) {
      occ::bench::NsysExportGenOptions nsys_gen;
      nsys_gen.launches = gen.launches;
      nsys_gen.configs = gen.configs;
      nsys_gen.devices = gen.devices;
      status = occ::bench::GenerateNsysExport(trace, nsys_gen);
    } else {
      status = occ::bench::GenerateTrace(trace, gen);
    }
    if (!status.ok()) {
      std::fprintf(stderr, "occ_analyzer_bench: %s\n", status.message().c_str());
      return 1;
    }
    gen_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    FILE* f = std::fopen(stamp.c_str(), "w");
    if (f) {
      std::fputs(params.c_str(), f);
      std::fclose(f);
    }
    stat(trace.c_str(), &st);
  }

  std::string self = "/proc/self/exe";
  char resolved[4096] = {};
  ssize_t n = readlink(self.c_str(), resolved, sizeof resolved - 1);
  std::string me = n > 0 ? std::string(resolved, static_cast<size_t>(n)) : argv[0];
  const std::string report = OCC_REPORT_BINARY;

  char date[64];
  std::time_t now = std::time(nullptr);
  std::strftime(date, sizeof date, "%Y-%m-%d %H:%M UTC", std::gmtime(&now));
  long cores = sysconf(_SC_NPROCESSORS_ONLN);
  auto header = [&]() {
    std::printf("occ-report scale bench, %s, %ld cores, %d interleaved runs (medians)\n", date,
                cores, runs);
    std::printf("%s: %s, %lld launches, %d configurations, %d devices, %.0f MB%s\n",
                nsys ? "nsys export" : "trace", trace.c_str(),
                static_cast<long long>(gen.launches), gen.configs, gen.devices,
                static_cast<double>(st.st_size) / 1e6,
                reuse ? " (reused)" : (" (generated in " + std::to_string(gen_s) + " s)").c_str());
  };
  auto line = [](const char* what, const Series& s, const Series& base, const char* base_name,
                 double target_s, double target_mb) {
    double wall = Median(s.wall), base_wall = Median(base.wall);
    double rss_mb = static_cast<double>(s.max_rss_kb) / 1024.0;
    bool pass = !s.failed && wall <= target_s && (target_mb <= 0 || rss_mb <= target_mb);
    double lo = s.wall.empty() ? 0 : *std::min_element(s.wall.begin(), s.wall.end());
    double hi = s.wall.empty() ? 0 : *std::max_element(s.wall.begin(), s.wall.end());
    std::printf("%-38s %7.3f s (%.2f-%.2f)  peak RSS %7.1f MB | baseline %-26s %7.3f s  ratio "
                "%5.2fx | target <= %.0f s%s: %s\n",
                what, wall, lo, hi, rss_mb, base_name, base_wall,
                base_wall > 0 ? wall / base_wall : 0, target_s,
                target_mb > 0 ? (", <= " + std::to_string(static_cast<int>(target_mb)) + " MB").c_str() : "",
                s.failed ? "FAILED (exit code)" : pass ? "PASS" : "MISS");
    return pass;
  };

  if (nsys) {
    Series rep, rep_one, scan;
    RunChild({report, trace, "--format", "json"});  // warm the page cache once
    for (int r = 0; r < runs; ++r) {
      rep.Add(RunChild({report, trace, "--format", "json"}));
      rep_one.Add(RunChild({report, trace, "--format", "json", "--jobs", "1"}));
      scan.Add(RunChild({me, "--nsys-scan-baseline", trace}));
    }
    header();
    line("(baseline) bare SQLite scan, 1 thread", scan, scan, "(itself)", 1e9, 0);
    bool ok = line("occ-report export --format json", rep, scan, "(SQLite scan of columns)", 5.0,
                   512.0);
    line("occ-report export --format json -j 1", rep_one, scan, "(SQLite scan of columns)", 5.0,
         512.0);
    return ok ? 0 : 1;
  }

  Series rep, scan, launches, head;
  RunChild({report, trace, "--format", "json"});  // warm the page cache once
  for (int r = 0; r < runs; ++r) {
    rep.Add(RunChild({report, trace, "--format", "json"}));
    scan.Add(RunChild({me, "--scan-baseline", trace}));
    launches.Add(RunChild({report, "launches", trace, "--limit", "100"}));
    head.Add(RunChild({me, "--head-baseline", trace}));
  }
  header();
  bool ok = line("occ-report trace.db --format json", rep, scan, "(SQLite scan of launches)",
                 5.0, 512.0);
  ok &= line("occ-report launches --limit 100", launches, head, "(SQLite LIMIT 100)", 1.0, 0);
  return ok ? 0 : 1;
}
