// Where the occtrace launcher finds libcupti.so.13, on stand-in folder layouts: a venv's
// nvidia CUPTI wheel (CUDA 13's nvidia/cu13/lib and the older nvidia/cuda_cupti/lib), CUDA
// toolkits, LD_LIBRARY_PATH, ldconfig; and which Python is the traced one. No GPU, no CUPTI:
// the files are empty stand-ins (the launcher only checks that they are there).
#include "injector/launcher/launcher_cupti.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace occ::launcher {
namespace {

namespace fs = std::filesystem;

class LauncherCuptiTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() / ("occ-launcher-cupti-" + std::to_string(getpid()));
    fs::remove_all(root_);
    fs::create_directories(root_);
    const char* path = std::getenv("PATH");
    saved_path_ = path != nullptr ? path : "";
  }
  void TearDown() override {
    setenv("PATH", saved_path_.c_str(), 1);
    fs::remove_all(root_);
  }
  // An empty file at root_/relative (its folders made); returns its folder.
  std::string Touch(const std::string& relative) {
    const fs::path file = root_ / relative;
    fs::create_directories(file.parent_path());
    std::ofstream(file).put('\n');
    return file.parent_path().string();
  }
  // An executable script at root_/relative.
  std::string Script(const std::string& relative, const std::string& text) {
    const fs::path file = root_ / relative;
    fs::create_directories(file.parent_path());
    std::ofstream(file) << text;
    chmod(file.c_str(), 0755);
    return file.string();
  }
  std::string Dir(const std::string& relative) { return (root_ / relative).string(); }

  fs::path root_;
  std::string saved_path_;
};

TEST_F(LauncherCuptiTest, PlacesInTheLoadersOrderThenTheEnvironments) {
  CuptiSearch search;
  search.ld_library_path = {"/ld/a", "/ld/b"};
  search.python_path = {"/venv/lib/python3.12/site-packages"};
  search.cuda_roots = {"/opt/cuda", "/usr/local/cuda"};
  search.runpath_dir = "/build/cuda/lib";
  const std::vector<CuptiPlace> places = CuptiPlaces(search);
  std::vector<std::string> dirs;
  for (const CuptiPlace& place : places) dirs.push_back(place.dir + (place.add ? " +" : ""));
  EXPECT_EQ(dirs, (std::vector<std::string>{
                      "/ld/a", "/ld/b",
                      "/venv/lib/python3.12/site-packages/nvidia/cu13/lib +",
                      "/venv/lib/python3.12/site-packages/nvidia/cuda_cupti/lib +",
                      "/opt/cuda/extras/CUPTI/lib64 +", "/opt/cuda/lib64 +",
                      "/usr/local/cuda/extras/CUPTI/lib64 +", "/usr/local/cuda/lib64 +",
                      "/build/cuda/lib"}));
}

TEST_F(LauncherCuptiTest, TheVenvsCuptiWheelComesBeforeCudas) {
  // torch 2.11 cu130's layout: every CUDA 13 library of the nvidia wheels in nvidia/cu13/lib.
  const std::string wheel = Touch("venv/lib/python3.12/site-packages/nvidia/cu13/lib/libcupti.so.13");
  Touch("cuda/targets/x86_64-linux/lib/libcupti.so.13");
  fs::create_directory_symlink(root_ / "cuda/targets/x86_64-linux/lib", root_ / "cuda/lib64");
  CuptiSearch search;
  search.python_path = {Dir("venv/lib/python3.12"), Dir("venv/lib/python3.12/site-packages")};
  search.cuda_roots = {Dir("cuda")};
  CuptiFound found;
  ASSERT_TRUE(PickCupti(CuptiPlaces(search), "", &found));
  EXPECT_EQ(found.path, wheel + "/libcupti.so.13");
  EXPECT_EQ(found.add_dir, wheel);  // the loader would not look there: LD_LIBRARY_PATH gets it

  // Without the wheel: CUDA's, through the lib64 link.
  search.python_path.clear();
  ASSERT_TRUE(PickCupti(CuptiPlaces(search), "", &found));
  EXPECT_EQ(found.path, Dir("cuda/lib64") + "/libcupti.so.13");
  EXPECT_EQ(found.add_dir, Dir("cuda/lib64"));
}

