// Unit tests of occ::sql (sqlite/sqlite_db.h), the SQLite layer shared by the injector's writer
// and the analyzer's reader: how each open mode treats missing and existing files, that every
// error names the file and carries sqlite3_errmsg and the statement, Transaction's rollback,
// and the writer's insert path (persistent statements, SQLITE_STATIC text, Run()). Files live
// in a fresh temporary folder per test.
#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <string>

#include "sqlite/sqlite_db.h"

namespace occ::sql {
namespace {

namespace fs = std::filesystem;

class SqliteDbTest : public ::testing::Test {
 protected:
  SqliteDbTest() {
    std::string pattern = (fs::temp_directory_path() / "occ_sqlite_test.XXXXXX").string();
    if (mkdtemp(pattern.data()) != nullptr) dir_ = pattern;
  }
  ~SqliteDbTest() override {
    std::error_code ignored;
    if (!dir_.empty()) fs::remove_all(dir_, ignored);
  }
  std::string Path(const std::string& name) const { return (fs::path(dir_) / name).string(); }

  // A file with table t(id INTEGER PRIMARY KEY, name TEXT) holding `rows` rows.
  std::string MakeFile(const std::string& name, int rows) {
    const std::string path = Path(name);
    StatusOr<Db> db = Db::Create(path, /*replace=*/true);
    EXPECT_TRUE(db.ok()) << db.status().message();
    if (!db.ok()) return path;
    std::string sql = "CREATE TABLE t(id INTEGER PRIMARY KEY, name TEXT);";
    for (int i = 1; i <= rows; ++i) sql += "INSERT INTO t VALUES(" + std::to_string(i) + ", 'row');";
    Status status = db->Exec(sql);
    EXPECT_TRUE(status.ok()) << status.message();
    return path;
  }

  std::string dir_;
};

// The first column of the first row, as an integer (-1 on any failure).
int64_t Scalar(const Db& db, const std::string& sql) {
  StatusOr<Stmt> stmt = db.Prepare(sql);
  if (!stmt.ok()) return -1;
  StatusOr<bool> row = stmt->Step();
  return row.ok() && *row ? stmt->Int64(0) : -1;
}

bool StartsWith(const std::string& text, const std::string& prefix) {
  return text.compare(0, prefix.size(), prefix) == 0;
}

TEST_F(SqliteDbTest, DefaultConstructedIsNotOpen) {
  Db db;
  EXPECT_EQ(db.get(), nullptr);
  Stmt stmt;
  Status status = stmt.Run();
  EXPECT_FALSE(status.ok()) << "an unprepared statement fails instead of crashing";
}

TEST_F(SqliteDbTest, OpenReadOnlyReadsButNeverWrites) {
  const std::string path = MakeFile("ro.db", 2);
  StatusOr<Db> db = Db::OpenReadOnly(path);
  ASSERT_TRUE(db.ok()) << db.status().message();
  EXPECT_EQ(db->label(), path);
  EXPECT_EQ(Scalar(*db, "SELECT count(*) FROM t"), 2);
  Status status = db->Exec("INSERT INTO t VALUES(3, 'x')");
  ASSERT_FALSE(status.ok());
  EXPECT_TRUE(StartsWith(status.message(), path + ": ")) << status.message();
  EXPECT_NE(status.message().find("readonly"), std::string::npos) << status.message();
}

TEST_F(SqliteDbTest, OpenReadOnlyAndReadWriteNeverCreateAFile) {
  const std::string missing = Path("missing.db");
  for (auto open : {&Db::OpenReadOnly, &Db::OpenReadWrite}) {
    StatusOr<Db> db = open(missing);
    ASSERT_FALSE(db.ok());
    EXPECT_EQ(db.status().code(), StatusCode::kBadInput);
    EXPECT_EQ(db.status().message(), missing + ": cannot open as SQLite: unable to open database file");
    EXPECT_FALSE(fs::exists(missing));
  }
}

TEST_F(SqliteDbTest, OpenReadWriteWritesAnExistingFile) {
  const std::string path = MakeFile("rw.db", 1);
  {
    StatusOr<Db> db = Db::OpenReadWrite(path);
    ASSERT_TRUE(db.ok()) << db.status().message();
    ASSERT_TRUE(db->Exec("INSERT INTO t VALUES(2, 'two')").ok());
  }
  StatusOr<Db> reader = Db::OpenReadOnly(path);
  ASSERT_TRUE(reader.ok());
  EXPECT_EQ(Scalar(*reader, "SELECT count(*) FROM t"), 2);
}

TEST_F(SqliteDbTest, CreateKeepsOrReplacesAnExistingFile) {
  const std::string path = MakeFile("create.db", 3);
  {
    // The trace writer's mode: created when missing, kept when there.
    StatusOr<Db> kept = Db::Create(path, /*replace=*/false);
    ASSERT_TRUE(kept.ok()) << kept.status().message();
    EXPECT_EQ(Scalar(*kept, "SELECT count(*) FROM t"), 3);
  }
  StatusOr<Db> replaced = Db::Create(path, /*replace=*/true);
  ASSERT_TRUE(replaced.ok()) << replaced.status().message();
  StatusOr<bool> has_t = replaced->HasTable("t");
  ASSERT_TRUE(has_t.ok());
  EXPECT_FALSE(*has_t);
}

TEST_F(SqliteDbTest, CreateInAMissingFolderNamesTheFile) {
  const std::string path = Path("no-such-dir/trace.db");
  StatusOr<Db> db = Db::Create(path, /*replace=*/false);
  ASSERT_FALSE(db.ok());
  EXPECT_EQ(db.status().message(), path + ": cannot open as SQLite: unable to open database file");
}

TEST_F(SqliteDbTest, MemoryDatabaseUsesItsLabel) {
  StatusOr<Db> db = Db::OpenMemory("dump.sql");
  ASSERT_TRUE(db.ok());
  Status status = db->Exec("SELECT * FROM nope");
  EXPECT_EQ(status.message(), "dump.sql: no such table: nope (in: SELECT * FROM nope)");
}

TEST_F(SqliteDbTest, ErrorsNameTheFileTheProblemAndTheStatement) {
  const std::string path = MakeFile("errors.db", 1);
  StatusOr<Db> db = Db::OpenReadWrite(path);
  ASSERT_TRUE(db.ok());

  StatusOr<Stmt> bad = db->Prepare("SELECT nope FROM t");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().message(),
            path + ": cannot prepare query: no such column: nope (in: SELECT nope FROM t)");

