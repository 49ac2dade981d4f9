// SPDX-License-Identifier: Apache-2.0
// GPU test of libcuclimb.so: runs each scenario of gpu_program.cu under injection and checks its
// trace event by event against the EXPECT lines the scenario printed. Exits 77 (skip) when
// `gpu_program --probe` finds no GPU, 0 when every check passes, 1 otherwise.
//
//   interposer_gpu_test [--out DIR] [SCENARIO...]
// Environment: CUCLIMB_LIB, CUCLIMB_TEST_GPU_PROGRAM (set by meson, or by the GPU script).
#include <cerrno>
#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <sys/stat.h>
#include <sys/wait.h>
#include <thread>
#include <vector>

#include <signal.h>
#include <unistd.h>

#include "test_support.h"
#include "trace_stats.h"

namespace cuclimb::testing {
namespace {

using format::Event;
using format::EventType;

int g_failures = 0;
int g_passes = 0;
std::FILE* g_log = stdout;

void Check(bool ok, const std::string& scenario, const std::string& what) {
  std::fprintf(g_log, "%s %s: %s\n", ok ? "PASS" : "FAIL", scenario.c_str(), what.c_str());
  if (g_log != stdout)
    std::printf("%s %s: %s\n", ok ? "PASS" : "FAIL", scenario.c_str(), what.c_str());
  ok ? ++g_passes : ++g_failures;
}

std::string Env(const char* name) {
  const char* v = std::getenv(name);
  return v != nullptr ? v : "";
}

uint64_t Hex(const std::string& s) {
  return std::strtoull(s.c_str(), nullptr, 16);
}
uint64_t Dec(const std::string& s) {
  return std::strtoull(s.c_str(), nullptr, 10);
}

std::string EnumName(EventType type, uint8_t kind) {
  const format::EnumNames names =
      format::NamesOf(static_cast<format::EnumKind>(format::SpecOf(type).enum_kind));
  return kind < names.count ? names.names[kind] : "?";
}

std::string Describe(const Trace& t, const Event& ev) {
  char buf[256];
  std::snprintf(buf, sizeof(buf),
                "%s api=%s kind=%s addr=%" PRIx64 " size=%" PRIu64 " handle=%" PRIx64,
                format::SpecOf(ev.type).json, t.Str(ev.api).c_str(),
                EnumName(ev.type, ev.kind).c_str(), ev.addr, ev.size, ev.handle);
  return buf;
}

// Runs the program under injection; returns its status. kill_after_ready_ms > 0: SIGKILL it that
// long after it printed READY.
RunResult RunScenario(const std::string& dir, const std::string& scenario,
                      std::vector<std::pair<std::string, std::string>> env,
                      int kill_after_ready_ms = 0) {
  env.insert(env.begin(), {{"CUDA_INJECTION64_PATH", Env("CUCLIMB_LIB")},
                           {"NVTX_INJECTION64_PATH", Env("CUCLIMB_LIB")},
                           {"CUCLIMB_OUTPUT", dir + "/trace-%p.trace"}});
  if (kill_after_ready_ms == 0) {
    // A hung scenario must not take the rest of the run with it.
    return RunProgram(
        {"/usr/bin/timeout", "-s", "KILL", "90", Env("CUCLIMB_TEST_GPU_PROGRAM"), scenario}, env,
        dir);
  }
  // The SIGKILL scenario: watch stdout for READY.
  int pipe_fds[2];
  if (pipe(pipe_fds) != 0)
    return {};
  const pid_t pid = fork();
  if (pid == 0) {
    for (const auto& [k, v] : env) setenv(k.c_str(), v.c_str(), 1);
    dup2(pipe_fds[1], 1);
    close(pipe_fds[0]);
    execl(Env("CUCLIMB_TEST_GPU_PROGRAM").c_str(), "gpu_program", scenario.c_str(),
          static_cast<char*>(nullptr));
    _exit(127);
  }
  close(pipe_fds[1]);
  std::string out;
  char buf[256];
  ssize_t n = 0;
  while (out.find("READY") == std::string::npos && (n = read(pipe_fds[0], buf, sizeof(buf))) > 0) {
    out.append(buf, static_cast<size_t>(n));
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(kill_after_ready_ms));
  kill(pid, SIGKILL);
  int status = 0;
  waitpid(pid, &status, 0);
  close(pipe_fds[0]);
  RunResult r;
  r.signaled = WIFSIGNALED(status);
  r.signal = r.signaled ? WTERMSIG(status) : 0;
  r.status = r.signaled ? 128 + r.signal : WEXITSTATUS(status);
  r.stdout_text = out;
  return r;
}

std::string TraceOf(const std::string& dir) {
  const std::vector<std::string> files = ListDir(dir, "trace-");
  for (const std::string& f : files) {
    if (f.size() > 6 && f.substr(f.size() - 6) == ".trace")
      return dir + "/" + f;
  }
  return "";
}

std::vector<std::vector<std::string>> Expectations(const std::string& stdout_text) {
  std::vector<std::vector<std::string>> out;
  std::istringstream in(stdout_text);
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("EXPECT ", 0) != 0)
      continue;
    std::istringstream words(line.substr(7));
    std::vector<std::string> w;
    std::string word;
    while (words >> word) w.push_back(word);
    if (!w.empty())
      out.push_back(w);
  }
  return out;
}