TEST_F(LauncherCuptiTest, OlderPerLibraryWheelLayoutAndExtrasCupti) {
  const std::string cu12_layout = Touch("site/nvidia/cuda_cupti/lib/libcupti.so.13");
  const std::string extras = Touch("cuda/extras/CUPTI/lib64/libcupti.so.13");
  CuptiSearch search;
  search.python_path = {Dir("site")};
  search.cuda_roots = {Dir("cuda")};
  CuptiFound found;
  ASSERT_TRUE(PickCupti(CuptiPlaces(search), "", &found));
  EXPECT_EQ(found.add_dir, cu12_layout);
  search.python_path.clear();
  ASSERT_TRUE(PickCupti(CuptiPlaces(search), "", &found));
  EXPECT_EQ(found.add_dir, extras);
}

TEST_F(LauncherCuptiTest, LdLibraryPathAndRunpathNeedNothingAdded) {
  const std::string user = Touch("mine/libcupti.so.13");
  Touch("site/nvidia/cu13/lib/libcupti.so.13");
  CuptiSearch search;
  search.ld_library_path = {Dir("empty"), user};
  search.python_path = {Dir("site")};
  CuptiFound found;
  ASSERT_TRUE(PickCupti(CuptiPlaces(search), "", &found));
  EXPECT_EQ(found.path, user + "/libcupti.so.13");  // the user's choice wins, as in the loader
  EXPECT_EQ(found.add_dir, "");

  // The build's toolkit, reached through a root whose lib64 is that same folder: the loader
  // finds it by libocctrace.so's RUNPATH, so LD_LIBRARY_PATH is left alone.
  const std::string toolkit = Touch("cuda-13.0/lib/libcupti.so.13");
  fs::create_directory_symlink(root_ / "cuda-13.0/lib", root_ / "cuda-13.0/lib64");
  CuptiSearch built;
  built.cuda_roots = {Dir("cuda-13.0")};
  built.runpath_dir = toolkit;
  ASSERT_TRUE(PickCupti(CuptiPlaces(built), "", &found));
  EXPECT_EQ(found.add_dir, "");
}

TEST_F(LauncherCuptiTest, OtherMajorVersionsDoNotCount) {
  Touch("site/nvidia/cuda_cupti/lib/libcupti.so.12");  // a cu12 PyTorch's
  Touch("cuda/lib64/libcupti.so");
  CuptiSearch search;
  search.python_path = {Dir("site")};
  search.cuda_roots = {Dir("cuda")};
  CuptiFound found;
  EXPECT_FALSE(PickCupti(CuptiPlaces(search), "", &found));
  // ldconfig's cache is the last resort; the loader searches it itself.
  const std::string system = Touch("usr/lib/libcupti.so.13") + "/libcupti.so.13";
  ASSERT_TRUE(PickCupti(CuptiPlaces(search), system, &found));
  EXPECT_EQ(found.path, system);
  EXPECT_EQ(found.add_dir, "");
}

