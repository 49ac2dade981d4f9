// SPDX-License-Identifier: Apache-2.0
// Help, man pages and bash completion, all generated from the command tables (commands/help.h).
#include "commands/help.h"

#include <cstdio>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "commands/commands.h"
#include "util/cli.h"
#include "version.h"

namespace cuclimb::commands {
namespace {

constexpr char kTagline[] =
    "finds the state that makes a CUDA program slower or fatter the longer it runs";

constexpr char kExitStatus[] =
    "0 ok; 1 a check you asked for failed (check, diff --fail-on-divergence); 2 bad usage; "
    "3 unreadable, corrupt or cut trace (what was readable is still processed); 4 an output "
    "could not be written. `cuclimb record` returns the program's own status.";

// Text for a roff line: backslashes and hyphens escaped, and a leading '.' or '\'' (a request)
// made literal.
std::string Roff(absl::string_view text) {
  std::string out = absl::StrReplaceAll(text, {{"\\", "\\e"}, {"-", "\\-"}});
  if (!out.empty() && (out[0] == '.' || out[0] == '\''))
    out.insert(0, "\\&");
  return out;
}

// Paragraph text: the description's lines, each a roff line.
std::string RoffLines(absl::string_view text) {
  std::string out;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    if (line.empty())
      absl::StrAppend(&out, ".PP\n");
    else
      absl::StrAppend(&out, Roff(line), "\n");
  }
  return out;
}

std::string Upper(std::string s) {
  for (char& c : s) c = static_cast<char>(c >= 'a' && c <= 'z' ? c - 'a' + 'A' : c);
  return s;
}

std::string ManHeader(const std::string& name, absl::string_view summary) {
  return absl::StrCat(".TH ", Upper(name), " 1 \"\" \"cuclimb ", CUCLIMB_VERSION,
                      "\" \"User Commands\"\n.SH NAME\n", Roff(name), " \\- ", Roff(summary), "\n");
}

// The words of an option value like "off|sampled|all" (empty for FILE, N, ...).
std::vector<std::string> ValueChoices(const char* value_name) {
  std::vector<std::string> out;
  if (value_name == nullptr || absl::string_view(value_name).find('|') == absl::string_view::npos)
    return out;
  for (absl::string_view v : absl::StrSplit(value_name, '|')) {
    if (!v.empty() && v.find_first_of("ABCDEFGHIJKLMNOPQRSTUVWXYZ") == absl::string_view::npos)
      out.emplace_back(v);
  }
  return out;
}

}  // namespace

const Command* FindCommand(const std::string& name) {
  for (const Command* c : AllCommands()) {
    if (name == c->name)
      return c;
  }
  return nullptr;
}

std::string MainUsage() {
  std::string out =
      absl::StrFormat("usage: cuclimb <command> [options] [args]\n\ncuclimb %s %s.\n\ncommands:\n",
                      CUCLIMB_VERSION, kTagline);
  for (const Command* c : AllCommands())
    absl::StrAppendFormat(&out, "  %-9s %s\n", c->name, c->summary);
  absl::StrAppend(&out,
                  "\n  cuclimb record -- python train.py     record any CUDA program\n"
                  "  cuclimb analyze cuclimb-python-*.trace --html report.html\n"
                  "\n'cuclimb help <command>' (or 'cuclimb <command> --help') describes a "
                  "command;\n'cuclimb --version' prints the version. Manual: man cuclimb.\n");
  return out;
}

std::string CommandHelp(const Command& command) {
  std::string out = util::FormatHelp(command.usage, command.description, *command.options);
  if (command.extra_help != nullptr)
    out += command.extra_help();
  return out;
}

