// The overlap sweep (launch_overlap.h).
#include "analyzer/read/launch_overlap.h"

#include <algorithm>
#include <functional>
#include <numeric>
#include <tuple>
#include <utility>

#include "analyzer/read/trace_rows.h"

namespace occ {

void OverlapSums::AddStream(int64_t stream) {
  auto at = std::lower_bound(streams.begin(), streams.end(), stream);
  if (at != streams.end() && *at == stream) return;
  if (streams.size() >= kMaxOverlapStreams) {
    // Keep the lowest ids, so the list does not depend on the order launches were read in.
    if (at == streams.end()) {
      more_streams = true;
      return;
    }
    streams.pop_back();
    more_streams = true;
  }
  streams.insert(at, stream);
}

void OverlapSums::Merge(const OverlapSums& other) {
  launches += other.launches;
  launch_ns = SaturatingAdd(launch_ns, other.launch_ns);
  overlapped_ns = SaturatingAdd(overlapped_ns, other.overlapped_ns);
  solo_launches += other.solo_launches;
  solo_ns = SaturatingAdd(solo_ns, other.solo_ns);
  more_streams = more_streams || other.more_streams;
  for (int64_t s : other.streams) AddStream(s);
}

namespace {

// Each launch's time overlapped by other launches of its device (`launches` sorted by start):
// the time within it during which at least two launches ran. One walk over starts and ends in
// time order keeps F(t), the time up to t with two or more launches running; a launch's overlap
// is F(end) − F(start). Also returns the device's busy time (one or more running).
int64_t OverlappedTimes(const TimedLaunch* launches, size_t n, std::vector<int64_t>* overlapped) {
  std::vector<uint32_t> by_end(n);
  std::iota(by_end.begin(), by_end.end(), 0U);
  std::sort(by_end.begin(), by_end.end(),
            [&](uint32_t a, uint32_t b) { return launches[a].end < launches[b].end; });
  overlapped->assign(n, 0);
  int64_t busy = 0, two_or_more = 0, previous = launches[0].start;
  int64_t running = 0;
  size_t next_start = 0, next_end = 0;
  while (next_end < n) {
    // Ends before starts at the same time: intervals are half-open, touching is not overlapping.
    const bool is_start = next_start < n && launches[next_start].start < launches[by_end[next_end]].end;
    const int64_t t = is_start ? launches[next_start].start : launches[by_end[next_end]].end;
    if (running >= 1) busy += t - previous;
    if (running >= 2) two_or_more += t - previous;
    previous = t;
    if (is_start) {
      (*overlapped)[next_start++] = two_or_more;  // F(start), until its end replaces it
      ++running;
    } else {
      const uint32_t i = by_end[next_end++];
      (*overlapped)[i] = two_or_more - (*overlapped)[i];
      --running;
    }
  }
  return busy;
}

// The other streams each configuration overlapped: at each launch's start, the launches still
// running beside it (at most kMaxActiveVisited of them).
void NameOverlappedStreams(const TimedLaunch* launches, size_t n, std::vector<OverlapSums>* sums) {
  using Active = std::pair<int64_t, size_t>;  // (end, index)
  // A min-heap by end, kept in a vector so that its entries can be visited in place.
  std::vector<Active> running;
  const auto later = std::greater<Active>();
  for (size_t i = 0; i < n; ++i) {
    const TimedLaunch& l = launches[i];
    while (!running.empty() && running.front().first <= l.start) {
      std::pop_heap(running.begin(), running.end(), later);
      running.pop_back();
    }
    const size_t visited = std::min(running.size(), kMaxActiveVisited);
    for (size_t k = 0; k < visited; ++k) {
      const TimedLaunch& other = launches[running[k].second];
      if (other.stream == l.stream) continue;
      (*sums)[static_cast<size_t>(l.config)].AddStream(other.stream);
      (*sums)[static_cast<size_t>(other.config)].AddStream(l.stream);
    }
    running.emplace_back(l.end, i);
    std::push_heap(running.begin(), running.end(), later);
  }
}

// One device's launches, sorted by start, into their configurations' sums; its busy time.
int64_t SweepDevice(const TimedLaunch* launches, size_t n, std::vector<OverlapSums>* sums) {
  std::vector<int64_t> overlapped;
  const int64_t busy = OverlappedTimes(launches, n, &overlapped);
  for (size_t i = 0; i < n; ++i) {
    const TimedLaunch& l = launches[i];
    OverlapSums& s = (*sums)[static_cast<size_t>(l.config)];
    const int64_t duration = l.end - l.start;
    ++s.launches;
    // Corrupt rows can hold durations near 2^63: sums saturate (trace_rows.h).
    s.launch_ns = SaturatingAdd(s.launch_ns, duration);
    s.overlapped_ns = SaturatingAdd(s.overlapped_ns, overlapped[i]);
    if (static_cast<double>(overlapped[i]) <= kSoloToleranceFraction * static_cast<double>(duration)) {
      ++s.solo_launches;
      s.solo_ns = SaturatingAdd(s.solo_ns, duration);
    }
  }
  NameOverlappedStreams(launches, n, sums);
  return busy;
}

}  // namespace

OverlapResult SweepOverlap(std::vector<TimedLaunch>* launches,
                           const std::vector<int64_t>& device_of_config) {
  OverlapResult result;
  result.per_config.resize(device_of_config.size());
  std::vector<TimedLaunch>& v = *launches;
  const auto configs = static_cast<int64_t>(device_of_config.size());
  v.erase(std::remove_if(v.begin(), v.end(),
                         [&](const TimedLaunch& l) {
                           return l.end <= l.start || l.config < 0 || l.config >= configs;
                         }),
          v.end());
  auto device = [&](const TimedLaunch& l) { return device_of_config[static_cast<size_t>(l.config)]; };
  // Ties by end, stream and configuration: the same order (and so the same streams kept) for
  // any order the reader gathered the launches in.
  std::sort(v.begin(), v.end(), [&](const TimedLaunch& a, const TimedLaunch& b) {
    return std::make_tuple(device(a), a.start, a.end, a.stream, a.config) <
           std::make_tuple(device(b), b.start, b.end, b.stream, b.config);
  });
  size_t begin = 0;
  while (begin < v.size()) {
    size_t end = begin + 1;
    while (end < v.size() && device(v[end]) == device(v[begin])) ++end;
    result.busy_ns = SaturatingAdd(result.busy_ns, SweepDevice(v.data() + begin, end - begin, &result.per_config));
    begin = end;
  }
  return result;
}

}  // namespace occ
