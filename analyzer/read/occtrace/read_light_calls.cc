// Light traces (OCC_META trace_mode = 'light', docs/schema.md): every launch is a row of
// OCC_LAUNCH_CALL, and OCC_LAUNCH holds only the launches timed in sampling windows. The scan
// of OCC_LAUNCH (read_occtrace.cc) has summed the timed ones; this turns each configuration
// into all its launches with an estimated GPU time: launches x mean timed duration, and the
// estimate's sampling variance N^2 s^2 / n (1 - n/N), the finite-population form, since the
// timed launches are a sample of the N launches without replacement.
// Full traces written before 2026-11-28 may keep OCC_LAUNCH_CALL rows too: the launches made
// while kernel replay's re-attach (since deleted) had CUPTI finalized, which have no kernel
// record; AddReattachGapLaunches counts them.
#include <algorithm>
#include <cmath>
#include <string>
#include <unordered_map>

#include "analyzer/read/occtrace/occtrace_reader.h"

namespace occ {
namespace {

// OCC_LAUNCH_CALL rows per configuration id. In a light trace a timed launch is a call and a
// record: `without_record` leaves out as many of a launch call's calls as it has records (those
// whose configuration has a record first), so that a configuration's launches are its records
// plus its other calls, the rows the CUPTI_ACTIVITY_KIND_KERNEL view (schema/trace_schema.sql)
// gives; by count, since a graph's records can sit on another node's configuration of the same
// shape. A full trace's calls never
// have a record (the writer dropped those that had), and correlation ids may repeat across
// CUPTI attachments, so there every call counts.
StatusOr<std::unordered_map<int64_t, int64_t>> CallsPerConfig(sql::Db& db, bool without_record) {
  std::unordered_map<int64_t, int64_t> calls;
  const char* query = without_record
                          ? "WITH timed AS (SELECT correlationId, configId, COUNT(*) AS n FROM OCC_LAUNCH "
                            "GROUP BY correlationId, configId), "
                            "timed_per_call AS (SELECT correlationId, SUM(n) AS n FROM timed GROUP BY correlationId), "
                            "calls AS (SELECT k.configId, k.correlationId, row_number() OVER (PARTITION BY "
                            "k.correlationId ORDER BY t.correlationId IS NULL, k.configId, k.apiStart) AS nth "
                            "FROM OCC_LAUNCH_CALL k LEFT JOIN timed t "
                            "ON t.correlationId = k.correlationId AND t.configId = k.configId) "
                            "SELECT k.configId, COUNT(*) FROM calls k "
                            "LEFT JOIN timed_per_call p ON p.correlationId = k.correlationId "
                            "WHERE k.nth > coalesce(p.n, 0) GROUP BY k.configId"
                          : "SELECT configId, COUNT(*) FROM OCC_LAUNCH_CALL GROUP BY configId";
  OCC_ASSIGN_OR_RETURN(sql::Stmt stmt, db.Prepare(query));
  while (true) {
    OCC_ASSIGN_OR_RETURN(bool row, stmt.Step());
    if (!row) break;
    calls[stmt.Int64(0)] = stmt.Int64(1);
  }
  return calls;
}

}  // namespace

Status OcctraceReader::AddLaunchCalls(const std::vector<int64_t>& config_ids, std::vector<ConfigStats>* configs,
                                      TraceScan* scan) {
  OCC_ASSIGN_OR_RETURN(bool has_calls, db_->HasTable("OCC_LAUNCH_CALL"));
  if (!has_calls) {
    AddWarning("the trace says trace_mode=light but has no OCC_LAUNCH_CALL table: only timed launches are counted");
    return OkStatus();
  }
  struct Timed {
    int64_t records = 0;  // OCC_LAUNCH rows: timed, or without an end (duration 0)
    int64_t n = 0;        // those with a duration, the estimate's sample
    double sum = 0, sum_squares = 0;
  };
  std::unordered_map<int64_t, Timed> timed;
  {
    OCC_ASSIGN_OR_RETURN(sql::Stmt stmt, db_->Prepare("SELECT configId, COUNT(*), SUM(duration > 0), "
                                                      "TOTAL(duration), TOTAL(CAST(duration AS REAL) * duration) "
                                                      "FROM OCC_LAUNCH GROUP BY configId"));
    while (true) {
      OCC_ASSIGN_OR_RETURN(bool row, stmt.Step());
      if (!row) break;
      timed[stmt.Int64(0)] = Timed{stmt.Int64(1), stmt.Int64(2), stmt.Double(3), stmt.Double(4)};
    }
  }
  OCC_ASSIGN_OR_RETURN(auto untimed_calls, CallsPerConfig(*db_, /*without_record=*/true));
  int64_t never_timed = 0;
  scan->launches = 0;
  scan->total_ns = 0;
  for (size_t i = 0; i < configs->size(); ++i) {
    ConfigStats& c = (*configs)[i];
    const auto call = untimed_calls.find(config_ids[i]);
    const auto sample = timed.find(config_ids[i]);
    const Timed t = sample != timed.end() ? sample->second : Timed{};
    c.time_estimated = true;
    c.estimate_samples = t.n;
    // A timed launch without a launch call (a graph node light tracing could not read) still
    // ran, so it counts as well.
    c.launches = t.records + (call != untimed_calls.end() ? call->second : 0);
    c.untimed_launches = c.launches - t.n;
    if (t.n == 0) {
      ++never_timed;
      c.total_ns = 0;
      c.estimate_variance = 0;
    } else {
      const double n = static_cast<double>(t.n);
      const double total = static_cast<double>(c.launches);
      const double mean = t.sum / n;
      const double variance = t.n > 1 ? std::max(0.0, (t.sum_squares - n * mean * mean) / (n - 1)) : 0;
      c.total_ns = static_cast<int64_t>(mean * total + 0.5);
      c.estimate_variance = total * total * variance / n * std::max(0.0, 1 - n / total);
    }
    scan->launches += c.launches;
    scan->total_ns = SaturatingAdd(scan->total_ns, c.total_ns);
  }
  if (never_timed > 0) {
    AddWarning(std::to_string(never_timed) + " configurations of this light trace never ran in a timing "
               "window: their launches are counted, their GPU time is unknown (counted as 0)");
  }
  return OkStatus();
}

Status OcctraceReader::AddReattachGapLaunches(const std::vector<int64_t>& config_ids,
                                              std::vector<ConfigStats>* configs, TraceScan* scan) {
  OCC_ASSIGN_OR_RETURN(bool has_calls, db_->HasTable("OCC_LAUNCH_CALL"));
  if (!has_calls) return OkStatus();
  OCC_ASSIGN_OR_RETURN(auto calls, CallsPerConfig(*db_, /*without_record=*/false));
  if (calls.empty()) return OkStatus();
  int64_t gap_launches = 0, without_mean = 0, estimated_ns = 0;
  for (size_t i = 0; i < configs->size(); ++i) {
    const auto call = calls.find(config_ids[i]);
    if (call == calls.end()) continue;
    ConfigStats& c = (*configs)[i];
    const int64_t timed = c.launches - c.untimed_launches;
    const int64_t gap = call->second;
    int64_t estimate = 0;
    if (timed > 0) {
      estimate = static_cast<int64_t>(static_cast<double>(c.total_ns) / static_cast<double>(timed) *
                                          static_cast<double>(gap) + 0.5);
    } else {
      without_mean += gap;
    }
    c.launches += gap;
    c.total_ns = SaturatingAdd(c.total_ns, estimate);
    gap_launches += gap;
    estimated_ns = SaturatingAdd(estimated_ns, estimate);
    scan->launches += gap;
    scan->total_ns = SaturatingAdd(scan->total_ns, estimate);
  }
  std::string text = std::to_string(gap_launches) +
                     " launches were made while CUPTI re-attached after achieved-occupancy sampling and have no "
                     "kernel record: counted, their GPU time estimated from their configuration's mean (" +
                     std::to_string(estimated_ns / 1000) + " us)";
  if (without_mean > 0) text += "; " + std::to_string(without_mean) + " of them of configurations never timed (0 ns)";
  AddWarning(text);
  return OkStatus();
}

}  // namespace occ