std::string ManPage(const Command* command) {
  if (command == nullptr) {
    std::string out = ManHeader("cuclimb", kTagline);
    absl::StrAppend(&out,
                    ".SH SYNOPSIS\n.B cuclimb\n\\fICOMMAND\\fR [\\fIOPTIONS\\fR] [\\fIARGS\\fR]\n",
                    ".br\n.B cuclimb\n\\-\\-version | \\-\\-help | help [\\fICOMMAND\\fR]\n",
                    ".SH DESCRIPTION\n",
                    RoffLines("cuclimb records every allocation, free, pool, VMM mapping, "
                              "stream/event/module handle,\nkernel launch and NVTX range of any "
                              "CUDA program, segments the run into iterations,\nfinds which "
                              "per-iteration state grows and is never given back (an accumulator)"
                              "\nand shows how much of the step-time climb it explains."),
                    ".SH COMMANDS\n");
    for (const Command* c : AllCommands()) {
      absl::StrAppend(&out, ".TP\n.BR cuclimb\\-", Roff(c->name), " (1)\n", Roff(c->summary), "\n");
    }
    absl::StrAppend(&out, ".SH EXAMPLES\n.nf\n",
                    Roff("cuclimb record -- python train.py\n"
                         "cuclimb analyze cuclimb-python-1234.trace --html report.html\n"
                         "cuclimb diff good.trace bad.trace\n"
                         "cuclimb check run.trace --max-climb 5\n"),
                    ".fi\n.SH EXIT STATUS\n", RoffLines(kExitStatus), ".SH SEE ALSO\n");
    std::vector<std::string> refs;
    for (const Command* c : AllCommands())
      refs.push_back(absl::StrCat("cuclimb\\-", c->name, "(1)"));
    absl::StrAppend(&out, absl::StrJoin(refs, ", "), "\n");
    return out;
  }
  const std::string name = absl::StrCat("cuclimb-", command->name);
  std::string out = ManHeader(name, command->summary);
  absl::StrAppend(&out, ".SH SYNOPSIS\n.nf\n", Roff(command->usage), "\n.fi\n", ".SH DESCRIPTION\n",
                  RoffLines(command->description), ".SH OPTIONS\n");
  for (const util::OptionSpec& o : *command->options) {
    absl::StrAppend(&out, ".TP\n.B ", Roff(util::OptionSynopsis(o)), "\n", Roff(o.help),
                    o.repeatable ? " (repeatable)" : "", "\n");
  }
  absl::StrAppend(&out, ".TP\n.B \\-h, \\-\\-help\nshow the help and exit\n");
  if (command->extra_help != nullptr) {
    absl::StrAppend(&out, ".SH ENVIRONMENT\n.nf\n", Roff(command->extra_help()), ".fi\n");
  }
  absl::StrAppend(&out, ".SH EXIT STATUS\n", RoffLines(kExitStatus),
                  ".SH SEE ALSO\n.BR cuclimb (1)\n");
  return out;
}

