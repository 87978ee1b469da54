#include "injector/achieved/achieved_policy.h"

#include <utility>

namespace occ::inj {
namespace {

void HashCombine(size_t* seed, uint64_t value) {
  *seed ^= std::hash<uint64_t>{}(value) + 0x9e3779b97f4a7c15ULL + (*seed << 6) + (*seed >> 2);
}

}  // namespace

std::string_view AchievedModeName(AchievedMode mode) {
  switch (mode) {
    case AchievedMode::kOff: return "off";
    case AchievedMode::kSample: return "sample";
    case AchievedMode::kAll: return "all";
    case AchievedMode::kPm: return "pm";
  }
  return "unknown";
}

size_t LaunchSignatureHash::operator()(const LaunchSignature& s) const noexcept {
  size_t seed = 0;
  HashCombine(&seed, s.context);
  HashCombine(&seed, s.function);
  HashCombine(&seed, (uint64_t{s.grid_x} << 32) | s.grid_y);
  HashCombine(&seed, (uint64_t{s.grid_z} << 32) | s.block_x);
  HashCombine(&seed, (uint64_t{s.block_y} << 32) | s.block_z);
  HashCombine(&seed, s.dynamic_smem);
  return seed;
}

namespace {
// Policy ids start at 1: a fresh ThreadCache (owner 0) belongs to no policy.
std::atomic<uint64_t> g_next_policy_id{1};
}  // namespace

bool AchievedPolicy::ThreadCache::Contains(const LaunchSignature& signature, size_t hash) const {
  if (!sets_) return false;
  const Set& set = sets_[hash % kSets];
  for (size_t way = 0; way < kWays; ++way) {
    if (set.valid[way] && set.signatures[way] == signature) return true;
  }
  return false;
}

void AchievedPolicy::ThreadCache::Insert(const LaunchSignature& signature, size_t hash) {
  if (!sets_) sets_ = std::make_unique<Set[]>(kSets);
  Set& set = sets_[hash % kSets];
  size_t way = 0;
  while (way < kWays && set.valid[way]) ++way;
  if (way == kWays) {  // full: replace round-robin
    way = set.next_victim;
    set.next_victim = static_cast<uint8_t>((way + 1) % kWays);
  }
  set.signatures[way] = signature;
  set.valid[way] = true;
}

AchievedPolicy::AchievedPolicy(AchievedConfig config, NanoClock clock, int64_t start_ns)
    : config_(config),
      clock_(std::move(clock)),
      start_ns_(start_ns),
      id_(g_next_policy_id.fetch_add(1, std::memory_order_relaxed)),
      last_busy_ns_(start_ns),
      budget_(config.budget_fraction, config.burst_ns) {}

bool AchievedPolicy::BudgetAllowsLocked(int64_t now_ns) {
  // Paused: resume only when a whole burst fits (AchievedConfig::burst_ns).
  const bool allows = budget_.Allows(profiling_ns_, now_ns - start_ns_);
  budget_paused_.store(budget_.paused(), std::memory_order_relaxed);
  return allows;
}

AchievedPolicy::Decision AchievedPolicy::Decide(const LaunchSignature& signature,
                                                ThreadCache* cache) {
  if (config_.mode == AchievedMode::kOff) return {};
  const bool sample_mode = config_.mode == AchievedMode::kSample;
  size_t hash = 0;
  if (sample_mode && cache != nullptr) {
    if (cache->owner_ != id_) {
      cache->sets_.reset();
      cache->owner_ = id_;
    }
    hash = LaunchSignatureHash{}(signature);
    if (cache->Contains(signature, hash)) return {};  // the steady state: no lock
  }

  std::lock_guard<std::mutex> lock(mutex_);
  auto it = signatures_.find(signature);
  if (it == signatures_.end()) {
    if (static_cast<int64_t>(signatures_.size()) >= config_.max_signatures) {
      ++launches_over_signature_cap_;
      return {};
    }
    it = signatures_.emplace(signature, SignatureState{}).first;
  }
  SignatureState& state = it->second;
  if (sample_mode) {
    if (state.finished >= config_.samples_per_signature) {
      if (cache != nullptr) cache->Insert(signature, hash);
      return {};
    }
    if (state.reserved >= config_.samples_per_signature) return {};  // in flight elsewhere
    const int64_t now = clock_();
    if (!BudgetAllowsLocked(now)) {
      ++skipped_for_budget_;  // not activity: the profiler parks until the next burst
      return {};
    }
    last_busy_ns_.store(now, std::memory_order_relaxed);
  }
  Decision decision{true, state.reserved};
  ++state.reserved;
  return decision;
}

int64_t AchievedPolicy::IdleNs() const {
  return clock_() - last_busy_ns_.load(std::memory_order_relaxed);
}

void AchievedPolicy::Finish(const LaunchSignature& signature, int64_t profiling_ns,
                            bool measured) {
  std::lock_guard<std::mutex> lock(mutex_);
  profiling_ns_ += profiling_ns;
  // Idle time counts from the end of the last measurement: a re-enable plus measurement can
  // itself outlast the idle limit.
  if (config_.mode == AchievedMode::kSample) {
    last_busy_ns_.store(clock_(), std::memory_order_relaxed);
  }
  auto it = signatures_.find(signature);
  if (it == signatures_.end()) return;
  SignatureState& state = it->second;
  // A launch that yielded no range keeps its sample (it is finished, not measured): retrying a
  // signature that never yields one (cluster launches, docs/achieved.md) would spend ~3 ms
  // on every launch.
  ++state.finished;
  if (measured) {
    if (state.measured == 0) ++signatures_measured_;
    ++state.measured;
    ++launches_measured_;
  }
}

void AchievedPolicy::Release(const LaunchSignature& signature) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = signatures_.find(signature);
  if (it != signatures_.end() && it->second.reserved > it->second.finished) --it->second.reserved;
}

int64_t AchievedPolicy::launches_measured() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return launches_measured_;
}
int64_t AchievedPolicy::signatures_measured() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return signatures_measured_;
}
int64_t AchievedPolicy::signatures_seen() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return static_cast<int64_t>(signatures_.size());
}
int64_t AchievedPolicy::profiling_ns() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return profiling_ns_;
}
int64_t AchievedPolicy::budget_pauses() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return budget_.pauses();
}
int64_t AchievedPolicy::skipped_for_budget() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return skipped_for_budget_;
}
int64_t AchievedPolicy::launches_over_signature_cap() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return launches_over_signature_cap_;
}

}  // namespace occ::inj
