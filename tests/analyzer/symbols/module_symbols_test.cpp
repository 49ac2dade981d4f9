// SPDX-License-Identifier: Apache-2.0
// Symbolization of a real program's return address: names, file:line and the inlined call from
// DWARF; mappings in each form a trace may hold; a stripped copy whose debug file is found by
// build id, by debug link and in --symbols; a missing file and another build, with the notes
// that say how to fix them.
#include "symbols/module_symbols.h"

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "interposer/format/trace_format.h"
#include "symbols/debug_files.h"
#include "symbols/symbolizer.h"

namespace cuclimb::analysis {
namespace {

namespace fs = std::filesystem;

std::string Env(const char* name) {
  const char* v = std::getenv(name);
  return v != nullptr ? v : "";
}

struct Range {
  uint64_t base = 0, size = 0, offset = 0;
};

// What the fixture printed about one run of itself.
struct FixtureRun {
  uint64_t pc = 0;
  std::vector<Range> maps;  // /proc/self/maps lines of the program
  Range event, old_event;   // the recorder's mapping event, new and old form
};

FixtureRun RunFixture(const std::string& path) {
  FixtureRun run;
  FILE* p = popen(path.c_str(), "r");
  if (p == nullptr)
    return run;
  char line[512];
  while (std::fgets(line, sizeof(line), p) != nullptr) {
    char what[32] = {};
    unsigned long long a = 0, b = 0, c = 0;
    const int n = std::sscanf(line, "%31s %llx %llx %llx", what, &a, &b, &c);
    const std::string w = what;
    if (w == "pc" && n >= 2)
      run.pc = a;
    else if (w == "maps" && n == 4)
      run.maps.push_back({a, b, c});
    else if (w == "event" && n == 4)
      run.event = {a, b, c};
    else if (w == "old-event" && n == 4)
      run.old_event = {a, b, c};
  }
  pclose(p);
  return run;
}

// The line of the fixture's source that carries "MARK:<name>".
int MarkedLine(const std::string& name) {
  std::ifstream in(Env("SYMBOLS_FIXTURE_SOURCE"));
  std::string line;
  for (int n = 1; std::getline(in, line); ++n) {
    if (line.find("MARK:" + name) != std::string::npos)
      return n;
  }
  return -1;
}

class ModuleSymbolsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    fixture_ = Env("SYMBOLS_FIXTURE");
    ASSERT_FALSE(fixture_.empty()) << "run through meson test";
    run_ = RunFixture(fixture_);
    ASSERT_NE(run_.pc, 0u);
    ASSERT_FALSE(run_.maps.empty());
    inner_line_ = MarkedLine("inner-call");
    outer_line_ = MarkedLine("outer-call");
    ASSERT_GT(inner_line_, 0);
    tmp_ = fs::path(::testing::TempDir()) /
           ("symbols-" + std::to_string(getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(tmp_);
    fs::create_directories(tmp_);
  }
  void TearDown() override { fs::remove_all(tmp_); }

  // The pc's frames, with the program recorded at `recorded` in the given mapping form.
  std::vector<Frame> Resolve(Symbolizer* s, const std::string& recorded,
                             const std::string& build_id, const std::string& form = "maps") {
    if (form == "maps") {
      for (const Range& r : run_.maps) s->AddMapping(recorded, r.base, r.size, r.offset, build_id);
    } else {
      const Range& r = form == "event" ? run_.event : run_.old_event;
      s->AddMapping(recorded, r.base, r.size, r.offset, build_id);
    }
    return s->ResolveAll(format::PcFrame(run_.pc), strings_);
  }

  void ExpectInlinedChain(const std::vector<Frame>& f) {
    ASSERT_GE(f.size(), 2u) << (f.empty() ? "" : FormatFrame(f[0]));
    EXPECT_EQ(f[0].function, "fixture::Inner()");
    EXPECT_TRUE(f[0].inlined);
    EXPECT_EQ(fs::path(f[0].file).filename(), "symbols_fixture.cpp") << f[0].file;
    // DWARF joins the compile directory with the relative name; the compile directory is the
    // build's, which a compiler cache may have recorded from another checkout, so the tail of
    // the path and its form are what can be checked.
    const fs::path file(f[0].file);
    EXPECT_TRUE(file.is_absolute()) << f[0].file;
    EXPECT_EQ(file, file.lexically_normal()) << f[0].file;
    EXPECT_TRUE(f[0].file.ends_with("tests/analyzer/symbols/fixture/symbols_fixture.cpp"))
        << f[0].file;
    EXPECT_EQ(f[0].line, inner_line_);
    EXPECT_EQ(f[1].function, "fixture::Outer()");
    EXPECT_FALSE(f[1].inlined);
    EXPECT_EQ(f[1].line, outer_line_);
    EXPECT_TRUE(f[0].symbolized && f[1].symbolized);
    EXPECT_EQ(f[0].frame_class, FrameClass::kUser);
    EXPECT_TRUE(f[0].missing.empty()) << f[0].missing;
  }

  std::string fixture_;
  FixtureRun run_;
  int inner_line_ = 0, outer_line_ = 0;
  fs::path tmp_;
  trace::StringTable strings_;
};

TEST_F(ModuleSymbolsTest, InlinedCallWithLinesFromDwarf) {
  Symbolizer s;
  const auto frames = Resolve(&s, fixture_, ReadElfIds(fixture_).build_id);
  ExpectInlinedChain(frames);
  const std::vector<uint64_t> stack = {format::PcFrame(run_.pc)};
  EXPECT_EQ(s.SiteLabel(stack, strings_),
            "fixture::Inner (symbols_fixture.cpp:" + std::to_string(inner_line_) +
                ") <- fixture::Outer (symbols_fixture.cpp:" + std::to_string(outer_line_) + ")");
  const auto text = s.Frames(stack, strings_);
  ASSERT_EQ(text.size(), frames.size());
  EXPECT_NE(text[0].find("fixture::Inner() ("), std::string::npos) << text[0];
  EXPECT_NE(text[0].find("[inlined]"), std::string::npos) << text[0];
  EXPECT_TRUE(s.Notes().empty());
}

TEST_F(ModuleSymbolsTest, EveryMappingForm) {
  for (const char* form : {"event", "old-event"}) {
    Symbolizer s;
    ExpectInlinedChain(Resolve(&s, fixture_, "", form));
  }
  // A non-PIE executable: the old form recorded its lowest address as the offset.
  const std::string nopie = Env("SYMBOLS_FIXTURE_NOPIE");
  ASSERT_FALSE(nopie.empty());
  run_ = RunFixture(nopie);
  for (const char* form : {"maps", "event", "old-event"}) {
    Symbolizer s;
    ExpectInlinedChain(Resolve(&s, nopie, "", form));
  }
}

TEST_F(ModuleSymbolsTest, StrippedCopyWithDebugFileByBuildIdDebugLinkOrSymbolsDir) {
  const std::string stripped = Env("SYMBOLS_FIXTURE_STRIPPED"),
                    debug = Env("SYMBOLS_FIXTURE_DEBUG");
  if (stripped.empty())
    GTEST_SKIP() << "objcopy was not found at configure time";
  const ElfIds ids = ReadElfIds(stripped);
  ASSERT_TRUE(ids.ok);
  EXPECT_FALSE(ids.has_symtab);
  EXPECT_FALSE(ids.has_dwarf);
  ASSERT_EQ(ids.build_id.size(), 40u);
  EXPECT_EQ(ids.debug_link, "symbols_fixture.debug");
  // Alone in a directory: no symbols, and the notes say how to get them.
  const fs::path alone = tmp_ / "alone" / "trainer";
  fs::create_directories(alone.parent_path());
  fs::copy_file(stripped, alone);
  {
    Symbolizer s({}, FrameClassifier::Builtin(), (tmp_ / "no-debug-root").string());
    const auto f = Resolve(&s, alone.string(), ids.build_id);
    ASSERT_EQ(f.size(), 1u);
    EXPECT_FALSE(f[0].symbolized);
    EXPECT_EQ(f[0].function.rfind("trainer+0x", 0), 0u) << f[0].function;
    EXPECT_EQ(f[0].missing, "stripped");
    EXPECT_NE(FormatFrame(f[0]).find("[stripped]"), std::string::npos);
    s.SiteLabel(std::vector<uint64_t>{format::PcFrame(run_.pc)}, strings_);
    const auto notes = s.Notes();
    ASSERT_EQ(notes.size(), 1u);
    EXPECT_NE(notes[0].find("call sites in trainer are shown as module+offset"), std::string::npos)
        << notes[0];
    EXPECT_NE(notes[0].find("--symbols DIR"), std::string::npos) << notes[0];
    EXPECT_NE(notes[0].find(".build-id/" + ids.build_id.substr(0, 2) + "/"), std::string::npos)
        << notes[0];
  }
  // By build id under the debug root (/usr/lib/debug), and under a --symbols directory.
  const fs::path root = tmp_ / "debug-root";
  const fs::path by_id =
      root / ".build-id" / ids.build_id.substr(0, 2) / (ids.build_id.substr(2) + ".debug");
  fs::create_directories(by_id.parent_path());
  fs::copy_file(debug, by_id);
  {
    Symbolizer s({}, FrameClassifier::Builtin(), root.string());
    ExpectInlinedChain(Resolve(&s, alone.string(), ids.build_id));
  }
  {
    Symbolizer s({root.string()}, FrameClassifier::Builtin(), (tmp_ / "none").string());
    ExpectInlinedChain(Resolve(&s, alone.string(), ids.build_id));
  }
  // By debug link, next to the stripped file as objcopy left them (no build id recorded).
  {
    Symbolizer s({}, FrameClassifier::Builtin(), (tmp_ / "none").string());
    ExpectInlinedChain(Resolve(&s, stripped, ""));
  }
  // As --symbols DIR/<name>.debug.
  const fs::path dir = tmp_ / "symbols-dir";
  fs::create_directories(dir);
  fs::copy_file(debug, dir / "trainer.debug");
  {
    Symbolizer s({dir.string()}, FrameClassifier::Builtin(), (tmp_ / "none").string());
    ExpectInlinedChain(Resolve(&s, alone.string(), ""));
  }
  // The program itself is gone: its debug file, found by the recorded build id, serves alone
  // for the recorder's mapping events (first segment and its offset).
  for (const char* form : {"event", "old-event"}) {
    Symbolizer s({}, FrameClassifier::Builtin(), root.string());
    ExpectInlinedChain(Resolve(&s, "/gone/trainer", ids.build_id, form));
  }
}

TEST_F(ModuleSymbolsTest, MissingFileAndAnotherBuild) {
  {
    Symbolizer s({}, FrameClassifier::Builtin(), (tmp_ / "none").string());
    const auto f = Resolve(&s, "/gone/libtrainer.so", "00112233445566778899aabbccddeeff00112233");
    ASSERT_EQ(f.size(), 1u);
    EXPECT_EQ(f[0].missing, "file missing");
    EXPECT_EQ(f[0].module, "libtrainer.so");
    EXPECT_EQ(s.SiteLabel(std::vector<uint64_t>{format::PcFrame(run_.pc)}, strings_),
              f[0].function);
    const auto notes = s.Notes();
    ASSERT_EQ(notes.size(), 1u);
    EXPECT_NE(notes[0].find("/gone/libtrainer.so (build id 0011"), std::string::npos) << notes[0];
    EXPECT_NE(notes[0].find("is not on this machine"), std::string::npos) << notes[0];
  }
  {
    // The file at the recorded path is another build: its symbols would be wrong.
    Symbolizer s({}, FrameClassifier::Builtin(), (tmp_ / "none").string());
    const auto f = Resolve(&s, fixture_, "00112233445566778899aabbccddeeff00112233");
    ASSERT_EQ(f.size(), 1u);
    EXPECT_FALSE(f[0].symbolized);
    EXPECT_EQ(f[0].missing, "different build");
    s.SiteLabel(std::vector<uint64_t>{format::PcFrame(run_.pc)}, strings_);
    ASSERT_EQ(s.Notes().size(), 1u);
    EXPECT_NE(s.Notes()[0].find("another build"), std::string::npos) << s.Notes()[0];
  }
  {
    // --symbols DIR holding the right build by base name wins over the recorded path.
    const fs::path dir = tmp_ / "right-build";
    fs::create_directories(dir);
    fs::copy_file(fixture_, dir / "libtrainer.so");
    Symbolizer s({dir.string()}, FrameClassifier::Builtin(), (tmp_ / "none").string());
    ExpectInlinedChain(Resolve(&s, "/gone/libtrainer.so", ReadElfIds(fixture_).build_id));
  }
}

// rustc's output (v0 mangling; legacy names are in demangle_test): names demangled by libiberty,
// lines from its DWARF, an lld-style layout whose code segment's addresses and file offsets differ.
TEST(ModuleSymbols, RustProgram) {
  const std::string exe = Env("SYMBOLS_RUST_FIXTURE");
  if (exe.empty())
    GTEST_SKIP() << "no Rust compiler at configure time";
  uint64_t step = 0, grab = 0;
  std::vector<Range> maps;
  FILE* p = popen(exe.c_str(), "r");
  ASSERT_NE(p, nullptr);
  char line[512];
  while (std::fgets(line, sizeof(line), p) != nullptr) {
    char what[32] = {};
    unsigned long long a = 0, b = 0, c = 0;
    const int n = std::sscanf(line, "%31s %llx %llx %llx", what, &a, &b, &c);
    const std::string w = what;
    if (w == "step" && n >= 2)
      step = a;
    else if (w == "grab" && n >= 2)
      grab = a;
    else if (w == "maps" && n == 4)
      maps.push_back({a, b, c});
  }
  pclose(p);
  ASSERT_TRUE(step != 0 && grab != 0 && !maps.empty());
  Symbolizer s;
  for (const Range& r : maps) s.AddMapping(exe, r.base, r.size, r.offset);
  trace::StringTable strings;
  // A function's address + 1 stands for a return address inside it (pc − 1 is looked up).
  const Frame f = s.Resolve(format::PcFrame(step + 1), strings);
  EXPECT_EQ(f.function, "<rust_fixture::Trainer>::step::<u32>") << FormatFrame(f);
  EXPECT_EQ(f.frame_class, FrameClass::kUser);
  EXPECT_EQ(fs::path(f.file).filename(), "rust_fixture.rs") << FormatFrame(f);
  EXPECT_GT(f.line, 0);
  // grab's first instruction is Vec::len, inlined: the chain ends in grab.
  const std::vector<Frame> g = s.ResolveAll(format::PcFrame(grab + 1), strings);
  ASSERT_FALSE(g.empty());
  EXPECT_EQ(g.back().function, "<rust_fixture::Trainer as rust_fixture::Alloc>::grab")
      << FormatFrame(g.back());
  EXPECT_FALSE(g.back().inlined);
  if (g.size() > 1) {
    EXPECT_TRUE(g[0].inlined);
    EXPECT_EQ(g[0].frame_class, FrameClass::kSystem) << FormatFrame(g[0]);
  }
  const std::string label = FrameLabel(f);
  EXPECT_EQ(label.rfind("Trainer::step (rust_fixture.rs:", 0), 0u) << label;
}

TEST(ModuleSymbols, AddressesOutsideEverySymbol) {
  auto m = ModuleSymbols::Open(Env("SYMBOLS_FIXTURE"), "");
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_TRUE((*m)->has_dwarf());
  EXPECT_TRUE((*m)->Symbolize(0).empty());
  EXPECT_TRUE((*m)->Symbolize(~0ull).empty());
  int64_t delta = 0;
  EXPECT_TRUE((*m)->SegmentDelta(0, &delta));
  EXPECT_FALSE((*m)->SegmentDelta(1ull << 40, &delta));
}

}  // namespace
}  // namespace cuclimb::analysis
