// SPDX-License-Identifier: Apache-2.0
// Module map and own-code range (see modules.h).
#include "interposer/modules.h"

#include <algorithm>
#include <climits>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include <elf.h>
#include <link.h>
#include <unistd.h>

#include "interposer/clock.h"
#include "interposer/writer/recorder.h"

namespace cuclimb::interposer {
namespace {

struct Seen {
  uint64_t base;
  std::string path;
};
std::vector<Seen>* g_seen = nullptr;  // writer side; leaked on purpose (exit order)
unsigned long long g_last_adds = 0;
unsigned long long g_last_subs = 0;

std::string BuildId(const dl_phdr_info* info) {
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)& ph = info->dlpi_phdr[i];
    if (ph.p_type != PT_NOTE)
      continue;
    const auto* p = reinterpret_cast<const unsigned char*>(info->dlpi_addr + ph.p_vaddr);
    const unsigned char* end = p + ph.p_memsz;
    while (p + sizeof(ElfW(Nhdr)) <= end) {
      const auto* note = reinterpret_cast<const ElfW(Nhdr)*>(p);
      const unsigned char* name = p + sizeof(ElfW(Nhdr));
      const unsigned char* desc = name + ((note->n_namesz + 3) & ~3u);
      if (desc + note->n_descsz > end)
        break;
      if (note->n_type == NT_GNU_BUILD_ID && note->n_namesz == 4 &&
          std::memcmp(name, "GNU", 4) == 0) {
        static const char kHex[] = "0123456789abcdef";
        std::string id;
        for (unsigned j = 0; j < note->n_descsz; ++j) {
          id.push_back(kHex[desc[j] >> 4]);
          id.push_back(kHex[desc[j] & 15]);
        }
        return id;
      }
      p = desc + ((note->n_descsz + 3) & ~3u);
    }
  }
  return {};
}

std::string ExePath() {
  char buf[PATH_MAX];
  const ssize_t n = readlink("/proc/self/exe", buf, sizeof(buf) - 1);
  if (n <= 0)
    return {};
  buf[n] = '\0';
  return buf;
}

int Visit(dl_phdr_info* info, size_t, void* arg) {
  auto* out = static_cast<std::vector<format::Event>*>(arg);
  g_last_adds = info->dlpi_adds;
  g_last_subs = info->dlpi_subs;
  uint64_t low = UINT64_MAX;
  uint64_t low_offset = 0;  // file offset of the lowest segment
  uint64_t high = 0;
  bool exec = false;
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)& ph = info->dlpi_phdr[i];
    if (ph.p_type != PT_LOAD)
      continue;
    if (ph.p_vaddr < low) {
      low = ph.p_vaddr;
      low_offset = ph.p_offset;
    }
    high = std::max<uint64_t>(high, ph.p_vaddr + ph.p_memsz);
    exec = exec || (ph.p_flags & PF_X) != 0;
  }
  if (!exec)
    return 0;
  std::string path = info->dlpi_name != nullptr ? info->dlpi_name : "";
  if (path.empty())
    path = ExePath();  // the main program has an empty name
  for (const Seen& s : *g_seen) {
    if (s.base == info->dlpi_addr && s.path == path)
      return 0;
  }
  g_seen->push_back(Seen{info->dlpi_addr, path});
  format::Event ev = format::MakeEvent(format::EventType::kMapping);
  ev.ts = TraceClockNow();
  ev.text = InternString(path);
  // As the format says: file offset `aux` is mapped at `addr`, the module spans `size` bytes.
  // (The lowest segment of a shared library or PIE is at offset 0 and address 0, so this was
  // also right before for them; a non-PIE executable starts at 0x400000.)
  ev.addr = info->dlpi_addr + low;
  ev.size = high - low;
  ev.aux = low_offset;
  const std::string build_id = BuildId(info);
  if (!build_id.empty())
    ev.name = InternString(build_id);
  out->push_back(ev);
  return 0;
}

int VisitFirst(dl_phdr_info* info, size_t, void* arg) {
  auto* changed = static_cast<bool*>(arg);
  *changed = info->dlpi_adds != g_last_adds || info->dlpi_subs != g_last_subs;
  return 1;  // stop after the first object: the counters are process-wide
}

}  // namespace

void RecordMappings() noexcept {
  try {
    if (g_seen == nullptr)
      g_seen = new std::vector<Seen>();
    std::vector<format::Event> events;
    dl_iterate_phdr(Visit, &events);
    for (const format::Event& ev : events) Record(ev);
  } catch (...) {
    // Out of memory: the map stays incomplete; symbolization degrades, recording goes on.
  }
}

bool MappingsChanged() noexcept {
  bool changed = false;
  dl_iterate_phdr(VisitFirst, &changed);
  return changed;
}

}  // namespace cuclimb::interposer
