// SPDX-License-Identifier: Apache-2.0
// `cuclimb info TRACE`: header, event counts by type, time span, drops and damage.
#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <map>

#include <nlohmann/json.hpp>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "commands/commands.h"
#include "trace/reader.h"
#include "util/args.h"
#include "util/cli.h"
#include "util/saturating.h"
#include "util/terminal_text.h"

namespace cuclimb::commands {
namespace {

const std::vector<util::OptionSpec> kOptions = {
    {"json", "FILE", "write the summary as one JSON object to FILE ('-' = stdout)"},
    {"quiet", nullptr, "print nothing on stdout (with --json FILE)"},
};
constexpr char kUsage[] = "cuclimb info TRACE [--json FILE] [--quiet]";
constexpr char kDescription[] =
    "Summarizes a trace (binary or JSON Lines): header, events by type, time span, the process\n"
    "and devices recorded, drops, and whether the file is complete, cut or damaged (and where).";

struct Summary {
  uint64_t counts[static_cast<int>(trace::EventType::kCount)] = {};
  int64_t first_ts = INT64_MAX;
  int64_t last_ts = INT64_MIN;
  std::map<std::string, int64_t> drops_by_reason;
  nlohmann::json process = nullptr;
  nlohmann::json devices = nlohmann::json::array();
};

Summary Summarize(trace::TraceReader& reader) {
  Summary s;
  trace::Event ev{};
  while (reader.Next(&ev)) {
    ++s.counts[static_cast<int>(ev.type)];
    s.first_ts = std::min(s.first_ts, ev.ts);
    s.last_ts = std::max(s.last_ts, util::SaturatingAdd(ev.ts, std::max<int64_t>(ev.dur, 0)));
    if (ev.type == trace::EventType::kDrops) {
      int64_t& drops = s.drops_by_reason[std::string(reader.Str(ev.text))];
      drops = util::SaturatingAdd(drops, ev.value);
    } else if (ev.type == trace::EventType::kProcess && s.process.is_null()) {
      s.process = {{"pid", ev.value}, {"cmd", reader.Str(ev.name)}, {"host", reader.Str(ev.text)}};
      if (ev.size != 0)
        s.process["driver"] = ev.size;
      if (ev.aux != 0)
        s.process["cupti"] = ev.aux;
    } else if (ev.type == trace::EventType::kDevice) {
      s.devices.push_back({{"device", ev.device},
                           {"name", reader.Str(ev.name)},
                           {"uuid", reader.Str(ev.text)},
                           {"total_bytes", ev.size}});
    }
  }
  return s;
}

nlohmann::json ToJson(const std::string& path, trace::TraceReader& reader, const Summary& s) {
  const trace::TraceHeader& h = reader.header();
  const trace::ReadStatus& rs = reader.status();
  nlohmann::json counts = nlohmann::json::object();
  for (int t = 1; t < static_cast<int>(trace::EventType::kCount); ++t) {
    if (s.counts[t] > 0)
      counts[format::kEventSchema[t].json] = s.counts[t];
  }
  int64_t dropped = reader.trailer() ? reader.trailer()->value : 0;
  nlohmann::json j = {
      {"path", path},
      {"form", h.form == trace::TraceForm::kBinary ? "binary" : "jsonl"},
      {"format", absl::StrCat(h.format_major, ".", h.format_minor)},
      {"producer", h.producer},
      {"clock", trace::ClockName(h.clock)},
      {"base_realtime_ns", h.base_realtime_ns},
      {"status", trace::StopReasonName(rs.reason)},
      {"status_message", rs.message},
      {"stopped_at_offset", rs.offset},
      {"events", rs.events},
      {"chunks", rs.chunks},
      {"skipped_records", rs.skipped_records},
      {"counts", counts},
      {"first_ts", rs.events ? s.first_ts : 0},
      {"last_ts", rs.events ? s.last_ts : 0},
      {"span_ns", rs.events ? util::SaturatingSub(s.last_ts, s.first_ts) : 0},
      {"dropped", dropped},
      {"drops_by_reason", s.drops_by_reason},
      {"process", s.process},
      {"devices", s.devices},
      {"strings", reader.strings().size() - 1},
      {"stacks", reader.stacks().size() - 1},
  };
  return j;
}

// Trace strings (and the path) are printed through TerminalSafe(): they are the traced
// program's, and may hold escape sequences or newlines.
std::string FormatText(const nlohmann::json& j) {
  const auto str = [](const nlohmann::json& v) { return util::TerminalSafe(v.get<std::string>()); };
  std::string out;
  absl::StrAppend(&out, absl::StrFormat("trace     %s (%s, format %s, producer \"%s\", clock %s)\n",
                                        str(j["path"]), str(j["form"]), str(j["format"]),
                                        str(j["producer"]), str(j["clock"])));
  absl::StrAppend(&out, absl::StrFormat("status    %s\n", str(j["status_message"])));
  if (!j["process"].is_null()) {
    const std::string host = str(j["process"]["host"]);
    absl::StrAppend(
        &out, absl::StrFormat("process   pid %d \"%s\"%s\n", j["process"]["pid"].get<int64_t>(),
                              str(j["process"]["cmd"]), host.empty() ? "" : " on " + host));
  }
  for (const auto& d : j["devices"]) {
    absl::StrAppend(&out, absl::StrFormat("device    %d: %s %s, %.1f GiB\n", d["device"].get<int>(),
                                          str(d["name"]), str(d["uuid"]),
                                          d["total_bytes"].get<double>() / (1u << 30)));
  }
  absl::StrAppend(&out, absl::StrFormat("span      %.6f s\n", j["span_ns"].get<int64_t>() / 1e9));
  absl::StrAppend(&out, absl::StrFormat("events    %d in %d %s\n", j["events"].get<uint64_t>(),
                                        j["chunks"].get<uint64_t>(),
                                        j["form"] == "binary" ? "chunks" : "lines"));
  for (const auto& [name, n] : j["counts"].items()) {
    absl::StrAppend(&out, absl::StrFormat("  %-14s %12d\n", name, n.get<uint64_t>()));
  }
  absl::StrAppend(&out, absl::StrFormat("dropped   %d (trailer)", j["dropped"].get<int64_t>()));
  for (const auto& [reason, n] : j["drops_by_reason"].items()) {
    absl::StrAppend(&out, absl::StrFormat(", %s %d", util::TerminalSafe(reason), n.get<int64_t>()));
  }
  absl::StrAppend(&out, "\n");
  if (j["skipped_records"].get<uint64_t>() > 0) {
    absl::StrAppend(&out, absl::StrFormat("skipped   %d records of newer types\n",
                                          j["skipped_records"].get<uint64_t>()));
  }
  return out;
}

int RunInfo(const util::ParsedArgs& parsed) {
  const util::ParsedArgs* args = &parsed;
  if (args->positionals.size() != 1) {
    return util::ReportError("info",
                             util::UsageError("expected one TRACE (see 'cuclimb info --help')"));
  }
  const std::string& path = args->positionals[0];
  auto reader = trace::TraceReader::Open(path);
  if (!reader.ok())
    return util::ReportError("info", reader.status());
  const Summary s = Summarize(**reader);
  const nlohmann::json j = ToJson(path, **reader, s);
  const std::string json_path = args->Get("json");
  if (!json_path.empty()) {
    const std::string text = j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
    if (absl::Status st = util::WriteFile(json_path, text); !st.ok())
      return util::ReportError("info", st);
  }
  if (!args->Has("quiet") && json_path != "-") {
    if (absl::Status st = util::WriteFile("-", FormatText(j)); !st.ok())
      return util::ReportError("info", st);
  }
  return (*reader)->status().partial() ? util::kExitBadTrace : util::kExitOk;
}

}  // namespace

const Command kInfoCommand = {"info",
                              "summarize a trace: header, counts, span, drops, damage",
                              kUsage,
                              kDescription,
                              &kOptions,
                              nullptr,
                              util::ArgMode::kInterleaved,
                              RunInfo};

}  // namespace cuclimb::commands