std::string BashCompletion() {
  std::vector<std::string> names;
  for (const Command* c : AllCommands()) names.emplace_back(c->name);
  std::string out =
      absl::StrCat("# bash completion for cuclimb ", CUCLIMB_VERSION,
                   " (generated by `cuclimb help --completion bash`)\n"
                   "_cuclimb() {\n"
                   "  local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]}\n"
                   "  local commands=\"",
                   absl::StrJoin(names, " "),
                   "\"\n"
                   "  if [ \"$COMP_CWORD\" -eq 1 ]; then\n"
                   "    COMPREPLY=($(compgen -W \"$commands help --help --version\" -- \"$cur\"))\n"
                   "    return\n"
                   "  fi\n"
                   "  local opts= valued= choices=\n"
                   "  case ${COMP_WORDS[1]} in\n"
                   "    help) COMPREPLY=($(compgen -W \"$commands\" -- \"$cur\")); return ;;\n");
  for (const Command* c : AllCommands()) {
    std::vector<std::string> opts, valued;
    std::string choices;
    for (const util::OptionSpec& o : *c->options) {
      opts.push_back(absl::StrCat("--", o.name));
      if (o.short_name != 0)
        opts.push_back(absl::StrCat("-", std::string(1, o.short_name)));
      if (o.value_name == nullptr)
        continue;
      valued.push_back(absl::StrCat("--", o.name));
      if (o.short_name != 0)
        valued.push_back(absl::StrCat("-", std::string(1, o.short_name)));
      const std::vector<std::string> words = ValueChoices(o.value_name);
      if (!words.empty()) {
        absl::StrAppend(&choices, "        --", o.name, ") choices=\"", absl::StrJoin(words, " "),
                        "\" ;;\n");
      }
    }
    absl::StrAppend(&out, "    ", c->name, ")\n      opts=\"", absl::StrJoin(opts, " "),
                    " --help\"\n      valued=\" ", absl::StrJoin(valued, " "), " \"\n");
    if (!choices.empty())
      absl::StrAppend(&out, "      case $prev in\n", choices, "      esac\n");
    if (c->mode == util::ArgMode::kCommandLine) {
      // After the program word, complete what the program takes: files.
      absl::StrAppend(
          &out,
          "      local i=2\n"
          "      while [ $i -lt \"$COMP_CWORD\" ]; do\n"
          "        local w=${COMP_WORDS[i]}\n"
          "        if [ \"$w\" = -- ]; then break; fi\n"
          "        if [[ $w != -* ]]; then\n"
          "          local p=${COMP_WORDS[i-1]}\n"
          "          if [[ $valued != *\" $p \"* || $p == \"$w\" ]]; then\n"
          "            COMPREPLY=($(compgen -f -- \"$cur\")); return\n"
          "          fi\n"
          "        fi\n"
          "        i=$((i+1))\n"
          "      done\n"
          "      if [ $i -lt \"$COMP_CWORD\" ] && [ $((i+1)) -eq \"$COMP_CWORD\" ]; then\n"
          "        COMPREPLY=($(compgen -c -- \"$cur\")); return\n"
          "      fi\n");
    }
    absl::StrAppend(&out, "      ;;\n");
  }
  absl::StrAppend(&out,
                  "    *) return ;;\n"
                  "  esac\n"
                  "  if [ -n \"$choices\" ]; then\n"
                  "    COMPREPLY=($(compgen -W \"$choices\" -- \"$cur\")); return\n"
                  "  fi\n"
                  "  if [[ $valued == *\" $prev \"* ]]; then\n"
                  "    COMPREPLY=($(compgen -f -- \"$cur\")); return\n"
                  "  fi\n"
                  "  if [[ $cur == -* ]]; then\n"
                  "    COMPREPLY=($(compgen -W \"$opts\" -- \"$cur\")); return\n"
                  "  fi\n"
                  "  COMPREPLY=($(compgen -f -- \"$cur\"))\n"
                  "}\n"
                  "complete -o filenames -o bashdefault -F _cuclimb cuclimb\n");
  return out;
}

int RunHelp(int argc, char** argv) {
  // argv[0] is "help".
  bool man = false;
  std::string completion, topic;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--man") {
      man = true;
    } else if (arg == "--completion" && i + 1 < argc) {
      completion = argv[++i];
    } else if (arg == "-h" || arg == "--help") {
      std::fputs(
          "usage: cuclimb help [COMMAND]\n       cuclimb help --man [COMMAND]\n"
          "       cuclimb help --completion bash\n",
          stdout);
      return util::kExitOk;
    } else if (topic.empty() && arg[0] != '-') {
      topic = arg;
    } else {
      std::fprintf(stderr, "cuclimb help: unexpected argument '%s'\n", arg.c_str());
      return util::kExitUsage;
    }
  }
  if (!completion.empty()) {
    if (completion != "bash") {
      std::fprintf(stderr, "cuclimb help: --completion supports bash only, not '%s'\n",
                   completion.c_str());
      return util::kExitUsage;
    }
    std::fputs(BashCompletion().c_str(), stdout);
    return util::kExitOk;
  }
  const Command* command = nullptr;
  if (!topic.empty()) {
    command = FindCommand(topic);
    if (command == nullptr) {
      std::vector<std::string> names;
      for (const Command* c : AllCommands()) names.emplace_back(c->name);
      const std::string near = util::ClosestMatch(topic, names);
      std::fprintf(stderr, "cuclimb help: unknown command '%s'%s\n", topic.c_str(),
                   near.empty() ? "; 'cuclimb --help' lists them"
                                : absl::StrCat("; did you mean '", near, "'?").c_str());
      return util::kExitUsage;
    }
  }
  if (man) {
    std::fputs(ManPage(command).c_str(), stdout);
  } else {
    std::fputs(command != nullptr ? CommandHelp(*command).c_str() : MainUsage().c_str(), stdout);
  }
  return util::kExitOk;
}

}  // namespace cuclimb::commands
