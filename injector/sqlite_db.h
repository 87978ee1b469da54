// Minimal RAII over the SQLite C API for the writer: a connection and prepared statements.
// Failures are reported through errors.h (naming the call and sqlite3_errmsg) and returned
// as false; the writer then turns tracing off.
#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <string>
#include <string_view>

namespace occ::inj {

class SqliteStatement {
 public:
  SqliteStatement() = default;
  SqliteStatement(const SqliteStatement&) = delete;
  SqliteStatement& operator=(const SqliteStatement&) = delete;
  SqliteStatement(SqliteStatement&& other) noexcept;
  SqliteStatement& operator=(SqliteStatement&& other) noexcept;
  ~SqliteStatement();

  bool Prepare(sqlite3* db, std::string_view sql);
  sqlite3_stmt* get() const { return stmt_; }

  // Bind by 1-based index. Cannot fail for a valid index on a prepared statement.
  void Bind(int index, int64_t value) { sqlite3_bind_int64(stmt_, index, value); }
  void BindDouble(int index, double value) { sqlite3_bind_double(stmt_, index, value); }
  void BindNull(int index) { sqlite3_bind_null(stmt_, index); }
  // The text must stay alive until the statement is stepped (SQLITE_STATIC).
  void BindText(int index, std::string_view text) {
    sqlite3_bind_text(stmt_, index, text.data(), static_cast<int>(text.size()), SQLITE_STATIC);
  }
  // Steps a statement that returns no rows and resets it for reuse.
  bool Run();

 private:
  sqlite3* db_ = nullptr;
  sqlite3_stmt* stmt_ = nullptr;
};

class SqliteDb {
 public:
  SqliteDb() = default;
  SqliteDb(const SqliteDb&) = delete;
  SqliteDb& operator=(const SqliteDb&) = delete;
  ~SqliteDb();

  bool Open(const std::string& path);
  bool Exec(const char* sql);
  void Close();
  sqlite3* get() const { return db_; }

 private:
  sqlite3* db_ = nullptr;
};

}  // namespace occ::inj
