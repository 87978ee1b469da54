// The group stage: merges the rows of every input (ConfigStats, trace_rows.h) into groups of
// launches with one kernel and one configuration on one GPU model, across files and devices,
// and folds the launches the range profiler replayed into their siblings' group. Takes each
// file's rows and devices; gives the groups in order of first appearance.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "analyzer/read/trace_rows.h"

namespace occ {

// One input file's part of a group's launches: what the cross-rank breakdown compares.
struct FileShare {
  int64_t launches = 0;
  int64_t total_ns = 0;
  int64_t achieved_samples = 0;
  double achieved_sum = 0;
  void Add(const ConfigStats& c);
  void Add(const FileShare& other);
};

// A group of launches with one kernel and configuration, possibly over several files/devices.
struct Group {
  ConfigStats stats;
  const TraceDevice* device = nullptr;   // the first device it ran on
  std::set<int> files;
  std::set<int64_t> device_ids;
  std::map<int, FileShare> by_file;      // by InputFile index
};

// The groups by key (GPU model # configuration), and their keys in order of first appearance,
// which keeps the report deterministic.
struct LaunchGroups {
  std::map<std::string, Group> by_key;
  std::vector<std::string> order;
  // Keys FoldProfiledLaunches folded away -> the key of the group that took their launches.
  std::map<std::string, std::string> folded_into;

  // The key of the group a configuration's launches are in after folding ("" when none).
  std::string Resolve(const std::string& key) const;
};

// The key AddToGroups files a configuration under (`device`: its file's device, or nullptr).
std::string GroupKey(const ConfigStats& config, const TraceDevice* device, bool what_if);

// Adds one file's configurations that match --kernel; `devices` are that file's. With `what_if`
// (--gpu) every group is judged on one GPU, so the traced GPU model does not split groups.
void AddToGroups(std::vector<ConfigStats> configs, const std::vector<TraceDevice>& devices,
                 bool what_if, LaunchGroups* groups);

// The executed carveout CUPTI reports for a launch the range profiler replayed is not the one the
// program's launches get: 0 (with no timestamps), or another size. On the H100 (2026-11-22,
// examples/train_small_h100.sql) 32 of 80 measured first launches reported 32 or 100 KiB where
// their 29-59 siblings reported 8-228 KiB, among them a kernel with 120 KiB of dynamic shared
// memory, which cannot run in 32 KiB; the same program traced without the profiler had no such
// splits. Grouped by that value, each measured launch would form a group of its own and leave its
// siblings "not measured". So a group with an unreported carveout, or whose every launch was
// profiled, is folded into the group that has the same configuration apart from the carveout
// and launches the profiler did not touch (else, for an unreported carveout, any reported one),
// the one with most launches. Replayed records can lack the requested carveout percentage too
// (NULL, read as -1), so such a group matches its siblings whatever they requested. In `all`
// mode every launch is profiled: groups then fold only by the unreported-carveout rule.
void FoldProfiledLaunches(LaunchGroups* groups);

}  // namespace occ
