// ConfigStats arithmetic shared by the read stage (partial scans of one file) and the group
// stage (configurations of several files): trace_rows.h.
#include "trace_rows.h"

namespace occ {

void MergeInto(ConfigStats* into, const ConfigStats& from) {
  const int64_t into_timed = into->launches - into->untimed_launches;
  const int64_t from_timed = from.launches - from.untimed_launches;
  if (from_timed > 0) {
    if (into_timed == 0) {
      into->min_ns = from.min_ns;
      into->max_ns = from.max_ns;
    } else {
      into->min_ns = std::min(into->min_ns, from.min_ns);
      into->max_ns = std::max(into->max_ns, from.max_ns);
    }
  }
  if (from.first_start_ns > 0 && (into->first_start_ns == 0 || from.first_start_ns < into->first_start_ns)) {
    into->first_start_ns = from.first_start_ns;
  }
  into->last_end_ns = std::max(into->last_end_ns, from.last_end_ns);
  if (from.tail_launches >= 0) into->tail_launches = std::max<int64_t>(0, into->tail_launches) + from.tail_launches;
  into->launches += from.launches;
  into->untimed_launches += from.untimed_launches;
  into->time_estimated = into->time_estimated || from.time_estimated;
  into->estimate_samples += from.estimate_samples;
  into->estimate_variance += from.estimate_variance;
  into->total_ns = SaturatingAdd(into->total_ns, from.total_ns);
  if (from.achieved_samples > 0) {
    if (into->achieved_samples == 0) {
      into->achieved_min = from.achieved_min;
      into->achieved_max = from.achieved_max;
    } else {
      into->achieved_min = std::min(into->achieved_min, from.achieved_min);
      into->achieved_max = std::max(into->achieved_max, from.achieved_max);
    }
  }
  into->achieved_samples += from.achieved_samples;
  into->achieved_sum += from.achieved_sum;
  into->achieved_not_measured += from.achieved_not_measured;
  into->throughput.Merge(from.throughput);
  into->pm.Merge(from.pm);
  for (const auto& [reason, n] : from.not_measured_reasons) into->not_measured_reasons[reason] += n;
  if (into->graph_id == 0) into->graph_id = from.graph_id;
}

}  // namespace occ
