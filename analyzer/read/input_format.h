// What a reader registers for its input format (registry/input_formats.cc lists them), and the
// InputProbe its sniff looks at. A format is a name, the words and file names it is known by,
// a sniff that says whether a file is of the format, and an open that reads a file the sniff
// claimed. The probe is one file as the sniffs see it: its path, size and first bytes and, when
// it holds a database -- an SQLite file, or a `.sql` text dump loaded into memory -- that
// database, opened by the first sniff that asks; the reader of the format that claims the file
// takes the database over, so that a file is opened, and a dump loaded, once.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "sqlite/sqlite_db.h"
#include "base/status.h"
#include "analyzer/read/analysis_input.h"

namespace occ {

class InputProbe {
 public:
  // How many of the file's first bytes head() holds.
  static constexpr size_t kHeadBytes = 512;

  // Checks that `path` is a readable, non-empty regular file and reads its first bytes. BadInput
  // naming the file and the problem otherwise (no such file, a directory, an empty file, an
  // SQLite header on a file too short to be a database).
  static StatusOr<InputProbe> Open(const std::string& path);

  const std::string& path() const { return path_; }
  int64_t size() const { return size_; }
  // The first kHeadBytes bytes, or the whole file when shorter.
  const std::string& head() const { return head_; }
  bool NameEndsWith(std::string_view suffix) const;
  // The first byte of head() that is not JSON whitespace, '\0' when there is none.
  char FirstNonSpace() const;

  // Whether the file holds a database: an SQLite header, or a `.sql` name (a text dump).
  bool holds_database() const { return kind_ != Kind::kOther; }
  // The database, opened read-only (an SQLite file) or loaded into memory (a `.sql` dump) on
  // the first call; nullptr when the file holds none. BadInput naming the file for one that
  // cannot be read: not SQL text, SQL that does not load, a corrupt or empty database.
  StatusOr<const sql::Db*> Database();
  // The database, for the reader of the format that claimed the file (errors as Database(), and
  // for a file that holds none); and the path a scan thread opens a connection of its own by:
  // the file, or "" for a dump's in-memory database, which no second connection can open.
  StatusOr<std::unique_ptr<sql::Db>> TakeDatabase();
  std::string reopen_path() const { return kind_ == Kind::kSqlite ? path_ : std::string(); }

  // What the file is, for the line about a file no format claims: "an SQLite database without
  // any of their tables", "not an SQLite database (no SQLite header), not a .sql text dump".
  std::string Describe() const;

 private:
  enum class Kind { kSqlite, kSqlDump, kOther };
  InputProbe() = default;
  Status OpenDatabase();

  std::string path_;
  int64_t size_ = 0;
  std::string head_;
  Kind kind_ = Kind::kOther;
  bool database_tried_ = false;
  Status database_status_;
  std::unique_ptr<sql::Db> db_;
};

// A `.sql` text dump (`sqlite3 FILE .dump`) loaded into an in-memory database that cannot reach
// beyond itself (read_sql_dump.cc).
StatusOr<sql::Db> LoadSqlDump(const std::string& path);

struct InputFormat {
  // The format's name in tests and messages: "occtrace", "nsys", "summary", "torch.profiler".
  const char* name;
  // What a file of the format is called in the line for a file no format claims, after
  // "neither"/"nor": "an occtrace trace".
  const char* label;
  // What a directory's files of the format are named (registry/input_paths.h).
  std::vector<std::string> extensions;
  // Whether the probed file is of this format: by what it holds where that tells (its tables,
  // its marker), else by its name. An error is the probe's (a database that cannot be read):
  // the file's one line.
  StatusOr<bool> (*sniff)(InputProbe& probe);
  // Reads a file this format's sniff claimed; `file_index` is its position among the inputs.
  // Errors name the file and the problem in one line (BadInput).
  StatusOr<std::unique_ptr<AnalysisInput>> (*open)(InputProbe& probe, int file_index);
};

}  // namespace occ
