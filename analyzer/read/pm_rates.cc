#include "analyzer/read/pm_rates.h"

#include <Eigen/Cholesky>
#include <Eigen/Core>
#include <Eigen/SparseCore>

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <numeric>
#include <unordered_map>
#include <utility>

namespace occ {
namespace {

using Eigen::MatrixXd;
using Eigen::VectorXd;
using Index = Eigen::Index;

constexpr double kInfinity = std::numeric_limits<double>::infinity();
constexpr Index kColumnsPerUnit = 3;  // time, starts, ends

// A term's value in column k of its unit.
double ColumnValue(const PmTerm& term, Index k) {
  return k == 0 ? static_cast<double>(term.ns) : k == 1 ? term.starts : term.ends;
}

// Whether position p holds a unit's time column (its rate), not a ramp-up or tail one.
bool IsRateColumn(const std::vector<Index>& columns, Index p) { return columns[static_cast<size_t>(p)] % kColumnsPerUnit == 0; }

// Lawson and Hanson's NNLS ("Solving Least Squares Problems", 1974, ch. 23) on the normal
// equations: min ½ xᵀRx − gᵀx with x_i >= 0 where `constrained[i]`, which is min ‖Ax − y‖² for
// R = AᵀA, g = Aᵀy (Bro and de Jong's "fast" form: the samples are never revisited); variables
// not constrained stay in the passive set throughout. Warm-started from the unconstrained
// solution, since true rates are positive and the constraint only binds for the few the samples
// barely see: x = that solution with its negative rates set to zero is a feasible start, positive
// on the passive set, which is all the inner loop needs. `all`: R's Cholesky factor, for whenever
// every variable is passive (nearly always: it is then the only factorization). false: no
// convergence in 3n + 10 rounds.
bool Nnls(const MatrixXd& r, const Eigen::LLT<MatrixXd>& all, const VectorXd& g, const std::vector<bool>& constrained,
          VectorXd* x_out) {
  const Index n = r.rows();
  std::vector<bool> passive(static_cast<size_t>(n), true);
  auto solve_on_passive = [&]() {
    std::vector<Index> p;
    for (Index i = 0; i < n; ++i) {
      if (passive[static_cast<size_t>(i)]) p.push_back(i);
    }
    if (static_cast<Index>(p.size()) == n) return VectorXd(all.solve(g));
    VectorXd z = VectorXd::Zero(n);
    if (!p.empty()) {
      const VectorXd zp = MatrixXd(r(p, p)).llt().solve(VectorXd(g(p)));
      z(p) = zp;
    }
    return z;
  };
  VectorXd x = solve_on_passive();
  const VectorXd unconstrained = x;
  bool all_passive = true;
  for (Index i = 0; i < n; ++i) {
    if (!constrained[static_cast<size_t>(i)] || x(i) > 0) continue;
    passive[static_cast<size_t>(i)] = false;
    x(i) = 0;
    all_passive = false;
  }
  // Feasible as it is: the unconstrained solution is the answer.
  if (all_passive) {
    *x_out = unconstrained;
    return true;
  }
  const double tolerance = 1e-10 * std::max(g.norm(), std::numeric_limits<double>::min());
  for (Index round = 0; round < 3 * n + 10; ++round) {
    // Inner loop: x becomes the minimizer over the passive set, staying feasible; a constrained
    // variable whose step would turn negative goes back to zero.
    while (true) {
      const VectorXd z = solve_on_passive();
      double alpha = 1;
      Index blocking = -1;
      for (Index i = 0; i < n; ++i) {
        if (!constrained[static_cast<size_t>(i)] || !passive[static_cast<size_t>(i)] || z(i) > 0) continue;
        const double step = x(i) / (x(i) - z(i));
        if (blocking < 0 || step < alpha) {
          alpha = step;
          blocking = i;
        }
      }
      if (blocking < 0) {
        x = z;
        break;
      }
      x += alpha * (z - x);
      x(blocking) = 0;
      const double floor = 1e-14 * x.cwiseAbs().maxCoeff();
      for (Index i = 0; i < n; ++i) {
        if (constrained[static_cast<size_t>(i)] && passive[static_cast<size_t>(i)] && x(i) <= floor) {
          passive[static_cast<size_t>(i)] = false;
          x(i) = 0;
        }
      }
    }
    // Outer loop: free the variable whose gradient most wants it positive, if any does.
    const VectorXd gradient = g - r * x;
    Index best = -1;
    for (Index i = 0; i < n; ++i) {
      if (!passive[static_cast<size_t>(i)] && gradient(i) > tolerance && (best < 0 || gradient(i) > gradient(best))) {
        best = i;
      }
    }
    if (best < 0) {
      *x_out = x;
      return true;
    }
    passive[static_cast<size_t>(best)] = true;
  }
  return false;
}

// Pivoted Cholesky of a unit-diagonal Gram matrix (LAPACK's dpstrf, left-looking): the largest
// remaining pivot first, those marked `first` before the others, stopping when every remaining
// one is below `tolerance`. Gives the kept indices in pivot order and L (n × kept) with
// R(kept, kept) = L(kept, :) L(kept, :)ᵀ; a row of a dropped index holds its projection on the
// kept ones.
std::vector<Index> PivotedCholesky(const MatrixXd& r, const std::vector<bool>& first, double tolerance, MatrixXd* l) {
  const Index n = r.rows();
  VectorXd remaining = r.diagonal();
  std::vector<bool> used(static_cast<size_t>(n), false);
  std::vector<Index> pivots;
  l->setZero(n, n);
  for (Index k = 0; k < n; ++k) {
    Index pivot = -1;
    for (const bool in_first : {true, false}) {
      for (Index i = 0; i < n && pivot < 0; ++i) {
        if (used[static_cast<size_t>(i)] || first[static_cast<size_t>(i)] != in_first || !(remaining(i) >= tolerance)) continue;
        pivot = i;
      }
      for (Index i = pivot + 1; pivot >= 0 && i < n; ++i) {
        if (!used[static_cast<size_t>(i)] && first[static_cast<size_t>(i)] == in_first && remaining(i) > remaining(pivot)) pivot = i;
      }
      if (pivot >= 0) break;
    }
    if (pivot < 0) break;
    const double root = std::sqrt(remaining(pivot));
    VectorXd column = (r.col(pivot) - l->leftCols(k) * l->row(pivot).head(k).transpose()) / root;
    used[static_cast<size_t>(pivot)] = true;
    for (Index i = 0; i < n; ++i) {
      if (used[static_cast<size_t>(i)] && i != pivot) column(i) = 0;
    }
    column(pivot) = root;
    l->col(k) = column;
    for (Index i = 0; i < n; ++i) {
      if (!used[static_cast<size_t>(i)]) remaining(i) -= column(i) * column(i);
    }
    pivots.push_back(pivot);
  }
  l->conservativeResize(n, static_cast<Index>(pivots.size()));
  return pivots;
}

// diag(Qᵀ M Q) for a dense Q and sparse M; through a dense M where more than a tenth of it is
// filled (kernels in random order all meet each other), where a blocked dense product is faster.
VectorXd QuadraticForms(const MatrixXd& q, const Eigen::SparseMatrix<double>& m) {
  const bool dense = static_cast<double>(m.nonZeros()) > 0.1 * static_cast<double>(m.rows()) * static_cast<double>(m.cols());
  const MatrixXd mq = dense ? MatrixXd(MatrixXd(m) * q) : MatrixXd(m * q);
  return q.cwiseProduct(mq).colwise().sum().transpose();
}

}  // namespace

// The symmetric sandwich meats Σ_j w_j² r_j r'_j x_j x_jᵀ, three at once: (warps, warps), (cycles,
// cycles), (warps, cycles). Two positions have a nonzero entry exactly when they shared a sample,
// as in the Gram matrix (whose entries are sums of positive terms), so the meats are kept in its
// pattern, row by row (a hash map of the pairs cost 10 times as much at 300 units).
struct PmRateSolver::Meats {
  explicit Meats(const MatrixXd& gram) : n(gram.rows()) {
    row_begin.push_back(0);
    for (Index a = 0; a < n; ++a) {
      for (Index b = 0; b < n; ++b) {
        if (gram(a, b) != 0) columns.push_back(b);
      }
      row_begin.push_back(columns.size());
    }
    values.assign(3 * columns.size(), 0.0);
  }
  void Add(Index a, Index b, double ww, double cc, double wc) {
    const auto first = columns.begin() + static_cast<std::ptrdiff_t>(row_begin[static_cast<size_t>(a)]);
    const auto last = columns.begin() + static_cast<std::ptrdiff_t>(row_begin[static_cast<size_t>(a) + 1]);
    const size_t k = static_cast<size_t>(std::lower_bound(first, last, b) - columns.begin());
    values[3 * k] += ww;
    values[3 * k + 1] += cc;
    values[3 * k + 2] += wc;
  }
  Eigen::SparseMatrix<double> Matrix(size_t which) const {
    std::vector<Eigen::Triplet<double>> triplets;
    triplets.reserve(columns.size());
    for (Index a = 0; a < n; ++a) {
      for (size_t k = row_begin[static_cast<size_t>(a)]; k < row_begin[static_cast<size_t>(a) + 1]; ++k) {
        triplets.emplace_back(a, columns[k], values[3 * k + which]);
      }
    }
    Eigen::SparseMatrix<double> m(n, n);
    m.setFromTriplets(triplets.begin(), triplets.end());
    return m;
  }
  Index n;
  std::vector<size_t> row_begin;
  std::vector<Index> columns;
  std::vector<double> values;
};

struct PmRateSolver::Component {
  std::vector<int32_t> units;     // unit indices, ascending
  std::vector<uint32_t> samples;  // sample indices
};

// Positions are the component's columns with any weight (a unit's starts column is empty when
// none of its launches began inside a stored sample), in column order; column = 3 × local unit
// index + k (0 time, 1 starts, 2 ends).
struct PmRateSolver::Fit {
  const Component* component = nullptr;
  std::unordered_map<int32_t, Index> local;  // unit -> local unit index
  MatrixXd gram;                             // Σ_j w_j x_j x_jᵀ, by column
  VectorXd h_warps, h_cycles;                // Σ_j w_j x_j warps_j, Σ_j w_j x_j cycles_j
  MatrixXd totals;                           // (T, S, E) of each local unit: units × 3
  std::vector<Index> columns;                // position -> column
  std::vector<Index> position;               // column -> position, -1 for an empty column
  VectorXd scale;                            // √diag(gram) by position
  MatrixXd unit_gram;                        // gram over positions, scaled to a unit diagonal
  std::vector<Index> kept;                   // positions the fit solves for
  Eigen::LLT<MatrixXd> kept_factor;          // of unit_gram(kept, kept)
  std::vector<bool> separable;               // by local unit
  VectorXd warps_coef, cycles_coef;          // by position; 0 where not kept
};

void PmRateSolver::AddSample(double warps, double cycles, std::span<const PmTerm> terms) {
  if (terms.empty()) return;
  warps_.push_back(warps);
  cycles_.push_back(cycles);
  terms_.insert(terms_.end(), terms.begin(), terms.end());
  begin_.push_back(static_cast<uint32_t>(terms_.size()));
}

// Units joined by samples they shared, each with its samples.
std::vector<PmRateSolver::Component> PmRateSolver::Components() const {
  std::vector<int32_t> parent(unit_count_);
  std::iota(parent.begin(), parent.end(), 0);
  auto find = [&](int32_t u) {
    while (parent[static_cast<size_t>(u)] != u) {
      parent[static_cast<size_t>(u)] = parent[static_cast<size_t>(parent[static_cast<size_t>(u)])];
      u = parent[static_cast<size_t>(u)];
    }
    return u;
  };
  std::vector<bool> sampled(unit_count_, false);
  const size_t samples = warps_.size();
  for (size_t j = 0; j < samples; ++j) {
    const int32_t first = find(terms_[begin_[j]].unit);
    for (uint32_t k = begin_[j]; k < begin_[j + 1]; ++k) {
      sampled[static_cast<size_t>(terms_[k].unit)] = true;
      parent[static_cast<size_t>(find(terms_[k].unit))] = first;
    }
  }
  std::vector<Component> components;
  std::vector<int32_t> component_of(unit_count_, -1);
  for (size_t u = 0; u < unit_count_; ++u) {
    if (!sampled[u]) continue;
    int32_t& c = component_of[static_cast<size_t>(find(static_cast<int32_t>(u)))];
    if (c < 0) {
      c = static_cast<int32_t>(components.size());
      components.emplace_back();
    }
    components[static_cast<size_t>(c)].units.push_back(static_cast<int32_t>(u));
  }
  for (size_t j = 0; j < samples; ++j) {
    const int32_t c = component_of[static_cast<size_t>(find(terms_[begin_[j]].unit))];
    components[static_cast<size_t>(c)].samples.push_back(static_cast<uint32_t>(j));
  }
  return components;
}

void PmRateSolver::BuildEquations(Fit* fit, std::vector<PmRates>* out) const {
  const Component& component = *fit->component;
  const Index units = static_cast<Index>(component.units.size());
  const Index columns = kColumnsPerUnit * units;
  for (Index i = 0; i < units; ++i) fit->local[component.units[static_cast<size_t>(i)]] = i;
  MatrixXd gram = MatrixXd::Zero(columns, columns);
  VectorXd h_warps = VectorXd::Zero(columns), h_cycles = VectorXd::Zero(columns);
  fit->totals.setZero(units, kColumnsPerUnit);
  for (const uint32_t j : component.samples) {
    const uint32_t first = begin_[j], last = begin_[j + 1];
    double busy = 0;
    for (uint32_t a = first; a < last; ++a) busy += static_cast<double>(terms_[a].ns);
    const double weight = 1 / busy;
    for (uint32_t a = first; a < last; ++a) {
      const PmTerm& ta = terms_[a];
      const Index ua = fit->local.at(ta.unit);
      PmRates& rates = (*out)[static_cast<size_t>(ta.unit)];
      ++rates.samples;
      rates.mixed += last - first > 1 ? 1 : 0;
      rates.ns += static_cast<double>(ta.ns);
      for (Index k = 0; k < kColumnsPerUnit; ++k) {
        const double va = ColumnValue(ta, k);
        if (va == 0) continue;
        const Index ca = kColumnsPerUnit * ua + k;
        fit->totals(ua, k) += va;
        h_warps(ca) += weight * va * warps_[j];
        h_cycles(ca) += weight * va * cycles_[j];
        for (uint32_t b = first; b < last; ++b) {
          const Index cb = kColumnsPerUnit * fit->local.at(terms_[b].unit);
          for (Index l = 0; l < kColumnsPerUnit; ++l) gram(ca, cb + l) += weight * va * ColumnValue(terms_[b], l);
        }
      }
    }
  }
  fit->position.assign(static_cast<size_t>(columns), -1);
  for (Index c = 0; c < columns; ++c) {
    if (!(gram(c, c) > 0)) continue;
    fit->position[static_cast<size_t>(c)] = static_cast<Index>(fit->columns.size());
    fit->columns.push_back(c);
  }
  fit->gram = gram(fit->columns, fit->columns);
  fit->h_warps = h_warps(fit->columns);
  fit->h_cycles = h_cycles(fit->columns);
}

// Each unit's partner: the unit whose time column correlates most with its own. Times are never
// negative, so the largest entry of the unit-diagonal Gram matrix is the largest correlation.
void PmRateSolver::FindPartners(const Fit& fit, std::vector<PmRates>* out) {
  const std::vector<int32_t>& units = fit.component->units;
  const Index unit_count = static_cast<Index>(units.size());
  auto time_position = [&](Index unit) { return fit.position[static_cast<size_t>(kColumnsPerUnit * unit)]; };
  for (Index i = 0; i < unit_count; ++i) {
    Index best = -1;
    for (Index k = 0; k < unit_count; ++k) {
      const double rik = fit.unit_gram(time_position(i), time_position(k));
      if (k != i && rik > 0 && (best < 0 || rik > fit.unit_gram(time_position(i), time_position(best)))) best = k;
    }
    (*out)[static_cast<size_t>(units[static_cast<size_t>(i)])].partner = best < 0 ? -1 : units[static_cast<size_t>(best)];
  }
}

// The positions left when each unit's ramp or tail column that its own other columns explain is
// dropped: that costs nothing (a kernel of one length: its time is a multiple of its starts), and
// what is left is then nearly always of full rank, which one Cholesky factor shows.
std::vector<std::ptrdiff_t> PmRateSolver::OwnIndependentPositions(const Fit& fit) {
  std::vector<Index> candidates;
  for (Index i = 0; i < static_cast<Index>(fit.component->units.size()); ++i) {
    std::vector<Index> own;
    for (Index k = 0; k < kColumnsPerUnit; ++k) {
      const Index p = fit.position[static_cast<size_t>(kColumnsPerUnit * i + k)];
      if (p >= 0) own.push_back(p);
    }
    std::vector<bool> time_first(own.size(), false);
    time_first[0] = true;  // a unit's time column always has a position
    MatrixXd own_l;
    for (const Index k : PivotedCholesky(MatrixXd(fit.unit_gram(own, own)), time_first, kDependentPivot, &own_l)) {
      candidates.push_back(own[static_cast<size_t>(k)]);
    }
  }
  std::sort(candidates.begin(), candidates.end());
  return candidates;
}

// Which units the samples can tell apart (pm_rates.h, step 1), and each unit's partner.
void PmRateSolver::Separate(Fit* fit, std::vector<PmRates>* out) {
  fit->scale = fit->gram.diagonal().cwiseSqrt();
  const VectorXd inverse = fit->scale.cwiseInverse();
  fit->unit_gram = inverse.asDiagonal() * fit->gram * inverse.asDiagonal();
  FindPartners(*fit, out);
  fit->separable.assign(fit->component->units.size(), true);
  const std::vector<Index> candidates = OwnIndependentPositions(*fit);
  fit->kept_factor.compute(MatrixXd(fit->unit_gram(candidates, candidates)));
  if (fit->kept_factor.info() == Eigen::Success &&
      fit->kept_factor.matrixLLT().diagonal().cwiseAbs2().minCoeff() >= kDependentPivot) {
    fit->kept = candidates;
    return;
  }
  MarkInseparable(fit, candidates, out);
}

// Some units' columns combine others': a pivoted Cholesky of the candidates (rates before ramp
// and tail terms: a unit's time column goes only when other units' explain it) keeps the rest;
// every unit with a share in a dropped column's combination shares its counts.
void PmRateSolver::MarkInseparable(Fit* fit, const std::vector<std::ptrdiff_t>& candidates, std::vector<PmRates>* out) {
  const std::vector<int32_t>& units = fit->component->units;
  std::vector<bool> rates;
  for (const Index p : candidates) rates.push_back(IsRateColumn(fit->columns, p));
  MatrixXd l_candidates;
  const std::vector<Index> kept_candidates =
      PivotedCholesky(MatrixXd(fit->unit_gram(candidates, candidates)), rates, kDependentPivot, &l_candidates);
  fit->kept.clear();
  for (const Index k : kept_candidates) fit->kept.push_back(candidates[static_cast<size_t>(k)]);
  fit->kept_factor.compute(MatrixXd(fit->unit_gram(fit->kept, fit->kept)));
  const Index kept = static_cast<Index>(fit->kept.size());
  // The kept rows of L, in pivot order, are lower triangular; a dropped column is Σ_m x_m × (kept
  // column m), with Lkᵀ x = its row of L.
  const MatrixXd lk = l_candidates(kept_candidates, Eigen::all);
  std::vector<bool> edge_dropped(fit->columns.size(), false);
  for (size_t c = 0; c < candidates.size(); ++c) {
    const Index d = candidates[c];
    if (std::find(fit->kept.begin(), fit->kept.end(), d) != fit->kept.end()) continue;
    const Index unit_d = fit->columns[static_cast<size_t>(d)] / kColumnsPerUnit;
    const VectorXd x = lk.triangularView<Eigen::Lower>().transpose().solve(
        VectorXd(l_candidates.row(static_cast<Index>(c)).transpose()));
    const double largest = x.cwiseAbs().maxCoeff();
    // A ramp or tail column that others explain: a kernel that always starts as another ends
    // (or in the same samples), so its ramp-up and the other's tail are one term to the samples.
    // Giving the pair's deficit to whichever column the pivot kept would be arbitrary, so both
    // go: those edges count at their kernels' body rates, as in a fit without edge terms.
    if (!IsRateColumn(fit->columns, d)) {
      for (Index m = 0; m < kept; ++m) {
        const Index p = fit->kept[static_cast<size_t>(m)];
        if (!IsRateColumn(fit->columns, p) && std::abs(x(m)) >= 1e-3 * largest) edge_dropped[static_cast<size_t>(p)] = true;
      }
      continue;
    }
    Index partner = -1;
    for (Index m = 0; m < kept; ++m) {
      const Index unit_m = fit->columns[static_cast<size_t>(fit->kept[static_cast<size_t>(m)])] / kColumnsPerUnit;
      if (unit_m == unit_d || std::abs(x(m)) < 1e-3 * largest) continue;
      if (partner < 0 || std::abs(x(m)) > std::abs(x(partner))) partner = m;
      fit->separable[static_cast<size_t>(unit_m)] = false;
      (*out)[static_cast<size_t>(units[static_cast<size_t>(unit_m)])].partner = units[static_cast<size_t>(unit_d)];
    }
    // A column that only needs its own unit's costs nothing.
    if (partner < 0) continue;
    fit->separable[static_cast<size_t>(unit_d)] = false;
    (*out)[static_cast<size_t>(units[static_cast<size_t>(unit_d)])].partner =
        units[static_cast<size_t>(fit->columns[static_cast<size_t>(fit->kept[static_cast<size_t>(partner)])] / kColumnsPerUnit)];
  }
  // A subset of independent columns stays independent: one new factor.
  if (std::erase_if(fit->kept, [&](Index p) { return edge_dropped[static_cast<size_t>(p)]; }) > 0) {
    fit->kept_factor.compute(MatrixXd(fit->unit_gram(fit->kept, fit->kept)));
  }
}

void PmRateSolver::SolveComponent(const Component& component, std::vector<PmRates>* out) const {
  Fit fit;
  fit.component = &component;
  BuildEquations(&fit, out);
  Separate(&fit, out);
  // Until Totals() finds them free, every sampled unit is one the samples do not separate.
  for (const int32_t unit : component.units) (*out)[static_cast<size_t>(unit)].status = PmRates::Status::kNotSeparable;
  const Index n = static_cast<Index>(fit.columns.size());
  const MatrixXd gram = fit.unit_gram(fit.kept, fit.kept);
  const VectorXd inverse = VectorXd(fit.scale(fit.kept)).cwiseInverse();
  std::vector<bool> rate;  // time columns: rates, >= 0; ramp and tail terms are free
  for (const Index p : fit.kept) rate.push_back(IsRateColumn(fit.columns, p));
  VectorXd warps, cycles;
  if (fit.kept_factor.info() != Eigen::Success ||
      !Nnls(gram, fit.kept_factor, inverse.cwiseProduct(VectorXd(fit.h_warps(fit.kept))), rate, &warps) ||
      !Nnls(gram, fit.kept_factor, inverse.cwiseProduct(VectorXd(fit.h_cycles(fit.kept))), rate, &cycles)) {
    for (const int32_t unit : component.units) (*out)[static_cast<size_t>(unit)].status = PmRates::Status::kNotSolved;
    return;
  }
  // Back from the unit-diagonal scale: x = scale × coefficient.
  fit.warps_coef.setZero(n);
  fit.cycles_coef.setZero(n);
  const VectorXd warps_coef = inverse.cwiseProduct(warps), cycles_coef = inverse.cwiseProduct(cycles);
  fit.warps_coef(fit.kept) = warps_coef;
  fit.cycles_coef(fit.kept) = cycles_coef;
  Totals(fit, out);
}

// Σ_j w_j² r_j r'_j x_j x_jᵀ over the positions with a slot, with the residuals of both fits.
void PmRateSolver::ResidualMeats(const Fit& fit, const std::vector<Index>& slot, Meats* meats) const {
  auto position = [&](const PmTerm& term, Index k) {
    return fit.position[static_cast<size_t>(kColumnsPerUnit * fit.local.at(term.unit) + k)];
  };
  std::vector<std::pair<Index, double>> x;  // sample j's w_j x_j over the slots it touches
  for (const uint32_t j : fit.component->samples) {
    const uint32_t first = begin_[j], last = begin_[j + 1];
    double busy = 0, residual_warps = warps_[j], residual_cycles = cycles_[j];
    for (uint32_t a = first; a < last; ++a) {
      busy += static_cast<double>(terms_[a].ns);
      for (Index k = 0; k < kColumnsPerUnit; ++k) {
        const Index p = position(terms_[a], k);
        if (p < 0) continue;
        residual_warps -= ColumnValue(terms_[a], k) * fit.warps_coef(p);
        residual_cycles -= ColumnValue(terms_[a], k) * fit.cycles_coef(p);
      }
    }
    x.clear();
    for (uint32_t a = first; a < last; ++a) {
      for (Index k = 0; k < kColumnsPerUnit; ++k) {
        const Index p = position(terms_[a], k);
        const double v = ColumnValue(terms_[a], k);
        if (p >= 0 && slot[static_cast<size_t>(p)] >= 0 && v != 0) x.emplace_back(slot[static_cast<size_t>(p)], v / busy);
      }
    }
    for (const auto& [a, va] : x) {
      for (const auto& [b, vb] : x) {
        meats->Add(a, b, va * vb * residual_warps * residual_warps, va * vb * residual_cycles * residual_cycles,
                   va * vb * residual_warps * residual_cycles);
      }
    }
  }
}

// The variance factor of a unit's totals had it run alone: gᵀ G_own⁻¹ g over its own free
// columns, g its time, starts and ends; against gᵀ G⁻¹ g over every free column, its inflation.
double PmRateSolver::VarianceAlone(const Fit& fit, const std::vector<std::ptrdiff_t>& slot, std::ptrdiff_t unit) {
  std::vector<Index> own;
  std::vector<double> own_totals;
  for (Index k = 0; k < kColumnsPerUnit; ++k) {
    const Index p = fit.position[static_cast<size_t>(kColumnsPerUnit * unit + k)];
    if (p < 0 || slot[static_cast<size_t>(p)] < 0) continue;
    own.push_back(p);
    own_totals.push_back(fit.totals(unit, k));
  }
  const VectorXd g = Eigen::Map<const VectorXd>(own_totals.data(), static_cast<Index>(own_totals.size()));
  return g.dot(MatrixXd(fit.gram(own, own)).llt().solve(g));
}

// Each unit's whole-launch totals and their sandwich covariance (pm_rates.h, step 3).
void PmRateSolver::Totals(const Fit& fit, std::vector<PmRates>* out) const {
  const std::vector<int32_t>& units = fit.component->units;
  auto position = [&](Index unit, Index k) { return fit.position[static_cast<size_t>(kColumnsPerUnit * unit + k)]; };
  // Positions left free in the fits: kept, and not a rate the constraint pinned at zero.
  std::vector<Index> free_positions;
  std::vector<Index> slot(fit.columns.size(), -1);
  for (const Index p : fit.kept) {
    const bool rate = IsRateColumn(fit.columns, p);
    if (rate && (!(fit.warps_coef(p) > 0) || !(fit.cycles_coef(p) > 0))) continue;
    slot[static_cast<size_t>(p)] = static_cast<Index>(free_positions.size());
    free_positions.push_back(p);
  }
  // Units with a figure: separable, with whole-launch totals above zero. (A rate pinned at zero
  // leaves the totals to the ramp and tail terms: two launches of a kernel at once on the same
  // SMs add warps but no cycles, LaunchesOfOneConfigurationInSequenceOrAtOnceAreClean.)
  std::vector<Index> solved;
  std::vector<double> warps, cycles;
  for (Index i = 0; i < static_cast<Index>(units.size()); ++i) {
    if (!fit.separable[static_cast<size_t>(i)]) continue;
    (*out)[static_cast<size_t>(units[static_cast<size_t>(i)])].status = PmRates::Status::kNoCounts;
    double w = 0, c = 0;
    for (Index k = 0; k < kColumnsPerUnit; ++k) {
      if (position(i, k) < 0) continue;
      w += fit.totals(i, k) * fit.warps_coef(position(i, k));
      c += fit.totals(i, k) * fit.cycles_coef(position(i, k));
    }
    if (!(w > 0) || !(c > 0)) continue;
    solved.push_back(i);
    warps.push_back(w);
    cycles.push_back(c);
  }
  if (solved.empty()) return;
  // Each solved unit's totals as a combination of the free coefficients: select(:, s).
  const Index size = static_cast<Index>(free_positions.size());
  MatrixXd select = MatrixXd::Zero(size, static_cast<Index>(solved.size()));
  for (size_t s = 0; s < solved.size(); ++s) {
    for (Index k = 0; k < kColumnsPerUnit; ++k) {
      const Index p = position(solved[s], k);
      if (p >= 0 && slot[static_cast<size_t>(p)] >= 0) select(slot[static_cast<size_t>(p)], static_cast<Index>(s)) = fit.totals(solved[s], k);
    }
  }
  // q = G⁻¹ select over the free positions, G = D R D with D the scale: q = D⁻¹ R⁻¹ D⁻¹ select, by
  // the kept positions' factor when they are all free (nearly always), else by a new one.
  const VectorXd free_scale = VectorXd(fit.scale(free_positions)).cwiseInverse();
  const MatrixXd scaled_select = free_scale.asDiagonal() * select;
  const MatrixXd q = free_scale.asDiagonal() *
                     (free_positions == fit.kept ? MatrixXd(fit.kept_factor.solve(scaled_select))
                                                 : MatrixXd(MatrixXd(fit.unit_gram(free_positions, free_positions)).llt().solve(scaled_select)));
  Meats meats(MatrixXd(fit.gram(free_positions, free_positions)));
  ResidualMeats(fit, slot, &meats);
  // HC1: the residuals are n − p degrees of freedom, not n.
  const double n = static_cast<double>(fit.component->samples.size()), fitted = static_cast<double>(size);
  const double hc1 = n > fitted ? n / (n - fitted) : kInfinity;
  const VectorXd var_warps = QuadraticForms(q, meats.Matrix(0)) * hc1;
  const VectorXd var_cycles = QuadraticForms(q, meats.Matrix(1)) * hc1;
  const VectorXd cov = QuadraticForms(q, meats.Matrix(2)) * hc1;
  for (size_t s = 0; s < solved.size(); ++s) {
    const Index si = static_cast<Index>(s);
    const double alone = VarianceAlone(fit, slot, solved[s]);
    PmRates& rates = (*out)[static_cast<size_t>(units[static_cast<size_t>(solved[s])])];
    rates.status = PmRates::Status::kSolved;
    rates.warps = warps[s];
    rates.cycles = cycles[s];
    rates.var_warps = var_warps(si);
    rates.var_cycles = var_cycles(si);
    rates.cov = cov(si);
    rates.inflation = alone > 0 ? select.col(si).dot(q.col(si)) / alone : 1;
  }
}

std::vector<PmRates> PmRateSolver::Solve() const {
  std::vector<PmRates> out(unit_count_);
  for (const Component& component : Components()) SolveComponent(component, &out);
  return out;
}

}  // namespace occ
