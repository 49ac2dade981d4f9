// SPDX-License-Identifier: Apache-2.0
// Offline symbolization cost: frames/s through the Symbolizer (libdwfl names, lines, inlined
// calls; first sight and cached), frame classification, call-site labels and demangling, on
// the return addresses of this program's own functions (built with -g: DWARF for cuclimb's
// code, symbols only for the static libraries) and of libc (.dynsym, or its debug file under
// /usr/lib/debug when libc6-dbg is installed).
//
//   symbolize_bench [--frames N]
// Prints one table (CPU seconds); asserts nothing. The figures in docs/performance.md
// ("Symbolization").
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <link.h>
#include <unistd.h>

#include "interposer/format/trace_format.h"
#include "symbols/demangle.h"
#include "symbols/frame_classifier.h"
#include "symbols/symbolizer.h"

namespace {

using cuclimb::analysis::Demangle;
using cuclimb::analysis::Frame;
using cuclimb::analysis::FrameClassifier;
using cuclimb::analysis::Symbolizer;
// CPU time of this (single-threaded) process: the 2-core VM is shared, and wall time there
// varies with other people's builds by 2-3x.
struct Clock {
  using time_point = double;
  static double now() {
    timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
  }
};

double Seconds(double since) {
  return Clock::now() - since;
}

struct Module {
  std::string path;
  uint64_t bias = 0;
};

int FindModules(dl_phdr_info* info, size_t, void* arg) {
  auto* out = static_cast<std::vector<Module>*>(arg);
  std::string name = info->dlpi_name != nullptr ? info->dlpi_name : "";
  if (name.empty()) {
    char exe[4096] = {};
    if (readlink("/proc/self/exe", exe, sizeof(exe) - 1) > 0)
      name = exe;
  }
  if (out->empty() || name.find("libc.so") != std::string::npos)
    out->push_back({name, info->dlpi_addr});
  return 0;
}

// Function symbols of an ELF file: (address in this process + a third of the size, name).
void FunctionAddresses(const Module& m, std::vector<uint64_t>* pcs,
                       std::vector<std::string>* names) {
  const int fd = open(m.path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return;
  elf_version(EV_CURRENT);
  Elf* elf = elf_begin(fd, ELF_C_READ_MMAP, nullptr);
  for (Elf_Scn* scn = elf != nullptr ? elf_nextscn(elf, nullptr) : nullptr; scn != nullptr;
       scn = elf_nextscn(elf, scn)) {
    GElf_Shdr sh;
    if (gelf_getshdr(scn, &sh) == nullptr || (sh.sh_type != SHT_SYMTAB && sh.sh_type != SHT_DYNSYM))
      continue;
    Elf_Data* data = elf_getdata(scn, nullptr);
    const size_t count = sh.sh_entsize != 0 ? sh.sh_size / sh.sh_entsize : 0;
    for (size_t i = 0; data != nullptr && i < count; ++i) {
      GElf_Sym sym;
      if (gelf_getsym(data, static_cast<int>(i), &sym) == nullptr ||
          GELF_ST_TYPE(sym.st_info) != STT_FUNC || sym.st_size < 8 || sym.st_value == 0) {
        continue;
      }
      pcs->push_back(m.bias + sym.st_value + sym.st_size / 3);
      if (const char* n = elf_strptr(elf, sh.sh_link, sym.st_name); n != nullptr)
        names->push_back(n);
    }
  }
  if (elf != nullptr)
    elf_end(elf);
  close(fd);
}

void AddMaps(Symbolizer* s) {
  std::ifstream maps("/proc/self/maps");
  std::string line;
  while (std::getline(maps, line)) {
    unsigned long lo = 0, hi = 0, off = 0;
    char perms[8] = {};
    const size_t slash = line.find('/');
    if (slash == std::string::npos ||
        std::sscanf(line.c_str(), "%lx-%lx %7s %lx", &lo, &hi, perms, &off) != 4) {
      continue;
    }
    s->AddMapping(line.substr(slash), lo, hi - lo, off);
  }
}

struct Row {
  const char* what;
  double count, seconds;
  const char* unit;
};

}  // namespace

int main(int argc, char** argv) {
  size_t frames = 20000;
  for (int i = 1; i + 1 < argc; ++i) {
    if (std::strcmp(argv[i], "--frames") == 0)
      frames = static_cast<size_t>(std::atol(argv[++i]));
  }
  std::vector<Module> modules;
  dl_iterate_phdr(FindModules, &modules);
  std::vector<Row> rows;
  std::vector<std::string> names;
  cuclimb::trace::StringTable strings;
  for (const Module& m : modules) {
    std::vector<uint64_t> pcs;
    std::vector<std::string> mangled;
    FunctionAddresses(m, &pcs, &mangled);
    names.insert(names.end(), mangled.begin(), mangled.end());
    std::sort(pcs.begin(), pcs.end());
    pcs.erase(std::unique(pcs.begin(), pcs.end()), pcs.end());
    std::shuffle(pcs.begin(), pcs.end(), std::mt19937_64(1));
    if (pcs.size() > frames)
      pcs.resize(frames);
    const bool libc = m.path.find("libc.so") != std::string::npos;
    Symbolizer s;
    AddMaps(&s);
    auto t0 = Clock::now();
    s.ResolveAll(cuclimb::format::PcFrame(pcs[0]), strings);
    const double load = Seconds(t0);
    t0 = Clock::now();
    size_t out = 0, lines = 0, inlined = 0;
    for (uint64_t pc : pcs) {
      for (const Frame& f : s.ResolveAll(cuclimb::format::PcFrame(pc), strings)) {
        ++out;
        lines += f.line > 0;
        inlined += f.inlined;
      }
    }
    const double cold = Seconds(t0);
    t0 = Clock::now();
    for (int rep = 0; rep < 10; ++rep)
      for (uint64_t pc : pcs) out += s.ResolveAll(cuclimb::format::PcFrame(pc), strings).size();
    const double warm = Seconds(t0);
    std::printf(
        "%s: %zu addresses, %zu frames (%zu with a line, %zu inlined), first address "
        "%.0f CPU ms (opens the module)\n",
        libc ? "libc.so.6" : "this program", pcs.size(), out / 11, lines, inlined, 1e3 * load);
    rows.push_back(
        {libc ? (lines > 0 ? "libc (debug file), first sight" : "libc (.dynsym), first sight")
              : "program (DWARF), first sight",
         static_cast<double>(pcs.size()), cold, "addresses/s"});
    rows.push_back(
        {libc ? "libc, cached" : "program, cached", 10.0 * pcs.size(), warm, "addresses/s"});
    if (!libc) {
      // Labels of 32-frame stacks drawn from these addresses.
      std::vector<std::vector<uint64_t>> stacks(2000);
      std::mt19937_64 rng(2);
      for (auto& st : stacks)
        for (int k = 0; k < 32; ++k)
          st.push_back(cuclimb::format::PcFrame(pcs[rng() % pcs.size()]));
      t0 = Clock::now();
      size_t chars = 0;
      for (int rep = 0; rep < 5; ++rep)
        for (const auto& st : stacks) chars += s.SiteLabel(st, strings).size();
      rows.push_back(
          {"SiteLabel, 32-frame stacks, cached", 5.0 * stacks.size(), Seconds(t0), "stacks/s"});
      std::vector<Frame> resolved;
      for (uint64_t pc : pcs)
        for (const Frame& f : s.ResolveAll(cuclimb::format::PcFrame(pc), strings))
          resolved.push_back(f);
      const FrameClassifier& c = FrameClassifier::Builtin();
      t0 = Clock::now();
      size_t internal = 0;
      for (const Frame& f : resolved)
        internal += c.Classify(f) != cuclimb::analysis::FrameClass::kUser;
      rows.push_back({"classification (built-in table)", static_cast<double>(resolved.size()),
                      Seconds(t0), "frames/s"});
      std::printf("  %zu of %zu frames internal; labels %zu chars\n", internal, resolved.size(),
                  chars);
    }
  }
  auto t0 = Clock::now();
  size_t chars = 0;
  for (const std::string& n : names) chars += Demangle(n).size();
  rows.push_back({"Demangle (libiberty, __cxa_demangle)", static_cast<double>(names.size()),
                  Seconds(t0), "names/s"});
  std::printf("\n%-40s %12s %10s %14s\n", "what", "count", "seconds", "rate");
  for (const Row& r : rows) {
    std::printf("%-40s %12.0f %10.3f %12.3g %s\n", r.what, r.count, r.seconds,
                r.seconds > 0 ? r.count / r.seconds : 0.0, r.unit);
  }
  return chars == 0 ? 1 : 0;
}
