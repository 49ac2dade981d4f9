// SPDX-License-Identifier: Apache-2.0
// Offline symbolization through mappings and ELF symbol tables, using this test's own binary.
#include "symbols/symbolizer.h"

#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

#include <gtest/gtest.h>

#include "interposer/format/trace_format.h"

namespace cuclimb::analysis {
namespace probe {
int Target(int x);  // external linkage: the ELF symbol table must name it
__attribute__((noinline)) int Target(int x) {
  asm volatile("" ::: "memory");
  return x * 3 + 1;
}
}  // namespace probe

namespace {

// Adds the mappings of this executable from /proc/self/maps.
std::string MapSelf(Symbolizer* s) {
  char exe[4096] = {};
  const ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
  if (n <= 0)
    return "";
  std::ifstream maps("/proc/self/maps");
  std::string line;
  while (std::getline(maps, line)) {
    if (line.find(exe) == std::string::npos)
      continue;
    unsigned long lo = 0, hi = 0, off = 0;
    if (std::sscanf(line.c_str(), "%lx-%lx %*s %lx", &lo, &hi, &off) == 3)
      s->AddMapping(exe, lo, hi - lo, off);
  }
  return exe;
}

TEST(Symbolizer, ReturnAddressInOwnBinary) {
  Symbolizer s;
  ASSERT_FALSE(MapSelf(&s).empty());
  trace::StringTable strings;
  const uint64_t pc = reinterpret_cast<uint64_t>(&probe::Target) + 4;  // inside the function
  const Symbolizer::Frame f = s.Resolve(format::PcFrame(pc), strings);
  EXPECT_TRUE(f.symbolized) << f.function;
  EXPECT_EQ(f.function, "cuclimb::analysis::probe::Target(int)");
  EXPECT_EQ(probe::Target(1), 4);
}

TEST(Symbolizer, FallbacksAndStringFrames) {
  Symbolizer s;
  trace::StringTable strings;
  s.AddMapping("/nonexistent/libfoo.so", 0x400000, 0x10000, 0x2000);
  EXPECT_EQ(s.Resolve(format::PcFrame(0x401234), strings).function, "libfoo.so+0x3234");
  EXPECT_EQ(s.Resolve(format::PcFrame(0x999999), strings).function, "0x999999");
  const uint32_t id = strings.Intern("_ZN4core3fmt5write17h0123456789abcdefE");
  EXPECT_EQ(s.Resolve(format::StringFrame(id), strings).function, "core::fmt::write");
}

TEST(Symbolizer, SiteLabelSkipsInternalFrames) {
  Symbolizer s;
  trace::StringTable strings;
  const std::vector<uint64_t> stack = {
      format::StringFrame(strings.Intern("cuMemAllocAsync")),
      format::StringFrame(strings.Intern("cuclimb_hook")),
      format::StringFrame(
          strings.Intern("cubecl_runtime::memory_management::MemoryManagement::reserve")),
      format::StringFrame(strings.Intern("burn_optim::adam::Adam::step")),
      format::StringFrame(strings.Intern("trainer::step")),
      format::StringFrame(strings.Intern("main")),
  };
  EXPECT_EQ(s.SiteLabel(stack, strings), "trainer::step <- main");
  EXPECT_EQ(s.Frames(stack, strings, 2).size(), 2u);
  EXPECT_EQ(s.Resolve(stack[2], strings).frame_class, FrameClass::kFramework);
}

TEST(ModuleSymbols, RejectsNonElf) {
  const std::string path = ::testing::TempDir() + "/not_elf.bin";
  std::ofstream(path) << "hello";
  EXPECT_FALSE(ModuleSymbols::Open(path, "").ok());
  EXPECT_FALSE(ModuleSymbols::Open("/nonexistent/file", "").ok());
  EXPECT_FALSE(ReadElfIds(path).ok);
}

}  // namespace
}  // namespace cuclimb::analysis
