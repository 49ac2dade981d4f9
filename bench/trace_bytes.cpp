// SPDX-License-Identifier: Apache-2.0
// Where the bytes of a binary trace go: prints, per column (event type and field), per table
// (strings, stacks) and per piece of framing, the bytes it takes in the file.
//
//   trace_bytes TRACE...
//
// A block that several streams share is split among them in proportion to what each stream
// takes when compressed alone (zstd level 3); a stream with a block of its own is charged that
// block exactly. Row chunks (format 1.0) are split the same way among their record types. The
// tool expects an intact trace (run `cuclimb info` first); it stops at the first chunk it cannot
// read and says so.
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <map>
#include <string>
#include <vector>

#include <zstd.h>

#include "interposer/format/column_layout.h"
#include "interposer/format/trace_format.h"
#include "interposer/format/varint.h"

namespace cuclimb::format {
namespace {

// Bytes charged to one name ("launch.dur", "strings", ...), and the events of a type.
struct Tally {
  std::map<std::string, double> bytes;
  std::map<std::string, double> raw;  // before compression
  uint64_t events_by_type[static_cast<size_t>(EventType::kCount)] = {};
  uint64_t events = 0;
  uint64_t strings = 0, string_bytes = 0, stacks = 0, stack_frames = 0, string_frames = 0;
  uint64_t file_bytes = 0;
  uint64_t chunks = 0, streams = 0, blocks = 0, zstd_blocks = 0;
};

size_t CompressedSize(const char* data, size_t size) {
  if (size == 0)
    return 0;
  std::string out(ZSTD_compressBound(size), '\0');
  const size_t n = ZSTD_compress(out.data(), out.size(), data, size, 3);
  return ZSTD_isError(n) ? size : std::min(n, size);
}

std::string TypeName(uint32_t type) {
  return IsEventType(static_cast<uint8_t>(type)) ? kEventSchema[type].json
                                                 : "type" + std::to_string(type);
}

// Splits definition records into their string and stack parts; counts what they define.
void SplitDefinitions(const std::string& records, std::string* strings, std::string* stacks,
                      Tally* tally) {
  const auto* p = reinterpret_cast<const uint8_t*>(records.data());
  const uint8_t* end = p + records.size();
  while (p < end) {
    const uint8_t* start = p;
    uint64_t len = 0;
    const uint8_t* body = GetVarint(p + 1, end, &len);
    if (body == nullptr || len > static_cast<uint64_t>(end - body))
      break;
    p = body + len;
    const std::string_view record(reinterpret_cast<const char*>(start),
                                  static_cast<size_t>(p - start));
    if (*start == kDefString) {
      strings->append(record);
      ++tally->strings;
      uint64_t id = 0;
      const uint8_t* text = GetVarint(body, p, &id);
      tally->string_bytes += text != nullptr ? static_cast<uint64_t>(p - text) : 0;
    } else {
      stacks->append(record);
      ++tally->stacks;
      uint64_t id = 0, count = 0;
      const uint8_t* q = GetVarint(body, p, &id);
      q = q != nullptr ? GetVarint(q, p, &count) : nullptr;
      for (uint64_t i = 0; q != nullptr && i < count; ++i) {
        uint64_t frame = 0;
        q = GetVarint(q, p, &frame);
        ++tally->stack_frames;
        tally->string_frames += IsStringFrame(frame) ? 1 : 0;
      }
    }
  }
}

// Charges `stored` bytes to the named parts in proportion to their compressed sizes alone.
void Charge(double stored, const std::vector<std::pair<std::string, std::string_view>>& parts,
            Tally* tally) {
  std::vector<double> alone;
  double total = 0;
  for (const auto& [name, bytes] : parts) {
    alone.push_back(static_cast<double>(CompressedSize(bytes.data(), bytes.size())));
    total += alone.back();
    tally->raw[name] += static_cast<double>(bytes.size());
  }
  for (size_t i = 0; i < parts.size(); ++i) {
    tally->bytes[parts[i].first] += total > 0 ? stored * alone[i] / total : 0;
  }
}

std::string StreamName(uint32_t key) {
  if (key == kDefinitionsKey)
    return "definitions";
  if (key == kTypesKey)
    return "event types";
  const ColumnId id = ParseColumnKey(key);
  if (IsEventType(static_cast<uint8_t>(id.type)) && id.field < kEventSchema[id.type].field_count) {
    return TypeName(id.type) + "." + kEventSchema[id.type].fields[id.field].json +
           (id.escape ? " escapes" : "");
  }
  return "key" + std::to_string(key);
}

bool Decompress(const char* src, size_t size, std::string* out) {
  const size_t n = ZSTD_decompress(out->data(), out->size(), src, size);
  return !ZSTD_isError(n) && n == out->size();
}

bool ColumnChunk(const ChunkHeader& h, const std::string& payload, Tally* tally) {
  const auto* p = reinterpret_cast<const uint8_t*>(payload.data());
  const uint8_t* end = p + payload.size();
  uint64_t events = 0, definitions = 0, stream_count = 0;
  p = GetVarint(p, end, &events);
  p = p ? GetVarint(p, end, &definitions) : nullptr;
  p = p ? GetVarint(p, end, &stream_count) : nullptr;
  struct Stream {
    uint64_t key, offset, size;
  };
  std::vector<Stream> streams;
  uint64_t offset = 0;
  for (uint64_t i = 0; p != nullptr && i < stream_count; ++i) {
    uint64_t key = 0, size = 0;
    p = GetVarint(p, end, &key);
    p = p ? GetVarint(p, end, &size) : nullptr;
    streams.push_back({key, offset, size});
    offset += size;
  }
  uint64_t block_count = 0;
  p = p ? GetVarint(p, end, &block_count) : nullptr;
  struct Block {
    uint8_t codec;
    uint64_t stored, raw;
  };
  std::vector<Block> blocks;
  for (uint64_t i = 0; p != nullptr && p < end && i < block_count; ++i) {
    Block b{*p++, 0, 0};
    p = GetVarint(p, end, &b.stored);
    p = p ? GetVarint(p, end, &b.raw) : nullptr;
    blocks.push_back(b);
  }
  if (p == nullptr || offset != h.raw_bytes)
    return false;
  tally->streams += streams.size();
  tally->blocks += blocks.size();
  for (const Block& b : blocks) tally->zstd_blocks += b.codec == static_cast<uint8_t>(Codec::kZstd);
  tally->bytes["column directory"] +=
      static_cast<double>(p - reinterpret_cast<const uint8_t*>(payload.data()));
  std::string unpacked(h.raw_bytes, '\0');
  uint64_t out = 0;
  for (const Block& b : blocks) {
    if (static_cast<uint64_t>(end - p) < b.stored || out + b.raw > unpacked.size())
      return false;
    if (b.codec == static_cast<uint8_t>(Codec::kZstd)) {
      std::string block(b.raw, '\0');
      if (!Decompress(reinterpret_cast<const char*>(p), b.stored, &block))
        return false;
      std::memcpy(unpacked.data() + out, block.data(), b.raw);
    } else {
      std::memcpy(unpacked.data() + out, p, b.raw);
    }
    p += b.stored;
    // The streams inside this block share its stored bytes.
    std::vector<std::pair<std::string, std::string_view>> parts;
    std::string strings, stacks;
    for (const Stream& s : streams) {
      if (s.offset < out || s.offset + s.size > out + b.raw || s.size == 0)
        continue;
      const std::string_view bytes(unpacked.data() + s.offset, s.size);
      if (s.key == kDefinitionsKey) {
        SplitDefinitions(std::string(bytes), &strings, &stacks, tally);
        if (!strings.empty())
          parts.emplace_back("strings", strings);
        if (!stacks.empty())
          parts.emplace_back("stacks", stacks);
      } else {
        parts.emplace_back(StreamName(static_cast<uint32_t>(s.key)), bytes);
      }
    }
    Charge(static_cast<double>(b.stored), parts, tally);
    out += b.raw;
  }
  const std::string_view types = [&]() -> std::string_view {
    for (const Stream& s : streams) {
      if (s.key == kTypesKey)
        return {unpacked.data() + s.offset, s.size};
    }
    return {};
  }();
  for (char t : types) {
    const auto type = static_cast<uint8_t>(t);
    if (IsEventType(type))
      ++tally->events_by_type[type];
  }
  tally->events += events;
  return true;
}

bool RowChunk(const ChunkHeader& h, const std::string& payload, Tally* tally) {
  std::string records(h.raw_bytes, '\0');
  if (h.codec == static_cast<uint8_t>(Codec::kZstd)) {
    if (!Decompress(payload.data(), payload.size(), &records))
      return false;
  } else {
    records = payload;
  }
  std::map<std::string, std::string> by_name;
  std::string definitions;
  const auto* p = reinterpret_cast<const uint8_t*>(records.data());
  const uint8_t* end = p + records.size();
  while (p < end) {
    const uint8_t* start = p;
    uint64_t len = 0;
    const uint8_t* body = GetVarint(p + 1, end, &len);
    if (body == nullptr || len > static_cast<uint64_t>(end - body))
      return false;
    p = body + len;
    const std::string_view record(reinterpret_cast<const char*>(start),
                                  static_cast<size_t>(p - start));
    if (*start == kDefString || *start == kDefStack) {
      definitions.append(record);
      continue;
    }
    by_name[TypeName(*start)].append(record);
    if (IsEventType(*start)) {
      ++tally->events_by_type[*start];
      ++tally->events;
    }
  }
  std::string strings, stacks;
  SplitDefinitions(definitions, &strings, &stacks, tally);
  if (!strings.empty())
    by_name["strings"] = strings;
  if (!stacks.empty())
    by_name["stacks"] = stacks;
  std::vector<std::pair<std::string, std::string_view>> parts(by_name.begin(), by_name.end());
  Charge(static_cast<double>(payload.size()), parts, tally);
  return true;
}

bool Measure(const char* path, Tally* tally) {
  std::ifstream in(path, std::ios::binary);
  const std::string file((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  FileHeader fh{};
  if (file.size() < sizeof(fh)) {
    std::fprintf(stderr, "trace_bytes: %s: not a binary trace\n", path);
    return false;
  }
  std::memcpy(&fh, file.data(), sizeof(fh));
  if (std::memcmp(fh.magic, kMagic, sizeof(kMagic)) != 0 || fh.header_bytes > file.size()) {
    std::fprintf(stderr, "trace_bytes: %s: not a binary trace\n", path);
    return false;
  }
  tally->file_bytes += file.size();
  tally->bytes["file header"] += fh.header_bytes;
  size_t at = fh.header_bytes;
  while (at + sizeof(ChunkHeader) <= file.size()) {
    ChunkHeader h{};
    std::memcpy(&h, file.data() + at, sizeof(h));
    if (h.magic != kChunkMagic || h.stored_bytes > file.size() - at - sizeof(h)) {
      std::fprintf(stderr, "trace_bytes: %s: damaged chunk at byte offset 0x%zx\n", path, at);
      return false;
    }
    const std::string payload = file.substr(at + sizeof(h), h.stored_bytes);
    tally->bytes["chunk headers"] += sizeof(h);
    ++tally->chunks;
    const bool ok = h.type == static_cast<uint8_t>(ChunkType::kColumns) ||
                            h.type == static_cast<uint8_t>(ChunkType::kColumnsV2)
                        ? ColumnChunk(h, payload, tally)
                        : RowChunk(h, payload, tally);
    if (!ok) {
      std::fprintf(stderr, "trace_bytes: %s: cannot read the chunk at byte offset 0x%zx\n", path,
                   at);
      return false;
    }
    at += sizeof(h) + h.stored_bytes;
  }
  return true;
}

void Print(const char* path, const Tally& t) {
  const double events = static_cast<double>(std::max<uint64_t>(t.events, 1));
  std::printf("%s: %llu bytes, %llu events, %.3f B/event\n", path,
              static_cast<unsigned long long>(t.file_bytes),
              static_cast<unsigned long long>(t.events),
              static_cast<double>(t.file_bytes) / events);
  std::printf(
      "  tables: %llu strings (%llu bytes), %llu stacks (%llu frames, %llu of them strings)\n",
      static_cast<unsigned long long>(t.strings), static_cast<unsigned long long>(t.string_bytes),
      static_cast<unsigned long long>(t.stacks), static_cast<unsigned long long>(t.stack_frames),
      static_cast<unsigned long long>(t.string_frames));
  std::printf("  chunks: %llu, with %llu streams in %llu blocks (%llu compressed)\n",
              static_cast<unsigned long long>(t.chunks), static_cast<unsigned long long>(t.streams),
              static_cast<unsigned long long>(t.blocks),
              static_cast<unsigned long long>(t.zstd_blocks));
  // Per event type: the sum of its columns (1.1) or its records (1.0).
  std::map<std::string, double> by_type;
  for (const auto& [name, bytes] : t.bytes) {
    by_type[name.substr(0, name.find('.'))] += bytes;
  }
  std::vector<std::pair<double, std::string>> types;
  for (const auto& [name, bytes] : by_type) types.emplace_back(bytes, name);
  std::sort(types.rbegin(), types.rend());
  std::printf("  %-22s %10s %6s %8s %10s %9s\n", "part", "bytes", "share", "B/event", "events",
              "B/own ev");
  for (const auto& [bytes, name] : types) {
    uint64_t own = 0;
    for (uint32_t type = 1; type < static_cast<uint32_t>(EventType::kCount); ++type) {
      if (name == kEventSchema[type].json)
        own = t.events_by_type[type];
    }
    std::printf("  %-22s %10.0f %5.1f%% %8.3f", name.c_str(), bytes,
                100 * bytes / static_cast<double>(t.file_bytes), bytes / events);
    if (own > 0) {
      std::printf(" %10llu %9.2f", static_cast<unsigned long long>(own),
                  bytes / static_cast<double>(own));
    }
    std::printf("\n");
  }
  std::vector<std::pair<double, std::string>> columns;
  for (const auto& [name, bytes] : t.bytes) columns.emplace_back(bytes, name);
  std::sort(columns.rbegin(), columns.rend());
  std::printf("  %-22s %10s %6s %8s %10s\n", "column", "bytes", "share", "B/event", "raw bytes");
  for (const auto& [bytes, name] : columns) {
    if (bytes < 0.002 * static_cast<double>(t.file_bytes))
      break;
    const auto raw = t.raw.find(name);
    std::printf("  %-22s %10.0f %5.1f%% %8.3f %10.0f\n", name.c_str(), bytes,
                100 * bytes / static_cast<double>(t.file_bytes), bytes / events,
                raw == t.raw.end() ? 0.0 : raw->second);
  }
}

}  // namespace
}  // namespace cuclimb::format

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: trace_bytes TRACE...\n");
    return 2;
  }
  int rc = 0;
  for (int i = 1; i < argc; ++i) {
    cuclimb::format::Tally tally;
    if (!cuclimb::format::Measure(argv[i], &tally))
      rc = 3;
    cuclimb::format::Print(argv[i], tally);
  }
  return rc;
}
