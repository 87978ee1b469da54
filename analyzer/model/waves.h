// How many rounds of resident blocks a grid needs on the GPU, and what a partial last round
// costs. Takes the grid, the blocks per SM the occupancy model allows and the SM count.
#pragma once

#include <cstdint>
#include <string>

namespace occ {

// Waves of a grid on the GPU (Nsight Compute's Waves Per SM and tail-effect rule).
struct Waves {
  int64_t grid_blocks = 0;
  int64_t blocks_per_wave = 0;    // active blocks per SM x SMs; 0 = the launch cannot run
  double waves_per_sm = 0;        // grid / blocks_per_wave (ncu launch__waves_per_multiprocessor)
  int64_t full_waves = 0;         // F
  int64_t tail_blocks = 0;        // P = grid - F x blocks_per_wave (exact, unlike ncu's rounding)
  double tail_pct = 0;            // up to this share of the runtime is the tail: 100 / (1 + F); 0 if P = 0
  double wave_efficiency = 0;     // waves / ceil(waves): 1 = no partial wave
  bool grid_below_sm_count = false;  // fewer blocks than SMs: some SMs stay idle
};
Waves ComputeWaves(int64_t grid_blocks, int active_blocks_per_sm, int num_sms);
// "3 full waves and a partial wave of 96 blocks (of 528): the tail can take up to 25% of the
// runtime"; below one wave "the grid of 64 blocks fills 48.48% of one wave of 132 blocks"; ""
// without a partial wave.
std::string TailSentence(const Waves& waves);

}  // namespace occ