TEST_F(LauncherCuptiTest, NotFoundIsOneLineNamingEveryPlace) {
  CuptiSearch search;
  search.ld_library_path = {"/ld/a"};
  search.python = "/venv/bin/python3";
  search.python_path = {"/venv/lib/python3.12/site-packages", "/usr/lib/python3/dist-packages"};
  search.cuda_roots = {"/usr/local/cuda"};
  search.runpath_dir = "/usr/local/cuda-13.0/lib";
  const std::string message = CuptiNotFoundMessage(search);
  EXPECT_EQ(message.find('\n'), std::string::npos);
  EXPECT_EQ(message,
            "occtrace: libcupti.so.13 not found; looked in LD_LIBRARY_PATH (/ld/a); nvidia/cu13/lib "
            "and nvidia/cuda_cupti/lib under the sys.path of /venv/bin/python3 "
            "(/venv/lib/python3.12/site-packages, /usr/lib/python3/dist-packages); "
            "/usr/local/cuda/{extras/CUPTI/lib64,lib64}, /usr/local/cuda-13.0/lib; ldconfig -p. "
            "Install PyTorch's CUDA 13 wheels (nvidia-cuda-cupti) or the CUDA 13 toolkit, or put "
            "the folder holding libcupti.so.13 on LD_LIBRARY_PATH");
  search.python.clear();
  search.python_path.clear();
  EXPECT_NE(CuptiNotFoundMessage(search).find("no Python (none on PATH)"), std::string::npos);
}

TEST_F(LauncherCuptiTest, TheTracedPython) {
  // A stand-in interpreter on PATH (found by name, as execvp finds it) and two scripts.
  const std::string python = Script("bin/python3", "#!/bin/sh\necho \"$0\"\n");
  const std::string venv_python = Script("venv/bin/python3.12", "#!/bin/sh\n");
  const std::string torchrun = Script("venv/bin/torchrun", "#!" + venv_python + "\nimport sys\n");
  const std::string by_env = Script("bin/tool", "#!/usr/bin/env -S python3 -u\n");
  const std::string shell = Script("bin/job.sh", "#!/bin/sh\ntrue\n");
  setenv("PATH", (Dir("bin") + ":/usr/bin:/bin").c_str(), 1);
  EXPECT_EQ(TracedPython({"python3", "train.py"}), python);
  EXPECT_EQ(TracedPython({venv_python, "-m", "torch.distributed.run"}), venv_python);
  EXPECT_EQ(TracedPython({torchrun, "--nproc-per-node=2", "train.py"}), venv_python);
  EXPECT_EQ(TracedPython({"tool"}), python);
  EXPECT_EQ(TracedPython({"job.sh"}), python);  // not a Python script: the python3 on PATH
  EXPECT_EQ(TracedPython({"./a.out"}), python);
  setenv("PATH", Dir("nothing").c_str(), 1);
  EXPECT_EQ(TracedPython({"/bin/true"}), "");
}

TEST_F(LauncherCuptiTest, SearchRunsTheTracedPythonForItsSysPath) {
  // The stand-in Python prints its sys.path as the real one does for the launcher's -c.
  const std::string site = Dir("venv/lib/python3.12/site-packages");
  Script("venv/bin/python3", "#!/bin/sh\necho ''\necho /usr/lib/python312.zip\necho " + site + "\n");
  const std::string cupti = Touch("venv/lib/python3.12/site-packages/nvidia/cu13/lib/libcupti.so.13");
  const CuptiSearch search = CuptiSearchFromEnvironment({Dir("venv/bin/python3"), "train.py"});
  EXPECT_EQ(search.python, Dir("venv/bin/python3"));
  EXPECT_EQ(search.python_path, (std::vector<std::string>{"/usr/lib/python312.zip", site}));
  ASSERT_FALSE(search.cuda_roots.empty());
  EXPECT_EQ(search.cuda_roots.back(), "/usr/local/cuda");
  CuptiFound found;
  ASSERT_TRUE(PickCupti(CuptiPlaces(search), "", &found));
  if (search.ld_library_path.empty()) {
    EXPECT_EQ(found.add_dir, cupti);
  }

  // A Python that fails (exit 1) gives no sys.path, and the search goes on without it.
  Script("broken/bin/python3", "#!/bin/sh\necho /nowhere\nexit 1\n");
  EXPECT_TRUE(CuptiSearchFromEnvironment({Dir("broken/bin/python3")}).python_path.empty());
}

}  // namespace
}  // namespace occ::launcher
