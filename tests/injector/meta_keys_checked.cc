// Linked into every injector test executable that writes OCC_META rows or reads a part's rows
// (SessionMeta, Meta): at the end of the run, every key that reached TraceWriter's check
// (SetMeta, WriteMetaAfterFailure, CheckMetaKey) must be declared in schema/meta_keys.h for the
// injector, else the run fails naming the keys. ctest runs each test in its own process, so the
// failure lands on the test that wrote the key.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "injector/writer/trace_writer.h"

namespace occ::inj {
namespace {

class UndeclaredMetaKeysFail : public testing::Environment {
 public:
  void TearDown() override {
    for (const std::string& key : UndeclaredMetaKeysWritten()) {
      ADD_FAILURE() << "OCC_META key '" << key
                    << "' was written but schema/meta_keys.h does not declare it for the injector: add a row "
                       "there and regenerate docs/schema.md (cmake --build build --target update_meta_keys_doc)";
    }
  }
};

// gtest's documented way to add an environment before gtest_main's main() runs.
[[maybe_unused]] testing::Environment* const kUndeclaredMetaKeysFail =
    testing::AddGlobalTestEnvironment(new UndeclaredMetaKeysFail);

}  // namespace
}  // namespace occ::inj
