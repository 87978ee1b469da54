// Light tracing with CUPTI detached (cupti_controller.h): the driver's context and stream ids
// translated to CUPTI's.
//
// While CUPTI is detached the launch hook names a launch's context and stream by the driver's
// unique ids (cuCtxGetId, cuStreamGetId), since asking CUPTI would attach it again. Kernel
// records, and every full trace, carry CUPTI's ids, and a light trace matches timed records to
// launches by context. So whenever CUPTI's launch callbacks run (attached, in a timing window)
// they learn which CUPTI id each driver id is, and the writer translates every launch before
// writing it. A launch whose ids were never learned keeps the driver's (counted in OCC_META).
// Thread-safe: learners are program threads, the translator is the writer thread.
#pragma once

#include <cstdint>
#include <mutex>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace occ::inj {

class IdTranslation {
 public:
  // Driver ids are kept to their low 32 bits, as a LaunchCall holds them (the driver counts
  // them up from 1 per process).
  void LearnContext(uint64_t driver_id, uint32_t cupti_id) { Learn(&contexts_, driver_id, cupti_id); }
  void LearnStream(uint64_t driver_id, uint32_t cupti_id) { Learn(&streams_, driver_id, cupti_id); }

  // Writer thread: CUPTI's ids for the driver's, in place; unknown ones stay and are counted.
  void Translate(uint32_t* context_id, uint32_t* stream_id) {
    std::lock_guard lock(mutex_);
    Apply(&contexts_, context_id, &untranslated_contexts_);
    Apply(&streams_, stream_id, &untranslated_streams_);
  }

  std::vector<std::pair<std::string, std::string>> Meta() const {
    std::lock_guard lock(mutex_);
    auto same = [](const Table& table) {
      uint64_t equal = 0;
      for (const auto& [driver_id, cupti_id] : table.ids) equal += driver_id == cupti_id ? 1 : 0;
      return std::to_string(equal) + "/" + std::to_string(table.ids.size());
    };
    return {
        {"light_detach_contexts_learned_equal", same(contexts_)},
        {"light_detach_streams_learned_equal", same(streams_)},
        {"light_detach_untranslated_context_launches", std::to_string(untranslated_contexts_)},
        {"light_detach_untranslated_stream_launches", std::to_string(untranslated_streams_)},
    };
  }

 private:
  struct Table {
    std::unordered_map<uint32_t, uint32_t> ids;
  };
  void Learn(Table* table, uint64_t driver_id, uint32_t cupti_id) {
    std::lock_guard lock(mutex_);
    table->ids[static_cast<uint32_t>(driver_id)] = cupti_id;
  }
  static void Apply(Table* table, uint32_t* id, uint64_t* untranslated) {
    auto it = table->ids.find(*id);
    if (it == table->ids.end()) {
      ++*untranslated;
      return;
    }
    *id = it->second;
  }

  mutable std::mutex mutex_;
  Table contexts_;
  Table streams_;
  uint64_t untranslated_contexts_ = 0;
  uint64_t untranslated_streams_ = 0;
};

}  // namespace occ::inj
