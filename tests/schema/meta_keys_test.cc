// The declared table of OCC_META keys (schema/meta_keys.h) against what it must agree with:
// docs/schema.md's list, the keys the checked-in recorded traces hold, and the literal keys the
// sources write, folder by folder (the writer column). Writes that are not literals are checked
// when they happen, by TraceWriter::SetMeta in the injector's tests
// (tests/injector/meta_keys_checked.cc); the analyzer's reads do not compile unless declared.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <regex>
#include <set>
#include <span>
#include <sstream>
#include <string>
#include <vector>

#include "schema/meta_keys.h"
#include "schema/meta_keys_doc.h"
#include "sqlite/sqlite_db.h"

namespace occ::meta {
namespace {

namespace fs = std::filesystem;

std::string ReadFile(const fs::path& path) {
  std::ifstream file(path, std::ios::binary);
  std::stringstream text;
  text << file.rdbuf();
  return text.str();
}

TEST(MetaKeys, APlaceholderStandsForDigitsOnly) {
  const MetaKey* error = FindMetaKey("cupti_error_3");
  ASSERT_NE(error, nullptr);
  EXPECT_EQ(error->name, "cupti_error_{n}");
  EXPECT_EQ(FindMetaKey("cupti_error_12"), error);
  EXPECT_EQ(FindMetaKey("cupti_error_count")->name, "cupti_error_count");
  EXPECT_EQ(FindMetaKey("cupti_error_"), nullptr);
  EXPECT_EQ(FindMetaKey("cupti_error_3x"), nullptr);
  EXPECT_EQ(FindMetaKey("cupti_error_x"), nullptr);
  EXPECT_EQ(FindMetaKey("pid2"), nullptr);
  EXPECT_EQ(FindMetaKey("pi"), nullptr);
  EXPECT_EQ(FindMetaKey(""), nullptr);
}

TEST(MetaKeys, WritersDecideWhoMayWriteAKey) {
  EXPECT_TRUE(IsDeclared("pid", kInjector));
  EXPECT_FALSE(IsDeclared("pid", kTorchImport));
  EXPECT_TRUE(IsDeclared("torch_summed_shared_memory", kTorchImport));
  EXPECT_FALSE(IsDeclared("torch_summed_shared_memory", kInjector));
  EXPECT_TRUE(IsDeclared("reattach_began")) << "retired keys stay readable";
  EXPECT_FALSE(IsDeclared("reattach_began", kInjector)) << "and are never written again";
  EXPECT_FALSE(IsDeclared("command")) << "never written by any occtrace";
}

// docs/schema.md holds exactly the list MetaKeysMarkdown() makes.
TEST(MetaKeys, DocsSchemaMdListsTheTable) {
  const std::string doc = ReadFile(fs::path(OCC_SOURCE_DIR) / "docs/schema.md");
  const std::optional<std::string_view> listed = GeneratedPart(doc);
  ASSERT_TRUE(listed.has_value()) << "docs/schema.md lost the marker lines of its generated OCC_META list";
  const std::string generated = MetaKeysMarkdown();
  if (*listed == generated) return;
  std::istringstream want(generated), have{std::string(*listed)};
  std::string want_line, have_line;
  while (std::getline(want, want_line) && std::getline(have, have_line) && want_line == have_line) {
  }
  FAIL() << "docs/schema.md's OCC_META keys differ from schema/meta_keys.h; regenerate them: cmake --build build "
            "--target update_meta_keys_doc\n  first difference, generated: "
         << want_line << "\n  docs/schema.md: " << have_line;
}

TEST(MetaKeys, TheGeneratedListReplacesOnlyWhatIsBetweenTheMarkers) {
  const std::string doc = "before\n" + std::string(kGeneratedBegin) + "stale\n" + std::string(kGeneratedEnd) + "after\n";
  const std::optional<std::string> updated = WithGeneratedMetaKeys(doc);
  ASSERT_TRUE(updated.has_value());
  EXPECT_EQ(*updated, "before\n" + std::string(kGeneratedBegin) + MetaKeysMarkdown() + std::string(kGeneratedEnd) +
                          "after\n");
  EXPECT_EQ(WithGeneratedMetaKeys(*updated), *updated) << "a second run changes nothing";
  EXPECT_FALSE(WithGeneratedMetaKeys("no markers\n").has_value());
  EXPECT_FALSE(WithGeneratedMetaKeys(std::string(kGeneratedBegin) + "no end marker\n").has_value());
}

// One row per key, hand-checked against the table's rows.
TEST(MetaKeys, ARowSaysUnitWritersAndValue) {
  const std::string markdown = MetaKeysMarkdown();
  EXPECT_NE(markdown.find("| `pm_samples` | count | writer | rows in `OCC_PM_SAMPLE`, updated at every commit |\n"),
            std::string::npos);
  EXPECT_NE(markdown.find("| `light_reattach_ms` | count, median ms, max ms | tracer | what attaching again took |\n"),
            std::string::npos);
  // Retired keys come after the current ones, without a writer.
  EXPECT_GT(markdown.find("| `reattach_began` | count | re-attaches begun |\n"), markdown.find("| `pm_samples` |"));
}

// Every key of every checked-in trace is declared: the real recordings (tests/golden's H100/H200
// traces, examples/) show what occtrace wrote, including keys no code writes any more; the
// hand-written fixtures must not invent keys either.
TEST(MetaKeys, EveryKeyInACheckedInTraceIsDeclared) {
  const fs::path root(OCC_SOURCE_DIR);
  const std::string schema = ReadFile(root / "schema/trace_schema.sql");
  int traces = 0;
  std::set<std::string> keys;
  for (const char* folder : {"tests/golden", "tests/analysis", "examples"}) {
    for (const fs::directory_entry& entry : fs::recursive_directory_iterator(root / folder)) {
      if (entry.path().extension() != ".sql") continue;
      const std::string sql = ReadFile(entry.path());
      if (sql.find("OCC_META") == std::string::npos) continue;
      // Hand-written fixtures are loaded after the schema; dumps carry their own.
      const bool has_schema = sql.find("CREATE TABLE") != std::string::npos;
      StatusOr<sql::Db> db = sql::Db::OpenMemory("meta_keys_test");
      ASSERT_TRUE(db.ok());
      ASSERT_TRUE(db->Exec(has_schema ? sql : schema + "\n" + sql).ok()) << entry.path();
      StatusOr<sql::Stmt> names = db->Prepare("SELECT name FROM OCC_META");
      ASSERT_TRUE(names.ok()) << entry.path();
      while (true) {
        StatusOr<bool> row = names->Step();
        ASSERT_TRUE(row.ok()) << entry.path();
        if (!*row) break;
        const std::string name = names->Text(0);
        keys.insert(name);
        EXPECT_TRUE(IsDeclared(name)) << entry.path().lexically_relative(root).string() << ": OCC_META key '"
                                      << name << "' is not declared in schema/meta_keys.h";
      }
      ++traces;
    }
  }
  EXPECT_GE(traces, 25) << "the traces were not found";
  EXPECT_GE(keys.size(), 100u);
}

// Literal keys in the sources, by the folder that writes them: the row idioms of the injector
// (SetMeta("k", ...), SetMeta(c ? "k1" : "k2", ...), rows.emplace_back("k", ...), {"k", v} in a
// row list) and the torch.profiler import's AddMeta(db, "k", ...).
std::map<std::string, std::set<std::string>> LiteralKeysByFolder() {
  static const std::regex kInjectorRows[] = {
      std::regex(R"re(SetMeta\((?:[\w.>()-]+ \? )?"([a-z][a-z0-9_]*)"(?: : "([a-z][a-z0-9_]*)")?)re"),
      std::regex(R"re(emplace_back\("([a-z][a-z0-9_]*)",)re"),
      std::regex(R"re(\{"([a-z][a-z0-9_]*)", [^,{}]*\})re"),
  };
  static const std::regex kTorchImportRows[] = {std::regex(R"re(AddMeta\(db, "([a-z][a-z0-9_]*)")re")};
  const struct {
    const char* tree;
    std::span<const std::regex> patterns;
  } kTrees[] = {{"injector", kInjectorRows}, {"analyzer/read", kTorchImportRows}};
  const fs::path root(OCC_SOURCE_DIR);
  std::map<std::string, std::set<std::string>> keys;
  for (const auto& [tree, patterns] : kTrees) {
    for (const fs::directory_entry& entry : fs::recursive_directory_iterator(root / tree)) {
      const fs::path& path = entry.path();
      if (path.extension() != ".cc" && path.extension() != ".h") continue;
      const std::string folder = path.parent_path().lexically_relative(root).string();
      if (folder == "injector/launcher") continue;  // no SQLite: writes no OCC_META
      const std::string text = ReadFile(path);
      for (const std::regex& pattern : patterns) {
        for (std::sregex_iterator it(text.begin(), text.end(), pattern), end; it != end; ++it) {
          for (size_t group = 1; group < it->size(); ++group) {
            if ((*it)[group].matched) keys[folder].insert((*it)[group].str());
          }
        }
      }
    }
  }
  return keys;
}

// The folder a Writer bit stands for.
const std::map<std::string, uint16_t>& WriterOfFolder() {
  static const std::map<std::string, uint16_t> kFolders = {
      {"injector/writer", kWriter},  {"injector/session", kSession},       {"injector/tracer", kTracer},
      {"injector/light", kLight},    {"injector/achieved/pm", kPm},        {"injector/achieved/replay", kReplay},
      {"analyzer/read/torch_profiler", kTorchImport},
  };
  return kFolders;
}

TEST(MetaKeys, EveryLiteralKeyIsDeclaredForTheFolderThatWritesIt) {
  const std::map<std::string, std::set<std::string>> keys = LiteralKeysByFolder();
  size_t found = 0;
  for (const auto& [folder, names] : keys) {
    const auto writer = WriterOfFolder().find(folder);
    for (const std::string& name : names) {
      ++found;
      if (writer == WriterOfFolder().end()) {
        ADD_FAILURE() << folder << " writes OCC_META key '" << name << "' but is no writer of schema/meta_keys.h";
        continue;
      }
      EXPECT_TRUE(IsDeclared(name, writer->second))
          << folder << " writes OCC_META key '" << name
          << "', which schema/meta_keys.h does not declare for it: add it (or its writer) there and regenerate "
             "docs/schema.md (cmake --build build --target update_meta_keys_doc)";
    }
  }
  EXPECT_GE(found, 150u) << "the scan found too few keys: has a writing idiom changed?";
}

// The other way: a row's writer really writes the key, so that the writer column stays true and
// a key no code writes any more is marked retired. Placeholders are written with a computed
// suffix, which no scan finds.
TEST(MetaKeys, EveryDeclaredWriterWritesItsKey) {
  const std::map<std::string, std::set<std::string>> keys = LiteralKeysByFolder();
  for (const MetaKey& key : kMetaKeys) {
    if (key.writers == kRetired || key.name.find("{n}") != std::string_view::npos) continue;
    for (const auto& [folder, writer] : WriterOfFolder()) {
      if ((key.writers & writer) == 0) continue;
      const auto written = keys.find(folder);
      EXPECT_TRUE(written != keys.end() && written->second.count(std::string(key.name)) == 1)
          << "schema/meta_keys.h says " << folder << " writes '" << key.name
          << "', but no literal there does: drop that writer, or mark the key kRetired";
    }
  }
}

}  // namespace
}  // namespace occ::meta
