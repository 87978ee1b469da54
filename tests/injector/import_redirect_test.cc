// RedirectImports on real shared objects loaded by the dynamic loader: the three GOT slot kinds
// (PLT slot under full RELRO, unbound lazy PLT slot, -fno-plt GLOB_DAT slot), objects left out,
// slots owned by another interposer, and page protections restored.
#include "injector/tracer/import_redirect.h"

#include <gtest/gtest.h>

#include <fstream>
#include <string>
#include <vector>

extern "C" int occ_test_import_target(int x);
extern "C" int occ_client_now(int x);
extern "C" int occ_client_lazy(int x);
extern "C" int occ_client_noplt(int x);
extern "C" int occ_client_stored(int x);

namespace occ::inj {
namespace {

extern "C" int RedirectedTarget(int x) { return x + 100; }
extern "C" int SecondInterposer(int x) { return x + 1000; }

void* Address(int (*function)(int)) { return reinterpret_cast<void*>(function); }

bool IsClient(const std::string& path) { return path.find("occ_test_import_client") != std::string::npos; }

// The protections of every mapping of the client libraries, in order.
std::vector<std::string> ClientProtections() {
  std::ifstream maps("/proc/self/maps");
  std::vector<std::string> result;
  for (std::string line; std::getline(maps, line);) {
    if (line.find("occ_test_import_client") != std::string::npos) result.push_back(line.substr(0, line.find(' ', line.find(' ') + 1)));
  }
  return result;
}

TEST(ImportRedirect, RewritesEveryKindOfSlotInIncludedObjectsOnly) {
  // Bind the full-RELRO and -fno-plt clients (the lazy one stays unbound until after the rewrite).
  ASSERT_EQ(occ_client_now(1), 2);
  ASSERT_EQ(occ_client_noplt(1), 2);
  const std::vector<std::string> protections_before = ClientProtections();
  ASSERT_FALSE(protections_before.empty());

  const ImportRedirect redirect{"occ_test_import_target", Address(&RedirectedTarget), Address(&occ_test_import_target)};
  const RedirectReport report = RedirectImports({&redirect, 1}, IsClient);
  EXPECT_EQ(report.rewritten, 3);
  EXPECT_EQ(report.left_to_other_interposer, 0);
  EXPECT_EQ(report.failed, 0);
  EXPECT_EQ(report.objects.size(), 3u);

  EXPECT_EQ(occ_client_now(1), 101);
  EXPECT_EQ(occ_client_lazy(1), 101);
  EXPECT_EQ(occ_client_noplt(1), 101);
  EXPECT_EQ(occ_test_import_target(1), 2) << "the test program itself was not included";
  EXPECT_EQ(ClientProtections(), protections_before) << "read-only GOT pages must be read-only again";

  // Run again: slots already redirected count as done, nothing else changes.
  EXPECT_EQ(RedirectImports({&redirect, 1}, IsClient).rewritten, 3);

  // A slot that no longer points at `original` belongs to someone else: left alone.
  const ImportRedirect other{"occ_test_import_target", Address(&SecondInterposer), Address(&occ_test_import_target)};
  const RedirectReport second = RedirectImports({&other, 1}, IsClient);
  EXPECT_EQ(second.rewritten, 0);
  EXPECT_EQ(second.left_to_other_interposer, 3);
  EXPECT_EQ(occ_client_now(1), 101);

  // Undo, so the order of tests does not matter.
  const ImportRedirect undo{"occ_test_import_target", Address(&occ_test_import_target), Address(&RedirectedTarget)};
  EXPECT_EQ(RedirectImports({&undo, 1}, IsClient).rewritten, 3);
  EXPECT_EQ(occ_client_now(1), 2);
  EXPECT_EQ(occ_client_lazy(1), 2);
  EXPECT_EQ(occ_client_noplt(1), 2);
}

TEST(ImportRedirect, UnknownSymbolOrNoObjectChangesNothing) {
  const ImportRedirect missing{"occ_no_such_import", Address(&RedirectedTarget), Address(&occ_test_import_target)};
  EXPECT_EQ(RedirectImports({&missing, 1}, IsClient).rewritten, 0);
  const ImportRedirect redirect{"occ_test_import_target", Address(&RedirectedTarget), Address(&occ_test_import_target)};
  EXPECT_EQ(RedirectImports({&redirect, 1}, [](const std::string&) { return false; }).rewritten, 0);
  EXPECT_EQ(occ_client_now(1), 2);
}

TEST(RedirectStoredPointers, RewritesPointersStoredInDataAndLeavesOtherObjectsAlone) {
  ASSERT_EQ(occ_client_stored(1), 2);  // stores the target's address in the client's .bss
  ASSERT_EQ(occ_client_now(1), 2);
  const std::vector<std::string> protections_before = ClientProtections();

  const ImportRedirect redirect{"occ_test_import_target", Address(&RedirectedTarget), Address(&occ_test_import_target)};
  auto is_client = [](const std::string& path, uintptr_t) { return IsClient(path); };
  const RedirectReport report = RedirectStoredPointers({&redirect, 1}, is_client);
  EXPECT_GE(report.rewritten, 2) << "the stored pointer and at least the GOT slot of the same client";
  EXPECT_EQ(report.failed, 0);
  EXPECT_EQ(occ_client_stored(1), 101);
  EXPECT_EQ(occ_client_now(1), 101);
  EXPECT_EQ(occ_test_import_target(1), 2) << "the test program itself was not included";
  EXPECT_EQ(ClientProtections(), protections_before) << "read-only pages must be read-only again";

  // Nothing equal to `original` is left: a second scan finds nothing.
  EXPECT_EQ(RedirectStoredPointers({&redirect, 1}, is_client).rewritten, 0);
  // An object left out keeps its pointers.
  const ImportRedirect undo{"occ_test_import_target", Address(&occ_test_import_target), Address(&RedirectedTarget)};
  EXPECT_EQ(RedirectStoredPointers({&undo, 1}, [](const std::string&, uintptr_t) { return false; }).rewritten, 0);
  EXPECT_EQ(occ_client_stored(1), 101);
  // Undo, so the order of tests does not matter.
  EXPECT_EQ(RedirectStoredPointers({&undo, 1}, is_client).rewritten, report.rewritten);
  EXPECT_EQ(occ_client_stored(1), 2);
  EXPECT_EQ(occ_client_now(1), 2);
}

}  // namespace
}  // namespace occ::inj
