// Placeholder until the range-profiler implementation lands (owned by the achieved engineer).
#include "injector/achieved.h"

namespace occ::inj {
std::unique_ptr<AchievedProfiler> CreateAchievedProfiler(AchievedSink) { return nullptr; }
}  // namespace occ::inj
