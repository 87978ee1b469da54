// The occtrace launcher, run as a real process.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace {

struct Result {
  int exit_code = -1;
  std::string output;  // stdout + stderr
};

Result RunLauncher(const std::string& args, const std::string& launcher = OCC_LAUNCHER_PATH) {
  Result result;
  const std::string command = launcher + " " + args + " 2>&1";
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return result;
  std::array<char, 4096> chunk{};
  size_t n = 0;
  while ((n = fread(chunk.data(), 1, chunk.size(), pipe)) > 0) result.output.append(chunk.data(), n);
  const int status = pclose(pipe);
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return result;
}

TEST(LauncherTest, SetsInjectionVariablesAndExecsTheCommand) {
  Result r = RunLauncher("-o 'run-%p.db' --force --quiet --achieved sample -- env");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("OCCTRACE_OUTPUT=run-%p.db\n"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("OCCTRACE_FORCE=1\n"), std::string::npos);
  EXPECT_NE(r.output.find("OCCTRACE_QUIET=1\n"), std::string::npos);
  EXPECT_NE(r.output.find("OCCTRACE_ACHIEVED=sample\n"), std::string::npos);
  const size_t at = r.output.find("CUDA_INJECTION64_PATH=/");
  ASSERT_NE(at, std::string::npos) << "an absolute path: " << r.output;
  const std::string path = r.output.substr(at + 22, r.output.find('\n', at) - at - 22);
  EXPECT_TRUE(path.ends_with("/libocctrace.so")) << path;
}

TEST(LauncherTest, PassesArgumentsAndExitStatusThrough) {
  Result r = RunLauncher("-- sh -c 'echo \"[$1][$2]\"; exit 7' sh 'a b' --flag");
  EXPECT_EQ(r.exit_code, 7);
  EXPECT_EQ(r.output, "[a b][--flag]\n");
}

TEST(LauncherTest, CommandWithoutDoubleDash) {
  Result r = RunLauncher("-o x.db sh -c 'echo $OCCTRACE_OUTPUT'");
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.output, "x.db\n");
}

TEST(LauncherTest, MissingCommandIsExitTwo) {
  Result r = RunLauncher("-o x.db");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.output.rfind("occtrace: no command given", 0), 0u) << r.output;
}

TEST(LauncherTest, UnknownCommandIsExitTwo) {
  Result r = RunLauncher("-- /nonexistent/program");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.output, "occtrace: cannot run '/nonexistent/program': No such file or directory\n");
}

TEST(LauncherTest, BadAchievedModeIsRejected) {
  Result r = RunLauncher("--achieved sometimes -- true");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.output.find("sometimes"), std::string::npos) << r.output;
}

TEST(LauncherTest, LightDetachMeansLightTracingWithCuptiDetached) {
  Result r = RunLauncher("--light-detach -- env");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("OCCTRACE_MODE=light\n"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("OCCTRACE_LIGHT_DETACH=1\n"), std::string::npos) << r.output;
  Result full = RunLauncher("--light-detach --mode full -- true");
  EXPECT_EQ(full.exit_code, 2);
  EXPECT_EQ(full.output, "occtrace: --light-detach is a light tracing mode; it cannot go with --mode full\n");
}

TEST(LauncherTest, MissingLibraryIsExitTwo) {
  // A launcher copied away from its libocctrace.so.
  const std::string dir = "/tmp/occtrace-launcher-test-" + std::to_string(getpid());
  const std::string copy = dir + "/occtrace";
  ASSERT_EQ(std::system(("mkdir -p " + dir + " && cp " + std::string(OCC_LAUNCHER_PATH) + " " + copy).c_str()), 0);
  Result r = RunLauncher("-- true", copy);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.output.rfind("occtrace: libocctrace.so not found", 0), 0u) << r.output;
  std::system(("rm -rf " + dir).c_str());
}

// The installed layout (bin/occtrace, lib/occtrace/libocctrace.so) found from the launcher's
// own path, before and after the whole tree is moved.
TEST(LauncherTest, InstalledTreeIsRelocatable) {
  const std::string dir = "/tmp/occtrace-launcher-prefix-" + std::to_string(getpid());
  ASSERT_EQ(std::system(("rm -rf " + dir + " && mkdir -p " + dir + "/a/bin " + dir + "/a/lib/occtrace && cp " +
                         std::string(OCC_LAUNCHER_PATH) + " " + dir + "/a/bin/occtrace && touch " + dir +
                         "/a/lib/occtrace/libocctrace.so").c_str()),
            0);
  Result before = RunLauncher("-- sh -c 'echo $CUDA_INJECTION64_PATH'", dir + "/a/bin/occtrace");
  EXPECT_EQ(before.exit_code, 0) << before.output;
  EXPECT_EQ(before.output, dir + "/a/lib/occtrace/libocctrace.so\n");
  ASSERT_EQ(std::system(("mv " + dir + "/a " + dir + "/moved").c_str()), 0);
  Result after = RunLauncher("-- sh -c 'echo $CUDA_INJECTION64_PATH'", dir + "/moved/bin/occtrace");
  EXPECT_EQ(after.output, dir + "/moved/lib/occtrace/libocctrace.so\n");
  std::system(("rm -rf " + dir).c_str());
}

// A traced command in a venv whose nvidia wheel holds libcupti.so.13 (a stand-in python3 that
// prints that venv's sys.path; an empty stand-in file): its folder is appended to
// LD_LIBRARY_PATH, after the user's own entries, so that libocctrace.so loads that CUPTI.
TEST(LauncherTest, AppendsTheTracedVenvsCuptiFolderToLdLibraryPath) {
  const std::string dir = "/tmp/occtrace-launcher-venv-" + std::to_string(getpid());
  const std::string site = dir + "/venv/lib/python3.12/site-packages";
  const std::string cupti = site + "/nvidia/cu13/lib";
  ASSERT_EQ(std::system(("rm -rf " + dir + " && mkdir -p " + dir + "/venv/bin " + cupti + " && touch " + cupti +
                         "/libcupti.so.13 && printf '#!/bin/sh\\necho " + site + "\\n' > " + dir +
                         "/venv/bin/python3 && chmod +x " + dir + "/venv/bin/python3").c_str()),
            0);
  const std::string env = "env -u LD_LIBRARY_PATH PATH=" + dir + "/venv/bin:/usr/bin:/bin ";
  Result r = RunLauncher("-- sh -c 'echo $LD_LIBRARY_PATH'", env + OCC_LAUNCHER_PATH);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(r.output, cupti + "\n");
  Result kept = RunLauncher("-- sh -c 'echo $LD_LIBRARY_PATH'",
                            "env LD_LIBRARY_PATH=/opt/mine PATH=" + dir + "/venv/bin:/usr/bin:/bin " + OCC_LAUNCHER_PATH);
  EXPECT_EQ(kept.output, "/opt/mine:" + cupti + "\n");
  std::system(("rm -rf " + dir).c_str());
}

}  // namespace
