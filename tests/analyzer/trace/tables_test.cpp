// SPDX-License-Identifier: Apache-2.0
// String and stack tables: interning by content, id 0 meaning none.
#include "trace/tables.h"

#include <gtest/gtest.h>

namespace cuclimb::trace {
namespace {

TEST(TablesTest, StringsInternByContent) {
  StringTable t;
  EXPECT_EQ(t.Intern(""), 0u);
  const uint32_t a = t.Intern("alpha");
  EXPECT_EQ(t.Intern("beta"), a + 1);
  EXPECT_EQ(t.Intern("alpha"), a);
  EXPECT_EQ(t.Get(a), "alpha");
  EXPECT_EQ(t.Get(999), "");
  EXPECT_FALSE(t.Has(999));
}

TEST(TablesTest, StacksInternByFrames) {
  StackTable t;
  const std::vector<uint64_t> f1 = {2, 4, 6};
  const std::vector<uint64_t> f2 = {2, 4};
  EXPECT_EQ(t.Intern({}), 0u);
  const uint32_t a = t.Intern(f1);
  const uint32_t b = t.Intern(f2);
  EXPECT_NE(a, b);
  EXPECT_EQ(t.Intern(f1), a);
  EXPECT_EQ(std::vector<uint64_t>(t.Get(a).begin(), t.Get(a).end()), f1);
  EXPECT_TRUE(t.Get(0).empty());
  EXPECT_TRUE(t.Get(77).empty());
}

}  // namespace
}  // namespace cuclimb::trace
