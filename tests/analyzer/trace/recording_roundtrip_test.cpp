// SPDX-License-Identifier: Apache-2.0
// Real recordings (the traces named on the command line) re-encoded in every layout read back
// identical: every event, with its strings and stacks resolved, and the trailer.
#include <cstdio>
#include <cstring>
#include <iterator>
#include <optional>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "interposer/format/event_fields.h"
#include "trace/binary_writer.h"
#include "trace/reader.h"

namespace cuclimb::trace {
namespace {

std::vector<std::string> g_paths;

// An event with its string and stack ids replaced by what they name.
struct Resolved {
  Event ev;
  std::vector<std::string> strings;
  std::vector<std::vector<std::string>> stacks;  // frames as text: "pc:<value>" or the string
  bool operator==(const Resolved& o) const {
    return std::memcmp(&ev, &o.ev, sizeof(ev)) == 0 && strings == o.strings && stacks == o.stacks;
  }
};

Resolved Resolve(const Event& ev, const TraceReader& r) {
  Resolved out{ev, {}, {}};
  const format::EventSpec& spec = format::SpecOf(ev.type);
  for (uint8_t i = 0; i < spec.field_count; ++i) {
    const format::FieldSpec& f = spec.fields[i];
    const auto id = static_cast<uint32_t>(format::GetSlot(ev, f.slot));
    if (f.coding == format::Coding::kString) {
      out.strings.emplace_back(r.Str(id));
      format::SetSlot(&out.ev, f.slot, 0);
    } else if (f.coding == format::Coding::kStack) {
      std::vector<std::string> frames;
      for (uint64_t fr : r.stacks().Get(id)) {
        frames.push_back(format::IsStringFrame(fr)
                             ? std::string(r.Str(static_cast<uint32_t>(format::FrameValue(fr))))
                             : "pc:" + std::to_string(format::FrameValue(fr)));
      }
      out.stacks.push_back(frames);
      format::SetSlot(&out.ev, f.slot, 0);
    }
  }
  return out;
}

struct Recording {
  std::vector<Resolved> events;
  std::optional<Event> trailer;
  StopReason reason = StopReason::kReading;
};

Recording Read(std::unique_ptr<TraceReader> reader) {
  Recording out;
  Event ev{};
  while (reader->Next(&ev)) out.events.push_back(Resolve(ev, *reader));
  out.trailer = reader->trailer();
  out.reason = reader->status().reason;
  return out;
}

// Re-encodes `path` in `layout` with the recorder's chunk size, as `cuclimb convert` does.
std::string Reencode(const std::string& path, format::ChunkLayout layout) {
  auto reader = TraceReader::Open(path);
  EXPECT_TRUE(reader.ok()) << reader.status();
  std::string out;
  BinaryTraceWriter w((*reader)->header(), StringSink(&out), 3, 512u << 10, layout);
  Event ev{};
  while ((*reader)->Next(&ev))
    EXPECT_TRUE(w.Add(ev, (*reader)->strings(), (*reader)->stacks()).ok());
  const Event& t = *(*reader)->trailer();
  EXPECT_TRUE(w.Finish(t.ts, t.value, (*reader)->Str(t.text)).ok());
  return out;
}

TEST(RecordingRoundTripTest, EveryLayoutReadsBackTheRecording) {
  ASSERT_FALSE(g_paths.empty()) << "usage: recording_roundtrip_test TRACE...";
  for (const std::string& path : g_paths) {
    SCOPED_TRACE(path);
    auto original_reader = TraceReader::Open(path);
    ASSERT_TRUE(original_reader.ok()) << original_reader.status();
    const Recording original = Read(std::move(*original_reader));
    ASSERT_EQ(original.reason, StopReason::kComplete);
    ASSERT_GT(original.events.size(), 1000u);
    for (auto layout : {format::ChunkLayout::kColumnsV2, format::ChunkLayout::kColumns,
                        format::ChunkLayout::kRows}) {
      const std::string bytes = Reencode(path, layout);
      auto reader = TraceReader::FromBuffer(bytes);
      ASSERT_TRUE(reader.ok()) << reader.status();
      const Recording again = Read(std::move(*reader));
      EXPECT_EQ(again.reason, StopReason::kComplete);
      ASSERT_EQ(again.events.size(), original.events.size());
      for (size_t i = 0; i < original.events.size(); ++i) {
        ASSERT_TRUE(again.events[i] == original.events[i])
            << "event " << i << " differs, layout " << static_cast<int>(layout);
      }
      ASSERT_TRUE(again.trailer.has_value());
      EXPECT_EQ(again.trailer->value, original.trailer->value);
    }
  }
}

// Read with prefetch workers that decode column chunks ahead (whole batches taken, the rest by
// Read()): the same events, bit for bit, the same trailer and the same stop, also for the
// re-encodings in every layout. Takes any trace, damaged ones too.
struct Raw {
  std::vector<Event> events;
  std::optional<Event> trailer;
  ReadStatus status;
  size_t batches = 0;
};

Raw ReadRaw(std::string_view bytes, int workers) {
  Raw out;
  auto reader = TraceReader::FromBuffer(bytes);
  EXPECT_TRUE(reader.ok()) << reader.status();
  if (!reader.ok())
    return out;
  (*reader)->Prefetch(workers);
  Event buffer[300];
  for (;;) {
    if (EventBatch* batch = (*reader)->TakeBatch()) {
      out.events.insert(out.events.end(), batch->events, batch->events + batch->size);
      (*reader)->batches().GiveBack(batch);
      ++out.batches;
      continue;
    }
    const size_t n = (*reader)->Read(buffer, std::size(buffer));
    if (n == 0)
      break;
    out.events.insert(out.events.end(), buffer, buffer + n);
  }
  out.trailer = (*reader)->trailer();
  out.status = (*reader)->status();
  return out;
}

// Returns the batches taken whole.
size_t ExpectAheadReadsAlike(const std::string& bytes, const std::string& what) {
  const Raw inline_read = ReadRaw(bytes, 0);
  size_t batches = 0;
  for (int workers : {1, 3}) {
    const Raw ahead = ReadRaw(bytes, workers);
    batches += ahead.batches;
    EXPECT_EQ(ahead.events.size(), inline_read.events.size()) << what << ", " << workers;
    if (ahead.events.size() != inline_read.events.size())
      continue;
    for (size_t i = 0; i < ahead.events.size(); ++i) {
      EXPECT_EQ(std::memcmp(&ahead.events[i], &inline_read.events[i], sizeof(Event)), 0)
          << what << ", " << workers << " workers: event " << i << " differs";
      if (std::memcmp(&ahead.events[i], &inline_read.events[i], sizeof(Event)) != 0)
        break;
    }
    EXPECT_EQ(ahead.trailer.has_value(), inline_read.trailer.has_value()) << what;
    EXPECT_EQ(ahead.status.reason, inline_read.status.reason) << what;
    EXPECT_EQ(ahead.status.message, inline_read.status.message) << what;
    EXPECT_EQ(ahead.status.events, inline_read.status.events) << what;
    EXPECT_EQ(ahead.status.chunks, inline_read.status.chunks) << what;
    EXPECT_EQ(ahead.status.skipped_records, inline_read.status.skipped_records) << what;
  }
  return batches;
}

std::string FileBytes(const std::string& path) {
  std::string bytes;
  if (FILE* f = std::fopen(path.c_str(), "rb")) {
    char buf[1 << 16];
    while (size_t n = std::fread(buf, 1, sizeof(buf), f)) bytes.append(buf, n);
    std::fclose(f);
  }
  return bytes;
}

TEST(RecordingRoundTripTest, DecodingAheadReadsEveryTraceAlike) {
  ASSERT_FALSE(g_paths.empty()) << "usage: recording_roundtrip_test TRACE...";
  size_t batches = 0;
  for (const std::string& path : g_paths) {
    SCOPED_TRACE(path);
    const std::string bytes = FileBytes(path);
    ASSERT_FALSE(bytes.empty());
    batches += ExpectAheadReadsAlike(bytes, path);
    if (ReadRaw(bytes, 0).status.reason != StopReason::kComplete)
      continue;  // Reencode() needs the trailer
    for (auto layout : {format::ChunkLayout::kColumnsV2, format::ChunkLayout::kColumns,
                        format::ChunkLayout::kRows}) {
      batches += ExpectAheadReadsAlike(
          Reencode(path, layout), path + " in layout " + std::to_string(static_cast<int>(layout)));
    }
  }
  EXPECT_GT(batches, 0u);  // the workers did decode ahead
}

}  // namespace
}  // namespace cuclimb::trace

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  for (int i = 1; i < argc; ++i) cuclimb::trace::g_paths.emplace_back(argv[i]);
  return RUN_ALL_TESTS();
}
