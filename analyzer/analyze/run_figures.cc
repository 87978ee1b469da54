#include "analyzer/analyze/run_figures.h"

#include <algorithm>
#include <map>
#include <optional>
#include <string>
#include <utility>

#include "analyzer/analyze/function_key.h"
#include "analyzer/model/message_text.h"
#include "analyzer/read/trace_rows.h"

namespace occ {
namespace {

// The occupancy model's first suggestion (they come best first): the one a model action names.
// A measured gap (larger_blocks) predicts no gain, so it is never an action (run_figures.h).
const occtrace::Suggestion* ModelSuggestion(const occtrace::KernelGroup& g) {
  for (const auto& s : g.suggestions()) {
    if (s.kind() != "measured_config" && s.kind() != "larger_blocks") return &s;
  }
  return nullptr;
}

std::string BlockOf(const occtrace::KernelGroup& g) {
  const int x = std::max(1, g.block_x()), y = std::max(1, g.block_y()), z = std::max(1, g.block_z());
  if (y == 1 && z == 1) return std::to_string(x);
  return "(" + std::to_string(x) + ", " + std::to_string(y) + (z > 1 ? ", " + std::to_string(z) : "") + ")";
}

std::string Ms(int64_t ns) {
  return ns >= 1'000'000 ? Fixed(static_cast<double>(ns) / 1e6, 2) + " ms"
                         : Fixed(static_cast<double>(ns) / 1e3, 1) + " µs";
}

// An action and the index in `judged` of the configuration it names.
struct Built {
  occtrace::Action action;
  size_t group;
};

// The functions with an action to build, in the order of their first configuration (the
// analysis' order is stable), each with its configurations' indices in `judged`. Clears every
// group's counted gain, which the actions set again.
std::vector<std::pair<FunctionKey, std::vector<size_t>>> FunctionsToAct(
    std::vector<occtrace::KernelGroup>* judged) {
  std::map<FunctionKey, std::vector<size_t>> by_function;
  std::vector<FunctionKey> order;
  for (size_t i = 0; i < judged->size(); ++i) {
    auto& g = (*judged)[i];
    g.set_counted_gain_ns(0);
    g.set_counted_gain_kind("");
    // Autotuning trials never become actions (#29): the autotuner measured them already.
    if (!g.tunable() || g.autotuning_trial() || !g.tuning_overhead().empty() || g.suggestions_size() == 0) continue;
    const FunctionKey key = FunctionKeyOf(g);
    if (!by_function.count(key)) order.push_back(key);
    by_function[key].push_back(i);
  }
  std::vector<std::pair<FunctionKey, std::vector<size_t>>> functions;
  for (const FunctionKey& key : order) functions.emplace_back(key, std::move(by_function.at(key)));
  return functions;
}

// The measured suggestion of `named`, the best configuration, with the gains of the function's
// other slower configurations added before its confidence.
std::string MeasuredChange(const std::vector<occtrace::KernelGroup>& judged,
                           const std::vector<size_t>& members, size_t named, int measured_configs,
                           int64_t measured_sum) {
  const occtrace::Suggestion* s = nullptr;
  for (const auto& candidate : judged[named].suggestions()) {
    if (candidate.kind() == "measured_config") s = &candidate;
  }
  std::string change = s != nullptr ? s->text() : "";
  if (measured_configs <= 1) return change;
  std::string others;
  for (size_t i : members) {
    const auto& h = judged[i];
    if (i == named || h.measured_gain_ns() <= 0) continue;
    others += (others.empty() ? "" : ", ") + std::string("block ") + BlockOf(h) + ": " +
              Ms(h.measured_gain_ns());
  }
  // Before the confidence, which the measured suggestion ends with.
  const std::string confidence = ". Confidence:";
  const size_t at = change.rfind(confidence);
  const std::string tail = at == std::string::npos ? "" : change.substr(at);
  if (at != std::string::npos) change.erase(at);
  return change + "; with its other slower configurations (" + others + "), " + Ms(measured_sum) +
         " less GPU time in all" + tail;
}

// The best measured configuration of the function, with the gains of every slower one summed;
// nullopt when none of its configurations was measured slower than another.
std::optional<Built> MeasuredAction(const std::vector<size_t>& members,
                                    std::vector<occtrace::KernelGroup>* judged) {
  size_t named = members.front();
  int64_t measured_sum = 0;
  int measured_configs = 0;
  for (size_t i : members) {
    const auto& g = (*judged)[i];
    if (g.measured_gain_ns() <= 0) continue;
    measured_sum += g.measured_gain_ns();
    ++measured_configs;
    if ((*judged)[named].measured_gain_ns() <= 0 || g.measured_gain_ns() > (*judged)[named].measured_gain_ns()) {
      named = i;
    }
  }
  if (measured_configs == 0) return std::nullopt;
  for (size_t i : members) {
    auto& h = (*judged)[i];
    if (h.measured_gain_ns() <= 0) continue;
    h.set_counted_gain_ns(h.measured_gain_ns());
    h.set_counted_gain_kind("measured");
  }
  occtrace::Action a;
  a.set_change(MeasuredChange(*judged, members, named, measured_configs, measured_sum));
  a.set_evidence("another launch configuration of this function, measured in the trace");
  a.set_gain_ns(measured_sum);
  a.set_gain_kind("measured");
  a.set_confidence("high");
  a.set_configurations(measured_configs);
  return Built{std::move(a), named};
}

// The model's upper bound for the function: the bounds of all its configurations summed, with
// the model's assumptions and, where measured, the kernel's throughput as evidence.
void SetModelBound(const std::vector<size_t>& members, const occtrace::Suggestion& chosen,
                   std::vector<occtrace::KernelGroup>* judged, const occtrace::KernelGroup& g,
                   occtrace::Action* a) {
  std::string evidence = "occupancy model (cuda_occupancy.h); " + chosen.assumptions();
  std::string confidence = g.achieved().samples() > 0 ? "medium" : "low";
  // Measured throughput says whether occupancy is what holds the kernel back.
  if (g.achieved().has_throughput()) {
    const auto& t = g.achieved().throughput();
    evidence += "; measured throughput: " + t.summary();
    if (t.verdict() == "near_ceiling") confidence = "low";
  }
  int64_t bound_sum = 0;
  int bounded = 0;
  for (size_t i : members) {
    auto& h = (*judged)[i];
    if (h.recoverable_ns_upper_bound() <= 0) continue;
    bound_sum += h.recoverable_ns_upper_bound();
    ++bounded;
    h.set_counted_gain_ns(h.recoverable_ns_upper_bound());
    h.set_counted_gain_kind("upper bound");
  }
  if (bounded > 1) {
    a->set_change(a->change() + " (the bound sums its " + std::to_string(bounded) +
                  " configurations with occupancy headroom)");
  }
  a->set_evidence(evidence);
  a->set_gain_ns(bound_sum);
  a->set_gain_kind("upper bound");
  a->set_confidence(confidence);
  a->set_configurations(std::max(1, bounded));
}

// The model's suggestion for the configuration with the most to gain, with the upper bounds of
// all its configurations summed; nullopt when the model predicts no gain for any of them.
std::optional<Built> ModelAction(const std::vector<size_t>& members,
                                 std::vector<occtrace::KernelGroup>* judged) {
  size_t named = members.front();
  for (size_t i : members) {
    const auto& g = (*judged)[i];
    const auto& n = (*judged)[named];
    if (std::make_pair(g.recoverable_ns_upper_bound(), g.total_ns()) >
        std::make_pair(n.recoverable_ns_upper_bound(), n.total_ns())) {
      named = i;
    }
  }
  const auto& g = (*judged)[named];
  const occtrace::Suggestion* chosen = ModelSuggestion(g);
  if (chosen == nullptr || g.recoverable_ns_upper_bound() <= 0) return std::nullopt;
  occtrace::Action a;
  a.set_change(chosen->text());
  SetModelBound(members, *chosen, judged, g, &a);
  return Built{std::move(a), named};
}

// Measured gains first by size, then the rest by their (upper-bound) gain; ties by kernel name
// so that the order never depends on the input's order of groups. Actions below
// kMinorActionPct are minor when any other is not.
RunActions SortActions(std::vector<Built> built) {
  std::stable_sort(built.begin(), built.end(), [](const Built& x, const Built& y) {
    const bool mx = x.action.gain_kind() == "measured", my = y.action.gain_kind() == "measured";
    if (mx != my) return mx;
    if (x.action.gain_ns() != y.action.gain_ns()) return x.action.gain_ns() > y.action.gain_ns();
    return x.action.function_key() < y.action.function_key();
  });
  RunActions out;
  const bool any_major = std::any_of(built.begin(), built.end(),
                                     [](const Built& b) { return b.action.gain_pct() >= kMinorActionPct; });
  for (auto& b : built) {
    if (any_major && b.action.gain_pct() < kMinorActionPct) {
      out.minor_actions.push_back(std::move(b.action));
      out.minor_action_group.push_back(b.group);
    } else {
      out.actions.push_back(std::move(b.action));
      out.action_group.push_back(b.group);
    }
  }
  return out;
}

}  // namespace

RunActions BuildRunActions(std::vector<occtrace::KernelGroup>* judged, int64_t run_total_ns) {
  std::vector<Built> built;
  for (const auto& [key, members] : FunctionsToAct(judged)) {
    std::optional<Built> b = MeasuredAction(members, judged);
    if (!b) b = ModelAction(members, judged);
    if (!b) continue;
    occtrace::Action& a = b->action;
    const occtrace::KernelGroup& named = (*judged)[b->group];
    a.set_function_key(key.Text());
    a.set_kernel(named.short_name().empty() ? named.name() : named.short_name());
    if (named.has_source()) *a.mutable_source() = named.source();
    a.set_origin(named.origin());
    a.set_gain_pct(run_total_ns > 0 ? 100.0 * static_cast<double>(a.gain_ns()) / static_cast<double>(run_total_ns)
                                    : 0.0);
    built.push_back(std::move(*b));
  }
  return SortActions(std::move(built));
}

void SetRecoverable(const RunActions& run, occtrace::Summary* summary) {
  int64_t measured = 0, model = 0;
  for (const auto* list : {&run.actions, &run.minor_actions}) {
    for (const auto& a : *list) {
      if (a.gain_kind() == "measured") measured = SaturatingAdd(measured, a.gain_ns());
      if (a.gain_kind() == "upper bound") model = SaturatingAdd(model, a.gain_ns());
    }
  }
  summary->set_recoverable_measured_ns(measured);
  summary->set_recoverable_model_ns(model);
  summary->set_recoverable_ns_upper_bound(SaturatingAdd(measured, model));
}

}  // namespace occ
