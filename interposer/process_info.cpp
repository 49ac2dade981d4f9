// SPDX-License-Identifier: Apache-2.0
// The process description (see process_info.h).
#include "interposer/process_info.h"

#include <cstdlib>

#include <fcntl.h>
#include <unistd.h>

#include "interposer/format/event_accessors.h"

namespace cuclimb::interposer {

void JoinCommandLine(char* buf, size_t length) noexcept {
  for (size_t i = 0; i < length; ++i) {
    if (buf[i] == '\0')
      buf[i] = ' ';
  }
  while (length > 0 && buf[length - 1] == ' ') buf[--length] = '\0';
  buf[length] = '\0';
}

void ReadProcessFacts(ProcessFacts* facts) noexcept {
  facts->pid = getpid();
  facts->ppid = getppid();
  const int fd = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);
  if (fd >= 0) {
    const ssize_t n = read(fd, facts->cmdline, sizeof(facts->cmdline) - 1);
    close(fd);
    if (n > 0)
      JoinCommandLine(facts->cmdline, static_cast<size_t>(n));
  }
  gethostname(facts->host, sizeof(facts->host) - 1);
  const ssize_t len = readlink("/proc/self/exe", facts->exe, sizeof(facts->exe) - 1);
  facts->exe[len > 0 ? len : 0] = '\0';
  facts->rank = RankFromEnv([](const char* name) -> const char* { return std::getenv(name); });
}

format::Event ProcessEvent(const ProcessFacts& facts, int64_t ts,
                           uint32_t (*intern)(std::string_view)) noexcept {
  format::Event ev = format::MakeEvent(format::EventType::kProcess);
  ev.ts = ts;
  format::SetProcessPid(&ev, facts.pid);
  format::SetProcessParentPid(&ev, static_cast<uint64_t>(facts.ppid));
  ev.name = intern(facts.cmdline);
  ev.text = intern(facts.host);
  if (facts.exe[0] != '\0')
    ev.api = intern(facts.exe);
  format::SetProcessDriverVersion(&ev, facts.driver_version);
  format::SetProcessCuptiVersion(&ev, facts.cupti_version);
  if (facts.rank != nullptr)
    format::SetProcessRank(&ev, static_cast<int64_t>(std::strtoull(facts.rank, nullptr, 10)));
  return ev;
}

}  // namespace cuclimb::interposer
