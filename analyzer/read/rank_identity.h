// Which rank of a distributed job each input file is. occtrace writes the rank, local rank,
// world size and local world size its launcher set (torchrun, SLURM, Open MPI, MPICH) into
// OCC_META; Nsight Systems exports and traces without those rows may still name the rank in the
// file name. The cross-rank section of the report labels each file by what this resolves.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "schema/report.pb.h"

namespace occ {

// Sets InputFile.rank, local_rank, world_size, local_world_size and rank_source from OCC_META's
// name -> value rows; -1 (and an empty source) for what is absent or not a non-negative number.
void SetRankFromMeta(const std::map<std::string, std::string>& meta, occtrace::InputFile* file);

// The rank a file name states, or nullopt. Only an explicit "rank" followed by digits in the
// base name counts ("trace-rank3.db", "rank_03.sqlite", "run.Rank-12.sql"), and only when it
// occurs once: bare numbers ("trace-3.db") may as well be a pid or a sequence number.
std::optional<int> RankFromFileName(const std::string& path);

// For every file without a recorded rank: the rank of its file name, if any (rank_source
// "file name"); the other rank fields -1 where unset. Returns warnings for the cross-rank
// section: ranks claimed by several files, world sizes that disagree, ranks missing from a
// world size every file agrees on.
std::vector<std::string> ResolveRanks(std::vector<occtrace::InputFile>* files);

// "rank 3", "rank 3 [file 1]" when several files claim rank 3, "file 1" without a rank.
std::string RankLabel(const std::vector<occtrace::InputFile>& files, int file_index);

}  // namespace occ