  StatusOr<Stmt> insert = db->Prepare("INSERT INTO t VALUES(?1, ?2)");
  ASSERT_TRUE(insert.ok());
  ASSERT_TRUE(insert->BindInt64(1, 1).ok());
  ASSERT_TRUE(insert->BindText(2, "again").ok());
  StatusOr<bool> step = insert->Step();
  ASSERT_FALSE(step.ok());
  EXPECT_EQ(step.status().message(), path + ": query failed: UNIQUE constraint failed: t.id "
                                            "(in: INSERT INTO t VALUES(?1, ?2))");

  // Long statements are shortened and kept on one line.
  std::string long_sql = "SELECT\n" + std::string(300, 'x') + " FROM t";
  Status status = db->Exec(long_sql);
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.message().find('\n'), std::string::npos);
  EXPECT_NE(status.message().find("(in: SELECT xxx"), std::string::npos) << status.message();
  EXPECT_NE(status.message().find("...)"), std::string::npos) << status.message();
}

TEST_F(SqliteDbTest, AFailedBindIsKeptUntilRunOrReset) {
  StatusOr<Db> db = Db::OpenMemory("mem");
  ASSERT_TRUE(db.ok());
  ASSERT_TRUE(db->Exec("CREATE TABLE t(a, b)").ok());
  StatusOr<Stmt> insert = db->Prepare("INSERT INTO t VALUES(?1, ?2)");
  ASSERT_TRUE(insert.ok());

  Status bind = insert->BindInt64(3, 7);  // there is no ?3
  ASSERT_FALSE(bind.ok());
  EXPECT_EQ(bind.message(),
            "mem: cannot bind parameter: column index out of range (in: INSERT INTO t VALUES(?1, ?2))");
  ASSERT_TRUE(insert->BindInt64(1, 1).ok());
  ASSERT_TRUE(insert->BindInt64(2, 2).ok());
  // Run() returns the bind's failure rather than writing the row...
  Status run = insert->Run();
  EXPECT_EQ(run.message(), bind.message());
  EXPECT_EQ(Scalar(*db, "SELECT count(*) FROM t"), 0);
  // ...and forgets it: the statement takes the next row.
  EXPECT_TRUE(insert->Run().ok());
  EXPECT_EQ(Scalar(*db, "SELECT count(*) FROM t"), 1);

  ASSERT_FALSE(insert->BindInt64(0, 1).ok());
  EXPECT_FALSE(insert->Step().ok()) << "Step() returns a kept bind failure too";
  EXPECT_TRUE(insert->Reset().ok());
  EXPECT_TRUE(insert->Run().ok()) << "Reset() forgets it (and clears the bindings)";
  EXPECT_EQ(Scalar(*db, "SELECT count(*) FROM t WHERE a IS NULL AND b IS NULL"), 1);
}

