#include <iostream>
#include <string>
#include <vector>

#include "analyzer/cli/occ_report.h"

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  return occ::RunOccReport(args, std::cout, std::cerr);
}
