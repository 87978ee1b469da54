// What the timeline export (timeline_export.h) reads from an occtrace trace beyond the launches:
// the time origin and the PM samples. A torch.profiler trace, loaded in this schema, is read the
// same way.
#include "analyzer/read/occtrace/occtrace_reader.h"

namespace occ {

StatusOr<int64_t> OcctraceReader::FirstLaunchStart() {
  // Start 0 is a replayed launch.
  OCC_ASSIGN_OR_RETURN(sql::Stmt stmt,
                       db_->Prepare("SELECT min(start) FROM OCC_LAUNCH WHERE start > 0"));
  OCC_ASSIGN_OR_RETURN(bool row, stmt.Step());
  return row && !stmt.IsNull(0) ? stmt.Int64(0) : int64_t{0};
}

Status OcctraceReader::ForEachPmSample(const std::function<Status(const PmSampleRow&)>& visit) {
  OCC_ASSIGN_OR_RETURN(bool present, db_->HasTable("OCC_PM_SAMPLE"));
  if (!present) return OkStatus();
  OCC_ASSIGN_OR_RETURN(sql::Stmt stmt, db_->Prepare(
      "SELECT deviceId, start, \"end\", smCyclesActive, warpsActive FROM OCC_PM_SAMPLE "
      "ORDER BY deviceId, start"));
  while (true) {
    OCC_ASSIGN_OR_RETURN(bool row, stmt.Step());
    if (!row) break;
    PmSampleRow r;
    r.device_id = stmt.Int64(0);
    r.start = stmt.Int64(1);
    r.end = stmt.Int64(2);
    r.sm_cycles_active = stmt.Double(3);
    r.warps_active = stmt.Double(4);
    OCC_RETURN_IF_ERROR(visit(r));
  }
  return OkStatus();
}

}  // namespace occ
