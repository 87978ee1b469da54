// update_meta_keys_doc FILE: rewrites FILE's generated list of OCC_META keys (docs/schema.md,
// between the markers of schema/meta_keys_doc.h) from schema/meta_keys.h. Run through
// `cmake --build build --target update_meta_keys_doc`. Writes only when the list changed.
#include <cstdio>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>

#include "schema/meta_keys_doc.h"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: update_meta_keys_doc docs/schema.md\n");
    return 2;
  }
  const std::string path = argv[1];
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    std::fprintf(stderr, "update_meta_keys_doc: cannot read %s\n", path.c_str());
    return 1;
  }
  std::stringstream text;
  text << in.rdbuf();
  const std::string doc = text.str();
  const std::optional<std::string> updated = occ::meta::WithGeneratedMetaKeys(doc);
  if (!updated) {
    std::fprintf(stderr, "update_meta_keys_doc: %s has no generated OCC_META section (its marker lines are missing)\n",
                 path.c_str());
    return 1;
  }
  if (*updated == doc) {
    std::printf("%s: OCC_META keys already up to date\n", path.c_str());
    return 0;
  }
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << *updated;
  if (!out.flush()) {
    std::fprintf(stderr, "update_meta_keys_doc: cannot write %s\n", path.c_str());
    return 1;
  }
  std::printf("%s: OCC_META keys regenerated from schema/meta_keys.h\n", path.c_str());
  return 0;
}
