// Numbers and names in the sentences the analyzer writes (warnings, issues, limiter words,
// advice, notes). One home for them so that every stage words a percentage or a byte count the
// same way; the printers' own formatting (thousands separators, widths) is reports/strings.h.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace occ {

// "%.*f": 62.5 with 1 digit is "62.5".
std::string Fixed(double value, int digits = 1);

// 50%, 62.5%, 98.44%: occupancy percentages as Nsight Compute prints them, without trailing zeros.
std::string Pct(double value);

// "48 KiB" for a whole number of KiB, else "4000 B".
std::string FormatBytes(int64_t bytes);

// "1 block/SM", "5 blocks/SM".
std::string BlocksPerSm(int64_t blocks);

// "1024x1x1".
std::string DimsText(const int64_t dims[3]);

// The first `max_chars` characters of a possibly huge kernel or device name, then "...".
std::string Abbrev(const std::string& text, size_t max_chars = 80);

// Abbrev with control characters shown as '?', so that a warning stays on one line: the readers
// quote names and versions from files that may hold binary data.
std::string AbbrevOneLine(const std::string& text, size_t max_chars = 80);

}  // namespace occ
