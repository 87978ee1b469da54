// The input files a report reads: the paths given, with each directory replaced by the trace
// files and trace summaries in it, so that `occ-report traces/` reads every rank a job wrote
// there.
#pragma once

#include <string>
#include <vector>

#include "base/status.h"

namespace occ {

// Files stay as given (the reader reports what is wrong with them). A directory becomes its
// files named as a registered format's are (InputFormat::extensions: *.db, *.sqlite, *.sql,
// *.summary.json, torch.profiler's *.json and *.json.gz, one per rank), not subdirectories, in
// name order with digit runs compared as numbers (rank2 before rank10); BadInput when it holds
// none or cannot be read.
// A trace whose summary lies next to it (rank3.db and rank3.summary.json, the name
// `occ-report summarize` gives) is read through the summary only: the same launches, counted
// once, read in kilobytes.
StatusOr<std::vector<std::string>> ExpandInputPaths(const std::vector<std::string>& paths);

// Name order with digit runs compared by value: "trace-2.db" < "trace-10.db".
bool NaturalLess(const std::string& a, const std::string& b);

}  // namespace occ
