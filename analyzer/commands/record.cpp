// SPDX-License-Identifier: Apache-2.0
// `cuclimb record [options] -- PROGRAM ARGS...`: runs a program with libcuclimb.so as its CUDA and
// NVTX injection, forwards signals to it and returns its exit status.
//
// The launcher only prepares the environment (CUDA_INJECTION64_PATH, NVTX_INJECTION64_PATH and
// the CUCLIMB_* variables of interposer/config_options.h, validated here with the library's own
// parser) and waits; the library does the recording inside the program and in each CUDA child
// process it starts (fork+exec, torchrun or MPI ranks), each into its own file.
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <sys/stat.h>
#include <sys/wait.h>
#include <vector>

#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <signal.h>
#include <unistd.h>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "commands/commands.h"
#include "interposer/config.h"
#include "interposer/config_options.h"
#include "util/args.h"
#include "util/cli.h"

namespace cuclimb::commands {
namespace {

using interposer::kOptionTable;
using interposer::OptionInfo;

constexpr char kUsage[] = "cuclimb record [options] -- PROGRAM [ARGS...]";
constexpr char kDescription[] =
    "Runs PROGRAM with libcuclimb.so injected (CUPTI callbacks and activity, NVTX) and writes a\n"
    "trace per CUDA process. Returns the program's exit status (128+N if signal N killed it);\n"
    "SIGINT, SIGTERM, SIGHUP and SIGQUIT sent to cuclimb are forwarded to the program. Every "
    "option\n"
    "can also be given as the CUCLIMB_* environment variable listed below (read once, when the\n"
    "program starts using CUDA or NVTX); a flag overrides the variable.";

constexpr int kForwardedSignals[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};
volatile sig_atomic_t g_child = 0;

std::vector<util::OptionSpec> Specs() {
  std::vector<util::OptionSpec> specs;
  for (const OptionInfo& info : kOptionTable) {
    specs.push_back({info.flag, info.value_name, info.help});
  }
  specs.push_back({"lib", "PATH",
                   "libcuclimb.so to inject (default: CUCLIMB_LIB, else next to this cuclimb: the "
                   "build tree's interposer/ or the install's libexec/cuclimb/)"});
  return specs;
}

std::string HelpText() {
  std::string text = util::FormatHelp(kUsage, kDescription, Specs());
  text += "\nenvironment (same meaning as the options; defaults in brackets):\n";
  for (const OptionInfo& info : kOptionTable) {
    absl::StrAppendFormat(&text, "  %-26s [%s]\n", info.env, info.default_value);
  }
  absl::StrAppend(&text, "  ", interposer::kEnvLib,
                  "                path of libcuclimb.so (like --lib)\n");
  return text;
}

bool IsFile(const std::string& path) {
  struct stat st {};
  return !path.empty() && stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

std::string SelfDir() {
  char buf[PATH_MAX];
  const ssize_t n = readlink("/proc/self/exe", buf, sizeof(buf) - 1);
  if (n <= 0)
    return ".";
  buf[n] = '\0';
  return dirname(buf);
}

std::string FindLibrary(const std::string& flag) {
  if (!flag.empty())
    return flag;
  if (const char* env = std::getenv(interposer::kEnvLib); env != nullptr && env[0] != '\0') {
    return env;
  }
  const std::string dir = SelfDir();
  for (const std::string& candidate :
       {dir + "/libcuclimb.so", dir + "/../interposer/libcuclimb.so",
        dir + "/../libexec/cuclimb/libcuclimb.so", dir + "/../lib/cuclimb/libcuclimb.so"}) {
    if (IsFile(candidate))
      return candidate;
  }
  return "";
}

std::string Absolute(const std::string& path) {
  if (path.empty() || path[0] == '/')
    return path;
  char cwd[PATH_MAX];
  if (getcwd(cwd, sizeof(cwd)) == nullptr)
    return path;
  return std::string(cwd) + "/" + path;
}

std::string Basename(const std::string& path) {
  const size_t slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

// Forwards a signal to the program, unless the terminal already sent it to the whole process
// group (the program got its own copy then; a second one would cut its shutdown short).
void Forward(int sig, siginfo_t* info, void*) {
  const pid_t child = g_child;
  if (child <= 0)
    return;
  if (info != nullptr && info->si_code == SI_KERNEL)
    return;  // tty: the group got it
  kill(child, sig);
}

}  // namespace

int RunRecord(int argc, char** argv) {
  const std::vector<util::OptionSpec> specs = Specs();
  auto parsed = util::ParseArgs(argc, argv, 1, specs, /*stop_at_dashdash=*/true);
  if (!parsed.ok())
    return util::ReportError("record", util::UsageError(std::string(parsed.status().message())));
  if (parsed->help) {
    std::fputs(HelpText().c_str(), stdout);
    return util::kExitOk;
  }
  std::vector<std::string> program = parsed->passthrough;
  if (program.empty())
    program = parsed->positionals;
  else if (!parsed->positionals.empty()) {
    return util::ReportError(
        "record", util::UsageError(absl::StrCat("unexpected argument '", parsed->positionals[0],
                                                "' before '--'")));
  }
  if (program.empty()) {
    return util::ReportError(
        "record", util::UsageError(absl::StrCat("no program to run (usage: ", kUsage, ")")));
  }

  // Validate every value with the library's own parser before anything runs.
  interposer::Config config;
  std::vector<std::pair<std::string, std::string>> env;
  for (const OptionInfo& info : kOptionTable) {
    if (!parsed->Has(info.flag))
      continue;
    std::string value = parsed->Get(info.flag);
    char error[256];
    if (!interposer::ApplyOption(&config, info.key, value.c_str(), error, sizeof(error))) {
      std::string message = error;
      // Name the flag the user typed rather than the variable.
      if (size_t eq = message.find('='); eq != std::string::npos) {
        message = absl::StrCat("--", info.flag, message.substr(eq));
      }
      return util::ReportError("record", util::UsageError(message));
    }
    env.emplace_back(info.env, value);
  }

  const std::string lib = FindLibrary(parsed->Get("lib"));
  if (!IsFile(lib)) {
    return util::ReportError(
        "record",
        util::UsageError(lib.empty() ? "libcuclimb.so not found next to cuclimb; pass --lib PATH "
                                       "or set CUCLIMB_LIB"
                                     : absl::StrCat("--lib ", lib, ": no such file")));
  }
  char resolved[PATH_MAX];
  const std::string lib_path = realpath(lib.c_str(), resolved) != nullptr ? resolved : lib;

  // Output: the flag, else CUCLIMB_OUTPUT, else cuclimb-<program>-%p.trace; relative paths are
  // made absolute here, since the program may change directory before it starts CUDA.
  std::string output;
  for (const auto& [name, value] : env) {
    if (name == "CUCLIMB_OUTPUT")
      output = value;
  }
  if (output.empty()) {
    const char* from_env = std::getenv("CUCLIMB_OUTPUT");
    output = from_env != nullptr && from_env[0] != '\0'
                 ? from_env
                 : absl::StrCat("cuclimb-", Basename(program[0]), "-%p.trace");
  }
  output = Absolute(output);
  {
    std::string dir = output.substr(0, output.find_last_of('/'));
    if (dir.empty())
      dir = "/";
    if (access(dir.c_str(), W_OK | X_OK) != 0) {
      std::fprintf(stderr, "cuclimb record: cannot write into %s (%s); the program runs untraced\n",
                   dir.c_str(), std::strerror(errno));
    }
  }

  for (const char* name : {"CUDA_INJECTION64_PATH", "NVTX_INJECTION64_PATH"}) {
    const char* current = std::getenv(name);
    if (current != nullptr && current[0] != '\0') {
      char other[PATH_MAX];
      if (realpath(current, other) == nullptr || lib_path != other) {
        std::fprintf(stderr, "cuclimb record: %s was %s; replaced by %s\n", name, current,
                     lib_path.c_str());
      }
    }
    setenv(name, lib_path.c_str(), 1);
  }
  for (const auto& [name, value] : env) setenv(name.c_str(), value.c_str(), 1);
  setenv("CUCLIMB_OUTPUT", output.c_str(), 1);

  // Forward signals from now on; the child starts with default dispositions and an empty mask.
  struct sigaction sa {};
  sa.sa_sigaction = Forward;
  sa.sa_flags = SA_SIGINFO | SA_RESTART;
  sigemptyset(&sa.sa_mask);
  struct sigaction previous[sizeof(kForwardedSignals) / sizeof(int)];
  for (size_t i = 0; i < sizeof(kForwardedSignals) / sizeof(int); ++i) {
    sigaction(kForwardedSignals[i], &sa, &previous[i]);
  }

  std::vector<char*> args;
  for (std::string& a : program) args.push_back(a.data());
  args.push_back(nullptr);
  const pid_t child = fork();
  if (child < 0) {
    return util::ReportError("record",
                             absl::InternalError(absl::StrCat("fork: ", std::strerror(errno))));
  }
  if (child == 0) {
    for (size_t i = 0; i < sizeof(kForwardedSignals) / sizeof(int); ++i) {
      sigaction(kForwardedSignals[i], &previous[i], nullptr);
    }
    execvp(args[0], args.data());
    std::fprintf(stderr, "cuclimb record: cannot run %s: %s\n", args[0], std::strerror(errno));
    _exit(errno == ENOENT ? 127 : 126);
  }
  g_child = child;
  int status = 0;
  while (waitpid(child, &status, 0) < 0) {
    if (errno != EINTR) {
      std::fprintf(stderr, "cuclimb record: waitpid: %s\n", std::strerror(errno));
      return 1;
    }
  }
  g_child = 0;

  // Say where the main process's trace went (children name theirs after their own pid).
  interposer::PatternValues values;
  values.pid = child;
  char host[256] = {};
  gethostname(host, sizeof(host) - 1);
  values.host = host;
  const char* rank =
      interposer::RankFromEnv([](const char* n) -> const char* { return std::getenv(n); });
  values.rank = rank != nullptr ? rank : "";
  const std::string name = Basename(program[0]);
  values.program = name.c_str();
  char path[PATH_MAX];
  char error[128];
  if (interposer::ExpandOutputPattern(output.c_str(), values, path, sizeof(path), error,
                                      sizeof(error)) &&
      IsFile(path)) {
    std::fprintf(stderr, "cuclimb record: trace %s\n", path);
  }
  if (WIFSIGNALED(status))
    return 128 + WTERMSIG(status);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}

}  // namespace cuclimb::commands
