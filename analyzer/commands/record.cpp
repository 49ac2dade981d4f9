// SPDX-License-Identifier: Apache-2.0
// `cuclimb record [options] [--] PROGRAM ARGS...`: runs a program with libcuclimb.so as its CUDA
// and NVTX injection, forwards signals to it, names every trace the run wrote and returns the
// program's exit status. Options end at the first word that is not one (or at "--"), as with
// `nsys profile` and `heaptrack`: `cuclimb record python train.py --lr 3` passes --lr to python.
//
// The launcher only prepares the environment (CUDA_INJECTION64_PATH, NVTX_INJECTION64_PATH and
// the CUCLIMB_* variables of interposer/config_options.h, validated here with the library's own
// parser) and waits; the library does the recording inside the program and in each CUDA child
// process it starts (fork+exec, torchrun or MPI ranks), each into its own file.
#include <algorithm>
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
#include "absl/strings/str_replace.h"
#include "commands/commands.h"
#include "commands/python_program.h"
#include "commands/record_outputs.h"
#include "interposer/config.h"
#include "interposer/config_options.h"
#include "util/args.h"
#include "util/cli.h"

namespace cuclimb::commands {
namespace {

using interposer::kOptionTable;
using interposer::OptionInfo;

constexpr char kUsage[] = "cuclimb record [options] [--] PROGRAM [ARGS...]";
constexpr char kDescription[] =
    "Runs PROGRAM with libcuclimb.so injected (CUPTI callbacks and activity, NVTX) and writes a\n"
    "trace per CUDA process, then names every trace the run wrote (children included). Options\n"
    "end at the first word that is not an option, or at '--'. When the output name is taken,\n"
    "the next free one is used (run.trace -> run-1.trace, run-2.trace, ...); an existing trace\n"
    "is never overwritten. Returns the program's exit status (128+N if signal N killed it);\n"
    "SIGINT, SIGTERM, SIGHUP and SIGQUIT sent to cuclimb are forwarded to the program. Every\n"
    "option can also be given as the CUCLIMB_* environment variable listed below (read once,\n"
    "when the program starts using CUDA or NVTX); a flag overrides the variable.";

constexpr int kForwardedSignals[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};
volatile sig_atomic_t g_child = 0;

std::vector<util::OptionSpec> Specs() {
  std::vector<util::OptionSpec> specs;
  for (const OptionInfo& info : kOptionTable) {
    specs.push_back({info.flag, info.value_name, info.help});
    if (info.key == interposer::OptionKey::kOutput)
      specs.back().short_name = 'o';
  }
  specs.push_back({"lib", "PATH",
                   "libcuclimb.so to inject (default: CUCLIMB_LIB, else next to this cuclimb: the "
                   "build tree's interposer/ or the install's libexec/cuclimb/)"});
  specs.push_back({"quiet", nullptr,
                   "print nothing but errors: no trace names, no cuclimb warnings (--log quiet)"});
  return specs;
}
const std::vector<util::OptionSpec> kOptions = Specs();

std::string EnvironmentHelp() {
  std::string text = "\nenvironment (same meaning as the options; defaults in brackets):\n";
  for (const OptionInfo& info : kOptionTable) {
    absl::StrAppendFormat(&text, "  %-26s [%s]\n", info.env, info.default_value);
  }
  absl::StrAppendFormat(&text, "  %-26s path of libcuclimb.so (like --lib)\n", interposer::kEnvLib);
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

int RunRecord(const util::ParsedArgs& parsed_args) {
  const util::ParsedArgs* parsed = &parsed_args;
  std::vector<std::string> program = parsed->passthrough;
  if (program.empty()) {
    return util::ReportError("record",
                             util::UsageError("no program to run (see 'cuclimb record --help')"));
  }

  const bool quiet = parsed->Has("quiet");
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

  // Python programs get Python call stacks unless the user chose: an accumulator is then keyed
  // by the line of the script that keeps it alive, not by the allocator's frames.
  const char* stacks_env = std::getenv("CUCLIMB_STACKS");
  if (!parsed->Has("stacks") && (stacks_env == nullptr || stacks_env[0] == '\0') &&
      IsPythonProgram(program[0])) {
    env.emplace_back("CUCLIMB_STACKS", "python");
    if (!quiet) {
      std::fprintf(stderr,
                   "cuclimb record: a Python program: recording Python call stacks "
                   "(--stacks off to turn them off)\n");
    }
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
    if (from_env != nullptr && from_env[0] != '\0') {
      output = from_env;
      char error[256];
      if (!interposer::ApplyOption(&config, interposer::OptionKey::kOutput, from_env, error,
                                   sizeof(error))) {
        return util::ReportError("record", util::UsageError(error));
      }
    } else {
      output = absl::StrCat("cuclimb-", absl::StrReplaceAll(Basename(program[0]), {{"%", "%%"}}),
                            "-%p.trace");
    }
  }
  output = Absolute(output);
  char host[256] = {};
  gethostname(host, sizeof(host) - 1);
  // A fixed directory that cannot take the trace is an output error before anything runs (the
  // library would otherwise run the program untraced).
  if (const std::string dir = output.substr(0, output.find_last_of('/'));
      dir.find('%') == std::string::npos &&
      access(dir.empty() ? "/" : dir.c_str(), W_OK | X_OK) != 0) {
    return util::ReportError(
        "record", util::OutputError(absl::InternalError(
                      absl::StrCat("cannot write traces into ", dir, ": ", std::strerror(errno)))));
  }
  // Never reuse a name: without %p, a second run would find its file taken (the library creates
  // traces with O_EXCL) and record nothing.
  if (!PatternHasPid(output)) {
    const std::string free_pattern = NextFreePattern(output, host);
    if (free_pattern != output && !quiet) {
      std::fprintf(stderr, "cuclimb record: %s exists; writing %s\n", output.c_str(),
                   free_pattern.c_str());
    }
    output = free_pattern;
  }
  const std::string output_glob = PatternGlob(output, host);
  const FileSet before = ListMatching(output_glob);

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
  if (quiet && !parsed->Has("log"))
    env.emplace_back("CUCLIMB_LOG", "quiet");
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

  // Name what this run wrote: the program's trace first, then its children's.
  std::vector<std::string> written = NewFiles(before, ListMatching(output_glob));
  if (!quiet) {
    interposer::PatternValues values;
    values.pid = child;
    values.host = host;
    const char* rank =
        interposer::RankFromEnv([](const char* n) -> const char* { return std::getenv(n); });
    values.rank = rank != nullptr ? rank : "";
    const std::string name = Basename(program[0]);
    values.program = name.c_str();
    char path[PATH_MAX];
    char error[128];
    std::string main_trace;
    if (interposer::ExpandOutputPattern(output.c_str(), values, path, sizeof(path), error,
                                        sizeof(error))) {
      main_trace = path;
    }
    const bool have_main = std::find(written.begin(), written.end(), main_trace) != written.end();
    std::stable_partition(written.begin(), written.end(),
                          [&](const std::string& p) { return p == main_trace; });
    for (const std::string& p : written) {
      std::fprintf(stderr, "cuclimb record: trace %s%s\n", p.c_str(),
                   have_main && p != main_trace ? " (child process)" : "");
    }
    const bool not_run = WIFEXITED(status) && WEXITSTATUS(status) >= 126;  // exec failed
    if (written.empty() && !not_run) {
      std::fprintf(stderr, "cuclimb record: no trace written: %s never used CUDA or NVTX\n",
                   program[0].c_str());
    } else if (written.size() == 1) {
      std::fprintf(stderr, "cuclimb record: next: cuclimb analyze %s\n", written[0].c_str());
    }
  }
  if (WIFSIGNALED(status))
    return 128 + WTERMSIG(status);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}

}  // namespace

const Command kRecordCommand = {"record",
                                "run a CUDA program with libcuclimb.so and record a trace",
                                kUsage,
                                kDescription,
                                &kOptions,
                                EnvironmentHelp,
                                util::ArgMode::kCommandLine,
                                RunRecord};

}  // namespace cuclimb::commands
