// SPDX-License-Identifier: Apache-2.0
// Size and encoding speed of real recordings, re-encoded the way the recorder writes them.
//
//   trace_codec_bench TRACE... [--repeat N] [--level N|auto] [--format 1.0|1.1|1.2]
//
// Reads each trace (binary or JSON Lines) into memory, then encodes its events with the writer
// thread's encoder and sealing policy: a chunk whenever 512 KiB are pending or a second of trace
// time has passed since the chunk's first event (TraceWriter seals by wall time; the events'
// times stand in for it). Prints bytes per event, and the encoder's rate in events per
// CPU-second (median of N runs) next to the trace's peak event rate over one second, the rate
// the writer thread must keep up with. `cuclimb convert` seals by size only (1 MiB), so its
// output is smaller than what the recorder writes for the same events.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <string>
#include <vector>

#include <time.h>

#include "interposer/format/trace_encoder.h"
#include "trace/binary_writer.h"
#include "trace/reader.h"

namespace cuclimb::trace {
namespace {

constexpr size_t kRecorderChunkBytes = 512u << 10;  // the recorder's default chunk_kib
constexpr int64_t kRecorderChunkAgeNs = 1'000'000'000;

double CpuSeconds() {
  timespec t{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) * 1e-9;
}

// The most events whose times fall within one second.
size_t PeakPerSecond(const std::vector<Event>& events) {
  std::vector<int64_t> ts;
  ts.reserve(events.size());
  for (const Event& ev : events) ts.push_back(ev.ts);
  std::sort(ts.begin(), ts.end());
  size_t peak = 0, first = 0;
  for (size_t i = 0; i < ts.size(); ++i) {
    while (ts[i] - ts[first] >= 1'000'000'000) ++first;
    peak = std::max(peak, i - first + 1);
  }
  return peak;
}

// Encodes as the recorder does; returns the file's bytes (header included), chunks in *chunks.
std::string Encode(const std::vector<Event>& events, const TraceReader& reader,
                   format::ChunkLayout layout, int level, size_t* chunks) {
  format::TraceEncoder encoder(level, layout, kRecorderChunkBytes);
  ReaderTables tables(&reader.strings(), &reader.stacks());
  const format::FileHeader header = encoder.Header(format::ClockId::kMonotonic, 0, 0, "bench");
  std::string out(reinterpret_cast<const char*>(&header), sizeof(header));
  int64_t chunk_start = events.empty() ? 0 : events.front().ts;
  for (const Event& ev : events) {
    if (ev.ts - chunk_start >= kRecorderChunkAgeNs) {
      encoder.SealEvents(&out);
      chunk_start = ev.ts;
    }
    const uint64_t before = encoder.chunks();
    encoder.Add(ev, tables, &out);
    if (encoder.chunks() != before)
      chunk_start = ev.ts;
  }
  encoder.Finish(events.empty() ? 0 : events.back().ts, 0, "", &out);
  *chunks = encoder.chunks();
  return out;
}

int Run(const char* path, int repeat, format::ChunkLayout layout, int level) {
  auto reader = TraceReader::Open(path);
  if (!reader.ok()) {
    std::fprintf(stderr, "trace_codec_bench: %s\n", std::string(reader.status().message()).c_str());
    return 3;
  }
  std::vector<Event> events;
  Event ev{};
  while ((*reader)->Next(&ev)) events.push_back(ev);
  size_t chunks = 0;
  std::string bytes;
  std::vector<double> seconds;
  for (int i = 0; i < repeat; ++i) {
    const double start = CpuSeconds();
    bytes = Encode(events, **reader, layout, level, &chunks);
    seconds.push_back(CpuSeconds() - start);
  }
  std::sort(seconds.begin(), seconds.end());
  const double median = seconds[seconds.size() / 2];
  // Decoding the re-encoded bytes, for comparison.
  std::vector<double> decode_seconds;
  for (int i = 0; i < repeat; ++i) {
    const double start = CpuSeconds();
    auto again = TraceReader::FromBuffer(bytes);
    size_t n = 0;
    while ((*again)->Next(&ev)) ++n;
    decode_seconds.push_back(CpuSeconds() - start);
    if (n != events.size() || (*again)->status().partial()) {
      std::fprintf(stderr, "trace_codec_bench: %s: re-encoded trace reads back %zu of %zu events\n",
                   path, n, events.size());
      return 1;
    }
  }
  std::sort(decode_seconds.begin(), decode_seconds.end());
  const double n = static_cast<double>(std::max<size_t>(events.size(), 1));
  const size_t peak = PeakPerSecond(events);
  const double rate = n / median;
  std::printf("%s\n  %zu events, %zu bytes in %zu chunks: %.3f B/event (recorder chunking)\n", path,
              events.size(), bytes.size(), chunks, static_cast<double>(bytes.size()) / n);
  std::printf("  encode %.2f M events/CPU-s (median of %d), peak trace rate %zu events/s: %.0f x\n",
              rate / 1e6, repeat, peak, rate / static_cast<double>(std::max<size_t>(peak, 1)));
  std::printf("  decode %.2f M events/CPU-s\n",
              n / decode_seconds[decode_seconds.size() / 2] / 1e6);
  return 0;
}

}  // namespace
}  // namespace cuclimb::trace

int main(int argc, char** argv) {
  int repeat = 3;
  int level = cuclimb::format::kAutoZstdLevel;  // the recorder's
  auto layout = cuclimb::format::ChunkLayout::kColumnsV2;
  std::vector<const char*> paths;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--repeat") == 0 && i + 1 < argc) {
      repeat = std::max(1, std::atoi(argv[++i]));
    } else if (std::strcmp(argv[i], "--level") == 0 && i + 1 < argc) {
      ++i;
      level =
          std::strcmp(argv[i], "auto") == 0 ? cuclimb::format::kAutoZstdLevel : std::atoi(argv[i]);
    } else if (std::strcmp(argv[i], "--format") == 0 && i + 1 < argc) {
      const std::string f = argv[++i];
      layout = f == "1.0"   ? cuclimb::format::ChunkLayout::kRows
               : f == "1.1" ? cuclimb::format::ChunkLayout::kColumns
                            : cuclimb::format::ChunkLayout::kColumnsV2;
    } else {
      paths.push_back(argv[i]);
    }
  }
  if (paths.empty()) {
    std::fprintf(
        stderr,
        "usage: trace_codec_bench TRACE... [--repeat N] [--level N|auto] [--format 1.0|1.1|1.2]\n");
    return 2;
  }
  int rc = 0;
  for (const char* path : paths)
    rc = std::max(rc, cuclimb::trace::Run(path, repeat, layout, level));
  return rc;
}
