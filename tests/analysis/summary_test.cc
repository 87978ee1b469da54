// Trace summaries (`occ-report summarize`, analyzer/read/summary/trace_summary.h) on the four
// ranks of the four_ranks_straggler golden case: a summary reads back as the trace it
// summarizes, field by field; reports over summaries, over a directory of them and over a mix of
// summaries and traces equal the report over the traces apart from the input paths; damaged
// summaries are one-line errors naming the file.
#include <google/protobuf/util/message_differencer.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "analyzer/analyze/analysis.h"
#include "analyzer/read/registry/input_formats.h"
#include "analyzer/read/registry/input_paths.h"
#include "analyzer/read/summary/trace_summary.h"
#include "test_traces.h"

namespace occ {
namespace {

using testing::ExpectSameConfig;
using testing::MakeOccTrace;
using testing::ReadFile;
using testing::RunCli;
using testing::ScratchDir;
using testing::WriteFile;

constexpr size_t kRanks = 4;

std::string RankSql(size_t rank) {
  return ReadFile(std::string(OCC_ANALYSIS_TEST_DIR) + "/../golden/four_ranks_straggler/trace-" +
                  std::to_string(rank) + ".sql");
}

// The four rank traces as trace-N.db in `dir`, and each one's summary as trace-N.summary.json
// written by the CLI.
struct Ranks {
  std::vector<std::string> traces, summaries;
};
Ranks MakeRanks(const ScratchDir& dir) {
  Ranks r;
  for (size_t rank = 0; rank < kRanks; ++rank) {
    const std::string trace = dir.Path("trace-" + std::to_string(rank) + ".db");
    MakeOccTrace(trace, RankSql(rank));
    auto run = RunCli({"summarize", trace});
    EXPECT_EQ(run.code, 0) << run.err;
    r.traces.push_back(trace);
    r.summaries.push_back(DefaultSummaryPath(trace));
  }
  return r;
}

void ExpectSameDevice(const TraceDevice& a, const TraceDevice& b) {
  EXPECT_EQ(a.file_index, b.file_index);
  EXPECT_EQ(a.device_id, b.device_id);
  EXPECT_EQ(a.known, b.known);
  EXPECT_EQ(a.unknown_reason, b.unknown_reason);
  EXPECT_EQ(a.max_blocks_per_sm, b.max_blocks_per_sm);
  EXPECT_EQ(a.source, b.source);
  EXPECT_EQ(a.defaulted_fields, b.defaulted_fields);
  const DeviceProps &p = a.props, &q = b.props;
  EXPECT_EQ(p.name, q.name);
  EXPECT_EQ(p.cc_major, q.cc_major);
  EXPECT_EQ(p.cc_minor, q.cc_minor);
  EXPECT_EQ(p.num_sms, q.num_sms);
  EXPECT_EQ(p.warp_size, q.warp_size);
  EXPECT_EQ(p.max_threads_per_block, q.max_threads_per_block);
  EXPECT_EQ(p.max_threads_per_sm, q.max_threads_per_sm);
  EXPECT_EQ(p.regs_per_block, q.regs_per_block);
  EXPECT_EQ(p.regs_per_sm, q.regs_per_sm);
  EXPECT_EQ(p.smem_per_block, q.smem_per_block);
  EXPECT_EQ(p.smem_per_block_optin, q.smem_per_block_optin);
  EXPECT_EQ(p.smem_per_sm, q.smem_per_sm);
  EXPECT_EQ(p.reserved_smem_per_block, q.reserved_smem_per_block);
}

// Reads one rank both ways, with and without a --kernel filter, and compares everything.
TEST(Summary, ReadsBackAsTheTraceItSummarizes) {
  ScratchDir dir;
  Ranks ranks = MakeRanks(dir);
  for (const std::string regex : {"", "gemm|log_", "^nomatch$"}) {
    for (size_t rank = 0; rank < kRanks; ++rank) {
      SCOPED_TRACE("rank " + std::to_string(rank) + " -k '" + regex + "'");
      auto trace = OpenInput(ranks.traces[rank], static_cast<int>(rank));
      ASSERT_TRUE(trace.ok()) << trace.status().message();
      auto summary = OpenInput(ranks.summaries[rank], static_cast<int>(rank));
      ASSERT_TRUE(summary.ok()) << summary.status().message();
      auto a = (*trace)->Scan(regex, /*jobs=*/0);
      auto b = (*summary)->Scan(regex, /*jobs=*/0);
      ASSERT_TRUE(a.ok() && b.ok());
      EXPECT_EQ(a->launches, b->launches);
      EXPECT_EQ(a->total_ns, b->total_ns);
      EXPECT_EQ(a->first_start, b->first_start);
      EXPECT_EQ(a->last_end, b->last_end);
      ASSERT_EQ(a->configs.size(), b->configs.size());
      for (size_t i = 0; i < a->configs.size(); ++i) ExpectSameConfig(a->configs[i], b->configs[i]);
      ASSERT_EQ((*trace)->devices().size(), (*summary)->devices().size());
      for (size_t i = 0; i < (*trace)->devices().size(); ++i) {
        ExpectSameDevice((*trace)->devices()[i], (*summary)->devices()[i]);
      }
      // The facts of the file, its path apart (the summary names itself).
      occtrace::InputFile facts = (*trace)->info();
      EXPECT_EQ((*summary)->info().path(), ranks.summaries[rank]);
      facts.set_path((*summary)->info().path());
      EXPECT_TRUE(google::protobuf::util::MessageDifferencer::Equals(facts, (*summary)->info()))
          << facts.DebugString() << "\nvs\n" << (*summary)->info().DebugString();
    }
  }
}

// Figures of rank 0 counted by hand from trace-0.sql: 10 GEMM + 20 elementwise + 10 NCCL + 2
// log_metrics launches; log_metrics_kernel (config 4) ran twice for 5,000 ns, 16 registers,
// grid (1,1,1), block (32,1,1); the first GEMM launch has the one achieved sample, 45.0 %.
TEST(Summary, HoldsTheTraceFiguresCountedByHand) {
  ScratchDir dir;
  Ranks ranks = MakeRanks(dir);
  auto summary = ParseSummary(ranks.summaries[0], ReadFile(ranks.summaries[0]));
  ASSERT_TRUE(summary.ok()) << summary.status().message();
  EXPECT_EQ(summary->format(), "occtrace-summary");
  EXPECT_EQ(summary->version(), 2);
  EXPECT_EQ(summary->totals().launches(), 42);
  EXPECT_EQ(summary->input().rank(), 0);
  EXPECT_EQ(summary->input().world_size(), 4);
  EXPECT_EQ(summary->input().rank_source(), "torchrun");
  EXPECT_EQ(summary->input().host(), "node0");
  ASSERT_EQ(summary->devices_size(), 1);
  EXPECT_EQ(summary->devices(0).limits().num_sms(), 132);
  EXPECT_EQ(summary->devices(0).limits().reserved_smem_per_block(), 1024);
  ASSERT_EQ(summary->configs_size(), 4);
  int found = 0;
  for (const auto& c : summary->configs()) {
    if (c.short_name() == "log_metrics_kernel") {
      ++found;
      EXPECT_EQ(c.launches(), 2);
      EXPECT_EQ(c.total_ns(), 10000);
      EXPECT_EQ(c.min_ns(), 5000);
      EXPECT_EQ(c.max_ns(), 5000);
      EXPECT_EQ(c.registers_per_thread(), 16);
      EXPECT_EQ(c.block(0), 32);
      EXPECT_FALSE(c.has_kernel_filter_text());
    }
    if (c.short_name() == "gemm_tn_kernel") {
      ++found;
      EXPECT_EQ(c.launches(), 10);
      EXPECT_EQ(c.achieved_samples(), 1);
      EXPECT_EQ(c.achieved_sum(), 45.0);
    }
  }
  EXPECT_EQ(found, 2);
}

std::string ReportJson(std::vector<std::string> inputs, const std::string& regex = "") {
  ReportOptions options;
  options.inputs = std::move(inputs);
  options.kernel_regex = regex;
  options.top = 0;
  auto report = BuildReport(options);
  EXPECT_TRUE(report.ok()) << report.status().message();
  if (!report.ok()) return "";
  // Only the input paths differ between a report over traces and one over their summaries.
  for (auto& f : *report->mutable_files()) f.set_path("rank file");
  return report->DebugString();
}

TEST(Summary, ReportOverSummariesEqualsReportOverTraces) {
  ScratchDir dir;
  Ranks ranks = MakeRanks(dir);
  for (const std::string regex : {"", "gemm|nccl"}) {
    SCOPED_TRACE("-k '" + regex + "'");
    const std::string expected = ReportJson(ranks.traces, regex);
    ASSERT_FALSE(expected.empty());
    EXPECT_EQ(ReportJson(ranks.summaries, regex), expected);
    // Mixed: ranks 0 and 2 from summaries, 1 and 3 from traces.
    EXPECT_EQ(ReportJson({ranks.summaries[0], ranks.traces[1], ranks.summaries[2], ranks.traces[3]},
                         regex),
              expected);
  }
}

// The text and JSON printers, through the CLI: equal once each summary's path is written as
// its trace's (the only place the inputs' names appear). The summaries get names as long as the
// traces' (trace-N.sqlite, trace-N.s.json) so that the text wraps the same, and are given
// relative to the working directory, as short as the report's file column shows whole.
TEST(Summary, PrintedReportsDifferOnlyInTheInputNames) {
  ScratchDir dir;
  const std::string cwd = std::filesystem::current_path();
  std::filesystem::current_path(dir.Path(""));
  std::vector<std::string> traces, summaries;
  for (size_t rank = 0; rank < kRanks; ++rank) {
    traces.push_back("trace-" + std::to_string(rank) + ".sqlite");
    summaries.push_back("trace-" + std::to_string(rank) + ".s.json");
    MakeOccTrace(traces.back(), RankSql(rank));
    auto run = RunCli({"summarize", traces.back(), "-o", summaries.back()});
    ASSERT_EQ(run.code, 0) << run.err;
  }
  for (const char* format : {"text", "json", "markdown", "csv"}) {
    std::vector<std::string> trace_args = {"report", "--format", format};
    std::vector<std::string> summary_args = trace_args;
    trace_args.insert(trace_args.end(), traces.begin(), traces.end());
    summary_args.insert(summary_args.end(), summaries.begin(), summaries.end());
    auto from_traces = RunCli(trace_args);
    auto from_summaries = RunCli(summary_args);
    ASSERT_EQ(from_traces.code, 0) << from_traces.err;
    ASSERT_EQ(from_summaries.code, 0) << from_summaries.err;
    std::string normalized = from_summaries.out;
    for (size_t rank = 0; rank < kRanks; ++rank) {
      for (size_t at = normalized.find(summaries[rank]); at != std::string::npos;
           at = normalized.find(summaries[rank], at)) {
        normalized.replace(at, summaries[rank].size(), traces[rank]);
      }
    }
    EXPECT_EQ(normalized, from_traces.out) << format;
  }
  std::filesystem::current_path(cwd);
}

TEST(Summary, DirectoryPrefersEachTracesSummary) {
  ScratchDir dir;
  Ranks ranks = MakeRanks(dir);
  auto paths = ExpandInputPaths({dir.Path("")});
  ASSERT_TRUE(paths.ok()) << paths.status().message();
  ASSERT_EQ(paths->size(), 4u);
  for (size_t rank = 0; rank < kRanks; ++rank) {
    EXPECT_EQ((*paths)[rank], dir.Path("trace-" + std::to_string(rank) + ".summary.json"));
  }
  EXPECT_EQ(ReportJson({dir.Path("")}), ReportJson(ranks.traces));
  // Rank 3's summary gone: its trace is read instead.
  ASSERT_EQ(std::remove(ranks.summaries[3].c_str()), 0);
  paths = ExpandInputPaths({dir.Path("")});
  ASSERT_TRUE(paths.ok());
  ASSERT_EQ(paths->size(), 4u);
  EXPECT_EQ(paths->back(), ranks.traces[3]);
  EXPECT_EQ(ReportJson({dir.Path("")}), ReportJson(ranks.traces));
}

TEST(Summary, SummarizeToStandardOutputAndRefusesToOverwrite) {
  ScratchDir dir;
  Ranks ranks = MakeRanks(dir);
  auto out = RunCli({"summarize", ranks.traces[1], "-o", "-"});
  ASSERT_EQ(out.code, 0) << out.err;
  EXPECT_EQ(out.out, ReadFile(ranks.summaries[1]));
  auto again = RunCli({"summarize", ranks.traces[1]});
  EXPECT_EQ(again.code, 2);
  EXPECT_NE(again.err.find("file exists"), std::string::npos) << again.err;
  EXPECT_EQ(RunCli({"summarize", ranks.traces[1], "--force"}).code, 0);
  // A summary is not summarized again.
  auto twice = RunCli({"summarize", ranks.summaries[1], "-o", "-"});
  EXPECT_EQ(twice.code, 2);
  EXPECT_NE(twice.err.find("already a summary"), std::string::npos) << twice.err;
}

TEST(Summary, LaunchesOfASummaryIsAOneLineError) {
  ScratchDir dir;
  Ranks ranks = MakeRanks(dir);
  auto run = RunCli({"launches", ranks.summaries[0]});
  EXPECT_EQ(run.code, 2);
  EXPECT_EQ(run.err, "occ-report: " + ranks.summaries[0] +
                         ": a trace summary has no per-launch rows; run `occ-report launches` on "
                         "the trace it summarizes\n");
}

TEST(Summary, DiffAgainstASummary) {
  ScratchDir dir;
  Ranks ranks = MakeRanks(dir);
  auto from_trace = RunCli({"report", "--format", "json", "--diff", ranks.traces[0], ranks.traces[2]});
  auto from_summary = RunCli({"report", "--format", "json", "--diff", ranks.summaries[0], ranks.traces[2]});
  ASSERT_EQ(from_trace.code, 0) << from_trace.err;
  ASSERT_EQ(from_summary.code, 0) << from_summary.err;
  std::string normalized = from_summary.out;
  // generated_for and the diff's base_files name the --diff base.
  for (size_t at = normalized.find(ranks.summaries[0]); at != std::string::npos;
       at = normalized.find(ranks.summaries[0], at)) {
    normalized.replace(at, ranks.summaries[0].size(), ranks.traces[0]);
  }
  EXPECT_EQ(normalized, from_trace.out);
}

struct BadSummary {
  const char* what;
  std::string text;
  const char* message;  // expected in the one error line
};

TEST(Summary, DamagedSummariesAreOneLineErrorsNamingTheFile) {
  ScratchDir dir;
  Ranks ranks = MakeRanks(dir);
  const std::string good = ReadFile(ranks.summaries[0]);
  auto replaced = [&](const std::string& from, const std::string& to) {
    std::string s = good;
    size_t at = s.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    if (at != std::string::npos) s.replace(at, from.size(), to);
    return s;
  };
  std::string v1_with_pm = replaced("\"version\":2", "\"version\":1");
  v1_with_pm.replace(v1_with_pm.find("\"launches\":\"2\""), 0, "\"pm\":{\"clean\":\"3\",\"warps\":1.5},");
  const std::vector<BadSummary> cases = {
      {"not JSON", "{ this is not json", "not a trace summary (unreadable JSON"},
      {"other JSON", "{\"tool_version\": \"1\"}", "not a trace summary (no \"format\""},
      {"wrong marker", replaced("\"occtrace-summary\"", "\"something-else\""),
       "not a trace summary (no \"format\""},
      {"newer version", replaced("\"version\":2", "\"version\":3"), "summary version 3 is newer"},
      {"newer version, new field", replaced("\"version\":2", "\"version\":7,\"future\":[1]"),
       "summary version 7 is newer"},
      {"no version", replaced("\"version\":2", "\"version\":0"), "without a valid version"},
      // Version 1 kept PM figures as clean-sample sums, which give no error (pm_attribution.h).
      {"version 1 with PM sums", v1_with_pm, "summary version 1 predates PM figures from every sample"},
      {"missing totals", replaced("\"totals\"", "\"totals_gone\""), "damaged trace summary"},
      {"negative launches", replaced("\"launches\":\"2\"", "\"launches\":\"-2\""),
       "launches must be at least 1"},
      {"int64 not a number", replaced("\"launches\":\"2\"", "\"launches\":\"two\""),
       "invalid value \"two\""},
      {"two grid values", replaced("\"grid\":[", "\"grid\":[\"7\","),
       "grid, block and cluster need 3 values each"},
      {"empty", "", "empty file"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.what);
    const std::string path = dir.Path("bad.summary.json");
    WriteFile(path, c.text);
    auto run = RunCli({"report", path});
    EXPECT_EQ(run.code, 2);
    EXPECT_EQ(run.err.rfind("occ-report: " + path + ": ", 0), 0u) << run.err;
    EXPECT_NE(run.err.find(c.message), std::string::npos) << run.err;
    EXPECT_EQ(run.err.find('\n'), run.err.size() - 1) << run.err;
  }
}

}  // namespace
}  // namespace occ
