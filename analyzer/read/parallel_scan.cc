#include "analyzer/read/parallel_scan.h"

#include <algorithm>
#include <exception>
#include <optional>
#include <system_error>
#include <thread>

namespace occ {

int ScanJobs(int requested) {
  if (requested > 0) return std::min(requested, kMaxScanJobs);
  const unsigned cores = std::thread::hardware_concurrency();  // 0 when unknown
  return std::clamp(static_cast<int>(cores), 1, kMaxAutoScanJobs);
}

std::vector<RowidRange> SplitRowids(const sql::Db& db, const std::string& table, int jobs) {
  const std::vector<RowidRange> whole(1);
  const int threads = ScanJobs(jobs);
  // Threads need a library built thread-safe (SQLITE_THREADSAFE 1 or 2).
  if (threads <= 1 || sqlite3_threadsafe() == 0) return whole;
  // A column named rowid would hide the real one.
  auto shadowed = db.HasColumn(table, "rowid");
  if (!shadowed.ok() || *shadowed) return whole;
  // Quoted as an identifier; WITHOUT ROWID tables fail here ("no such column: rowid").
  std::string quoted = "\"";
  for (char c : table) quoted += c == '"' ? std::string("\"\"") : std::string(1, c);
  quoted += "\"";
  // Two subqueries: each is one b-tree descent, where min() and max() in one SELECT scan the
  // whole table.
  auto stmt = db.Prepare("SELECT (SELECT min(rowid) FROM " + quoted + "), (SELECT max(rowid) FROM " +
                         quoted + ")");
  if (!stmt.ok()) return whole;
  auto row = stmt->Step();
  if (!row.ok() || !*row || stmt->IsNull(0) || stmt->IsNull(1)) return whole;
  const int64_t first = stmt->Int64(0), last = stmt->Int64(1);
  // The span, in unsigned arithmetic: rowids may be negative and the span wider than int64.
  const uint64_t span = static_cast<uint64_t>(last) - static_cast<uint64_t>(first) + 1;
  if (last < first || span == 0) return whole;
  if (jobs == 0 && span < static_cast<uint64_t>(kMinRowsForParallelScan)) return whole;
  const uint64_t count = std::min<uint64_t>(static_cast<uint64_t>(threads), span);
  if (count <= 1) return whole;
  std::vector<RowidRange> ranges;
  const uint64_t width = span / count, extra = span % count;
  uint64_t begin = static_cast<uint64_t>(first);
  for (uint64_t i = 0; i < count; ++i) {
    const uint64_t size = width + (i < extra ? 1 : 0);
    RowidRange r;
    r.whole_table = false;
    r.first = static_cast<int64_t>(begin);
    r.last = static_cast<int64_t>(begin + size - 1);
    ranges.push_back(r);
    begin += size;
  }
  ranges.back().last = last;
  return ranges;
}

std::string RowidRangeClause(const RowidRange& range, int first_parameter) {
  if (range.whole_table) return "";
  return " WHERE rowid BETWEEN ?" +
         std::to_string(first_parameter) + " AND ?" + std::to_string(first_parameter + 1);
}

Status BindRowidRange(sql::Stmt* stmt, const RowidRange& range, int first_parameter) {
  if (range.whole_table) return OkStatus();
  OCC_RETURN_IF_ERROR(stmt->BindInt64(first_parameter, range.first));
  return stmt->BindInt64(first_parameter + 1, range.last);
}

Status RunRangePasses(const sql::Db& db, const std::string& reopen_path,
                      const std::vector<RowidRange>& ranges,
                      const std::function<Status(const RangePass&)>& pass) {
  std::atomic<bool> cancelled{false};
  std::vector<Status> results(ranges.size());
  // Runs range i on `connection`; a failure (or an exception: memory) cancels the others.
  auto run = [&](size_t i, const sql::Db* connection) {
    Status status;
    try {
      std::optional<sql::Db> own;
      if (connection == nullptr) {
        auto opened = sql::Db::OpenReadOnly(reopen_path);
        if (opened.ok()) {
          own.emplace(std::move(*opened));
          connection = &*own;
        } else {
          status = opened.status();
        }
      }
      if (connection != nullptr) {
        RangePass p;
        p.db = connection;
        p.range = ranges[i];
        p.index = i;
        p.cancelled = &cancelled;
        status = pass(p);
      }
    } catch (const std::exception& e) {
      status = Internal(reopen_path + ": reading rows " + std::to_string(ranges[i].first) + ".." +
                        std::to_string(ranges[i].last) + " failed: " + e.what());
    }
    if (!status.ok()) cancelled.store(true, std::memory_order_relaxed);
    results[i] = std::move(status);
  };
  if (reopen_path.empty() || ranges.size() <= 1) {
    for (size_t i = 0; i < ranges.size() && !cancelled.load(); ++i) run(i, &db);
  } else {
    std::vector<std::thread> threads;
    threads.reserve(ranges.size());  // no reallocation (and no throw) once threads run
    std::vector<size_t> not_started;
    for (size_t i = 1; i < ranges.size(); ++i) {
      try {
        threads.emplace_back(run, i, nullptr);
      } catch (const std::system_error&) {
        not_started.push_back(i);  // out of threads: this range runs here instead
      }
    }
    run(0, &db);
    for (auto& t : threads) t.join();
    for (size_t i : not_started) {
      if (!cancelled.load()) run(i, nullptr);
    }
  }
  for (const Status& status : results) {
    if (!status.ok()) return status;
  }
  return OkStatus();
}

}  // namespace occ
