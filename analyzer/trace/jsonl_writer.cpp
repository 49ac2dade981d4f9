// SPDX-License-Identifier: Apache-2.0
// Event → JSON line, hand-written for speed (convert writes millions of lines).
#include <cinttypes>
#include <cstdio>

#include "interposer/format/event_fields.h"
#include "trace/jsonl.h"
#include "trace/reader.h"

namespace cuclimb::trace {
namespace {

using format::Coding;
using format::FieldSpec;

void AppendInt(int64_t v, std::string* out) {
  char buf[24];
  const int n = std::snprintf(buf, sizeof(buf), "%" PRId64, v);
  out->append(buf, n);
}

void AppendUInt(uint64_t v, std::string* out) {
  char buf[24];
  const int n = std::snprintf(buf, sizeof(buf), "%" PRIu64, v);
  out->append(buf, n);
}

void AppendHex(uint64_t v, std::string* out) {
  char buf[24];
  const int n = std::snprintf(buf, sizeof(buf), "\"0x%" PRIx64 "\"", v);
  out->append(buf, n);
}

// Length of the valid UTF-8 sequence starting at s[i], or 0 when it is invalid.
size_t Utf8SequenceLength(std::string_view s, size_t i) {
  const auto b0 = static_cast<unsigned char>(s[i]);
  size_t len;
  uint32_t cp;
  if (b0 < 0x80)
    return 1;
  if ((b0 & 0xe0) == 0xc0) {
    len = 2;
    cp = b0 & 0x1f;
  } else if ((b0 & 0xf0) == 0xe0) {
    len = 3;
    cp = b0 & 0x0f;
  } else if ((b0 & 0xf8) == 0xf0) {
    len = 4;
    cp = b0 & 0x07;
  } else {
    return 0;
  }
  if (i + len > s.size())
    return 0;
  for (size_t k = 1; k < len; ++k) {
    const auto b = static_cast<unsigned char>(s[i + k]);
    if ((b & 0xc0) != 0x80)
      return 0;
    cp = (cp << 6) | (b & 0x3f);
  }
  static constexpr uint32_t kMin[] = {0, 0, 0x80, 0x800, 0x10000};
  if (cp < kMin[len] || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
    return 0;
  return len;
}

void AppendFrame(uint64_t frame, const StringTable& strings, std::string* out) {
  if (format::IsStringFrame(frame)) {
    AppendJsonString(strings.Get(static_cast<uint32_t>(format::FrameValue(frame))), out);
  } else {
    AppendHex(format::FrameValue(frame), out);
  }
}

}  // namespace

void AppendJsonString(std::string_view s, std::string* out) {
  out->push_back('"');
  for (size_t i = 0; i < s.size();) {
    const char c = s[i];
    const auto u = static_cast<unsigned char>(c);
    if (u >= 0x20 && u < 0x80 && c != '"' && c != '\\') {
      out->push_back(c);
      ++i;
      continue;
    }
    switch (c) {
      case '"':
        out->append("\\\"");
        ++i;
        continue;
      case '\\':
        out->append("\\\\");
        ++i;
        continue;
      case '\n':
        out->append("\\n");
        ++i;
        continue;
      case '\t':
        out->append("\\t");
        ++i;
        continue;
      case '\r':
        out->append("\\r");
        ++i;
        continue;
      default:
        break;
    }
    if (u < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof(buf), "\\u%04x", u);
      out->append(buf);
      ++i;
      continue;
    }
    const size_t len = Utf8SequenceLength(s, i);
    if (len == 0) {
      out->append("\xef\xbf\xbd");  // U+FFFD
      ++i;
    } else {
      out->append(s.substr(i, len));
      i += len;
    }
  }
  out->push_back('"');
}

void AppendHeaderLine(const TraceHeader& header, std::string* out) {
  out->append("{\"ev\":\"header\",\"ts\":0,\"format\":\"");
  AppendUInt(header.format_major, out);
  out->push_back('.');
  AppendUInt(header.format_minor, out);
  out->append("\",\"producer\":");
  AppendJsonString(header.producer, out);
  out->append(",\"clock\":\"");
  out->append(ClockName(header.clock));
  out->append("\",\"base_clock_ns\":");
  AppendInt(header.base_clock_ns, out);
  out->append(",\"base_realtime_ns\":");
  AppendInt(header.base_realtime_ns, out);
  out->append("}\n");
}

void AppendEventLine(const Event& ev, const StringTable& strings, const StackTable& stacks,
                     std::string* out) {
  const format::EventSpec& spec = format::SpecOf(ev.type);
  out->append("{\"ev\":\"");
  out->append(spec.json);
  out->push_back('"');
  for (uint8_t i = 0; i < spec.field_count; ++i) {
    const FieldSpec& f = spec.fields[i];
    if (!f.always && format::IsAbsent(ev, f))
      continue;
    out->append(",\"");
    out->append(f.json);
    out->append("\":");
    const uint64_t v = format::GetSlot(ev, f.slot);
    switch (f.coding) {
      case Coding::kTime:
      case Coding::kSInt:
      case Coding::kDevice:
        AppendInt(static_cast<int64_t>(v), out);
        break;
      case Coding::kUInt:
      case Coding::kDelta:
        AppendUInt(v, out);
        break;
      case Coding::kHex:
        AppendHex(v, out);
        break;
      case Coding::kString:
        AppendJsonString(strings.Get(static_cast<uint32_t>(v)), out);
        break;
      case Coding::kStack: {
        out->push_back('[');
        bool first = true;
        for (uint64_t frame : stacks.Get(static_cast<uint32_t>(v))) {
          if (!first)
            out->push_back(',');
          first = false;
          AppendFrame(frame, strings, out);
        }
        out->push_back(']');
        break;
      }
      case Coding::kEnum: {
        const auto names = format::NamesOf(static_cast<format::EnumKind>(spec.enum_kind));
        out->push_back('"');
        out->append(v < names.count ? names.names[v] : "unknown");
        out->push_back('"');
        break;
      }
      case Coding::kDims: {
        const uint32_t* d = format::DimsOf(ev, f.slot);
        out->push_back('[');
        AppendUInt(d[0], out);
        out->push_back(',');
        AppendUInt(d[1], out);
        out->push_back(',');
        AppendUInt(d[2], out);
        out->push_back(']');
        break;
      }
    }
  }
  out->append("}\n");
}

}  // namespace cuclimb::trace