size_t CountIf(const Trace& t, EventType type, const std::function<bool(const Event&)>& pred) {
  size_t n = 0;
  for (const Event& ev : t.events) {
    if (ev.type == type && pred(ev))
      ++n;
  }
  return n;
}

// Checks one EXPECT line against the trace.
void CheckExpectation(const std::string& scenario, const Trace& t,
                      const std::vector<std::string>& w) {
  const std::string& what = w[0];
  std::string line;
  for (const std::string& x : w) line += x + " ";
  if (what == "alloc" && w.size() == 5) {
    const uint64_t addr = Hex(w[2]);
    const uint64_t size = Dec(w[3]);
    std::string found;
    bool ok = false;
    for (const Event& ev : t.Of(EventType::kAlloc)) {
      if (ev.addr != addr || t.Str(ev.api) == "MEMORY2")
        continue;
      ok = t.Str(ev.api) == w[1] && ev.size == size && EnumName(ev.type, ev.kind) == w[4];
      found = Describe(t, ev);
      if (ok)
        break;
    }
    Check(ok, scenario, line + (ok ? "" : "| found: " + (found.empty() ? "nothing" : found)));
  } else if (what == "free" && w.size() == 2) {
    const uint64_t addr = Hex(w[1]);
    const size_t n = CountIf(t, EventType::kFree, [&](const Event& ev) {
      return ev.addr == addr && t.Str(ev.api) != "MEMORY2";
    });
    Check(n >= 1, scenario, line);
  } else if ((what == "create" || what == "destroy") && w.size() == 3) {
    const uint64_t handle = Hex(w[2]);
    const EventType type = what == "create" ? EventType::kCreate : EventType::kDestroy;
    const size_t n = CountIf(t, type, [&](const Event& ev) {
      return ev.handle == handle && EnumName(ev.type, ev.kind) == w[1];
    });
    Check(n >= 1, scenario, line);
  } else if (what == "pool_attr" && w.size() == 4) {
    const size_t n = CountIf(t, EventType::kPoolAttr, [&](const Event& ev) {
      return t.Str(ev.name) == w[1] && ev.handle == Hex(w[2]) &&
             static_cast<uint64_t>(ev.value) == Dec(w[3]);
    });
    Check(n >= 1, scenario, line);
  } else if (what == "pool_trim" && w.size() == 2) {
    Check(CountIf(t, EventType::kPoolTrim,
                  [&](const Event& ev) { return ev.handle == Hex(w[1]); }) >= 1,
          scenario, line);
  } else if (what == "launches" && w.size() == 3) {
    const size_t n = CountIf(t, EventType::kLaunch, [&](const Event& ev) {
      return t.Str(ev.name).find(w[1]) != std::string::npos;
    });
    Check(n >= Dec(w[2]), scenario, line + "| found " + std::to_string(n));
  } else if (what == "graph_launches" && w.size() == 3) {
    const size_t n = CountIf(t, EventType::kLaunch, [&](const Event& ev) {
      return ev.handle == Hex(w[1]) && t.Str(ev.api).rfind("cuGraphLaunch", 0) == 0;
    });
    Check(n == Dec(w[2]), scenario, line + "| found " + std::to_string(n));
  } else if (what == "copies" || what == "syncs") {
    const size_t n = t.Count(what == "copies" ? EventType::kCopy : EventType::kSync);
    Check(n >= Dec(w[1]), scenario, line + "| found " + std::to_string(n));
  } else if (what == "vmm" && w.size() == 5) {
    const uint64_t addr = Hex(w[2]);
    const uint64_t size = Dec(w[3]);
    const uint64_t handle = Hex(w[4]);
    const size_t n = CountIf(t, EventType::kVmm, [&](const Event& ev) {
      return EnumName(ev.type, ev.kind) == w[1] && (addr == 0 || ev.addr == addr) &&
             (size == 0 || ev.size == size) && (handle == 0 || ev.handle == handle);
    });
    Check(n >= 1, scenario, line);
  } else if (what == "heap" && w.size() == 3) {
    Check(
        CountIf(t, EventType::kHeap,
                [&](const Event& ev) { return ev.addr == Hex(w[1]) && ev.size == Dec(w[2]); }) == 1,
        scenario, line);
  } else if (what == "region" && w.size() == 3) {
    Check(
        CountIf(t, EventType::kRegion,
                [&](const Event& ev) { return ev.addr == Hex(w[1]) && ev.size == Dec(w[2]); }) == 1,
        scenario, line);
  } else if (what == "iterations" && w.size() == 2) {
    const size_t n = CountIf(t, EventType::kPush,
                             [&](const Event& ev) { return t.Str(ev.name) == "iteration"; });
    Check(n == Dec(w[1]), scenario, line + "| found " + std::to_string(n));
  } else if (what == "count" && w.size() == 4) {
    const EventType type = w[1] == "alloc" ? EventType::kAlloc : EventType::kFree;
    const size_t n = CountIf(t, type, [&](const Event& ev) { return t.Str(ev.api) == w[2]; });
    Check(n == Dec(w[3]), scenario, line + "| found " + std::to_string(n));
  } else if (what == "threads" && w.size() == 2) {
    std::set<uint32_t> tids;
    for (const Event& ev : t.Of(EventType::kAlloc)) tids.insert(ev.tid);
    Check(tids.size() >= Dec(w[1]), scenario, line + "| found " + std::to_string(tids.size()));
  } else if (what == "captures_ok") {
    Check(Dec(w[1]) == 3, scenario, line);
  } else {
    Check(false, scenario, "unknown expectation: " + line);
  }
}

