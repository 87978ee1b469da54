// PM attribution from every sample (analyzer/read/pm_rates.h through PmSweep,
// analyzer/read/pm_attribution.h) on synthetic sample streams with known per-configuration truth:
// two kernels alternating inside every window, kernels shorter than the interval in random
// order, concurrent streams (their shared samples left out; a configuration beside itself
// solved), jittered phases, an inseparable pair, a kernel that always starts as another ends, and
// a configuration that only ran alone.
//
// The simulated GPU: each launch runs its configuration's body rates (active SM cycles per ns,
// and warps per active cycle = occupancy × 64) with its own jitter, and in its first and last
// microsecond (ramp-up and tail) at half the cycles and 70 % of the occupancy. A sample's
// counters are the integrals of every launch's rates over the sample, so they add over the
// launches inside it, as the hardware's do for kernels one after another. The truth a figure is
// held to is each configuration's whole-launch occupancy, Σ warps ÷ (Σ cycles × 64) integrated
// over all its launches here, independently of the solver: the figure Nsight Compute takes over
// a launch's run.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "analyzer/read/pm_attribution.h"
#include "analyzer/read/pm_rates.h"

namespace occ {
namespace {

constexpr double kMaxWarps = 64;
constexpr int64_t kInterval = 20'000;  // ns
constexpr int64_t kRamp = 1'000;       // ns of ramp-up and of tail in every launch

struct Truth {
  double cycles_per_ns;  // body: SMs busy × clock (132 SMs at 1.755 GHz = 231.7)
  double occupancy;      // body: warps per active cycle ÷ 64
};

struct Launch {
  int32_t unit;
  int64_t start, end;
  double rate_scale = 1;       // this launch's cycles per ns against its configuration's
  double occupancy_scale = 1;  // this launch's occupancy against its configuration's
};

struct Counters {
  double warps = 0, cycles = 0;
};

// A launch's counters over [x0, x1): the body at its configuration's rates, the first and last
// kRamp ns at half the cycles and 70 % of the occupancy.
Counters Integrate(const Launch& l, const Truth& t, int64_t x0, int64_t x1) {
  const int64_t ramp = std::min(kRamp, (l.end - l.start) / 4);
  const int64_t edges[] = {l.start, l.start + ramp, l.end - ramp, l.end};
  Counters c;
  for (int part = 0; part < 3; ++part) {
    const double ns = static_cast<double>(std::max<int64_t>(0, std::min(x1, edges[part + 1]) - std::max(x0, edges[part])));
    const double cycles = ns * t.cycles_per_ns * l.rate_scale * (part == 1 ? 1.0 : 0.5);
    c.cycles += cycles;
    c.warps += cycles * kMaxWarps * t.occupancy * l.occupancy_scale * (part == 1 ? 1.0 : 0.7);
  }
  return c;
}

struct Result {
  std::vector<PmSums> sums;
  std::vector<int32_t> partners;
  PmCounts counts;
  std::vector<double> truth_pct;  // by unit
};

// Samples of kInterval back to back over the launches (idle ones are not stored, as the tracer
// does), swept as AttributePmSamples sweeps a trace.
Result Simulate(const std::vector<Truth>& truths, std::vector<Launch> launches, int64_t phase = 0) {
  std::sort(launches.begin(), launches.end(), [](const Launch& a, const Launch& b) { return a.start < b.start; });
  PmSweep sweep(truths.size(), kInterval);
  sweep.BeginDevice(kMaxWarps);
  int64_t last_end = 0;
  for (const Launch& l : launches) last_end = std::max(last_end, l.end);
  size_t next = 0;
  for (int64_t s = launches.front().start - phase; s < last_end; s += kInterval) {
    const int64_t e = s + kInterval;
    while (next < launches.size() && launches[next].start < e) {
      sweep.AddLaunch(launches[next].start, launches[next].end, launches[next].unit);
      ++next;
    }
    Counters total;
    for (const Launch& l : launches) {
      if (l.start >= e || l.end <= s) continue;
      const Counters c = Integrate(l, truths[static_cast<size_t>(l.unit)], s, e);
      total.warps += c.warps;
      total.cycles += c.cycles;
    }
    if (total.cycles > 0) sweep.AddSample(s, e, total.cycles, total.warps, -1);
  }
  sweep.Finish();
  Result r;
  r.sums = sweep.sums();
  r.partners = sweep.partners();
  r.counts = sweep.counts();
  std::vector<Counters> whole(truths.size());
  for (const Launch& l : launches) {
    const Counters c = Integrate(l, truths[static_cast<size_t>(l.unit)], l.start, l.end);
    whole[static_cast<size_t>(l.unit)].warps += c.warps;
    whole[static_cast<size_t>(l.unit)].cycles += c.cycles;
  }
  for (const Counters& c : whole) r.truth_pct.push_back(100.0 * c.warps / (c.cycles * kMaxWarps));
  return r;
}

// Launch-to-launch variation: ±10 % in rate, ±3 % in occupancy.
Launch Jittered(std::mt19937_64& rng, int32_t unit, int64_t start, int64_t duration) {
  std::uniform_real_distribution<double> rate(0.9, 1.1), occupancy(0.97, 1.03);
  return {unit, start, start + duration, rate(rng), occupancy(rng)};
}

// The solved figure is shown and within 3 standard errors of the truth.
void ExpectMatchesTruth(const Result& r, size_t unit) {
  const PmSums& s = r.sums[unit];
  ASSERT_EQ(s.fit, PmFit::kSolved) << "unit " << unit;
  const double se = s.solved.StandardErrorPoints();
  EXPECT_TRUE(s.solved.Shown()) << "unit " << unit << ": standard error " << se << " over " << s.solved.samples;
  EXPECT_NEAR(s.solved.Pct(), r.truth_pct[unit], 3 * se)
      << "unit " << unit << ": solved " << s.solved.Pct() << " ± " << se << ", truth " << r.truth_pct[unit];
}

// A (5-7 us, 60 %, the whole GPU) and B (8-10 us, 30 %, half the SMs) alternate on one stream with
// 0.5-2 us gaps, so every 20 us window holds both: almost no sample is clean, and the clean-sample
// rule gave neither a figure. Every launch's length and gap is drawn anew (jittered phases).
std::vector<Launch> Alternating(std::mt19937_64& rng, int pairs) {
  std::uniform_int_distribution<int64_t> a_len(5'000, 7'000), b_len(8'000, 10'000), gap(500, 2'000);
  std::vector<Launch> launches;
  int64_t t = 1'000'000;
  for (int i = 0; i < pairs; ++i) {
    const int64_t a = a_len(rng), b = b_len(rng);
    launches.push_back(Jittered(rng, 0, t, a));
    t += a + gap(rng);
    launches.push_back(Jittered(rng, 1, t, b));
    t += b + gap(rng);
  }
  return launches;
}

const std::vector<Truth> kAlternatingTruth = {{231.7, 0.60}, {115.8, 0.30}};

TEST(PmRates, TwoKernelsAlternatingInsideEveryWindowAreSolvedFromMixedSamples) {
  std::mt19937_64 rng(41);
  const Result r = Simulate(kAlternatingTruth, Alternating(rng, 2000));
  EXPECT_GT(r.counts.mixed, 1500);
  EXPECT_LT(r.counts.clean, r.counts.mixed / 20);
  // Neither kernel has enough clean samples for the old rule's 20.
  EXPECT_LT(r.sums[0].clean, 20);
  EXPECT_LT(r.sums[1].clean, 20);
  // The two truths are far apart and far from their mixture: a solver that split the samples
  // evenly, or gave both the device-wide ratio, would be tens of standard errors off.
  EXPECT_GT(r.truth_pct[0] - r.truth_pct[1], 25);
  ExpectMatchesTruth(r, 0);
  ExpectMatchesTruth(r, 1);
  EXPECT_GT(r.sums[0].solved.mixed, 1500);
}

// Four configurations of 2-6 us in random order with random gaps of 0-3 us: each 20 us sample
// holds several of them.
TEST(PmRates, KernelsShorterThanTheIntervalInRandomOrderAreEachSolved) {
  const std::vector<Truth> truths = {{231.7, 0.90}, {231.7, 0.45}, {57.9, 0.25}, {173.8, 0.70}};
  std::mt19937_64 rng(7);
  std::uniform_int_distribution<int32_t> pick(0, 3);
  std::uniform_int_distribution<int64_t> length(2'000, 6'000), gap(0, 3'000);
  std::vector<Launch> launches;
  int64_t t = 500'000;
  for (int i = 0; i < 8000; ++i) {
    const int32_t unit = pick(rng);
    const int64_t len = length(rng);
    launches.push_back(Jittered(rng, unit, t, len));
    t += len + gap(rng);
  }
  const Result r = Simulate(truths, launches);
  EXPECT_LT(r.counts.clean, r.counts.samples / 10);
  for (size_t u = 0; u < truths.size(); ++u) ExpectMatchesTruth(r, u);
}

// Stream 1 runs A (40-60 us) back to back; stream 2 runs B (10 us) and C (15 us) at random times,
// and now and then another A, overlapping stream 1's: samples hold two kernels at once, and A
// beside itself (its time there counts twice). Samples with two configurations at once are left
// out (on a GPU their cycles do not add: pm_attribution.h), even here where the simulated ones
// do: A is solved from the rest, beside itself included; B and C, which only ran beside A, get
// no figure and say why.
TEST(PmRates, ConcurrentStreamsLeaveTheirSharedSamplesOutAndAConfigurationBesideItselfIsSolved) {
  const std::vector<Truth> truths = {{115.8, 0.50}, {57.9, 0.20}, {57.9, 0.80}};
  std::mt19937_64 rng(3);
  std::uniform_int_distribution<int64_t> a_len(40'000, 60'000), start(0, 2'000'000);
  std::uniform_int_distribution<int32_t> kind(0, 9);
  std::vector<Launch> launches;
  int64_t t = 100'000;
  while (t < 2'100'000) {
    const int64_t len = a_len(rng);
    launches.push_back(Jittered(rng, 0, t, len));
    t += len + 300;
  }
  int concurrent_a = 0;
  for (int i = 0; i < 90; ++i) {
    const int k = kind(rng);
    const int32_t unit = k < 4 ? 1 : k < 8 ? 2 : 0;
    concurrent_a += unit == 0;
    launches.push_back(Jittered(rng, unit, 100'000 + start(rng), unit == 1 ? 10'000 : unit == 2 ? 15'000 : 30'000));
  }
  ASSERT_GT(concurrent_a, 5);
  const Result r = Simulate(truths, launches);
  ExpectMatchesTruth(r, 0);
  EXPECT_GT(r.counts.concurrent, 30);
  for (const size_t u : {size_t{1}, size_t{2}}) {
    EXPECT_EQ(r.sums[u].clean, 0) << "unit " << u;
    EXPECT_EQ(r.sums[u].mixed, 0) << "unit " << u;
    EXPECT_GT(r.sums[u].concurrent, 15) << "unit " << u;
    EXPECT_EQ(r.sums[u].fit, PmFit::kConcurrent) << "unit " << u;
  }
}

// A and B always run the same way in every sample: A [s + 1, s + 9) us and B [s + 10, s + 18) us
// of each 20 us sample s, so A's time and B's are the same in every sample and no solve can split
// their counts. Both are reported as such, each naming the other; C, alone elsewhere, is solved
// exactly.
TEST(PmRates, AnInseparablePairIsReportedAsSuch) {
  const std::vector<Truth> truths = {{231.7, 0.60}, {115.8, 0.30}, {231.7, 0.45}};
  std::vector<Launch> launches;
  for (int i = 0; i < 200; ++i) {
    const int64_t s = 1'000'000 + kInterval * i;
    launches.push_back({0, s + 1'000, s + 9'000});
    launches.push_back({1, s + 10'000, s + 18'000});
  }
  launches.push_back({2, 10'000'000, 10'800'000});
  const Result r = Simulate(truths, launches);
  EXPECT_EQ(r.counts.mixed, 200);
  EXPECT_EQ(r.sums[0].fit, PmFit::kNotSeparable);
  EXPECT_EQ(r.sums[1].fit, PmFit::kNotSeparable);
  EXPECT_EQ(r.partners[0], 1);
  EXPECT_EQ(r.partners[1], 0);
  EXPECT_EQ(r.sums[0].mixed, 200);
  ExpectMatchesTruth(r, 2);
  EXPECT_NEAR(r.sums[2].solved.Pct(), r.truth_pct[2], 1e-9);
}

// A kernel that always starts as another ends: A (6-30 us) then B (6-30 us) 200 ns after it, pair
// after pair, 100 us apart, with no sample boundary in the 200 ns. A's tail and B's ramp-up then
// fall in the same sample every time, so the samples cannot tell those two terms apart (a short
// run's kernels in a fixed order, e.g. ResNet-50 at 10 steps), though their times, drawn anew
// each pair, tell the kernels apart. Both are solved, with those two edge terms dropped: the fit
// then spreads the junction's deficit over both kernels' rates, which here reads A 0.4 points
// above and B 1.6 below the whole-launch truth (edges of 1 us at half the cycles and 70 % of the
// occupancy in 6-30 us launches). While the edge terms were kept, the pair was not separable.
TEST(PmRates, AKernelThatAlwaysStartsAsAnotherEndsIsSolved) {
  const std::vector<Truth> truths = {{231.7, 0.60}, {115.8, 0.30}};
  std::mt19937_64 rng(5);
  std::uniform_int_distribution<int64_t> length(6'000, 30'000);
  std::vector<Launch> launches;
  for (int i = 0; i < 60; ++i) {
    const int64_t a_start = 1'000'000 + 100'000 * i + 3'000;
    int64_t a_end = a_start + length(rng);
    // No boundary between A's end and B's start: that sample would tell the edges apart.
    if ((a_end + 200) % kInterval < 200 || a_end % kInterval == 0) a_end += 1'000;
    launches.push_back(Jittered(rng, 0, a_start, a_end - a_start));
    launches.push_back(Jittered(rng, 1, a_end + 200, length(rng)));
  }
  const Result r = Simulate(truths, launches);
  for (size_t u = 0; u < truths.size(); ++u) {
    ASSERT_EQ(r.sums[u].fit, PmFit::kSolved) << "unit " << u;
    EXPECT_TRUE(r.sums[u].solved.Shown()) << "unit " << u << ": " << r.sums[u].solved.StandardErrorPoints();
    EXPECT_NEAR(r.sums[u].solved.Pct(), r.truth_pct[u], 2.0) << "unit " << u;
  }
  EXPECT_GT(r.sums[0].solved.mixed, 50);
}

// A configuration that only ran alone: the solve gives the clean-sample ratio Σ warps ÷ Σ capacity
// and its textbook error. Worked by hand: samples (cycles, warps) = (1e6, 32e6), (1e6, 36e6),
// (2e6, 60e6) at 64 warps per SM: capacity 64e6, 64e6, 128e6; Σ warps 128e6, Σ capacity 256e6:
// 50 %. Residuals w − 0.5 k: 0, 4e6, −4e6; Σ r² = 32e12, × 3/2 = 48e12; √ = 6.928e6; ÷ 256e6 ×
// 100 = 2.706 points.
TEST(PmRates, AConfigurationThatOnlyRanAloneGetsTheCleanSampleRatioAndItsError) {
  PmSweep sweep(1, kInterval);
  sweep.BeginDevice(kMaxWarps);
  sweep.AddLaunch(0, 1'000'000, 0);
  sweep.AddSample(100'000, 120'000, 1e6, 32e6, -1);
  sweep.AddSample(120'000, 140'000, 1e6, 36e6, -1);
  sweep.AddSample(140'000, 160'000, 2e6, 60e6, -1);
  sweep.Finish();
  const PmSums& s = sweep.sums()[0];
  ASSERT_EQ(s.fit, PmFit::kSolved);
  EXPECT_EQ(s.solved.samples, 3);
  EXPECT_EQ(s.solved.mixed, 0);
  EXPECT_NEAR(s.solved.Pct(), 50.0, 1e-9);
  EXPECT_NEAR(s.solved.StandardErrorPoints(), 100 * std::sqrt(48e12) / 256e6, 1e-6);
  EXPECT_NEAR(s.clean_sums.Pct(), 50.0, 1e-9);
  EXPECT_NEAR(s.clean_sums.StandardErrorPoints(), 100 * std::sqrt(48e12) / 256e6, 1e-6);
  // 2.7 points over 3 samples: not shown.
  EXPECT_FALSE(s.solved.Shown());
}

// Rates are never negative. A is in 30 samples of 20 us (its ends outside them): 20 alone at 1e6
// cycles and 32e6 warps (50 %), then 10 that it shares half and half with B, one after the other,
// at 1.5e6 cycles but only 15e6 warps, less than A's 10 us alone would give (16e6): B would need
// negative warps. With B's warps rate held at zero, A's is the weighted mean over all 30 (every
// sample 20 us busy, so equal weights), Σ t W ÷ Σ t² = (20 × 20000 × 32e6 + 10 × 10000 × 15e6) ÷
// (20 × 20000² + 10 × 10000²) = 14.3e12 ÷ 9e9 = 1588.89 warps per ns; its cycles rate is 50 per
// ns (B's 100, both exact): 1588.89 ÷ (50 × 64) = 49.6528 %. Unconstrained, A would read 50 %
// and B −100 warps per ns. B, left no warps, gets no figure.
TEST(PmRates, NoRateIsNegative) {
  PmRateSolver solver(2);
  const PmTerm alone[] = {{0, 20'000, 0, 0}};
  const PmTerm shared[] = {{0, 10'000, 0, 0}, {1, 10'000, 0, 0}};
  for (int i = 0; i < 20; ++i) solver.AddSample(32e6, 1e6, alone);
  for (int i = 0; i < 10; ++i) solver.AddSample(15e6, 1.5e6, shared);
  const std::vector<PmRates> rates = solver.Solve();
  ASSERT_EQ(rates[0].status, PmRates::Status::kSolved);
  EXPECT_NEAR(100 * rates[0].warps / (rates[0].cycles * kMaxWarps), 100 * (14.3e12 / 9e9) / (50 * 64), 1e-9);
  EXPECT_EQ(rates[1].status, PmRates::Status::kNoCounts);
}

// The error is honest: over 40 independent runs of the alternating pair (new durations, gaps,
// jitter and sampling phase each time), the truth is within 1.96 standard errors of the figure
// in 68 of the 80 fits (85 %; a calibrated error would give 95 %, and 93 % came without the
// edges: pm_rates.h says why it falls short), and the error is not inflated either (a normal
// error is within 0.5 of them 38 % of the time; here 26 of 80). Without the ramp and tail terms
// 5 of 80 were within 1.96.
TEST(PmRates, TheStandardErrorCoversTheTruthAsOftenAsItClaims) {
  int within_95 = 0, within_half = 0, total = 0;
  for (int seed = 100; seed < 140; ++seed) {
    std::mt19937_64 rng(static_cast<uint64_t>(seed));
    const Result r = Simulate(kAlternatingTruth, Alternating(rng, 300), seed * 731 % kInterval);
    for (size_t u = 0; u < 2; ++u) {
      ASSERT_EQ(r.sums[u].fit, PmFit::kSolved);
      const double z = std::abs(r.sums[u].solved.Pct() - r.truth_pct[u]) / r.sums[u].solved.StandardErrorPoints();
      within_95 += z <= 1.96;
      within_half += z <= 0.5;
      ++total;
    }
  }
  EXPECT_GE(within_95, total * 80 / 100) << within_95 << " of " << total;
  EXPECT_LE(within_half, total * 65 / 100) << within_half << " of " << total;
}

// The gate, by hand from Student's t (two-sided 95 %): with 1,000 samples a 2.0-point error is
// shown and a 2.1-point one is not; with 2 samples (t = 12.706) at most 2 × 1.96 ÷ 12.706 = 0.3085.
TEST(PmRates, AFigureIsShownWhenItsErrorIsSmallEnoughForItsSamples) {
  EXPECT_TRUE(PmFigureShown(1.99, 1000));
  EXPECT_FALSE(PmFigureShown(2.1, 1000));
  EXPECT_TRUE(PmFigureShown(0.30, 2));
  EXPECT_FALSE(PmFigureShown(0.32, 2));
  EXPECT_FALSE(PmFigureShown(0.0, 1));
  EXPECT_FALSE(PmFigureShown(std::nan(""), 100));
}

}  // namespace
}  // namespace occ
