// The solve step of PM attribution (pm_attribution.h): per-unit counter totals from every sample,
// clean and mixed, by non-negative least squares. A unit is one launch configuration on one
// device (configurations that only differ in what grouping ignores, e.g. CUDA-graph nodes, are
// one unit: pm_attribution.h).
//
// The model. A PM sample's device-wide counters add over the kernels inside it. A launch of unit
// u adds, for each ns of it inside the sample, its body's rate (a_u warps, b_u cycles), and once
// for its ramp-up and once for its tail, fixed amounts against that rate (α_u, β_u: usually
// deficits, while blocks arrive and while the last ones drain, when SMs are partly idle):
//     warpsActive_j    = Σ_u ( t_ju·a_u + s_ju·α_u + e_ju·β_u )
//     smCyclesActive_j = Σ_u ( t_ju·a'_u + s_ju·α'_u + e_ju·β'_u )
// where t_ju is the time unit u's launches spent in sample j (two at once count twice), and s_ju,
// e_ju how many of them started and ended in it. Launches of different units running at the same
// time break the sum (an SM's active cycle counts once, whoever holds it): the sweep keeps such
// samples out (pm_attribution.h). Idle time adds nothing to either counter
// (sm__cycles_active counts only cycles in which an SM held a warp), so it needs no term.
// Why the ramp and tail terms: with rates alone, a launch's edges (where its rates are lower)
// fall in samples shared with its neighbours, and the fit, which weighs a sample by the unit's
// share of it, leans toward the body's rates: on simulated 2-10 us kernels with 1 us edges at
// half rate it read 0.3-3 points off the whole-launch figure, 4-12 of its standard errors
// (tests/analysis/pm_rates_test.cc). With them, a unit's figure is its whole launches':
//     W_u = a_u·T_u + α_u·S_u + β_u·E_u  (T, S, E: its time, starts and ends in the samples)
// and achieved occupancy = W_u ÷ (C_u × max warps per SM), the ratio Nsight Compute takes.
//
// Weighting. A counter accrues over the busy time in the sample, so its noise grows with that
// time: each sample is weighted by 1 / Σ_u t_ju. Then the normal equation of a unit's time
// column says Σ_j (its share of sample j) × residual_j = 0, so a unit that only ever ran alone
// gets W_u = Σ warps and C_u = Σ cycles over its samples exactly: the clean-sample figure is the
// special case.
//
// The solve. Units linked by mixed samples form components, each solved on its own dense Gram
// matrix (three columns per unit; Eigen), scaled to a unit diagonal:
//  1. Separability: a pivoted Cholesky (largest remaining pivot first, time columns before ramp
//     and tail ones) keeps the columns that are not, within kDependentPivot, combinations of the
//     kept ones. A dropped column that only
//     needs its own unit's (a kernel of one length: its time is a multiple of its starts) costs
//     nothing. A ramp or tail column that needs other units' edge columns (a kernel that always
//     starts as another ends, common in a short run's fixed order) makes the pair's edges one
//     term to the samples, and which kernel owns that deficit is not in them: all of those edge
//     columns are dropped, and those edges count at their kernels' body rates. A time column
//     that needs other units' ("always run together") means the samples cannot tell those units
//     apart: all of them get kNotSeparable.
//  2. Lawson-Hanson NNLS on the Gram matrix, once for warps, once for cycles: rates (time
//     columns) >= 0, ramp and tail terms free; warm-started from the unconstrained solution. A
//     unit whose whole-launch total is still not positive ran, but its samples do not add up
//     (another process's work, kernels sharing SMs): kNoCounts.
//  3. Errors: the heteroscedasticity-robust (sandwich, HC1) covariance of the coefficients left
//     free, G⁻¹ (Σ_j w_j² r_j r'_j x_j x_jᵀ) G⁻¹ · n/(n − p), with the residuals r, r' of both fits,
//     carried to each unit's totals. Each kernel has its own phases and launch-to-launch spread,
//     so one residual variance for a whole device would give a steady kernel a noisy one's
//     error and the other way round. The error is of attributing the sampled launches' counters
//     (for a unit that only ran alone, the ratio estimator's over its samples); how a kernel's
//     launches differ from one another is not in it. On simulated streams with 1 us ramp-ups and
//     tails at half rate on 5-10 us kernels, the truth fell within 1.96 errors in 85 % of fits
//     (93 % without them): where edges weigh a lot the error is somewhat optimistic, since a
//     ramp cut by a sample boundary leaves part of its deficit in the next sample
//     (tests/analysis/pm_rates_test.cc).
// Size: 10^5-10^6 samples and 10^2-10^3 units per device. Samples are kept (about 40 bytes each
// plus 12 per unit in them); a component's Gram matrix is dense, (3 × units)² doubles: 2.5 MB for
// ResNet-50's 187 configurations, 72 MB at 1,000 in one component.
//
// Not thread-safe; one solver per trace file.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace occ {