void CheckCommon(const std::string& scenario, const Trace& t, bool expect_complete) {
  Check(t.opened, scenario, "trace opens");
  if (!t.opened)
    return;
  if (expect_complete) {
    Check(t.status.reason == trace::StopReason::kComplete, scenario,
          "trace complete (" + t.status.message + ")");
    Check(t.reader->trailer() && t.reader->trailer()->value == 0, scenario,
          "no drops (trailer " +
              std::to_string(t.reader->trailer() ? t.reader->trailer()->value : -1) + ")");
  }
  Check(t.Count(EventType::kProcess) == 1, scenario, "one process event");
  const auto processes = t.Of(EventType::kProcess);
  if (!processes.empty()) {
    Check(processes[0].size >= 13000 && processes[0].aux >= 130000, scenario,
          "driver " + std::to_string(processes[0].size) + ", CUPTI " +
              std::to_string(processes[0].aux));
  }
  Check(t.Count(EventType::kDevice) >= 1, scenario, "device described");
  Check(t.Count(EventType::kMapping) >= 3, scenario, "module map recorded");
}

bool RunOne(const std::string& top, const std::string& scenario, std::FILE* summary) {
  const int before = g_failures;
  const std::string dir = top + "/" + scenario;
  if (mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST) {
    Check(false, scenario, "cannot create " + dir + ": " + std::strerror(errno));
    return false;
  }
  std::vector<std::pair<std::string, std::string>> env;
  std::string program_scenario = scenario;
  bool complete = true;
  int kill_after = 0;
  if (scenario == "families") {
    // Everything on: this scenario checks that every record kind arrives.
    env = {{"CUCLIMB_KERNELS", "all"},
           {"CUCLIMB_MEMORY_ACTIVITY", "on"},
           {"CUCLIMB_STACKS", "fp"},
           {"CUCLIMB_DEBUG_CBIDS", top + "/families-cbids.txt"}};
  } else if (scenario == "families-default") {
    // The default configuration (sampled kernel timing) with full-unwind stacks.
    program_scenario = "families";
    env = {{"CUCLIMB_STACKS", "unwind"}};
  } else if (scenario == "capture") {
    env = {{"CUCLIMB_GAUGE_MS", "20"},
           {"CUCLIMB_FLUSH_MS", "20"},
           {"CUCLIMB_DEBUG_CAPTURE_QUERIES", "1"}};
  } else if (scenario == "capture-safe") {
    program_scenario = "capture";
    env = {{"CUCLIMB_GAUGE_MS", "20"}, {"CUCLIMB_FLUSH_MS", "20"}};
  } else if (scenario == "sigkill") {
    kill_after = 1500;
    complete = false;
  } else if (scenario == "threads") {
    env = {{"CUCLIMB_KERNELS", "off"}};
  }
  const auto t0 = std::chrono::steady_clock::now();
  const RunResult r = RunScenario(dir, program_scenario, env, kill_after);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const std::string path = TraceOf(dir);
  std::fprintf(g_log, "---- %s: status %d (%.2f s)\n%s%s", scenario.c_str(), r.status, seconds,
               r.stdout_text.c_str(), r.stderr_text.c_str());
  if (scenario == "sigkill") {
    Check(r.signaled && r.signal == SIGKILL, scenario, "killed by SIGKILL");
  } else {
    Check(r.status == 0, scenario, "program exit status " + std::to_string(r.status));
  }
  const Trace t = ReadTrace(path);
  CheckCommon(scenario, t, complete);
  if (!t.opened)
    return false;
  for (const auto& w : Expectations(r.stdout_text)) CheckExpectation(scenario, t, w);

  const TraceStats s = Summarize(t);
  if (scenario == "families" || scenario == "families-default") {
    uint64_t with_stack = 0;
    uint64_t frames = 0;
    for (const Event& ev : t.Of(EventType::kAlloc)) {
      if (ev.stack == 0)
        continue;
      ++with_stack;
      frames += t.reader->stacks().Get(ev.stack).size();
    }
    Check(with_stack >= 8, scenario,
          "allocations with a stack: " + std::to_string(with_stack) + " (mean frames " +
              std::to_string(with_stack ? frames / with_stack : 0) + ")");
  }
  if (scenario == "families") {
    Check(s.kernels >= 10, scenario,
          "kernel records (CONCURRENT_KERNEL): " + std::to_string(s.kernels));
    Check(s.kernels_in_graphs >= 3, scenario,
          "kernels with a graph id: " + std::to_string(s.kernels_in_graphs));
    const uint64_t m2_allocs =
        CountIf(t, EventType::kAlloc, [&](const Event& ev) { return t.Str(ev.api) == "MEMORY2"; });
    const uint64_t m2_frees =
        CountIf(t, EventType::kFree, [&](const Event& ev) { return t.Str(ev.api) == "MEMORY2"; });
    Check(m2_allocs >= 6 && m2_frees >= 4, scenario,
          "MEMORY2 records: " + std::to_string(m2_allocs) + " allocations, " +
              std::to_string(m2_frees) + " releases");
    Check(s.last_gauges.size() >= 2, scenario, "gauges: " + std::to_string(s.last_gauges.size()));
    std::fprintf(g_log,
                 "INFO families: kernels joined to a launch by correlation id: %" PRIu64
                 " of %" PRIu64 "\n",
                 s.kernels_joined, s.kernels);
  }
  if (scenario == "capture") {
    std::map<int64_t, int> results;
    for (const Event& ev : t.Of(EventType::kMark)) {
      if (t.Str(ev.name) == "capture_query")
        ++results[ev.value];
    }
    std::string text;
    for (const auto& [v, c] : results) text += std::to_string(v) + "x" + std::to_string(c) + " ";
    Check(!results.empty() && results.count(900) == 0, scenario,
          "writer queries during a global-mode capture (RELAXED mode): CUresult " + text);
  }
  if (scenario == "capture-safe") {
    Check(
        s.drops.count("gauge_skipped_capture") == 1, scenario,
        "gauges skipped during capture: " + std::to_string(s.drops.count("gauge_skipped_capture")
                                                               ? s.drops.at("gauge_skipped_capture")
                                                               : 0));
  }
  if (scenario == "fork") {
    Check(ListDir(dir, "trace-").size() == 1, scenario, "one trace (the parent's)");
    Check(r.stdout_text.find("hung") == std::string::npos, scenario, "fork children exit promptly");
  }
  if (scenario == "sigkill") {
    Check(!t.status.partial() && t.status.reason == trace::StopReason::kNoTrailer, scenario,
          "readable up to the last chunk (" + t.status.message + ")");
    const size_t n = CountIf(t, EventType::kPush,
                             [&](const Event& ev) { return t.Str(ev.name) == "iteration"; });
    Check(n >= 100, scenario, "iterations before the kill: " + std::to_string(n));
  }
  if (summary != nullptr) {
    std::fprintf(summary, "{\"scenario\": \"%s\", \"seconds\": %.2f, \"stats\": %s}\n",
                 scenario.c_str(), seconds, ToJson(s).c_str());
  }
  return g_failures == before;
}

}  // namespace
}  // namespace cuclimb::testing

