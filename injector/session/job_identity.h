// Which rank of a distributed job this process is, from the variables its launcher set:
// torchrun / torch.distributed (RANK, LOCAL_RANK, WORLD_SIZE, LOCAL_WORLD_SIZE), SLURM's srun
// (SLURM_PROCID, SLURM_LOCALID, SLURM_NTASKS), Open MPI's mpirun (OMPI_COMM_WORLD_RANK, ...)
// and MPICH / Hydra (PMI_RANK, PMI_SIZE, MPI_LOCALRANKID). The first launcher whose rank
// variable is set and numeric wins, in that order: torchrun under srun sets both, and RANK is
// the one the training script itself sees. Recorded in OCC_META (rank, local_rank, world_size,
// rank_source) so that occ-report can tell the files of one job apart without their names.
#pragma once

#include <functional>
#include <string>

namespace occ::inj {

struct JobIdentity {
  long rank = -1;             // -1: not launched as a rank of a distributed job
  long local_rank = -1;       // -1: unknown
  long world_size = -1;       // -1: unknown
  long local_world_size = -1; // -1: unknown
  std::string source;         // "torchrun", "slurm", "openmpi", "mpich"; "" when rank < 0
};

// `getenv` returns a variable's value or nullptr when unset (a seam for tests).
JobIdentity JobIdentityFromEnvironment(const std::function<const char*(const char*)>& getenv);

}  // namespace occ::inj
