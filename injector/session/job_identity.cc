#include "injector/session/job_identity.h"

#include <cerrno>
#include <cstdlib>

namespace occ::inj {
namespace {

// A non-negative decimal integer, or -1 for unset, empty, negative or non-numeric values.
long ReadCount(const std::function<const char*(const char*)>& getenv, const char* name) {
  const char* text = name != nullptr ? getenv(name) : nullptr;
  if (text == nullptr || *text == '\0') return -1;
  errno = 0;
  char* end = nullptr;
  const long value = std::strtol(text, &end, 10);
  if (errno != 0 || end == text || *end != '\0' || value < 0) return -1;
  return value;
}

struct Launcher {
  const char* source;
  const char* rank;
  const char* local_rank;
  const char* world_size;
  const char* local_world_size;
};

constexpr Launcher kLaunchers[] = {
    {"torchrun", "RANK", "LOCAL_RANK", "WORLD_SIZE", "LOCAL_WORLD_SIZE"},
    {"slurm", "SLURM_PROCID", "SLURM_LOCALID", "SLURM_NTASKS", "SLURM_NTASKS_PER_NODE"},
    {"openmpi", "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_LOCAL_RANK", "OMPI_COMM_WORLD_SIZE",
     "OMPI_COMM_WORLD_LOCAL_SIZE"},
    {"mpich", "PMI_RANK", "MPI_LOCALRANKID", "PMI_SIZE", "MPI_LOCALNRANKS"},
};

}  // namespace

JobIdentity JobIdentityFromEnvironment(const std::function<const char*(const char*)>& getenv) {
  JobIdentity id;
  for (const Launcher& launcher : kLaunchers) {
    const long rank = ReadCount(getenv, launcher.rank);
    if (rank < 0) continue;
    id.rank = rank;
    id.local_rank = ReadCount(getenv, launcher.local_rank);
    id.world_size = ReadCount(getenv, launcher.world_size);
    id.local_world_size = ReadCount(getenv, launcher.local_world_size);
    id.source = launcher.source;
    break;
  }
  return id;
}

}  // namespace occ::inj
