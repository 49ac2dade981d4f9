// SPDX-License-Identifier: Apache-2.0
// The `process` event: command line joining, the fields it carries, and the facts read from the
// running test process itself.
#include "interposer/process_info.h"

#include <cstring>
#include <string>
#include <vector>

#include <unistd.h>

#include <gtest/gtest.h>

namespace cuclimb::interposer {
namespace {

std::vector<std::string> g_interned;

uint32_t Intern(std::string_view s) {
  g_interned.emplace_back(s);
  return static_cast<uint32_t>(g_interned.size());  // ids from 1: 0 is "no string"
}

TEST(ProcessInfoTest, CommandLineArgumentsAreJoinedBySpaces) {
  char buf[64];
  const char raw[] = "python3\0train.py\0--lr\0\0";
  std::memcpy(buf, raw, sizeof(raw) - 1);
  JoinCommandLine(buf, sizeof(raw) - 1);
  EXPECT_STREQ(buf, "python3 train.py --lr");
}

TEST(ProcessInfoTest, AnEmptyCommandLineStaysEmpty) {
  char buf[4] = {'\0', '\0', 'x', 'x'};
  JoinCommandLine(buf, 2);
  EXPECT_STREQ(buf, "");
}

TEST(ProcessInfoTest, TheEventCarriesEveryFact) {
  g_interned.clear();
  ProcessFacts facts;
  facts.pid = 4242;
  facts.ppid = 17;
  std::strcpy(facts.cmdline, "train --epochs 3");
  std::strcpy(facts.host, "node7");
  std::strcpy(facts.exe, "/usr/bin/python3.11");
  facts.driver_version = 13000;
  facts.cupti_version = 130001;
  facts.rank = "3";
  const format::Event ev = ProcessEvent(facts, 99, Intern);
  EXPECT_EQ(ev.type, format::EventType::kProcess);
  EXPECT_EQ(ev.ts, 99);
  EXPECT_EQ(ev.value, 4242);
  EXPECT_EQ(ev.handle, 17u);
  ASSERT_EQ(g_interned.size(), 3u);
  EXPECT_EQ(g_interned[ev.name - 1], "train --epochs 3");
  EXPECT_EQ(g_interned[ev.text - 1], "node7");
  EXPECT_EQ(g_interned[ev.api - 1], "/usr/bin/python3.11");
  EXPECT_EQ(ev.size, 13000u);
  EXPECT_EQ(ev.aux, 130001u);
  EXPECT_EQ(ev.corr, 4u);  // rank + 1; 0 means no rank
}

TEST(ProcessInfoTest, NoRankIsZero) {
  ProcessFacts facts;
  facts.rank = nullptr;
  EXPECT_EQ(ProcessEvent(facts, 0, Intern).corr, 0u);
  facts.rank = "0";
  EXPECT_EQ(ProcessEvent(facts, 0, Intern).corr, 1u);
}

TEST(ProcessInfoTest, ReadsTheRunningProcess) {
  ProcessFacts facts;
  ReadProcessFacts(&facts);
  EXPECT_EQ(facts.pid, getpid());
  EXPECT_EQ(facts.ppid, getppid());
  EXPECT_NE(std::string(facts.cmdline).find("process_info_test"), std::string::npos)
      << facts.cmdline;
  EXPECT_NE(std::string(facts.exe).find("process_info_test"), std::string::npos) << facts.exe;
  char host[256] = {};
  gethostname(host, sizeof(host) - 1);
  EXPECT_STREQ(facts.host, host);
}

}  // namespace
}  // namespace cuclimb::interposer
