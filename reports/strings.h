// String helpers shared by the printers: kernel-name shortening, display width, number and
// unit formatting, and escaping for each output language (HTML, Markdown, CSV). Pure functions
// over UTF-8 strings; nothing here knows the Report message (report_facts.h does).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace occ::reports {

// ---- Kernel names ----------------------------------------------------------------------------

// The demangled name without its return type and parameter list:
// "void at::native::foo<float>(int, float*)" -> "at::native::foo<float>". Names that are not
// C++ signatures (C kernels, mangled names) come back unchanged.
std::string StripSignature(std::string_view demangled);

// A name that fits `max_width` columns, keeping what identifies the kernel. In order, the first
// that fits: the name without signature; without namespace qualifiers (also inside template
// arguments); with nested template arguments elided ("<…>"); finally that last form cut to
// width with a trailing "…". `max_width` < 4 is treated as 4.
std::string ShortenKernelName(std::string_view demangled, int max_width);

// ---- Display width and layout (text report) --------------------------------------------------

// Columns a UTF-8 string takes in a terminal: one per code point (the report prints no wide
// or combining characters of its own; trace strings are sanitized to printable code points).
int DisplayWidth(std::string_view s);
// Cuts `s` to at most `width` columns, ending in "…" when something was cut.
std::string TruncateToWidth(std::string_view s, int width);
std::string PadRight(std::string_view s, int width);
std::string PadLeft(std::string_view s, int width);
// Splits `text` into lines of at most `width` columns at spaces; a word longer than `width` is
// cut hard. Never returns an empty vector.
std::vector<std::string> WrapText(std::string_view text, int width);

// Replaces control characters (including newlines and tabs) with spaces and invalid UTF-8
// with U+FFFD, so a hostile or corrupt trace string cannot break a report's layout or encoding.
std::string SanitizeForDisplay(std::string_view s);
// Replaces only invalid UTF-8 sequences with U+FFFD (JSON needs valid UTF-8; keeps newlines).
std::string SanitizeUtf8(std::string_view s);

// ---- Numbers and units -----------------------------------------------------------------------

std::string FormatCount(int64_t value);                     // 12345 -> "12,345"
std::string FormatFixed(double value, int decimals);         // locale-independent "%.*f"
std::string FormatPct(double pct, int decimals = 1);         // 62.5 -> "62.5%"
// Nanoseconds in the unit that reads best: "850 ns", "12.3 µs", "283.1 ms", "1.23 s".
std::string FormatDuration(int64_t ns);
std::string FormatDurationAscii(int64_t ns);                 // "us" instead of "µs"
std::string FormatBytes(int64_t bytes);  // "0 B", "4,000 B", "48 KiB", "1,536 KiB", "2 MiB"

// ---- Escaping --------------------------------------------------------------------------------

// Text and attribute content for HTML and inline SVG: & < > " ' escaped; also sanitized.
std::string HtmlEscape(std::string_view s);
// One CSV field per RFC 4180: quoted when it holds a comma, quote, CR or LF; quotes doubled.
std::string CsvField(std::string_view s);
// Plain Markdown text: every ASCII punctuation character with meaning in GitHub-flavored
// Markdown (including | and <) is backslash-escaped, so trace strings render literally.
std::string MarkdownText(std::string_view s);
// An inline code span holding `s` literally (a longer backtick fence when `s` holds backticks).
// `in_table`: also escapes | as \|, which GFM table parsing needs even inside code spans.
std::string MarkdownCode(std::string_view s, bool in_table);

}  // namespace occ::reports
