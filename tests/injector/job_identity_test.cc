// The rank of a distributed job from each launcher's variables, as torchrun, srun, mpirun and
// Hydra set them (names from their documentation), and the precedence when several are set.
#include "injector/session/job_identity.h"

#include <gtest/gtest.h>

#include <map>
#include <string>

namespace occ::inj {
namespace {

JobIdentity From(const std::map<std::string, std::string>& env) {
  return JobIdentityFromEnvironment([&env](const char* name) -> const char* {
    auto it = env.find(name);
    return it == env.end() ? nullptr : it->second.c_str();
  });
}

TEST(JobIdentity, TorchrunRank) {
  // torchrun --nnodes=2 --nproc_per_node=2: the second process of the second node.
  const JobIdentity id = From({{"RANK", "3"}, {"LOCAL_RANK", "1"}, {"WORLD_SIZE", "4"}, {"LOCAL_WORLD_SIZE", "2"}});
  EXPECT_EQ(id.rank, 3);
  EXPECT_EQ(id.local_rank, 1);
  EXPECT_EQ(id.world_size, 4);
  EXPECT_EQ(id.local_world_size, 2);
  EXPECT_EQ(id.source, "torchrun");
}

TEST(JobIdentity, SlurmMpiAndHydra) {
  EXPECT_EQ(From({{"SLURM_PROCID", "7"}, {"SLURM_LOCALID", "3"}, {"SLURM_NTASKS", "16"}}).source, "slurm");
  EXPECT_EQ(From({{"SLURM_PROCID", "7"}, {"SLURM_LOCALID", "3"}, {"SLURM_NTASKS", "16"}}).world_size, 16);
  const JobIdentity mpi = From({{"OMPI_COMM_WORLD_RANK", "5"}, {"OMPI_COMM_WORLD_LOCAL_RANK", "1"},
                                {"OMPI_COMM_WORLD_SIZE", "8"}});
  EXPECT_EQ(mpi.rank, 5);
  EXPECT_EQ(mpi.local_rank, 1);
  EXPECT_EQ(mpi.source, "openmpi");
  EXPECT_EQ(From({{"PMI_RANK", "2"}, {"PMI_SIZE", "4"}}).rank, 2);
  EXPECT_EQ(From({{"PMI_RANK", "2"}, {"PMI_SIZE", "4"}}).local_rank, -1);
}

// torchrun inside an srun allocation: the script's own RANK wins over the srun task id.
TEST(JobIdentity, TorchrunUnderSrunTakesTorchrunsRank) {
  const JobIdentity id = From({{"SLURM_PROCID", "0"}, {"SLURM_NTASKS", "1"}, {"RANK", "1"}, {"WORLD_SIZE", "2"}});
  EXPECT_EQ(id.rank, 1);
  EXPECT_EQ(id.world_size, 2);
  EXPECT_EQ(id.source, "torchrun");
}

TEST(JobIdentity, NoLauncherOrMalformedValues) {
  EXPECT_EQ(From({}).rank, -1);
  EXPECT_EQ(From({}).source, "");
  EXPECT_EQ(From({{"RANK", ""}}).rank, -1);
  EXPECT_EQ(From({{"RANK", "two"}}).rank, -1);
  EXPECT_EQ(From({{"RANK", "-1"}}).rank, -1);
  EXPECT_EQ(From({{"RANK", "1x"}, {"SLURM_PROCID", "4"}}).source, "slurm") << "a malformed RANK is skipped";
  EXPECT_EQ(From({{"RANK", "0"}, {"WORLD_SIZE", "many"}}).world_size, -1);
}

}  // namespace
}  // namespace occ::inj
