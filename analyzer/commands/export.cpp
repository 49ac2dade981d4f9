// SPDX-License-Identifier: Apache-2.0
// `cuclimb export TRACE --perfetto OUT [--format proto|json] [--iterations A:B]`: the trace for
// Perfetto UI, in Perfetto's protobuf format (report/perfetto_proto_export.h) or as Chrome JSON
// trace events (report/perfetto_export.h), which chrome://tracing opens too. The analyzer
// segments the trace first (Analyze()), so --iterations means the same iterations as the report.
#include <charconv>
#include <cstdio>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "analysis/analyze.h"
#include "commands/commands.h"
#include "commands/progress.h"
#include "report/gzip_stream.h"
#include "report/perfetto_export.h"
#include "report/perfetto_proto_export.h"
#include "util/args.h"
#include "util/cli.h"
#include "util/output_file.h"

namespace cuclimb::commands {
namespace {

const std::vector<util::OptionSpec> kOptions = {
    {"perfetto", "OUT",
     "write the trace for Perfetto UI to OUT ('-' = stdout): Perfetto's protobuf format "
     "(.pftrace), or Chrome JSON trace events when OUT ends in .json or .json.gz; "
     "gzip-compressed when OUT ends in .gz (Perfetto UI opens it as it is)"},
    {"format", "proto|json",
     "the format whatever OUT's name: proto (Perfetto's protobuf trace, the smallest) or json "
     "(Chrome trace events, which chrome://tracing opens too)"},
    {"iterations", "A:B",
     "only iterations A to B-1 (A: from A, :B up to B, N only N); default all"},
    {"iteration", "NAME", "NVTX range or mark that delimits iterations (default: automatic)"},
    {"quiet", nullptr, "print nothing on stdout and no progress"},
};
constexpr char kUsage[] =
    "cuclimb export TRACE --perfetto OUT [--format proto|json] [--iterations A:B]\n"
    "                      [--iteration NAME] [--quiet]";
constexpr char kDescription[] =
    "Writes the trace for ui.perfetto.dev: in Perfetto's native protobuf format (the default;\n"
    "names written once: 30x smaller than the JSON, half the gzipped JSON) or, for OUT.json,\n"
    "OUT.json.gz or --format json, as Chrome JSON trace events, which chrome://tracing opens\n"
    "too. A track per thread with its CUDA calls and NVTX ranges, a track per GPU stream with\n"
    "its kernels (linked to their launches), an iterations track with a step-time counter, and\n"
    "counters for live bytes, live allocations, live handles, gauges and the profiler's own\n"
    "time. Iterations are the analyzer's (the same as in `cuclimb analyze`); --iterations cuts a\n"
    "long run down to a window a browser opens comfortably. See docs/reports.md.";

bool ParseIndex(std::string_view s, int64_t* out) {
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), *out);
  return ec == std::errc() && ptr == s.data() + s.size() && *out >= 0;
}

absl::Status ParseRange(const std::string& text, analysis::PerfettoOptions* o) {
  const size_t colon = text.find(':');
  const auto bad = [&]() {
    return util::UsageError(absl::StrCat(
        "--iterations wants A:B, A:, :B or N (iteration numbers from 0), not '", text, "'"));
  };
  if (colon == std::string::npos) {
    if (!ParseIndex(text, &o->first_iteration))
      return bad();
    o->end_iteration = o->first_iteration + 1;
    return absl::OkStatus();
  }
  const std::string_view a = std::string_view(text).substr(0, colon),
                         b = std::string_view(text).substr(colon + 1);
  if (!a.empty() && !ParseIndex(a, &o->first_iteration))
    return bad();
  if (!b.empty() && !ParseIndex(b, &o->end_iteration))
    return bad();
  if (!b.empty() && o->end_iteration <= o->first_iteration)
    return bad();
  return absl::OkStatus();
}

bool EndsWith(std::string_view s, std::string_view tail) {
  return s.size() >= tail.size() && s.substr(s.size() - tail.size()) == tail;
}

// --format, else OUT's name: .json or .json.gz is JSON, anything else (.pftrace, .perfetto-trace,
// '-') the protobuf format.
absl::StatusOr<bool> WantsJson(const util::ParsedArgs& args, std::string_view out_path) {
  if (args.Has("format")) {
    const std::string format = args.Get("format");
    if (format == "json" || format == "proto")
      return format == "json";
    return util::UsageError(absl::StrCat("--format wants proto or json, not '", format, "'"));
  }
  if (EndsWith(out_path, ".gz"))
    out_path.remove_suffix(3);
  return EndsWith(out_path, ".json");
}

