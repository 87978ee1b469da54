// How the read stage spreads a pass over a launch table (OCC_LAUNCH, CUPTI_ACTIVITY_KIND_KERNEL)
// across cores. Takes the open database, the table and a thread count; gives rowid ranges that
// split the table evenly, and runs a pass over each range on its own thread with its own
// read-only connection (SQLite connections are not shared between threads). The per-format
// readers aggregate each range on its own and merge the partial results in range order, so the
// result is the one a single pass gives; the single pass is the case of one range.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "sqlite/sqlite_db.h"
#include "base/status.h"

namespace occ {

// Rows with rowid first..last, or every row of the table when whole_table (a table without
// usable rowids, or a pass that is not split).
struct RowidRange {
  bool whole_table = true;
  int64_t first = 0;
  int64_t last = 0;
};

// Below this many rows an automatic thread count is 1: starting threads and connections costs
// more than the pass itself.
inline constexpr int64_t kMinRowsForParallelScan = 200'000;
// Most threads an automatic count uses: beyond this the file's pages, not the CPU, limit a scan.
inline constexpr int kMaxAutoScanJobs = 16;
// Most threads `--jobs` accepts.
inline constexpr int kMaxScanJobs = 256;

// `requested` threads, or for 0 (automatic) the machine's cores up to kMaxAutoScanJobs.
int ScanJobs(int requested);

// Splits `table`'s rowids (from min(rowid) to max(rowid)) into at most `jobs` ranges of equal
// width, in rowid order. `jobs` 0 is automatic (ScanJobs, and 1 for fewer than
// kMinRowsForParallelScan rowids). One whole-table range when jobs is 1, the table is empty,
// has no usable rowid (WITHOUT ROWID, a view, a column named rowid) or the query fails: the
// pass itself then reports what is wrong with the table.
std::vector<RowidRange> SplitRowids(const sql::Db& db, const std::string& table, int jobs);

// " WHERE rowid BETWEEN ?first AND ?last" for a range, "" for the whole table (?first is
// parameter `first_parameter`); BindRowidRange binds them.
std::string RowidRangeClause(const RowidRange& range, int first_parameter);
Status BindRowidRange(sql::Stmt* stmt, const RowidRange& range, int first_parameter);

// What a range's pass gets: its connection, its range and position, and whether another range
// has failed (then the pass may stop early: its result is discarded).
struct RangePass {
  const sql::Db* db = nullptr;
  RowidRange range;
  size_t index = 0;
  const std::atomic<bool>* cancelled = nullptr;
  bool Cancelled() const { return cancelled->load(std::memory_order_relaxed); }
};

// Runs `pass` once per range: the first on `db` in the calling thread, each other one on its own
// thread with its own read-only connection to `reopen_path`. An empty `reopen_path` (an
// in-memory database no second connection can open) runs every range in the calling thread on
// `db`. Returns the error of the first range in range order that failed, after every thread
// has finished; nothing escapes a thread.
Status RunRangePasses(const sql::Db& db, const std::string& reopen_path,
                      const std::vector<RowidRange>& ranges,
                      const std::function<Status(const RangePass&)>& pass);

}  // namespace occ
