#include "reports/strings.h"

#include <gtest/gtest.h>

namespace occ::reports {
namespace {

constexpr const char* kPyTorchFill =
    "void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>, "
    "at::detail::Array<char*, 1> >(int, at::native::FillFunctor<float>, at::detail::Array<char*, 1>)";

TEST(StripSignatureTest, DropsReturnTypeAndParameters) {
  EXPECT_EQ(StripSignature("void foo<int>(int, float*)"), "foo<int>");
  EXPECT_EQ(StripSignature(kPyTorchFill),
            "at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>, "
            "at::detail::Array<char*, 1> >");
}

TEST(StripSignatureTest, KeepsAnonymousNamespaceAndLambdaParentheses) {
  EXPECT_EQ(StripSignature("void (anonymous namespace)::softmax<float>(float*)"),
            "(anonymous namespace)::softmax<float>");
  // The parameter list is the last parenthesized group; the lambda's own "(int)" stays.
  EXPECT_EQ(StripSignature("void k<f(int)::{lambda(int)#1}>(int, f(int)::{lambda(int)#1})"),
            "k<f(int)::{lambda(int)#1}>");
}

TEST(StripSignatureTest, LeavesPlainAndMangledNamesAlone) {
  EXPECT_EQ(StripSignature("gemm_kernel"), "gemm_kernel");
  EXPECT_EQ(StripSignature("_Z6kernelPfi"), "_Z6kernelPfi");
  EXPECT_EQ(StripSignature("sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64"),
            "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64");
}

TEST(ShortenKernelNameTest, KeepsNamesThatFit) {
  EXPECT_EQ(ShortenKernelName("void scale(float*, int)", 40), "scale");
  EXPECT_EQ(ShortenKernelName("void ns::scale<float>(float*, int)", 40), "ns::scale<float>");
}

TEST(ShortenKernelNameTest, DropsQualifiersBeforeElidingTemplates) {
  // Without namespaces: "vectorized_elementwise_kernel<4, FillFunctor<float>, Array<char*, 1> >"
  // (70 columns).
  EXPECT_EQ(ShortenKernelName(kPyTorchFill, 70),
            "vectorized_elementwise_kernel<4, FillFunctor<float>, Array<char*, 1> >");
  // Nested arguments elided: "vectorized_elementwise_kernel<4, FillFunctor<…>, Array<…> >".
  EXPECT_EQ(ShortenKernelName(kPyTorchFill, 60),
            "vectorized_elementwise_kernel<4, FillFunctor<…>, Array<…> >");
}

TEST(ShortenKernelNameTest, CutsToWidthKeepingTheStart) {
  const std::string shortened = ShortenKernelName(kPyTorchFill, 40);
  EXPECT_EQ(DisplayWidth(shortened), 40);
  EXPECT_EQ(shortened, "vectorized_elementwise_kernel<4, FillFu…");
  const std::string cutlass =
      "void cutlass::Kernel2<cutlass_80_tensorop_s1688gemm_128x128_16x5_nn_align4>"
      "(cutlass_80_tensorop_s1688gemm_128x128_16x5_nn_align4::Params)";
  // The template argument names the GEMM: keep as much of it as fits rather than "<…>".
  EXPECT_EQ(ShortenKernelName(cutlass, 32), "Kernel2<cutlass_80_tensorop_s16…");
}

TEST(ShortenKernelNameTest, NeverExceedsWidth) {
  for (int width = 4; width < 120; ++width) {
    EXPECT_LE(DisplayWidth(ShortenKernelName(kPyTorchFill, width)), width) << width;
  }
  EXPECT_EQ(DisplayWidth(ShortenKernelName(kPyTorchFill, 0)), 4);
}

TEST(ShortenKernelNameTest, NeutralizesControlCharacters) {
  const std::string shortened = ShortenKernelName("void k\n\x1b[31m(int)", 40);
  EXPECT_EQ(shortened.find('\n'), std::string::npos);
  EXPECT_EQ(shortened.find('\x1b'), std::string::npos);
}

TEST(DisplayWidthTest, CountsCodePoints) {
  EXPECT_EQ(DisplayWidth("abc"), 3);
  EXPECT_EQ(DisplayWidth("µs"), 2);
  EXPECT_EQ(DisplayWidth("a→b×c…"), 6);
}

TEST(TruncateToWidthTest, AddsEllipsisOnlyWhenCut) {
  EXPECT_EQ(TruncateToWidth("abcdef", 6), "abcdef");
  EXPECT_EQ(TruncateToWidth("abcdef", 4), "abc…");
  EXPECT_EQ(TruncateToWidth("µµµµµ", 3), "µµ…");
}

TEST(PadTest, PadsByDisplayWidth) {
  EXPECT_EQ(PadLeft("µs", 4), "  µs");
  EXPECT_EQ(PadRight("µs", 4), "µs  ");
  EXPECT_EQ(PadRight("toolong", 3), "toolong");
}

TEST(WrapTextTest, WrapsAtSpacesAndCutsLongWords) {
  EXPECT_EQ(WrapText("aa bb cc", 5), (std::vector<std::string>{"aa bb", "cc"}));
  EXPECT_EQ(WrapText("abcdefgh", 3), (std::vector<std::string>{"abc", "def", "gh"}));
  EXPECT_EQ(WrapText("", 10), (std::vector<std::string>{""}));
}

TEST(SanitizeTest, ReplacesInvalidUtf8AndControls) {
  EXPECT_EQ(SanitizeUtf8("ok\xff!"), "ok\xEF\xBF\xBD!");
  EXPECT_EQ(SanitizeUtf8("\xC0\xAF"), "\xEF\xBF\xBD\xEF\xBF\xBD");  // overlong '/'
  EXPECT_EQ(SanitizeUtf8("line\nbreak"), "line\nbreak");
  EXPECT_EQ(SanitizeForDisplay("line\nbreak\t\x1b"), "line break  ");
  EXPECT_EQ(SanitizeForDisplay("µ→"), "µ→");
}

TEST(FormatTest, Counts) {
  EXPECT_EQ(FormatCount(0), "0");
  EXPECT_EQ(FormatCount(999), "999");
  EXPECT_EQ(FormatCount(1000), "1,000");
  EXPECT_EQ(FormatCount(1234567), "1,234,567");
  EXPECT_EQ(FormatCount(-1234), "-1,234");
  EXPECT_EQ(FormatCount(INT64_MIN), "-9,223,372,036,854,775,808");
}

TEST(FormatTest, Durations) {
  EXPECT_EQ(FormatDuration(850), "850 ns");
  EXPECT_EQ(FormatDuration(1500), "1.50 µs");
  EXPECT_EQ(FormatDuration(12345), "12.3 µs");
  EXPECT_EQ(FormatDuration(283100000), "283.1 ms");
  EXPECT_EQ(FormatDuration(1234000000), "1.23 s");
  EXPECT_EQ(FormatDurationAscii(12345), "12.3 us");
}

TEST(FormatTest, BytesAndPercent) {
  EXPECT_EQ(FormatBytes(0), "0 B");
  EXPECT_EQ(FormatBytes(4000), "4,000 B");
  EXPECT_EQ(FormatBytes(4096), "4 KiB");
  EXPECT_EQ(FormatBytes(233472), "228 KiB");
  EXPECT_EQ(FormatBytes(2 * 1024 * 1024), "2 MiB");
  EXPECT_EQ(FormatPct(62.5), "62.5%");
  EXPECT_EQ(FormatPct(37.5, 2), "37.50%");
  EXPECT_EQ(FormatFixed(-0.04, 1), "0.0");
}

TEST(EscapeTest, Html) {
  EXPECT_EQ(HtmlEscape("a<b>&\"c'"), "a&lt;b&gt;&amp;&quot;c&#39;");
  EXPECT_EQ(HtmlEscape("</script>"), "&lt;/script&gt;");
}

TEST(EscapeTest, CsvFollowsRfc4180) {
  EXPECT_EQ(CsvField("plain"), "plain");
  EXPECT_EQ(CsvField("a,b"), "\"a,b\"");
  EXPECT_EQ(CsvField("say \"hi\""), "\"say \"\"hi\"\"\"");
  EXPECT_EQ(CsvField("two\nlines"), "\"two\nlines\"");
}

TEST(EscapeTest, MarkdownTextEscapesMarkup) {
  EXPECT_EQ(MarkdownText("a|b"), "a\\|b");
  EXPECT_EQ(MarkdownText("vector<float>"), "vector\\<float\\>");
  EXPECT_EQ(MarkdownText("__launch_bounds__"), "\\_\\_launch\\_bounds\\_\\_");
  EXPECT_EQ(MarkdownText("*[x](y)*"), "\\*\\[x\\](y)\\*");
  EXPECT_EQ(MarkdownText("62.5% - ok"), "62.5% - ok");
}

TEST(EscapeTest, MarkdownCodeSpans) {
  EXPECT_EQ(MarkdownCode("foo<int>", false), "`foo<int>`");
  EXPECT_EQ(MarkdownCode("a|b", true), "`a\\|b`");
  EXPECT_EQ(MarkdownCode("a|b", false), "`a|b`");
  EXPECT_EQ(MarkdownCode("a`b", false), "``a`b``");
  EXPECT_EQ(MarkdownCode("`x", false), "`` `x ``");
}

}  // namespace
}  // namespace occ::reports
