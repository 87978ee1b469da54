#include "injector/sqlite_db.h"

#include <utility>

#include "injector/errors.h"

namespace occ::inj {

SqliteStatement::SqliteStatement(SqliteStatement&& other) noexcept
    : db_(std::exchange(other.db_, nullptr)), stmt_(std::exchange(other.stmt_, nullptr)) {}

SqliteStatement& SqliteStatement::operator=(SqliteStatement&& other) noexcept {
  if (this != &other) {
    sqlite3_finalize(stmt_);
    db_ = std::exchange(other.db_, nullptr);
    stmt_ = std::exchange(other.stmt_, nullptr);
  }
  return *this;
}

SqliteStatement::~SqliteStatement() { sqlite3_finalize(stmt_); }

bool SqliteStatement::Prepare(sqlite3* db, std::string_view sql) {
  sqlite3_finalize(stmt_);
  stmt_ = nullptr;
  db_ = db;
  OCC_SQLITE_CHECK(db, sqlite3_prepare_v3(db, sql.data(), static_cast<int>(sql.size()),
                                          SQLITE_PREPARE_PERSISTENT, &stmt_, nullptr));
  return true;
}

bool SqliteStatement::Run() {
  int rc = sqlite3_step(stmt_);
  sqlite3_reset(stmt_);
  return OCC_SQLITE_OK(db_, rc);
}

SqliteDb::~SqliteDb() { Close(); }

bool SqliteDb::Open(const std::string& path) {
  Close();
  // SQLITE_OPEN_NOMUTEX: the connection is used by the writer thread only.
  int rc = sqlite3_open_v2(path.c_str(), &db_,
                           SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, nullptr);
  if (!OCC_SQLITE_OK(db_, rc)) {
    Close();
    return false;
  }
  return true;
}

bool SqliteDb::Exec(const char* sql) {
  OCC_SQLITE_CHECK(db_, sqlite3_exec(db_, sql, nullptr, nullptr, nullptr));
  return true;
}

void SqliteDb::Close() {
  if (db_ != nullptr) {
    // sqlite3_close_v2: never fails for lack of finalized statements; they close it later.
    sqlite3_close_v2(db_);
    db_ = nullptr;
  }
}

}  // namespace occ::inj