// The trace writer's hot path: a persistent multi-row INSERT, integers and SQLITE_STATIC text
// bound for each batch, Run() (step + reset, bindings kept) per batch, inside one transaction.
TEST_F(SqliteDbTest, WriterStyleInsertPath) {
  const std::string path = Path("writer.db");
  StatusOr<Db> db = Db::Create(path, /*replace=*/false);
  ASSERT_TRUE(db.ok()) << db.status().message();
  ASSERT_TRUE(db->Exec("PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;"
                       "CREATE TABLE launch(start INTEGER, name TEXT)")
                  .ok());
  StatusOr<Stmt> batch = db->PreparePersistent("INSERT INTO launch VALUES(?,?),(?,?),(?,?),(?,?)");
  ASSERT_TRUE(batch.ok()) << batch.status().message();
  constexpr int kBatches = 1000;
  {
    StatusOr<Transaction> transaction = Transaction::Begin(*db);
    ASSERT_TRUE(transaction.ok());
    for (int b = 0; b < kBatches; ++b) {
      const std::string name = "kernel_" + std::to_string(b % 7);  // alive until Run returns
      int i = 0;
      for (int r = 0; r < 4; ++r) {
        ASSERT_TRUE(batch->BindInt64(++i, b * 4 + r).ok());
        ASSERT_TRUE(batch->BindTextStatic(++i, name).ok());
      }
      Status run = batch->Run();
      ASSERT_TRUE(run.ok()) << run.message();
    }
    ASSERT_TRUE(transaction->Commit().ok());
  }

  StatusOr<Db> reader = Db::OpenReadOnly(path);
  ASSERT_TRUE(reader.ok());
  EXPECT_EQ(Scalar(*reader, "SELECT count(*) FROM launch"), kBatches * 4);
  EXPECT_EQ(Scalar(*reader, "SELECT count(DISTINCT start) FROM launch"), kBatches * 4);
  EXPECT_EQ(Scalar(*reader, "SELECT count(*) FROM launch WHERE name = 'kernel_3'"),
            4 * ((kBatches + 3) / 7));
  StatusOr<Stmt> last = reader->Prepare("SELECT name FROM launch WHERE start = ?1");
  ASSERT_TRUE(last.ok());
  ASSERT_TRUE(last->BindInt64(1, kBatches * 4 - 1).ok());
  StatusOr<bool> row = last->Step();
  ASSERT_TRUE(row.ok() && *row);
  EXPECT_EQ(last->Text(0), "kernel_" + std::to_string((kBatches - 1) % 7));
}

TEST_F(SqliteDbTest, RunReportsAFailedRowAndTakesTheNext) {
  StatusOr<Db> db = Db::OpenMemory("mem");
  ASSERT_TRUE(db.ok());
  ASSERT_TRUE(db->Exec("CREATE TABLE t(id INTEGER PRIMARY KEY)").ok());
  StatusOr<Stmt> insert = db->PreparePersistent("INSERT INTO t VALUES(?)");
  ASSERT_TRUE(insert.ok());
  ASSERT_TRUE(insert->BindInt64(1, 1).ok());
  ASSERT_TRUE(insert->Run().ok());
  Status again = insert->Run();  // bindings stay after Run(): the same row again
  EXPECT_EQ(again.message(), "mem: query failed: UNIQUE constraint failed: t.id (in: INSERT INTO t VALUES(?))");
  ASSERT_TRUE(insert->BindInt64(1, 2).ok());
  EXPECT_TRUE(insert->Run().ok());
  EXPECT_EQ(Scalar(*db, "SELECT count(*) FROM t"), 2);
}

