// SPDX-License-Identifier: Apache-2.0
// Helpers for the interposer's process-level tests: run a program with extra environment
// variables (stderr captured), and read a trace back with the analyzer's reader.
#pragma once

#include <algorithm>
#include <csignal>
#include <cstdlib>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <sys/stat.h>
#include <sys/wait.h>
#include <utility>
#include <vector>

#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

#include "trace/reader.h"

namespace cuclimb::testing {

struct RunResult {
  int status = -1;  // exit code, or 128 + signal
  bool signaled = false;
  int signal = 0;
  std::string stderr_text;
  std::string stdout_text;
};

inline std::string TempDir() {
  const char* dir = std::getenv("TMPDIR");
  std::string base = std::string(dir != nullptr ? dir : "/tmp") + "/cuclimb-ip-XXXXXX";
  std::vector<char> buf(base.begin(), base.end());
  buf.push_back('\0');
  const char* made = mkdtemp(buf.data());
  return made != nullptr ? std::string(made) : std::string("/tmp");
}

inline std::string ReadText(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Runs argv with env added (NAME=VALUE; an empty value unsets NAME). Descriptors in closed
// (0, 1, 2) are closed when the program starts, as `2>&-` does.
inline RunResult RunProgram(const std::vector<std::string>& argv,
                            const std::vector<std::pair<std::string, std::string>>& env,
                            const std::string& scratch, const std::vector<int>& closed = {}) {
  const std::string err_path = scratch + "/stderr.txt";
  const std::string out_path = scratch + "/stdout.txt";
  const pid_t pid = fork();
  if (pid == 0) {
    // The programs start with default signal actions, whatever the test runner inherited (under
    // nohup SIGHUP is ignored, and the interposer rightly leaves an ignored signal alone).
    for (const int sig : {SIGHUP, SIGINT, SIGTERM}) signal(sig, SIG_DFL);
    for (const auto& [name, value] : env) {
      if (value.empty()) {
        unsetenv(name.c_str());
      } else {
        setenv(name.c_str(), value.c_str(), 1);
      }
    }
    const int err = open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    const int out = open(out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (err >= 0)
      dup2(err, 2);
    if (out >= 0)
      dup2(out, 1);
    if (err > 2)
      close(err);
    if (out > 2)
      close(out);
    for (const int fd : closed) close(fd);
    std::vector<char*> args;
    for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    execv(args[0], args.data());
    _exit(127);
  }
  RunResult r;
  int status = 0;
  waitpid(pid, &status, 0);
  if (WIFSIGNALED(status)) {
    r.signaled = true;
    r.signal = WTERMSIG(status);
    r.status = 128 + r.signal;
  } else {
    r.status = WEXITSTATUS(status);
  }
  r.stderr_text = ReadText(err_path);
  r.stdout_text = ReadText(out_path);
  return r;
}

struct Trace {
  bool opened = false;
  std::vector<format::Event> events;
  trace::ReadStatus status;
  std::unique_ptr<trace::TraceReader> reader;

  std::string Str(uint32_t id) const { return reader ? std::string(reader->Str(id)) : ""; }
  std::vector<format::Event> Of(format::EventType type) const {
    std::vector<format::Event> out;
    for (const format::Event& ev : events) {
      if (ev.type == type)
        out.push_back(ev);
    }
    return out;
  }
  size_t Count(format::EventType type) const { return Of(type).size(); }
  std::string Status() const {
    return reader && reader->trailer() ? Str(reader->trailer()->text) : "";
  }
};

inline Trace ReadTrace(const std::string& path) {
  Trace t;
  auto reader = trace::TraceReader::Open(path);
  if (!reader.ok())
    return t;
  t.opened = true;
  format::Event ev{};
  while ((*reader)->Next(&ev)) t.events.push_back(ev);
  t.status = (*reader)->status();
  t.reader = std::move(reader).value();
  return t;
}

// Names of the entries of dir that start with prefix, sorted.
inline std::vector<std::string> ListDir(const std::string& dir, const std::string& prefix) {
  std::vector<std::string> out;
  if (DIR* d = opendir(dir.c_str())) {
    while (const dirent* e = readdir(d)) {
      const std::string name = e->d_name;
      if (name.rfind(prefix, 0) == 0)
        out.push_back(name);
    }
    closedir(d);
  }
  std::sort(out.begin(), out.end());
  return out;
}

inline bool Exists(const std::string& path) {
  struct stat st {};
  return lstat(path.c_str(), &st) == 0;
}

}  // namespace cuclimb::testing
