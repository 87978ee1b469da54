#include "analyzer/model/suggestion.h"

#include "schema/report.pb.h"

namespace occ {

void ToProto(const Suggestion& s, occtrace::Suggestion* out) {
  out->set_kind(s.kind);
  out->set_text(s.text);
  out->set_predicted_occupancy_pct(s.predicted_occupancy_pct);
  out->set_predicted_blocks_per_sm(s.predicted_blocks_per_sm);
  out->set_predicted_waves_per_sm(s.predicted_waves_per_sm);
  out->set_block_size(s.block_size);
  out->set_registers_per_thread(s.registers_per_thread);
  out->set_shared_mem_per_block(s.shared_mem_per_block);
  out->set_assumptions(s.assumptions);
}

}  // namespace occ