TEST_F(SqliteDbTest, TransactionRollsBackUnlessCommitted) {
  const std::string path = MakeFile("tx.db", 1);
  StatusOr<Db> db = Db::OpenReadWrite(path);
  ASSERT_TRUE(db.ok());
  {
    StatusOr<Transaction> transaction = Transaction::Begin(*db);
    ASSERT_TRUE(transaction.ok());
    ASSERT_TRUE(db->Exec("INSERT INTO t VALUES(2, 'rolled back')").ok());
    EXPECT_EQ(Scalar(*db, "SELECT count(*) FROM t"), 2) << "visible inside the transaction";
  }
  EXPECT_EQ(Scalar(*db, "SELECT count(*) FROM t"), 1);
  EXPECT_NE(sqlite3_get_autocommit(db->get()), 0) << "no transaction left open";
  {
    StatusOr<Transaction> transaction = Transaction::Begin(*db);
    ASSERT_TRUE(transaction.ok());
    ASSERT_TRUE(db->Exec("INSERT INTO t VALUES(3, 'kept')").ok());
    ASSERT_TRUE(transaction->Commit().ok());
    Status twice = transaction->Commit();
    EXPECT_EQ(twice.code(), StatusCode::kInternal);
  }
  EXPECT_EQ(Scalar(*db, "SELECT count(*) FROM t"), 2);
}

TEST_F(SqliteDbTest, AFailedCommitRollsBack) {
  StatusOr<Db> db = Db::OpenMemory("mem");
  ASSERT_TRUE(db.ok());
  ASSERT_TRUE(db->Exec("PRAGMA foreign_keys=ON; CREATE TABLE parent(id INTEGER PRIMARY KEY);"
                       "CREATE TABLE child(p REFERENCES parent(id) DEFERRABLE INITIALLY DEFERRED)")
                  .ok());
  StatusOr<Transaction> transaction = Transaction::Begin(*db);
  ASSERT_TRUE(transaction.ok());
  ASSERT_TRUE(db->Exec("INSERT INTO child VALUES(42)").ok());  // checked at COMMIT
  Status commit = transaction->Commit();
  ASSERT_FALSE(commit.ok());
  EXPECT_NE(commit.message().find("FOREIGN KEY constraint failed"), std::string::npos) << commit.message();
  EXPECT_NE(sqlite3_get_autocommit(db->get()), 0) << "rolled back, not left open";
  EXPECT_EQ(Scalar(*db, "SELECT count(*) FROM child"), 0);
}

TEST_F(SqliteDbTest, BeginImmediateWaitsForTheWriteLockThenFails) {
  const std::string path = MakeFile("lock.db", 1);
  StatusOr<Db> holder = Db::OpenReadWrite(path);
  ASSERT_TRUE(holder.ok());
  StatusOr<Transaction> held = Transaction::BeginImmediate(*holder);
  ASSERT_TRUE(held.ok()) << held.status().message();

  StatusOr<Db> other = Db::OpenReadWrite(path);
  ASSERT_TRUE(other.ok());
  ASSERT_TRUE(other->SetBusyTimeout(20).ok());
  StatusOr<Transaction> blocked = Transaction::BeginImmediate(*other);
  ASSERT_FALSE(blocked.ok());
  EXPECT_EQ(blocked.status().message(), path + ": database is locked (in: BEGIN IMMEDIATE)");

  ASSERT_TRUE(held->Commit().ok());
  StatusOr<Transaction> now = Transaction::BeginImmediate(*other);
  EXPECT_TRUE(now.ok()) << now.status().message();
}

TEST_F(SqliteDbTest, StatementsOutliveMovesOfTheirDb) {
  StatusOr<Db> opened = Db::OpenMemory("moved");
  ASSERT_TRUE(opened.ok());
  Db db = std::move(opened).value();
  StatusOr<Stmt> stmt = db.Prepare("SELECT 40 + 2");
  ASSERT_TRUE(stmt.ok());
  Db moved = std::move(db);
  StatusOr<bool> row = stmt->Step();
  ASSERT_TRUE(row.ok() && *row);
  EXPECT_EQ(stmt->Int64(0), 42);
}

TEST_F(SqliteDbTest, RegexpSearchesAndValidates) {
  StatusOr<Db> db = Db::OpenMemory("mem");
  ASSERT_TRUE(db.ok());
  ASSERT_TRUE(RegisterRegexp(*db).ok());
  EXPECT_EQ(Scalar(*db, "SELECT 'void gemm_kernel<128>' REGEXP 'gemm.*<[0-9]+>'"), 1);
  EXPECT_EQ(Scalar(*db, "SELECT 'softmax' REGEXP '^gemm'"), 0);
  EXPECT_TRUE(ValidateRegex("gemm|conv").ok());
  Status invalid = ValidateRegex("gemm(");
  EXPECT_EQ(invalid.code(), StatusCode::kInvalidArgument);
  EXPECT_TRUE(StartsWith(invalid.message(), "--kernel 'gemm(': invalid regular expression: "))
      << invalid.message();
}

}  // namespace
}  // namespace occ::sql