int main(int argc, char** argv) {
  using namespace cuclimb::testing;
  std::string out_dir;
  std::vector<std::string> scenarios;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--out") == 0 && i + 1 < argc) {
      out_dir = argv[++i];
    } else {
      scenarios.push_back(argv[i]);
    }
  }
  // --check TRACE EXPECT: the checks of the families scenario on a trace recorded earlier (the
  // H200 trace in tests/interposer/data), without a GPU.
  if (argc == 4 && std::strcmp(argv[1], "--check") == 0) {
    const Trace t = ReadTrace(argv[2]);
    CheckCommon("recorded", t, true);
    if (t.opened) {
      std::ifstream in(argv[3]);
      std::stringstream text;
      text << in.rdbuf();
      for (const auto& w : Expectations(text.str())) CheckExpectation("recorded", t, w);
    }
    std::printf("recorded-trace checks: %d passed, %d failed\n", g_passes, g_failures);
    return g_failures == 0 ? 0 : 1;
  }
  if (Env("CUCLIMB_LIB").empty() || Env("CUCLIMB_TEST_GPU_PROGRAM").empty()) {
    std::fprintf(stderr, "set CUCLIMB_LIB and CUCLIMB_TEST_GPU_PROGRAM\n");
    return 2;
  }
  // Skip without a GPU: the probe uses static cudart, so it starts without a driver.
  const std::string dir = out_dir.empty() ? TempDir() : out_dir;
  const RunResult probe = RunProgram({Env("CUCLIMB_TEST_GPU_PROGRAM"), "--probe"},
                                     {{"CUDA_INJECTION64_PATH", ""}}, dir);
  if (probe.status != 0) {
    std::printf("no GPU (%s): skipped\n", probe.stdout_text.c_str());
    return 77;
  }
  if (scenarios.empty()) {
    scenarios = {"families", "families-default", "dlopen", "threads",
                 "capture",  "capture-safe",     "fork",   "sigkill"};
  }
  mkdir(dir.c_str(), 0700);  // --out may name a directory that does not exist yet
  std::FILE* summary = std::fopen((dir + "/gpu-summary.jsonl").c_str(), "w");
  for (const std::string& s : scenarios) RunOne(dir, s, summary);
  if (summary != nullptr)
    std::fclose(summary);
  std::printf("gpu checks: %d passed, %d failed (traces in %s)\n", g_passes, g_failures,
              dir.c_str());
  return g_failures == 0 ? 0 : 1;
}
