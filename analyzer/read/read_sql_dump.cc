// The `.sql` text format: a dump of an occtrace trace or an Nsight Systems export (`sqlite3
// FILE .dump`), loaded into an in-memory database that the reader of the dumped format then
// reads like the file itself (input_format.h). Takes a path; gives the database.
#include <fstream>
#include <sstream>
#include <utility>

#include "analyzer/read/input_format.h"

namespace occ {

StatusOr<sql::Db> LoadSqlDump(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream buffer;
  buffer << in.rdbuf();
  std::string text = std::move(buffer).str();
  if (text.find('\0') != std::string::npos) {
    return BadInput(path + ": not an SQLite database and not SQL text (binary data)");
  }
  OCC_ASSIGN_OR_RETURN(sql::Db db, sql::Db::OpenMemory(path));
  Status loaded = db.ExecUntrusted(text);
  if (!loaded.ok()) return BadInput(path + ": cannot load SQL text: " +
                                    loaded.message().substr(path.size() + 2));
  return db;
}

}  // namespace occ