int RunExport(const util::ParsedArgs& parsed) {
  const util::ParsedArgs* args = &parsed;
  const std::string out_path = args->Get("perfetto");
  if (args->positionals.size() != 1 || out_path.empty()) {
    return util::ReportError(
        "export",
        util::UsageError("expected one TRACE and --perfetto OUT (see 'cuclimb export --help')"));
  }
  const absl::StatusOr<bool> json = WantsJson(*args, out_path);
  if (!json.ok())
    return util::ReportError("export", json.status());
  analysis::PerfettoOptions po;
  if (args->Has("iterations")) {
    if (absl::Status s = ParseRange(args->Get("iterations"), &po); !s.ok())
      return util::ReportError("export", s);
  }
  const std::string& path = args->positionals[0];
  // The output never replaces the input, and a bad output path fails before the analysis.
  util::ProtectInputs({path});
  if (absl::Status s = util::CheckOutputPath(out_path); !s.ok())
    return util::ReportError("export", s);
  const bool quiet = args->Has("quiet") || out_path == "-";
  ProgressBar bar("export", !args->Has("quiet"));
  analysis::AnalyzeOptions ao;
  ao.iteration = args->Get("iteration");
  ao.progress = [&bar](const analysis::Progress& p) { bar.Update("segmenting", p); };
  auto report = analysis::Analyze({path}, ao);
  if (!report.ok()) {
    bar.Clear();
    return util::ReportError("export", report.status());
  }
  auto reader = trace::TraceReader::Open(path);
  if (!reader.ok()) {
    bar.Clear();
    return util::ReportError("export", reader.status());
  }
  auto file = util::OutputFile::Open(out_path, util::OutputKind::kTrace);
  if (!file.ok()) {
    bar.Clear();
    return util::ReportError("export", file.status());
  }
  po.progress = [&bar](uint64_t done, uint64_t total, uint64_t events) {
    bar.Update("writing", done, total, events);
  };
  // OUT.gz: the same bytes through gzip (JSON trace events are repetitive text; Perfetto UI
  // and trace_processor read gzipped protobuf traces too).
  std::unique_ptr<analysis::GzipStream> gzip;
  if (EndsWith(out_path, ".gz")) {
    gzip = std::make_unique<analysis::GzipStream>(
        [&file](std::string_view bytes) { return (*file)->Write(bytes); });
  }
  po.compress_packets = gzip == nullptr;
  const auto sink = [&file, &gzip](std::string_view bytes) {
    return gzip != nullptr ? gzip->Write(bytes) : (*file)->Write(bytes);
  };
  auto stats = *json ? analysis::ExportPerfetto(reader->get(), report->ranks[0], po, sink)
                     : analysis::ExportPerfettoProto(reader->get(), report->ranks[0], po, sink);
  if (stats.ok() && gzip != nullptr) {
    if (absl::Status s = gzip->Finish(); !s.ok())
      stats = s;
  }
  bar.Clear();
  if (!stats.ok()) {
    // Iterations beyond the end of a cut trace are missing data (3), not a usage error (2).
    const bool iterations = stats.status().message().find("--iterations") == 0;
    const analysis::TraceInfo& info = report->ranks[0].trace;
    if (iterations && info.partial) {
      return util::ReportError("export", absl::DataLossError(absl::StrCat(
                                             stats.status().message(),
                                             "; the rest is not readable: ", info.status_message)));
    }
    return util::ReportError("export", iterations
                                           ? util::UsageError(std::string(stats.status().message()))
                                           : stats.status());
  }
  if (absl::Status s = (*file)->Close(); !s.ok())
    return util::ReportError("export", s);
  if (!quiet) {
    std::printf(
        "wrote %s: %llu %s from %llu trace records, %lld iterations (%.3f s of trace)\n"
        "open it in https://ui.perfetto.dev (works offline once loaded)%s\n",
        out_path.c_str(), static_cast<unsigned long long>(stats->trace_events_written),
        *json ? "trace events" : "Perfetto packets",
        static_cast<unsigned long long>(stats->events_read),
        static_cast<long long>(stats->iterations),
        static_cast<double>(stats->window_end_ns - stats->window_start_ns) / 1e9,
        *json ? " or chrome://tracing" : "");
  }
  if (stats->slices_dropped > 0) {
    std::fprintf(stderr,
                 "cuclimb export: %llu slices not written: more than 64 overlapped on one track\n",
                 static_cast<unsigned long long>(stats->slices_dropped));
  }
  if ((*reader)->status().partial()) {
    std::fprintf(stderr, "cuclimb export: %s; exported what was readable\n",
                 (*reader)->status().message.c_str());
    return util::kExitBadTrace;
  }
  return util::kExitOk;
}

}  // namespace

const Command kExportCommand = {"export",
                                "write a trace for Perfetto UI (protobuf or JSON)",
                                kUsage,
                                kDescription,
                                &kOptions,
                                nullptr,
                                util::ArgMode::kInterleaved,
                                RunExport};

}  // namespace cuclimb::commands
