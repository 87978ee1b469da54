// TraceSession's activity buffer pool (trace_session.h): where CUPTI's record buffers come
// from and how they come back.
//
// Takes: CUPTI's buffer callbacks (AcquireBuffer on whichever thread CUPTI needs a buffer,
// CompleteBuffer inside any cuptiActivityFlushAll), buffers the writer is done with
// (ReleaseBuffer), and requests to flush (FlushActivity: the writer's period, a context being
// destroyed, the end). Gives: recycled, 8-byte aligned (and zeroed) buffers, at most
// max_buffers of them; completed buffers onto the writer's queue (trace_session_writer_loop.cc),
// with CUPTI's dropped-record counts; and, on the writer's period (FlushOnWriter), a forced
// flush once CUPTI has held a buffer longer than max_record_age_ms (held_buffers.h says why the
// plain flush is not enough).
//
// The callbacks stay dumb: they take or queue a buffer under mutex_ (allocating only while the
// pool grows to its cap); parsing and SQLite are the writer thread's. mutex_ is never held
// while calling the flush hook, since CUPTI calls CompleteBuffer from inside it.
#include "injector/session/trace_session.h"

#include <time.h>

#include <chrono>
#include <cinttypes>
#include <cstdlib>
#include <cstring>

#include "injector/common/errors.h"

namespace occ::inj {
namespace {

int64_t MonotonicNs() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

}  // namespace

uint8_t* TraceSession::AcquireBuffer(size_t* size) {
  *size = 0;
  if (InForkedChild()) return nullptr;
  std::lock_guard lock(mutex_);
  // Also after a write error (active_ false): the writer then counts every record it is handed
  // as lost. A refused buffer would make CUPTI drop them instead, and CUPTI's count reaches us
  // only with a later completed buffer of the same context and stream, i.e. maybe never.
  if (phase_ == Phase::kDrain || phase_ == Phase::kDone) return nullptr;
  uint8_t* buffer = nullptr;
  if (!free_buffers_.empty()) {
    buffer = free_buffers_.back();
    free_buffers_.pop_back();
  } else if (allocated_buffers_ < options_.max_buffers) {
    // CUPTI requires 8-byte alignment (ACTIVITY_RECORD_ALIGNMENT); calloc gives 16, and for
    // buffers this large fresh zero pages rather than a memset here, on CUPTI's thread.
    buffer = static_cast<uint8_t*>(std::calloc(1, options_.buffer_bytes));
    if (buffer != nullptr) ++allocated_buffers_;
  }
  if (buffer == nullptr) {
    // Writer behind (or out of memory): CUPTI drops the records and counts them.
    refused_buffers_.fetch_add(1);
    return nullptr;
  }
  held_buffers_.Acquired(buffer, MonotonicNs());
  *size = options_.buffer_bytes;
  return buffer;
}

void TraceSession::ReleaseBuffer(uint8_t* buffer) {
  // Zeroed before it is back in the pool (CUPTI is told its buffers come zeroed, cupti_tracer.cc);
  // normally on the writer.
  std::memset(buffer, 0, options_.buffer_bytes);
  std::lock_guard lock(mutex_);
  free_buffers_.push_back(buffer);
}

void TraceSession::CompleteBuffer(uint8_t* buffer, size_t valid_size, size_t cupti_dropped) {
  if (InForkedChild() || buffer == nullptr) return;  // a child never frees or queues (parent's heap state)
  if (cupti_dropped > 0) dropped_records_.fetch_add(cupti_dropped);
  {
    std::lock_guard lock(mutex_);
    held_buffers_.Completed(buffer);
    if (phase_ != Phase::kDrain && phase_ != Phase::kDone) {
      queue_.push_back(BufferItem{buffer, valid_size});
      buffer = nullptr;
    }
  }
  if (buffer != nullptr) {
    // Session over: the records are lost; count them.
    dropped_records_.fetch_add(ForEachActivity(buffer, valid_size, [](const CUpti_Activity&) {}));
    ReleaseBuffer(buffer);
    return;
  }
  // From inside a flush on the writer thread: it drains the queue right after the flush.
  if (!OnWriterThread()) Wake();
}

bool TraceSession::FlushActivity(FlushKind kind) {
  if (InForkedChild() || getpid() != owner_pid_ || !hooks_.flush_activity) return false;
  const bool forced = kind != FlushKind::kPeriodic;
  std::unique_lock lock(flush_mutex_, std::defer_lock);
  if (kind == FlushKind::kPeriodic || kind == FlushKind::kStale) {
    if (!lock.try_lock()) return false;
  } else if (!lock.try_lock_for(std::chrono::milliseconds(options_.flush_lock_wait_ms))) {
    // The flush in progress did not end: flush anyway rather than risk a deadlock (see the
    // header). Not expected; counted and said once.
    if (unserialized_flushes_.fetch_add(1) == 0) {
      LogLine("a CUPTI activity flush waited %d ms for another one; flushing concurrently",
              options_.flush_lock_wait_ms);
    }
  }
  hooks_.flush_activity(forced);
  return true;
}

void TraceSession::FlushOnWriter() {
  std::deque<Item> items;
  auto drain = [&] {
    {
      std::lock_guard lock(mutex_);
      items.swap(queue_);
    }
    ProcessItems(&items);
  };
  // PM sampling: how far kernel records are complete (pm_sample_join.h, "caught up"): up to
  // just before a flush after which CUPTI held no buffer (each buffer it held had a record not
  // yet complete), or a forced flush. Not in light tracing, whose kernel records come only in
  // timing windows.
  const bool track_records = options_.pm_samples && !options_.light && hooks_.cupti_timestamp;
  const int64_t began = MonotonicNs();
  const uint64_t plain_at = track_records ? hooks_.cupti_timestamp() : 0;
  const bool flushed = FlushActivity(FlushKind::kPeriodic);
  drain();
  const int64_t plain_done = MonotonicNs();
  int64_t oldest_age_ns = 0;
  size_t held = 0;
  {
    std::lock_guard lock(mutex_);
    oldest_age_ns = held_buffers_.OldestAgeNs(plain_done);
    held = held_buffers_.count();
  }
  if (flushed && held == 0 && plain_at != 0) writer_->PmRecordsThrough(plain_at);
  const bool stale = options_.max_record_age_ms > 0 &&
                     oldest_age_ns >= int64_t{options_.max_record_age_ms} * 1'000'000;
  if (stale) {
    const uint64_t forced_at = track_records ? hooks_.cupti_timestamp() : 0;
    const bool forced_flushed = FlushActivity(FlushKind::kStale);
    drain();
    if (forced_flushed && forced_at != 0) writer_->PmRecordsThrough(forced_at);
    ++stale_forced_flushes_;
    writer_->SetMeta("stale_forced_flushes", std::to_string(stale_forced_flushes_));
  }
  if (track_records) JudgePmImages(false);  // what the records just caught up with
  if (options_.debug_flush) {
    const int64_t done = MonotonicNs();
    LogLine("flush t=%.3f plain=%.2fms held=%zu oldest=%.0fms forced=%s%s launches=%" PRIu64,
            static_cast<double>(began) / 1e9, static_cast<double>(plain_done - began) / 1e6, held,
            static_cast<double>(oldest_age_ns) / 1e6, stale ? "yes " : "no",
            stale ? (std::to_string(static_cast<double>(done - plain_done) / 1e6) + "ms").c_str() : "",
            writer_->stats().launches);
  }
}

}  // namespace occ::inj
