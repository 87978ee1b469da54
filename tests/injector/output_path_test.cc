#include "injector/session/output_path.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <map>
#include <string>

#include "tests/injector/fake_records.h"

namespace occ::inj {
namespace {

PatternContext TestContext() {
  PatternContext context;
  context.pid = 4242;
  context.host = "node7";
  context.getenv = [](const char* name) -> const char* {
    static const std::map<std::string, std::string> env = {{"RANK", "3"}, {"JOB", "train"}};
    auto it = env.find(name);
    return it == env.end() ? nullptr : it->second.c_str();
  };
  return context;
}

std::string Expand(const std::string& pattern, long sequence = 1) {
  std::string path, error;
  if (!ExpandOutputPattern(pattern, TestContext(), sequence, &path, &error)) return "ERROR: " + error;
  return path;
}

TEST(OutputPathTest, Placeholders) {
  EXPECT_EQ(Expand("occtrace-%p.db"), "occtrace-4242.db");
  EXPECT_EQ(Expand("%h/%p.db"), "node7/4242.db");
  EXPECT_EQ(Expand("%q{JOB}-rank%q{RANK}.db"), "train-rank3.db");
  EXPECT_EQ(Expand("run-%n.db", 12), "run-12.db");
  EXPECT_EQ(Expand("100%%-%p.db"), "100%-4242.db");
  EXPECT_EQ(Expand("%%n.db"), "%n.db");
  EXPECT_EQ(Expand("plain.db"), "plain.db");
}

TEST(OutputPathTest, UnsetVariableExpandsEmpty) { EXPECT_EQ(Expand("r%q{UNSET_VAR}.db"), "r.db"); }

TEST(OutputPathTest, MalformedPatternsAreErrors) {
  EXPECT_NE(Expand("x%").find("lone '%'"), std::string::npos);
  EXPECT_NE(Expand("x%z.db").find("unknown placeholder '%z'"), std::string::npos);
  EXPECT_NE(Expand("x%q.db").find("%q must be followed by {VARIABLE}"), std::string::npos);
  EXPECT_NE(Expand("x%q{RANK.db").find("{VARIABLE}"), std::string::npos);
  EXPECT_NE(Expand("x%q{}.db").find("{VARIABLE}"), std::string::npos);
  EXPECT_NE(Expand("%q{UNSET_VAR}").find("empty file name"), std::string::npos);
}

TEST(OutputPathTest, ExistingFileIsNeverOverwritten) {
  const std::string path = testing::TempPath("exists");
  { std::ofstream(path) << "precious"; }
  ClaimedOutput claim = ClaimOutputFile(path, TestContext(), /*force=*/false);
  EXPECT_FALSE(claim.ok);
  EXPECT_NE(claim.error.find("already exists"), std::string::npos) << claim.error;
  std::ifstream in(path);
  std::string content;
  in >> content;
  EXPECT_EQ(content, "precious");
  std::remove(path.c_str());
}

TEST(OutputPathTest, ForceReplacesFileAndCompanions) {
  const std::string path = testing::TempPath("force");
  { std::ofstream(path) << "old"; }
  { std::ofstream(path + "-wal") << "stale wal"; }
  ClaimedOutput claim = ClaimOutputFile(path, TestContext(), /*force=*/true);
  ASSERT_TRUE(claim.ok) << claim.error;
  EXPECT_EQ(claim.path, path);
  std::ifstream in(path, std::ios::ate);
  EXPECT_EQ(static_cast<long>(in.tellg()), 0) << "the claimed file is new and empty";
  EXPECT_NE(access((path + "-wal").c_str(), F_OK), 0) << "a stale WAL would corrupt the new trace";
  std::remove(path.c_str());
}

// With a fixed name and --force, a second traced process of the same job (torch.compile's compile
// workers, a launcher that initializes CUDA) must not replace the file a live process is writing:
// it used to unlink it and, having launched nothing, remove its own at exit, losing the trace.
// flock is per open file description, so two claims in one process stand for two processes.
TEST(OutputPathTest, ForceNeverReplacesAFileALiveProcessHolds) {
  const std::string path = testing::TempPath("force-held");
  std::remove(path.c_str());
  ClaimedOutput writer = ClaimOutputFile(path, TestContext(), /*force=*/true);
  ASSERT_TRUE(writer.ok) << writer.error;
  ASSERT_GE(writer.lock_fd, 0);
  { std::ofstream(path, std::ios::app) << "trace being written"; }
  ClaimedOutput helper = ClaimOutputFile(path, TestContext(), /*force=*/true);
  EXPECT_FALSE(helper.ok);
  EXPECT_EQ(helper.lock_fd, -1);
  EXPECT_NE(helper.error.find("being written by another traced process"), std::string::npos) << helper.error;
  std::ifstream in(path);
  std::string first_word;
  in >> first_word;
  EXPECT_EQ(first_word, "trace") << "the writer's file is untouched";
  // Once the writer is gone (its descriptor closed: the process ended), --force replaces it.
  close(writer.lock_fd);
  ClaimedOutput next_run = ClaimOutputFile(path, TestContext(), /*force=*/true);
  ASSERT_TRUE(next_run.ok) << next_run.error;
  close(next_run.lock_fd);
  std::remove(path.c_str());
}

TEST(OutputPathTest, SequenceTakesSmallestFreeNumber) {
  const std::string base = testing::TempPath("seq");
  const std::string pattern = base + ".%n";
  { std::ofstream(base + ".1") << "x"; }
  { std::ofstream(base + ".2") << "x"; }
  ClaimedOutput first = ClaimOutputFile(pattern, TestContext(), false);
  ASSERT_TRUE(first.ok) << first.error;
  EXPECT_EQ(first.path, base + ".3");
  ClaimedOutput second = ClaimOutputFile(pattern, TestContext(), false);
  ASSERT_TRUE(second.ok) << second.error;
  EXPECT_EQ(second.path, base + ".4");
  for (int i = 1; i <= 4; ++i) std::remove((base + "." + std::to_string(i)).c_str());
}

TEST(OutputPathTest, MissingDirectoryIsAClearError) {
  ClaimedOutput claim = ClaimOutputFile("/nonexistent-dir-occtrace/x.db", TestContext(), false);
  EXPECT_FALSE(claim.ok);
  EXPECT_NE(claim.error.find("cannot create output file /nonexistent-dir-occtrace/x.db"), std::string::npos)
      << claim.error;
}

}  // namespace
}  // namespace occ::inj
