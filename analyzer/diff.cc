#include "diff.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <map>
#include <string>

#include "trace_rows.h"

namespace occ {
namespace {

// "grid 1024x1x1, block 256x1x1, 44 regs, smem 0+4096 B": a diff row's configuration.
std::string ConfigLabel(const occtrace::KernelGroup& g) {
  return "grid " + std::to_string(g.grid_x()) + "x" + std::to_string(g.grid_y()) + "x" +
         std::to_string(g.grid_z()) + ", block " + std::to_string(g.block_x()) + "x" +
         std::to_string(g.block_y()) + "x" + std::to_string(g.block_z()) + ", " +
         std::to_string(g.registers_per_thread()) + " regs, smem " +
         std::to_string(g.static_shared_mem()) + "+" + std::to_string(g.dynamic_shared_mem()) +
         " B";
}

struct KernelTotals {
  int64_t total_ns = 0;
  int64_t launches = 0;
  double weighted_occupancy = 0;  // sum of occupancy x judged time
  int64_t judged_ns = 0;
  int64_t largest_ns = -1;
  std::string config;
  bool present = false;
};

std::map<std::string, KernelTotals> Totals(const std::vector<occtrace::KernelGroup>& groups) {
  std::map<std::string, KernelTotals> totals;
  for (const auto& g : groups) {
    KernelTotals& t = totals[g.name()];
    t.present = true;
    t.total_ns = SaturatingAdd(t.total_ns, g.total_ns());
    t.launches += g.launches();
    if (g.judged()) {
      t.weighted_occupancy += g.occupancy().theoretical_occupancy_pct() *
                              static_cast<double>(g.total_ns());
      t.judged_ns = SaturatingAdd(t.judged_ns, g.total_ns());
    }
    if (g.total_ns() > t.largest_ns) {
      t.largest_ns = g.total_ns();
      t.config = ConfigLabel(g);
    }
  }
  return totals;
}

double Occupancy(const KernelTotals& t) {
  if (t.judged_ns > 0) return t.weighted_occupancy / static_cast<double>(t.judged_ns);
  return 0;  // no judged group (or all of 0 ns)
}

}  // namespace

std::vector<occtrace::DiffRow> DiffKernels(const std::vector<occtrace::KernelGroup>& before,
                                           const std::vector<occtrace::KernelGroup>& after) {
  std::map<std::string, KernelTotals> b = Totals(before);
  std::map<std::string, KernelTotals> a = Totals(after);
  std::map<std::string, int> names;
  for (const auto& [name, t] : b) names[name] |= 1;
  for (const auto& [name, t] : a) names[name] |= 2;

  std::vector<occtrace::DiffRow> rows;
  for (const auto& [name, where] : names) {
    occtrace::DiffRow row;
    row.set_name(name);
    const KernelTotals empty;
    const KernelTotals& tb = (where & 1) ? b[name] : empty;
    const KernelTotals& ta = (where & 2) ? a[name] : empty;
    row.set_config_before(tb.config);
    row.set_config_after(ta.config);
    row.set_occupancy_before_pct(Occupancy(tb));
    row.set_occupancy_after_pct(Occupancy(ta));
    row.set_total_ns_before(tb.total_ns);
    row.set_total_ns_after(ta.total_ns);
    row.set_launches_before(tb.launches);
    row.set_launches_after(ta.launches);
    if (where == 1) {
      row.set_status("gone");
    } else if (where == 2) {
      row.set_status("new");
    } else if (tb.config != ta.config ||
               std::fabs(row.occupancy_after_pct() - row.occupancy_before_pct()) >= 0.05) {
      // Times differ between any two runs; "changed" means the launch configuration or its
      // occupancy did, the time deltas are in the row either way.
      row.set_status("changed");
    } else {
      row.set_status("same");
    }
    rows.push_back(std::move(row));
  }
  std::stable_sort(rows.begin(), rows.end(), [](const auto& x, const auto& y) {
    int64_t dx = std::llabs(x.total_ns_after() - x.total_ns_before());
    int64_t dy = std::llabs(y.total_ns_after() - y.total_ns_before());
    if (dx != dy) return dx > dy;
    return x.name() < y.name();
  });
  return rows;
}

}  // namespace occ
