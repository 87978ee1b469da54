// Which libcupti.so.13 a traced command will load, found by the occtrace launcher before it
// exec's the command. libocctrace.so links libcupti.so.13 by SONAME: in a PyTorch process the
// copy PyTorch loaded is reused; otherwise the dynamic loader searches LD_LIBRARY_PATH, then the
// build's toolkit folder (libocctrace.so's RUNPATH), then ldconfig's cache. An installed
// occtrace (a wheel in a venv, a tarball) cannot rely on the build's toolkit, so the launcher
// looks where the traced environment keeps its CUPTI and, when the loader would not look
// there, appends that folder to LD_LIBRARY_PATH.
#pragma once

#include <string>
#include <vector>

namespace occ::launcher {

inline constexpr const char* kCuptiSoname = "libcupti.so.13";

// One folder to look in, in order. `add` says whether the loader needs LD_LIBRARY_PATH to
// find a copy there (false for LD_LIBRARY_PATH's own entries and the RUNPATH folder).
struct CuptiPlace {
  std::string dir;
  bool add = true;
};

// What the search starts from. Every field comes from the environment in production
// (CuptiSearchFromEnvironment) and from stand-in folders in the tests.
struct CuptiSearch {
  std::vector<std::string> ld_library_path;  // LD_LIBRARY_PATH's entries
  std::string python;                        // the traced Python, "" when there is none
  std::vector<std::string> python_path;      // its sys.path
  std::vector<std::string> cuda_roots;       // $CUDA_HOME, $CUDA_PATH, /usr/local/cuda
  std::string runpath_dir;                   // libocctrace.so's RUNPATH (the build's toolkit)
};

// The folders, in the loader's order where the loader looks, then the environment's:
// LD_LIBRARY_PATH; the nvidia CUPTI wheel under each sys.path entry (nvidia/cu13/lib, the
// CUDA 13 wheels' one folder, then nvidia/cuda_cupti/lib, the older per-library layout);
// CUDA's extras/CUPTI/lib64 and lib64 under each root; libocctrace.so's RUNPATH.
std::vector<CuptiPlace> CuptiPlaces(const CuptiSearch& search);

struct CuptiFound {
  std::string path;     // the libcupti.so.13 found
  std::string add_dir;  // the folder to append to LD_LIBRARY_PATH; "" when none is needed
};

// The first place holding a readable libcupti.so.13; then ldconfig's cache (`ldconfig_path`:
// what `ldconfig -p` lists for the SONAME, "" if nothing). Returns false when neither has one.
bool PickCupti(const std::vector<CuptiPlace>& places, const std::string& ldconfig_path,
               CuptiFound* found);

// The one line printed when nothing is found: every place looked in.
std::string CuptiNotFoundMessage(const CuptiSearch& search);

// The Python interpreter that will run `command`: the command itself when it is a Python
// (python3, a venv's bin/python3.12), the interpreter of its #! line (torchrun, console
// scripts), else the python3 on PATH; "" when there is none.
std::string TracedPython(const std::vector<std::string>& command);

// The production search: LD_LIBRARY_PATH, the traced Python's sys.path (it runs the Python
// once: `python -c 'import sys; print(...)'`), the CUDA roots, the RUNPATH compiled in.
CuptiSearch CuptiSearchFromEnvironment(const std::vector<std::string>& command);

// ldconfig -p's path for libcupti.so.13, "" if it lists none (or ldconfig is missing).
std::string LdconfigCupti();

}  // namespace occ::launcher