// A unit's part of one sample.
struct PmTerm {
  int32_t unit = 0;
  float ns = 0;          // its launches' time in the sample (> 0)
  uint16_t starts = 0;   // its launches that began in the sample
  uint16_t ends = 0;     // its launches that ended in it
};

// Below this pivot of the unit-diagonal Gram matrix (1 / variance inflation) a column is a
// combination of other columns to within one part in a million: no sample separates them.
inline constexpr double kDependentPivot = 1e-6;

// What the solve gives one unit.
struct PmRates {
  enum class Status {
    kNoSamples,     // no accepted sample held its launches
    kSolved,        // totals and their errors below
    kNotSeparable,  // only in mixed samples that do not tell it from other units (partner)
    kNoCounts,      // the fit leaves it no warps or no cycles: its samples do not add up
    kNotSolved,     // the least-squares solve did not settle (reported, never expected)
  };
  Status status = Status::kNoSamples;
  int64_t samples = 0;    // samples it ran in
  int64_t mixed = 0;      // of them, shared with other units
  double ns = 0;          // its kernel time in them
  // The unit whose time over the samples is most like its own (largest correlation of the two
  // weighted time columns); -1 when it never shared a sample.
  int32_t partner = -1;
  // Variance inflation: how much sharing samples widens its error against running alone (the
  // variance of its warps total with every unit's columns over that with its own only; 1 for a
  // unit that only ran alone).
  double inflation = 1;
  // Its launches' estimated sm__warps_active.sum and sm__cycles_active.sum over `ns`, with their
  // variances and covariance.
  double warps = 0;
  double cycles = 0;
  double var_warps = 0;
  double var_cycles = 0;
  double cov = 0;
};

class PmRateSolver {
 public:
  explicit PmRateSolver(size_t unit_count) : unit_count_(unit_count) {}

  // One sample's counters and each unit's part of it: every unit at most once, ns > 0.
  void AddSample(double warps, double cycles, std::span<const PmTerm> terms);

  // Per unit, by index.
  std::vector<PmRates> Solve() const;

 private:
  struct Component;
  struct Fit;  // one component's equations and solution (pm_rates.cc)
  std::vector<Component> Components() const;
  void SolveComponent(const Component& component, std::vector<PmRates>* out) const;
  void BuildEquations(Fit* fit, std::vector<PmRates>* out) const;
  static void Separate(Fit* fit, std::vector<PmRates>* out);
  static void FindPartners(const Fit& fit, std::vector<PmRates>* out);
  static std::vector<std::ptrdiff_t> OwnIndependentPositions(const Fit& fit);
  static void MarkInseparable(Fit* fit, const std::vector<std::ptrdiff_t>& candidates, std::vector<PmRates>* out);
  void Totals(const Fit& fit, std::vector<PmRates>* out) const;
  static double VarianceAlone(const Fit& fit, const std::vector<std::ptrdiff_t>& slot, std::ptrdiff_t unit);
  struct Meats;  // the sandwich's middle (pm_rates.cc)
  void ResidualMeats(const Fit& fit, const std::vector<std::ptrdiff_t>& slot, Meats* meats) const;

  size_t unit_count_;
  std::vector<double> warps_;
  std::vector<double> cycles_;
  std::vector<uint32_t> begin_{0};  // sample j's terms: terms_[begin_[j], begin_[j + 1])
  std::vector<PmTerm> terms_;
};

}  // namespace occ
