// The cross-rank stage: with several input files (one per rank of a distributed job, or simply
// several runs), how the files compare. Takes the files' facts (occtrace.InputFile, ranks
// resolved by rank_identity.h) and each group's per-file shares (grouping.h), which the read
// stage gives the same way whether it scanned a trace or read a summary of one; gives each
// group's RankSpread and the report's CrossRank section (schema/report.proto).
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "analyzer/analyze/grouping.h"
#include "schema/report.pb.h"

namespace occ {

// The order ranks are listed in: by rank, files without one after them in command-line order.
std::vector<int> RankOrder(const std::vector<occtrace::InputFile>& files);

// The group's launches on each file that ran it, the slowest and fastest file, the median and
// the slowest's excess over it. `rank_order` from RankOrder.
occtrace::RankSpread SpreadOf(const std::map<int, FileShare>& by_file, const std::vector<int>& rank_order);

// A group of the report with its position in the top table (0 when not shown there).
struct RankedGroup {
  const occtrace::KernelGroup* group = nullptr;
  int shown_rank = 0;
};

// The cross-rank section: per-rank totals and the compute straggler, the top `max_kernels`
// groups by GPU time with their spread, and the groups some files did not run. `warnings`
// from ResolveRanks. Groups must carry their rank_spread. Files that are not ranks of one
// program (--diff's check, diff.h) get `different_programs` (and warnings for more such files),
// and no straggler cause.
occtrace::CrossRank BuildCrossRank(const std::vector<occtrace::InputFile>& files,
                                   const std::vector<std::string>& warnings,
                                   const std::vector<RankedGroup>& groups, int max_kernels = 10,
                                   int max_rank_only = 20);

}  // namespace occ
