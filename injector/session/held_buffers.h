// HeldBuffers: which activity buffers CUPTI holds (handed out by the buffer-request callback,
// not yet given back by buffer-completed), and since when.
//
// Why: cuptiActivityFlushAll(0) returns only buffers whose every record is complete
// (cupti_activity.h). Two cases never satisfy that while a program keeps launching: the
// buffer being filled always holds a kernel still in flight, and a launch replayed by the
// range profiler leaves a record that never completes (start = end = 0), which withholds its
// buffer until the forced flush at exit. Either way a SIGKILL would lose every record in
// them. The writer therefore asks for a forced flush once the oldest held buffer is older than
// the configured record age (TraceSession, SessionOptions::max_record_age_ms): buffers that
// complete on their own keep coming back through the cheap flush, and the forced one, which
// hands back a still-running kernel without its end time, runs only when needed.
//
// Not thread-safe: TraceSession guards it with its own mutex.
#pragma once

#include <cstdint>
#include <unordered_map>

namespace occ::inj {

class HeldBuffers {
 public:
  void Acquired(const uint8_t* buffer, int64_t now_ns) { held_[buffer] = now_ns; }
  // Unknown buffers (handed out before tracking began, or twice returned) are ignored.
  void Completed(const uint8_t* buffer) { held_.erase(buffer); }

  size_t count() const { return held_.size(); }

  // Age of the buffer CUPTI has held longest; 0 when it holds none.
  int64_t OldestAgeNs(int64_t now_ns) const {
    int64_t oldest = now_ns;
    for (const auto& [buffer, since] : held_) oldest = since < oldest ? since : oldest;
    return now_ns - oldest;
  }

 private:
  // At most SessionOptions::max_buffers entries (64 by default): a scan is cheaper than an
  // ordered index and runs once per flush period.
  std::unordered_map<const uint8_t*, int64_t> held_;
};

}  // namespace occ::inj
