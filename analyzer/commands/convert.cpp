// SPDX-License-Identifier: Apache-2.0
// `cuclimb convert IN OUT`: binary ⇄ JSON Lines without loss.
#include <cstdio>

#include "absl/strings/str_cat.h"
#include "commands/commands.h"
#include "trace/binary_writer.h"
#include "trace/jsonl.h"
#include "trace/reader.h"
#include "util/args.h"
#include "util/cli.h"
#include "util/output_file.h"

namespace cuclimb::commands {
namespace {

const std::vector<util::OptionSpec> kOptions = {
    {"to", "FORM", "output form: binary or jsonl (default: the other form of IN)"},
    {"level", "N", "zstd level for binary output, 1-19 (default 5)"},
};

constexpr char kUsage[] = "cuclimb convert IN OUT [--to binary|jsonl]";
constexpr char kDescription[] =
    "Converts a trace between the binary and the JSON Lines form. The input form is read from the\n"
    "file's content. OUT may be '-' for standard output. A damaged input is converted up to the\n"
    "damage; the command then reports where it stopped and exits with 3.";

constexpr size_t kFlushBytes = 1u << 20;

absl::Status Convert(trace::TraceReader& reader, bool to_binary, int level, util::OutputFile& out) {
  trace::Event ev{};
  if (to_binary) {
    trace::BinaryTraceWriter writer(
        reader.header(), [&out](std::string_view b) { return out.Write(b); }, level);
    while (reader.Next(&ev)) {
      if (absl::Status s = writer.Add(ev, reader.strings(), reader.stacks()); !s.ok())
        return s;
    }
    if (reader.trailer()) {
      const trace::Event& t = *reader.trailer();
      return writer.Finish(t.ts, t.value, reader.Str(t.text));
    }
    return writer.FinishWithoutTrailer();
  }
  std::string buffer;
  trace::AppendHeaderLine(reader.header(), &buffer);
  while (reader.Next(&ev)) {
    trace::AppendEventLine(ev, reader.strings(), reader.stacks(), &buffer);
    if (buffer.size() >= kFlushBytes) {
      if (absl::Status s = out.Write(buffer); !s.ok())
        return s;
      buffer.clear();
    }
  }
  if (reader.trailer()) {
    trace::AppendEventLine(*reader.trailer(), reader.strings(), reader.stacks(), &buffer);
  }
  return out.Write(buffer);
}

int RunConvert(const util::ParsedArgs& parsed) {
  const util::ParsedArgs* args = &parsed;
  if (args->positionals.size() != 2) {
    return util::ReportError(
        "convert", util::UsageError("expected IN and OUT (see 'cuclimb convert --help')"));
  }
  auto level = args->GetInt("level", format::kDefaultZstdLevel);
  if (!level.ok() || *level < 1 || *level > 19) {
    return util::ReportError("convert",
                             util::UsageError("--level must be an integer from 1 to 19"));
  }
  const std::string to = args->Get("to");
  if (!to.empty() && to != "binary" && to != "jsonl") {
    return util::ReportError("convert", util::UsageError("--to must be 'binary' or 'jsonl'"));
  }
  util::ProtectInputs({args->positionals[0]});  // `convert run.trace run.trace` destroyed it
  auto reader = trace::TraceReader::Open(args->positionals[0]);
  if (!reader.ok())
    return util::ReportError("convert", reader.status());
  const bool to_binary =
      to.empty() ? (*reader)->header().form == trace::TraceForm::kJsonLines : to == "binary";
  auto out = util::OutputFile::Open(args->positionals[1], util::OutputKind::kTrace);
  if (!out.ok())
    return util::ReportError("convert", out.status());
  absl::Status s = Convert(**reader, to_binary, static_cast<int>(*level), **out);
  if (s.ok())
    s = (*out)->Close();
  if (!s.ok())
    return util::ReportError("convert", s);
  const trace::ReadStatus& rs = (*reader)->status();
  if (rs.partial()) {
    std::fprintf(stderr, "cuclimb convert: %s: %s; converted the %llu events before it\n",
                 args->positionals[0].c_str(), rs.message.c_str(),
                 static_cast<unsigned long long>(rs.events));
    return util::kExitBadTrace;
  }
  return util::kExitOk;
}

}  // namespace

const Command kConvertCommand = {"convert",
                                 "convert a trace between binary and JSON Lines",
                                 kUsage,
                                 kDescription,
                                 &kOptions,
                                 nullptr,
                                 util::ArgMode::kInterleaved,
                                 RunConvert};

}  // namespace cuclimb::commands
