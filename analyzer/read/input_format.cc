#include "analyzer/read/input_format.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <utility>

namespace occ {
namespace {

constexpr char kSqliteMagic[] = "SQLite format 3";  // 15 chars + NUL = the 16-byte header

}  // namespace

StatusOr<InputProbe> InputProbe::Open(const std::string& path) {
  struct stat st {};
  if (stat(path.c_str(), &st) != 0) {
    int err = errno;
    if (err == ENOENT) return BadInput(path + ": no such file");
    return BadInput(path + ": cannot access: " + std::strerror(err));
  }
  if (S_ISDIR(st.st_mode)) return BadInput(path + ": is a directory, not a trace file");
  if (!S_ISREG(st.st_mode)) return BadInput(path + ": not a regular file");
  std::ifstream in(path, std::ios::binary);
  if (!in) return BadInput(path + ": cannot open for reading: " + std::strerror(errno));
  if (st.st_size == 0) return BadInput(path + ": empty file (0 bytes), not a trace");
  InputProbe probe;
  probe.path_ = path;
  probe.size_ = st.st_size;
  probe.head_.resize(kHeadBytes);
  in.read(probe.head_.data(), static_cast<std::streamsize>(probe.head_.size()));
  probe.head_.resize(static_cast<size_t>(in.gcount()));
  if (probe.head_.size() >= sizeof kSqliteMagic &&
      std::memcmp(probe.head_.data(), kSqliteMagic, sizeof kSqliteMagic) == 0) {
    probe.kind_ = Kind::kSqlite;
    // A database shorter than its header's first page cannot be whole.
    if (st.st_size < 512) return BadInput(path + ": truncated SQLite database (" +
                                          std::to_string(st.st_size) + " bytes)");
  } else if (probe.NameEndsWith(".sql")) {
    probe.kind_ = Kind::kSqlDump;
  }
  return probe;
}

bool InputProbe::NameEndsWith(std::string_view suffix) const {
  return path_.size() >= suffix.size() &&
         path_.compare(path_.size() - suffix.size(), suffix.size(), suffix) == 0;
}

char InputProbe::FirstNonSpace() const {
  const size_t first = head_.find_first_not_of(" \n\t\r");
  return first == std::string::npos ? '\0' : head_[first];
}

StatusOr<const sql::Db*> InputProbe::Database() {
  if (!database_tried_) {
    database_tried_ = true;
    database_status_ = OpenDatabase();
  }
  if (!database_status_.ok()) return database_status_;
  return static_cast<const sql::Db*>(db_.get());
}

StatusOr<std::unique_ptr<sql::Db>> InputProbe::TakeDatabase() {
  OCC_ASSIGN_OR_RETURN(const sql::Db* db, Database());
  if (db == nullptr) return BadInput(path_ + ": not a database");
  return std::move(db_);
}

Status InputProbe::OpenDatabase() {
  if (kind_ == Kind::kOther) return OkStatus();
  OCC_ASSIGN_OR_RETURN(sql::Db db,
                       kind_ == Kind::kSqlite ? sql::Db::OpenReadOnly(path_) : LoadSqlDump(path_));
  // The first read of the schema is where SQLite notices a file that only looks like a
  // database ("file is not a database", "database disk image is malformed").
  int64_t tables = 0;
  {
    auto stmt = db.Prepare("SELECT count(*) FROM sqlite_master");
    if (!stmt.ok()) return BadInput(path_ + ": unreadable or corrupt database: " +
                                    stmt.status().message().substr(path_.size() + 2));
    auto row = stmt->Step();
    if (!row.ok()) return BadInput(path_ + ": unreadable or corrupt database: " +
                                   row.status().message().substr(path_.size() + 2));
    tables = stmt->Int64(0);
  }
  if (tables == 0) return BadInput(path_ + ": empty database (no tables): not a trace");
  db_ = std::make_unique<sql::Db>(std::move(db));
  return OkStatus();
}

std::string InputProbe::Describe() const {
  switch (kind_) {
    case Kind::kSqlite:
      return "an SQLite database without any of their tables";
    case Kind::kSqlDump:
      return "a .sql text dump without any of their tables";
    case Kind::kOther:
      break;
  }
  return "not an SQLite database (no SQLite header), not a .sql text dump";
}

}  // namespace occ
