#include "injector/light/launch_calls.h"

#include <new>

namespace occ::inj {
namespace {

std::atomic<uint64_t> g_next_instance_id{1};

}  // namespace

struct Chunk {
  std::atomic<uint32_t> count{0};      // calls written; published with release
  std::atomic<Chunk*> next{nullptr};   // set by the producer once this chunk is full
  LaunchCall calls[LaunchCallStreams::kCallsPerChunk];
};

// One thread's chain. The producer owns `tail`; the consumer owns `head` and `read`. Shared
// ownership between the registry and the thread's thread_local handle: a thread may exit
// before the writer has read its last calls, and the writer may be gone before a thread exits.
struct LaunchCallStreams::ThreadStream {
  Chunk* head = nullptr;
  uint32_t read = 0;
  Chunk* tail = nullptr;
  std::atomic<bool> thread_exited{false};

  ~ThreadStream() {
    for (Chunk* chunk = head; chunk != nullptr;) {
      Chunk* next = chunk->next.load(std::memory_order_acquire);
      delete chunk;
      chunk = next;
    }
  }
};

namespace {

// The calling thread's stream of one LaunchCallStreams instance (in practice there is one per
// process; tests make several, one after another). Instance ids are never reused, so a handle
// left from a destroyed instance never matches a new one at the same address.
struct ThreadHandle {
  uint64_t instance_id = 0;
  std::shared_ptr<LaunchCallStreams::ThreadStream> stream;
  ~ThreadHandle() {
    if (stream) stream->thread_exited.store(true, std::memory_order_release);
  }
};
thread_local ThreadHandle t_handle;

}  // namespace

LaunchCallStreams::LaunchCallStreams(size_t max_chunks)
    : max_chunks_(max_chunks < 1 ? 1 : max_chunks),
      instance_id_(g_next_instance_id.fetch_add(1, std::memory_order_relaxed)) {}

LaunchCallStreams::~LaunchCallStreams() = default;

LaunchCallStreams::ThreadStream* LaunchCallStreams::StreamOfThisThread() {
  if (t_handle.instance_id == instance_id_) return t_handle.stream.get();
  if (t_handle.stream) t_handle.stream->thread_exited.store(true, std::memory_order_release);
  auto stream = std::make_shared<ThreadStream>();
  {
    std::lock_guard lock(streams_mutex_);
    streams_.push_back(stream);
  }
  t_handle.instance_id = instance_id_;
  t_handle.stream = std::move(stream);
  return t_handle.stream.get();
}

bool LaunchCallStreams::Append(const LaunchCall& call) {
  ThreadStream* stream = StreamOfThisThread();
  Chunk* tail = stream->tail;
  uint32_t count = tail != nullptr ? tail->count.load(std::memory_order_relaxed) : 0;
  if (tail == nullptr || count == kCallsPerChunk) {
    if (live_chunks_.fetch_add(1, std::memory_order_relaxed) >= max_chunks_) {
      live_chunks_.fetch_sub(1, std::memory_order_relaxed);
      dropped_.fetch_add(1, std::memory_order_relaxed);
      return false;
    }
    auto* chunk = new (std::nothrow) Chunk;
    if (chunk == nullptr) {
      live_chunks_.fetch_sub(1, std::memory_order_relaxed);
      dropped_.fetch_add(1, std::memory_order_relaxed);
      return false;
    }
    if (tail == nullptr) {
      // The stream was registered empty: its first chunk is published under the registry's
      // mutex, which the consumer takes to read `head`.
      std::lock_guard lock(streams_mutex_);
      stream->head = chunk;
    } else {
      tail->next.store(chunk, std::memory_order_release);
    }
    stream->tail = tail = chunk;
    count = 0;
  }
  tail->calls[count] = call;
  tail->count.store(count + 1, std::memory_order_release);
  return true;
}

size_t LaunchCallStreams::Drain(const std::function<void(const LaunchCall&)>& visit) {
  std::vector<std::shared_ptr<ThreadStream>> streams;
  {
    std::lock_guard lock(streams_mutex_);
    streams = streams_;
  }
  size_t visited = 0;
  std::vector<ThreadStream*> finished;
  for (const std::shared_ptr<ThreadStream>& stream : streams) {
    // Read before the calls: a thread that exited has appended its last call before this.
    const bool exited = stream->thread_exited.load(std::memory_order_acquire);
    Chunk* head = nullptr;
    {
      std::lock_guard lock(streams_mutex_);
      head = stream->head;
    }
    while (head != nullptr) {
      const uint32_t count = head->count.load(std::memory_order_acquire);
      for (uint32_t i = stream->read; i < count; ++i) visit(head->calls[i]);
      visited += count - stream->read;
      stream->read = count;
      if (count < kCallsPerChunk) break;
      Chunk* next = head->next.load(std::memory_order_acquire);
      if (next == nullptr) break;  // full, and the producer has not linked the next one yet
      {
        std::lock_guard lock(streams_mutex_);
        stream->head = next;
      }
      delete head;
      live_chunks_.fetch_sub(1, std::memory_order_relaxed);
      head = next;
      stream->read = 0;
    }
    if (exited) finished.push_back(stream.get());
  }
  if (!finished.empty()) {
    std::lock_guard lock(streams_mutex_);
    for (ThreadStream* done : finished) {
      for (auto it = streams_.begin(); it != streams_.end(); ++it) {
        if (it->get() != done) continue;
        for (Chunk* chunk = done->head; chunk != nullptr; chunk = chunk->next.load(std::memory_order_acquire)) {
          live_chunks_.fetch_sub(1, std::memory_order_relaxed);
        }
        streams_.erase(it);
        break;
      }
    }
  }
  return visited;
}

size_t LaunchCallStreams::threads() const {
  std::lock_guard lock(streams_mutex_);
  return streams_.size();
}

}  // namespace occ::inj
