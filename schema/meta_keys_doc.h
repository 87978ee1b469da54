// docs/schema.md's list of OCC_META keys, made from the declared table (schema/meta_keys.h).
// The list sits between two marker lines of docs/schema.md; `update_meta_keys_doc`
// (update_meta_keys_doc.cc) rewrites what is between them, and tests/schema/meta_keys_test.cc
// fails when it differs from MetaKeysMarkdown().
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace occ::meta {

inline constexpr std::string_view kGeneratedBegin =
    "<!-- OCC_META keys: generated from schema/meta_keys.h (cmake --build build --target "
    "update_meta_keys_doc); edit them there -->\n";
inline constexpr std::string_view kGeneratedEnd = "<!-- end of the generated OCC_META keys -->\n";

// What goes between the markers: the keys occtrace writes today, one Markdown table row each
// (name, unit, written by, value), then the retired ones.
std::string MetaKeysMarkdown();

// The generated text `doc` holds between the markers; nullopt when either is missing.
std::optional<std::string_view> GeneratedPart(std::string_view doc);

// `doc` with the text between the markers replaced by MetaKeysMarkdown(); nullopt when either
// marker is missing.
std::optional<std::string> WithGeneratedMetaKeys(std::string_view doc);

}  // namespace occ::meta
