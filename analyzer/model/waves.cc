#include "analyzer/model/waves.h"

#include <cmath>

#include "analyzer/model/message_text.h"

namespace occ {

Waves ComputeWaves(int64_t grid_blocks, int active_blocks_per_sm, int num_sms) {
  Waves w;
  w.grid_blocks = grid_blocks;
  w.grid_below_sm_count = grid_blocks > 0 && grid_blocks < num_sms;
  if (grid_blocks <= 0 || active_blocks_per_sm <= 0 || num_sms <= 0) return w;
  w.blocks_per_wave = static_cast<int64_t>(active_blocks_per_sm) * num_sms;
  w.waves_per_sm = static_cast<double>(grid_blocks) / static_cast<double>(w.blocks_per_wave);
  w.full_waves = grid_blocks / w.blocks_per_wave;
  w.tail_blocks = grid_blocks - w.full_waves * w.blocks_per_wave;
  // ncu's tail-effect share needs at least one full wave; below that there is no tail, only a
  // grid too small to fill the GPU (reported separately).
  w.tail_pct = w.tail_blocks > 0 && w.full_waves >= 1 ? 100.0 / static_cast<double>(1 + w.full_waves)
                                                      : 0.0;
  w.wave_efficiency = w.waves_per_sm / std::ceil(w.waves_per_sm);
  return w;
}

std::string TailSentence(const Waves& w) {
  if (w.blocks_per_wave <= 0 || w.tail_blocks == 0) return "";
  if (w.full_waves == 0) {
    return "the grid of " + std::to_string(w.grid_blocks) + " blocks fills " +
           Pct(100.0 * w.waves_per_sm) + " of one wave of " + std::to_string(w.blocks_per_wave) +
           " blocks";
  }
  return std::to_string(w.full_waves) + " full wave" + (w.full_waves == 1 ? "" : "s") +
         " and a partial wave of " + std::to_string(w.tail_blocks) + " blocks (of " +
         std::to_string(w.blocks_per_wave) + "): the tail can take up to " + Pct(w.tail_pct) +
         " of the runtime";
}

}  // namespace occ
