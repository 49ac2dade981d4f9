// SPDX-License-Identifier: Apache-2.0
// Text and JSON Lines reporting, and the summary statistics.
#include "workloads/adam/report.h"

#include <algorithm>
#include <cinttypes>
#include <cmath>
#include <sstream>

namespace cuclimb::workloads {
namespace {

double Median(std::vector<double> values) {
  if (values.empty())
    return 0.0;
  std::sort(values.begin(), values.end());
  const std::size_t mid = values.size() / 2;
  return values.size() % 2 == 1 ? values[mid] : 0.5 * (values[mid - 1] + values[mid]);
}

double Mean(const std::vector<double>& values) {
  if (values.empty())
    return 0.0;
  double sum = 0.0;
  for (const double v : values) sum += v;
  return sum / static_cast<double>(values.size());
}

double ChangePct(double first, double last) {
  return first > 0.0 ? 100.0 * (last - first) / first : 0.0;
}

std::string Fixed(double value, int digits) {
  char buffer[64];
  std::snprintf(buffer, sizeof(buffer), "%.*f", digits, value);
  return buffer;
}

std::string Signed(double value) {
  char buffer[64];
  std::snprintf(buffer, sizeof(buffer), "%+.1f", value);
  return buffer;
}

// Loss values can be NaN if training diverged; JSON has no NaN.
std::string JsonNumber(double value, int digits) {
  if (!std::isfinite(value))
    return "null";
  return Fixed(value, digits);
}

}  // namespace

Summary Summarize(const Options& options, const std::vector<std::string>& names,
                  const std::vector<IterationRecord>& iterations) {
  Summary summary;
  const int count = static_cast<int>(iterations.size());
  summary.warmup = std::min(options.EffectiveWarmup(), std::max(0, count - 1));
  const int available = count - summary.warmup;
  const int requested =
      options.summary_window > 0 ? options.summary_window : std::max(1, count / 20);
  summary.window = std::max(1, std::min(requested, std::max(1, available / 2)));
  const int first_begin = summary.warmup;
  const int first_end = std::min(count, first_begin + summary.window);
  const int last_begin = std::max(first_begin, count - summary.window);
  auto collect = [&](int begin, int end, auto field) {
    std::vector<double> values;
    for (int i = begin; i < end; ++i) values.push_back(field(iterations[i]));
    return values;
  };
  summary.reference = options.reference;
  if (summary.reference) {
    const auto ref = [](const IterationRecord& r) { return r.ref_st_ms; };
    summary.ref_first_ms = Median(collect(first_begin, first_end, ref));
    summary.ref_last_ms = Median(collect(last_begin, count, ref));
    summary.ref_change_pct = ChangePct(summary.ref_first_ms, summary.ref_last_ms);
  }
  for (std::size_t n = 0; n < names.size(); ++n) {
    const auto st = [n](const IterationRecord& r) { return r.st_ms[n]; };
    const auto gpu = [n](const IterationRecord& r) { return r.gpu_st_ms[n]; };
    const auto loss = [n](const IterationRecord& r) { return static_cast<double>(r.loss[n]); };
    SummaryRow row;
    row.net = names[n];
    row.st_first_ms = Median(collect(first_begin, first_end, st));
    row.st_last_ms = Median(collect(last_begin, count, st));
    row.st_change_pct = ChangePct(row.st_first_ms, row.st_last_ms);
    row.gpu_first_ms = Median(collect(first_begin, first_end, gpu));
    row.gpu_last_ms = Median(collect(last_begin, count, gpu));
    row.gpu_change_pct = ChangePct(row.gpu_first_ms, row.gpu_last_ms);
    // The loss is compared from the very first iterations: that is where training starts.
    row.loss_first = Mean(collect(0, std::min(count, summary.window), loss));
    row.loss_last = Mean(collect(last_begin, count, loss));
    if (summary.reference) {
      const auto rel = [n](const IterationRecord& r) {
        return r.ref_st_ms > 0.0 ? r.st_ms[n] / r.ref_st_ms : 0.0;
      };
      row.rel_first = Median(collect(first_begin, first_end, rel));
      row.rel_last = Median(collect(last_begin, count, rel));
      row.rel_change_pct = ChangePct(row.rel_first, row.rel_last);
    }
    summary.rows.push_back(row);
  }
  return summary;
}

void Reporter::Header(const std::vector<std::string>& names) {
  std::ostringstream dims;
  for (std::size_t i = 0; i < options_.dims.size(); ++i) {
    dims << (i ? "," : "") << options_.dims[i];
  }
  std::ostringstream edims;
  const auto& e = options_.EffectiveEphemeralDims();
  for (std::size_t i = 0; i < e.size(); ++i) edims << (i ? "," : "") << e[i];
  if (options_.json) {
    std::fprintf(
        out_,
        "{\"config\":{\"mode\":\"%s\",\"allocator\":\"%s\",\"iters\":%d,"
        "\"inner_steps\":%d,\"ephemeral_steps\":%d,\"nets\":%zu,\"dims\":[%s],"
        "\"edims\":[%s],\"batch\":%d,\"seed\":%" PRIu64
        ",\"task\":\"%s\","
        "\"retain_tiny\":%d,\"retain_params\":%s,\"separate_pools\":%s,"
        "\"cleanup_each_cycle\":%s,\"window\":%s,\"size_match\":%s,"
        "\"persistent_pool\":%s,\"align\":%" PRIu64
        ",\"meta_pool\":\"%s\","
        "\"inplace_adam\":%s,\"timing\":\"%s\",\"reference\":%s}}\n",
        ModeName(options_.mode), AllocatorName(options_.allocator), options_.iters,
        options_.inner_steps, options_.EffectiveEphemeralSteps(), names.size(), dims.str().c_str(),
        edims.str().c_str(), options_.batch, options_.seed, TaskName(options_.task),
        options_.retain_tiny, options_.retain_params ? "true" : "false",
        options_.separate_pools ? "true" : "false", options_.cleanup_each_cycle ? "true" : "false",
        options_.persistent_window ? "true" : "false", options_.size_match ? "true" : "false",
        options_.persistent_pool ? "true" : "false", options_.align,
        options_.separate_meta_pool ? "separate" : "shared",
        options_.inplace_adam ? "true" : "false", TimingName(options_.timing),
        options_.reference ? "true" : "false");
  } else {
    std::fprintf(out_,
                 "# cuclimb-adam mode=%s allocator=%s iters=%d inner=%d ephemeral_steps=%d "
                 "nets=%zu dims=%s edims=%s batch=%d task=%s retain_tiny=%d retain_params=%d "
                 "separate_pools=%d cleanup=%d window=%d size_match=%d persistent=%d "
                 "align=%" PRIu64 " meta_pool=%s inplace_adam=%d timing=%s reference=%d\n",
                 ModeName(options_.mode), AllocatorName(options_.allocator), options_.iters,
                 options_.inner_steps, options_.EffectiveEphemeralSteps(), names.size(),
                 dims.str().c_str(), edims.str().c_str(), options_.batch, TaskName(options_.task),
                 options_.retain_tiny, options_.retain_params, options_.separate_pools,
                 options_.cleanup_each_cycle, options_.persistent_window, options_.size_match,
                 options_.persistent_pool, options_.align,
                 options_.separate_meta_pool ? "separate" : "shared", options_.inplace_adam,
                 TimingName(options_.timing), options_.reference);
  }
  std::fflush(out_);
}

namespace {

// One --stats column: its name in the text line and in JSON, and its value, a per-iteration delta
// for counters and the current level for gauges.
struct StatsColumn {
  const char* text_name;
  const char* json_name;
  uint64_t value;
};

std::vector<StatsColumn> StatsColumns(const AllocatorStats& s, const AllocatorStats& p) {
  return {
      {"reserves", "reserves", s.reserves - p.reserves},
      {"slots_scanned", "slots_scanned", s.slots_scanned - p.slots_scanned},
      {"slices_scanned", "slices_scanned", s.slices_scanned - p.slices_scanned},
      {"coalesce_touched", "coalesce_touched", s.coalesce_touched - p.coalesce_touched},
      {"pages_visited", "pages_visited", s.pages_visited - p.pages_visited},
      {"dev_allocs", "device_allocs", s.device_allocs - p.device_allocs},
      {"dev_frees", "device_frees", s.device_frees - p.device_frees},
      {"host_allocs", "host_allocs", s.host_allocs - p.host_allocs},
      {"event_waits", "event_waits", s.event_waits - p.event_waits},
      {"slots", "persistent_slots", s.persistent_slots},
      {"bucket_max", "largest_bucket_slots", s.largest_bucket_slots},
      {"pages", "pages", s.pages},
      {"slices", "slices", s.slices},
      {"dead_bytes", "dead_bytes", s.dead_bytes},
      {"reserved_bytes", "reserved_bytes", s.reserved_bytes},
      {"live", "live_handles", s.live_handles},
  };
}

}  // namespace

std::string Reporter::StatsText(const IterationRecord& r) const {
  std::ostringstream text;
  text << " |";
  for (const StatsColumn& c : StatsColumns(r.stats, previous_)) {
    text << " " << c.text_name << "=" << c.value;
  }
  return text.str();
}

std::string Reporter::StatsJson(const IterationRecord& r) const {
  std::ostringstream json;
  json << ",\"stats\":{";
  const char* separator = "";
  for (const StatsColumn& c : StatsColumns(r.stats, previous_)) {
    json << separator << "\"" << c.json_name << "\":" << c.value;
    separator = ",";
  }
  json << "}";
  return json.str();
}

void Reporter::Iteration(const std::vector<std::string>& names, const IterationRecord& r) {
  if (options_.json) {
    std::ostringstream line;
    line << "{\"iter\":" << r.iter << ",\"st_ms\":" << Fixed(r.st_ms[0], 4) << ",\"st\":{";
    for (std::size_t n = 0; n < names.size(); ++n) {
      line << (n ? "," : "") << "\"" << names[n] << "\":" << Fixed(r.st_ms[n], 4);
    }
    line << "},\"gpu_st\":{";
    for (std::size_t n = 0; n < names.size(); ++n) {
      line << (n ? "," : "") << "\"" << names[n] << "\":" << Fixed(r.gpu_st_ms[n], 4);
    }
    line << "},\"loss\":{";
    for (std::size_t n = 0; n < names.size(); ++n) {
      line << (n ? "," : "") << "\"" << names[n] << "\":" << JsonNumber(r.loss[n], 6);
    }
    line << "}";
    if (options_.mode == Mode::kClimb)
      line << ",\"eph_loss\":" << JsonNumber(r.ephemeral_loss, 6);
    if (options_.reference) {
      line << ",\"ref_st_ms\":" << Fixed(r.ref_st_ms, 4)
           << ",\"ref_gpu_st_ms\":" << Fixed(r.ref_gpu_st_ms, 4);
    }
    line << ",\"wall_ms\":" << Fixed(r.wall_ms, 4);
    if (options_.stats)
      line << StatsJson(r);
    line << "}";
    std::fprintf(out_, "%s\n", line.str().c_str());
  } else {
    // The report's form first, so its parsers (iter=(\d+) st=([\d.]+)ms) read our lines too.
    std::ostringstream line;
    line << "iter=" << r.iter << " st=" << Fixed(r.st_ms[0], 3) << "ms";
    if (names.size() > 1) {
      for (std::size_t n = 0; n < names.size(); ++n) {
        line << " st[" << names[n] << "]=" << Fixed(r.st_ms[n], 3) << "ms";
      }
    }
    line << " gpu_st=" << Fixed(r.gpu_st_ms[0], 3) << "ms loss=" << Fixed(r.loss[0], 5);
    if (options_.mode == Mode::kClimb)
      line << " eph_loss=" << Fixed(r.ephemeral_loss, 5);
    if (options_.reference)
      line << " ref=" << Fixed(r.ref_st_ms, 3) << "ms";
    line << " wall=" << Fixed(r.wall_ms, 2) << "ms";
    if (options_.stats)
      line << StatsText(r);
    std::fprintf(out_, "%s\n", line.str().c_str());
  }
  previous_ = r.stats;
}

void Reporter::Final(const Summary& summary) {
  for (const SummaryRow& row : summary.rows) {
    if (options_.json) {
      std::string reference;
      if (summary.reference) {
        char buffer[256];
        std::snprintf(buffer, sizeof(buffer),
                      ",\"st_rel_first\":%.4f,\"st_rel_last\":%.4f,\"st_rel_change_pct\":%.2f,"
                      "\"ref_st_first_ms\":%.4f,\"ref_st_last_ms\":%.4f,"
                      "\"ref_st_change_pct\":%.2f",
                      row.rel_first, row.rel_last, row.rel_change_pct, summary.ref_first_ms,
                      summary.ref_last_ms, summary.ref_change_pct);
        reference = buffer;
      }
      std::fprintf(out_,
                   "{\"summary\":{\"net\":\"%s\",\"warmup\":%d,\"window\":%d,"
                   "\"st_first_ms\":%.4f,\"st_last_ms\":%.4f,\"st_change_pct\":%.2f,"
                   "\"gpu_st_first_ms\":%.4f,\"gpu_st_last_ms\":%.4f,\"gpu_st_change_pct\":%.2f,"
                   "\"loss_first\":%s,\"loss_last\":%s%s}}\n",
                   row.net.c_str(), summary.warmup, summary.window, row.st_first_ms, row.st_last_ms,
                   row.st_change_pct, row.gpu_first_ms, row.gpu_last_ms, row.gpu_change_pct,
                   JsonNumber(row.loss_first, 6).c_str(), JsonNumber(row.loss_last, 6).c_str(),
                   reference.c_str());
    } else {
      std::string reference;
      if (summary.reference) {
        reference = "  st/ref " + Fixed(row.rel_first, 3) + " -> " + Fixed(row.rel_last, 3) + " (" +
                    Signed(row.rel_change_pct) + "%)  ref " + Signed(summary.ref_change_pct) + "%";
      }
      std::fprintf(out_,
                   "summary[%s]: st %.3f -> %.3f ms (%s%%)  gpu_st %.3f -> %.3f ms (%s%%)  "
                   "loss %.5f -> %.5f  [median of iters %d..%d vs last %d]%s\n",
                   row.net.c_str(), row.st_first_ms, row.st_last_ms,
                   Signed(row.st_change_pct).c_str(), row.gpu_first_ms, row.gpu_last_ms,
                   Signed(row.gpu_change_pct).c_str(), row.loss_first, row.loss_last,
                   summary.warmup, summary.warmup + summary.window - 1, summary.window,
                   reference.c_str());
    }
  }
  std::fflush(out_);
}

}  // namespace cuclimb::workloads
