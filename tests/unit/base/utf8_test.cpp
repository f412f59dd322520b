// ToValidUtf8: what goes into a protobuf string (the kubelet's Go client
// rejects a whole reply over one bad byte) is well-formed UTF-8.
#include "base/utf8.h"

#include <gtest/gtest.h>

namespace dranet {
namespace {

TEST(Utf8, ValidTextIsUnchanged) {
  for (const std::string text : {"", "plain ascii", "ünïcödé ✓", "\xF0\x9F\x98\x80 emoji", "\xF4\x8F\xBF\xBF"})
    EXPECT_EQ(ToValidUtf8(text), text);
}

TEST(Utf8, InvalidBytesAreEscapedOneByOne) {
  EXPECT_EQ(ToValidUtf8("a\xFF" "b"), "a\\xffb");
  EXPECT_EQ(ToValidUtf8("\xC3"), "\\xc3");                  // truncated sequence
  EXPECT_EQ(ToValidUtf8("\xC0\xAF"), "\\xc0\\xaf");         // overlong '/'
  EXPECT_EQ(ToValidUtf8("\xE0\x80\xAF"), "\\xe0\\x80\\xaf");  // overlong
  EXPECT_EQ(ToValidUtf8("\xED\xA0\x80"), "\\xed\\xa0\\x80");  // surrogate U+D800
  EXPECT_EQ(ToValidUtf8("\xF4\x90\x80\x80"), "\\xf4\\x90\\x80\\x80");  // above U+10FFFF
  EXPECT_EQ(ToValidUtf8("\x80ok\xE2\x9C\x93"), "\\x80ok\xE2\x9C\x93");
}

TEST(Utf8, EveryOutputIsValid) {
  // Every two-byte input: the output is its own fixed point.
  for (int a = 0; a < 256; ++a)
    for (int b = 0; b < 256; ++b) {
      const std::string in{static_cast<char>(a), static_cast<char>(b)};
      const std::string out = ToValidUtf8(in);
      ASSERT_EQ(ToValidUtf8(out), out) << a << " " << b;
    }
}

}  // namespace
}  // namespace dranet
