#include "analyzer/analyze/grouping.h"

#include <algorithm>
#include <sstream>
#include <utility>

#include "analyzer/model/message_text.h"

namespace occ {
namespace {

std::string DeviceKey(const TraceDevice* d) {
  if (d == nullptr || !d->known) {
    return d == nullptr ? "none" : "unknown:" + std::to_string(d->file_index) + ":" +
                                       std::to_string(d->device_id);
  }
  const DeviceProps& p = d->props;
  std::ostringstream key;
  key << p.name << '|' << p.cc_major << '.' << p.cc_minor << '|' << p.num_sms << '|'
      << p.max_threads_per_sm << '|' << p.regs_per_sm << '|' << p.smem_per_sm << '|'
      << p.smem_per_block_optin << '|' << p.reserved_smem_per_block;
  return key.str();
}

}  // namespace

void FileShare::Add(const ConfigStats& c) {
  launches += c.launches;
  total_ns = SaturatingAdd(total_ns, c.total_ns);
  achieved_samples += c.achieved_samples;
  achieved_sum += c.achieved_sum;
}

void FileShare::Add(const FileShare& other) {
  launches += other.launches;
  total_ns = SaturatingAdd(total_ns, other.total_ns);
  achieved_samples += other.achieved_samples;
  achieved_sum += other.achieved_sum;
}

std::string GroupKey(const ConfigStats& c, const TraceDevice* device, bool what_if) {
  return (what_if ? std::string("what-if") : DeviceKey(device)) + "#" + LaunchConfigKey(c);
}

std::string LaunchGroups::Resolve(const std::string& key) const {
  std::string k = key;
  // A group can be folded into one that is folded later; the chain is at most as long as the
  // folds, and a damaged one must not loop.
  for (size_t hops = 0; hops <= folded_into.size(); ++hops) {
    if (by_key.count(k) > 0) return k;
    auto fold = folded_into.find(k);
    if (fold == folded_into.end()) return "";
    k = fold->second;
  }
  return "";
}


void AddToGroups(std::vector<ConfigStats> configs, const std::vector<TraceDevice>& devices,
                 bool what_if, LaunchGroups* groups) {
  for (auto& c : configs) {
    if (!c.matched) continue;
    const TraceDevice* device = FindDevice(devices, c.device_id);
    std::string key = GroupKey(c, device, what_if);
    auto it = groups->by_key.find(key);
    if (it == groups->by_key.end()) {
      Group g;
      g.device = device;
      g.files.insert(c.file_index);
      g.device_ids.insert(c.device_id);
      g.by_file[c.file_index].Add(c);
      g.stats = std::move(c);
      groups->order.push_back(key);
      groups->by_key.emplace(key, std::move(g));
    } else {
      it->second.files.insert(c.file_index);
      it->second.device_ids.insert(c.device_id);
      it->second.by_file[c.file_index].Add(c);
      MergeInto(&it->second.stats, c);
    }
  }
}

void FoldProfiledLaunches(LaunchGroups* groups) {
  auto profiled = [](const ConfigStats& c) { return c.achieved_samples + c.achieved_not_measured; };
  auto only_profiled = [&](const ConfigStats& c) { return c.launches > 0 && profiled(c) >= c.launches; };
  auto loose_key = [](const std::string& key, ConfigStats stats, bool any_requested_carveout) {
    if (any_requested_carveout) stats.carveout_pct = -1;
    return key.substr(0, key.find('#')) + "#" + LaunchConfigKey(stats, false);
  };
  // Preferred target: launches the profiler did not touch, then the most launches.
  auto better = [&](const ConfigStats& a, const ConfigStats& b) {
    return std::make_pair(!only_profiled(a), a.launches) > std::make_pair(!only_profiled(b), b.launches);
  };
  // key without the executed carveout (and, in the second map, without the requested one) ->
  // the best group that reported its carveout
  std::map<std::string, std::string> reported, reported_any_request;
  for (const auto& key : groups->order) {
    const Group& g = groups->by_key.at(key);
    if (g.stats.smem_executed == 0) continue;
    for (bool any_request : {false, true}) {
      auto& index = any_request ? reported_any_request : reported;
      std::string loose = loose_key(key, g.stats, any_request);
      auto it = index.find(loose);
      if (it == index.end() || better(g.stats, groups->by_key.at(it->second).stats)) {
        index[loose] = key;
      }
    }
  }
  std::vector<std::string> kept;
  for (const auto& key : groups->order) {
    Group& g = groups->by_key.at(key);
    const bool unreported = g.stats.smem_executed == 0;
    if (unreported || only_profiled(g.stats)) {
      const bool request_unreported = g.stats.carveout_pct < 0;
      const auto& index = request_unreported ? reported_any_request : reported;
      auto it = index.find(loose_key(key, g.stats, request_unreported));
      // count(): an entry of one map may name a group already folded through the other (a
      // profiled-only group with a requested carveout); the group then simply stays apart.
      if (it != index.end() && it->second != key && groups->by_key.count(it->second) > 0 &&
          (unreported || !only_profiled(groups->by_key.at(it->second).stats))) {
        Group& into = groups->by_key.at(it->second);
        into.files.insert(g.files.begin(), g.files.end());
        into.device_ids.insert(g.device_ids.begin(), g.device_ids.end());
        for (const auto& [file, share] : g.by_file) into.by_file[file].Add(share);
        MergeInto(&into.stats, g.stats);
        groups->folded_into[key] = it->second;
        groups->by_key.erase(key);
        continue;
      }
    }
    kept.push_back(key);
  }
  groups->order = std::move(kept);
}

}  // namespace occ
