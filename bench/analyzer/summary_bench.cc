// Fleet benchmark of trace summaries (target: a report over 64 rank summaries <= 1 s). Generates
// one synthetic trace per rank (real schema, rank identity in OCC_META, NCCL kernels among the
// configurations), summarizes each with `occ-report summarize` as a job would next to each rank,
// then times, as interleaved subprocess runs (medians, peak RSS):
//   occ-report over the summaries        what the fleet report costs
//   reading the summaries' bytes         the least any reader of those files pays
//   occ-report over the traces           the report without summaries, for the ratio
//
//   occ_summary_bench [--dir DIR] [--ranks N] [--launches N] [--configs N] [--runs N]
//                     [--regenerate]
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <string>
#include <vector>

#include "subprocess_timing.h"
#include "trace_gen.h"

namespace {

using occ::bench::Median;
using occ::bench::RunChild;
using occ::bench::Series;

// Baseline mode, run as a child of this same binary: every byte of the files, nothing parsed.
int ReadBytes(int argc, char** argv, int first) {
  std::vector<char> buffer(1 << 16);
  size_t total = 0;
  for (int i = first; i < argc; ++i) {
    std::ifstream in(argv[i], std::ios::binary);
    if (!in) return 1;
    while (in.read(buffer.data(), static_cast<std::streamsize>(buffer.size())) || in.gcount() > 0) {
      total += static_cast<size_t>(in.gcount());
    }
  }
  std::printf("%zu\n", total);
  return 0;
}

off_t FileSize(const std::string& path) {
  struct stat st {};
  return stat(path.c_str(), &st) == 0 ? st.st_size : 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc > 1 && std::string(argv[1]) == "--read-bytes") return ReadBytes(argc, argv, 2);
  std::string dir = "/tmp/occ_bench_ranks";
  int ranks = 64, runs = 5;
  bool regenerate = false;
  occ::bench::TraceGenOptions gen;
  gen.launches = 200'000;
  gen.configs = 200;
  gen.devices = 1;
  gen.nccl_every = 5;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto next = [&]() -> std::string { return i + 1 < argc ? argv[++i] : ""; };
    if (a == "--dir") dir = next();
    else if (a == "--ranks") ranks = std::max(1, std::atoi(next().c_str()));
    else if (a == "--launches") gen.launches = std::atoll(next().c_str());
    else if (a == "--configs") gen.configs = std::atoi(next().c_str());
    else if (a == "--runs") runs = std::max(1, std::atoi(next().c_str()));
    else if (a == "--regenerate") regenerate = true;
    else {
      std::fprintf(stderr, "usage: occ_summary_bench [--dir DIR] [--ranks N] [--launches N] "
                           "[--configs N] [--runs N] [--regenerate]\n");
      return 2;
    }
  }
  const std::string report = OCC_REPORT_BINARY;
  char resolved[4096] = {};
  ssize_t n = readlink("/proc/self/exe", resolved, sizeof resolved - 1);
  const std::string me = n > 0 ? std::string(resolved, static_cast<size_t>(n)) : argv[0];

  // Traces generated earlier with other sizes are not reused: the stamp records the sizes.
  mkdir(dir.c_str(), 0755);
  const std::string stamp = dir + "/params";
  const std::string params = "same-configs " + std::to_string(ranks) + " " + std::to_string(gen.launches) + " " +
                             std::to_string(gen.configs) + " " + std::to_string(gen.nccl_every);
  bool reuse = !regenerate;
  if (reuse) {
    std::ifstream in(stamp);
    std::string line;
    reuse = std::getline(in, line) && line == params;
  }
  std::vector<std::string> traces, summaries;
  for (int r = 0; r < ranks; ++r) {
    traces.push_back(dir + "/rank" + std::to_string(r) + ".db");
    summaries.push_back(dir + "/rank" + std::to_string(r) + ".summary.json");
  }
  if (!reuse) {
    std::printf("generating %d rank traces in %s: %lld launches, %d configurations each...\n",
                ranks, dir.c_str(), static_cast<long long>(gen.launches), gen.configs);
    std::fflush(stdout);
    for (int r = 0; r < ranks; ++r) {
      occ::bench::TraceGenOptions rank_gen = gen;
      rank_gen.rank = r;
      rank_gen.world_size = ranks;
      // The same configurations on every rank (a data-parallel job), each rank's own timings.
      rank_gen.launch_seed = 1000 + static_cast<uint64_t>(r);
      occ::Status status = occ::bench::GenerateTrace(traces[static_cast<size_t>(r)], rank_gen);
      if (!status.ok()) {
        std::fprintf(stderr, "occ_summary_bench: %s\n", status.message().c_str());
        return 1;
      }
    }
    std::ofstream(stamp) << params << "\n";
  }
  // Summarize every rank, as the job would next to each one (timed, one run each).
  Series summarize;
  for (int r = 0; r < ranks; ++r) {
    summarize.Add(RunChild({report, "summarize", "--force", traces[static_cast<size_t>(r)]}));
  }
  if (summarize.failed) {
    std::fprintf(stderr, "occ_summary_bench: occ-report summarize failed\n");
    return 1;
  }
  off_t trace_bytes = 0, summary_bytes = 0;
  for (int r = 0; r < ranks; ++r) {
    trace_bytes += FileSize(traces[static_cast<size_t>(r)]);
    summary_bytes += FileSize(summaries[static_cast<size_t>(r)]);
  }

  std::vector<std::string> over_summaries = {report, "--format", "json"};
  over_summaries.insert(over_summaries.end(), summaries.begin(), summaries.end());
  std::vector<std::string> over_traces = {report, "--format", "json"};
  over_traces.insert(over_traces.end(), traces.begin(), traces.end());
  std::vector<std::string> read_bytes = {me, "--read-bytes"};
  read_bytes.insert(read_bytes.end(), summaries.begin(), summaries.end());

  Series merged, bytes, from_traces;
  RunChild(over_summaries);  // warm the page cache once
  RunChild(over_traces);
  for (int r = 0; r < runs; ++r) {
    merged.Add(RunChild(over_summaries));
    bytes.Add(RunChild(read_bytes));
    from_traces.Add(RunChild(over_traces));
  }

  char date[64];
  std::time_t now = std::time(nullptr);
  std::strftime(date, sizeof date, "%Y-%m-%d %H:%M UTC", std::gmtime(&now));
  std::printf("occ-report fleet bench, %s, %ld cores, %d interleaved runs (medians)\n", date,
              sysconf(_SC_NPROCESSORS_ONLN), runs);
  std::printf("%d ranks x %lld launches x %d configurations (NCCL every %d kernels): traces "
              "%.1f MB, summaries %.1f MB (%.0f KB per rank)\n",
              ranks, static_cast<long long>(gen.launches), gen.configs, gen.nccl_every,
              static_cast<double>(trace_bytes) / 1e6, static_cast<double>(summary_bytes) / 1e6,
              static_cast<double>(summary_bytes) / 1e3 / ranks);
  auto line = [](const char* what, const Series& s) {
    std::printf("%-40s %8.3f s  peak RSS %7.1f MB%s\n", what, Median(s.wall),
                static_cast<double>(s.max_rss_kb) / 1024.0, s.failed ? "  FAILED (exit code)" : "");
  };
  line("occ-report summarize, one rank", summarize);
  line("occ-report over the summaries", merged);
  line("baseline: read the summaries' bytes", bytes);
  line("baseline: occ-report over the traces", from_traces);
  const double merged_s = Median(merged.wall);
  const double traces_s = Median(from_traces.wall);
  const bool pass = !merged.failed && merged_s <= 1.0;
  std::printf("summaries vs traces: %.1fx faster; summaries vs bare read: %.1fx; target <= 1 s: "
              "%s\n",
              merged_s > 0 ? traces_s / merged_s : 0, Median(bytes.wall) > 0 ? merged_s / Median(bytes.wall) : 0,
              pass ? "PASS" : "MISS");
  return pass && !from_traces.failed ? 0 : 1;
}
