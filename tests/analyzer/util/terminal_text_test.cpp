// SPDX-License-Identifier: Apache-2.0
// Trace strings on the terminal: control sequences show as text, UTF-8 stays.
#include "util/terminal_text.h"

#include <gtest/gtest.h>

namespace cuclimb::util {
namespace {

TEST(TerminalSafe, EscapeSequencesBecomeText) {
  EXPECT_EQ(TerminalSafe("k\x1b[2J\x1b]0;owned\x07"), "k\\x1b[2J\\x1b]0;owned\\x07");
  EXPECT_EQ(TerminalSafe("a\x7f"
                         "b"),
            "a\\x7fb");
  EXPECT_EQ(TerminalSafe("\xc2\x9b"
                         "31m"),
            "\\u009b31m");                                 // C1 CSI as UTF-8
  EXPECT_EQ(TerminalSafe("x\xe2\x80\xaey"), "x\\u202ey");  // right-to-left override
  EXPECT_EQ(TerminalSafe("x\xe2\x81\xa6y"), "x\\u2066y");  // left-to-right isolate
}

TEST(TerminalSafe, NewlinesOnlyInWholeReports) {
  EXPECT_EQ(TerminalSafe("name\nverdict: flat\t"), "name\\x0averdict: flat\\x09");
  EXPECT_EQ(TerminalSafe("line 1\n\tline 2\n", true), "line 1\n\tline 2\n");
  EXPECT_EQ(TerminalSafe("a\rb\x1b", true), "a\\x0db\\x1b");
}

TEST(TerminalSafe, Utf8IsKeptAndInvalidBytesShown) {
  EXPECT_EQ(TerminalSafe("µs → 5 ℃ 日本 😀"), "µs → 5 ℃ 日本 😀");
  EXPECT_EQ(TerminalSafe("a\xff"
                         "b"),
            "a\\xffb");
  EXPECT_EQ(TerminalSafe("\xe2\x82"), "\\xe2\\x82");           // cut sequence
  EXPECT_EQ(TerminalSafe("\xc0\xaf"), "\\xc0\\xaf");           // overlong '/'
  EXPECT_EQ(TerminalSafe("\xed\xa0\x80"), "\\xed\\xa0\\x80");  // surrogate
  EXPECT_EQ(TerminalSafe(std::string_view("a\0b", 3)), "a\\x00b");
  EXPECT_EQ(TerminalSafe(""), "");
}

}  // namespace
}  // namespace cuclimb::util
