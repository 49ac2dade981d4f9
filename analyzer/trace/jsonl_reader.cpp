// SPDX-License-Identifier: Apache-2.0
// JSON line → Event, with strict validation: unknown types and fields are errors, not losses.
#include <charconv>
#include <cstring>

#include <nlohmann/json.hpp>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "interposer/format/event_fields.h"
#include "trace/jsonl.h"

namespace cuclimb::trace {
namespace {

using format::Coding;
using format::FieldSpec;
using nlohmann::json;

constexpr size_t kMaxLineBytes = 64u << 20;
constexpr size_t kReadBytes = 1u << 20;

// Looks up an event type by its "ev" name.
int TypeByName(std::string_view name) {
  for (uint8_t t = 1; t < static_cast<uint8_t>(EventType::kCount); ++t) {
    if (name == format::kEventSchema[t].json)
      return t;
  }
  return -1;
}

bool ParseHexString(const std::string& s, uint64_t* out) {
  if (s.size() < 3 || s[0] != '0' || (s[1] != 'x' && s[1] != 'X'))
    return false;
  const char* begin = s.data() + 2;
  const char* end = s.data() + s.size();
  auto [ptr, ec] = std::from_chars(begin, end, *out, 16);
  return ec == std::errc() && ptr == end;
}

// A JSON integer as 64 bits: unsigned values keep all 64 bits, negatives are two's complement.
bool GetInteger(const json& v, uint64_t* out) {
  if (v.is_number_unsigned()) {
    *out = v.get<uint64_t>();
    return true;
  }
  if (v.is_number_integer()) {
    *out = static_cast<uint64_t>(v.get<int64_t>());
    return true;
  }
  return false;
}

// A JSON integer that a field of this coding can hold without wrapping: signed codings take
// int64 (the writer prints them signed), unsigned ones take 0 … 2^64−1 (printed unsigned; dur
// is an unsigned field over a signed slot, so it round-trips as unsigned).
bool GetFieldInteger(const json& v, Coding coding, uint64_t* out) {
  const bool is_signed =
      coding == Coding::kTime || coding == Coding::kSInt || coding == Coding::kDevice;
  if (v.is_number_unsigned()) {
    *out = v.get<uint64_t>();
    return !is_signed || *out <= static_cast<uint64_t>(INT64_MAX);
  }
  if (v.is_number_integer()) {
    *out = static_cast<uint64_t>(v.get<int64_t>());
    return is_signed;
  }
  return false;
}

}  // namespace

JsonLinesReader::JsonLinesReader(std::unique_ptr<ByteSource> source) : source_(std::move(source)) {
  header_.form = TraceForm::kJsonLines;
  header_.clock = format::ClockId::kSynthetic;
  total_bytes_ = source_->size();
}

JsonLinesReader::~JsonLinesReader() = default;

bool JsonLinesReader::ReadLine() {
  line_.clear();
  line_terminated_ = false;
  line_offset_ = bytes_consumed_;
  for (;;) {
    if (buffer_pos_ == buffer_.size()) {
      if (source_done_)
        return !line_.empty();
      buffer_.resize(kReadBytes);
      const size_t n = source_->Read(buffer_.data(), buffer_.size());
      buffer_.resize(n);
      buffer_pos_ = 0;
      if (n < kReadBytes)
        source_done_ = true;
      if (n == 0)
        return !line_.empty();
    }
    const char* start = buffer_.data() + buffer_pos_;
    const size_t avail = buffer_.size() - buffer_pos_;
    const void* nl = std::memchr(start, '\n', avail);
    const size_t take = nl ? static_cast<const char*>(nl) - start : avail;
    if (line_.size() + take > kMaxLineBytes) {
      line_.clear();
      return Fail(StopReason::kCorrupt,
                  absl::StrFormat("line longer than %d bytes", kMaxLineBytes));
    }
    line_.append(start, take);
    buffer_pos_ += take + (nl ? 1 : 0);
    bytes_consumed_ += take + (nl ? 1 : 0);
    if (nl) {
      line_terminated_ = true;
      return true;
    }
  }
}

bool JsonLinesReader::Fail(StopReason reason, const std::string& what) {
  status_.reason = reason;
  status_.offset = line_offset_;
  status_.message =
      absl::StrFormat("line %d at byte offset 0x%x: %s", line_number_, line_offset_, what);
  return false;
}

absl::Status JsonLinesReader::Start() {
  // Read the header line if there is one; otherwise leave the first line for Next().
  while (ReadLine()) {
    ++line_number_;
    if (line_.find_first_not_of(" \t\r") == std::string::npos)
      continue;
    json j = json::parse(line_, nullptr, /*allow_exceptions=*/false);
    if (j.is_discarded() || !j.is_object()) {
      return absl::InvalidArgumentError("not a cuclimb trace: the first line is not a JSON object");
    }
    auto ev = j.find("ev");
    if (ev == j.end() || !ev->is_string()) {
      return absl::InvalidArgumentError("not a cuclimb trace: the first line has no \"ev\"");
    }
    if (*ev != "header") {
      pending_line_ = true;
      return absl::OkStatus();
    }
    if (auto f = j.find("format"); f != j.end() && f->is_string()) {
      const std::string v = *f;
      unsigned major = 0, minor = 0;
      if (std::sscanf(v.c_str(), "%u.%u", &major, &minor) != 2) {
        return absl::InvalidArgumentError(absl::StrCat("header: bad format version '", v, "'"));
      }
      if (major != format::kFormatMajor) {
        return absl::FailedPreconditionError(
            absl::StrFormat("trace format %d.%d is not readable by this cuclimb (reads %d.x)",
                            major, minor, format::kFormatMajor));
      }
      header_.format_major = static_cast<uint16_t>(major);
      header_.format_minor = static_cast<uint16_t>(minor);
    }
    if (auto f = j.find("producer"); f != j.end() && f->is_string())
      header_.producer = *f;
    if (auto f = j.find("clock"); f != j.end() && f->is_string()) {
      const std::string c = *f;
      header_.clock = c == "monotonic"       ? format::ClockId::kMonotonic
                      : c == "monotonic_raw" ? format::ClockId::kMonotonicRaw
                      : c == "synthetic"     ? format::ClockId::kSynthetic
                                             : format::ClockId::kUnknown;
    }
    uint64_t v = 0;
    if (auto f = j.find("base_clock_ns"); f != j.end() && GetInteger(*f, &v)) {
      header_.base_clock_ns = static_cast<int64_t>(v);
    }
    if (auto f = j.find("base_realtime_ns"); f != j.end() && GetInteger(*f, &v)) {
      header_.base_realtime_ns = static_cast<int64_t>(v);
    }
    return absl::OkStatus();
  }
  return absl::OkStatus();  // empty input: no events
}

bool JsonLinesReader::Next(Event* ev) {
  if (status_.reason != StopReason::kReading)
    return false;
  for (;;) {
    if (pending_line_) {
      pending_line_ = false;
    } else {
      if (!ReadLine()) {
        if (status_.reason != StopReason::kReading)
          return false;
        status_.reason = trailer_ ? StopReason::kComplete : StopReason::kNoTrailer;
        status_.offset = bytes_consumed_;
        status_.message = trailer_ ? "complete" : "no trailer line: the producer did not finish";
        return false;
      }
      ++line_number_;
    }
    if (line_.find_first_not_of(" \t\r") == std::string::npos)
      continue;
    if (trailer_)
      return Fail(StopReason::kCorrupt, "event after the trailer line");
    json j = json::parse(line_, nullptr, /*allow_exceptions=*/false);
    if (j.is_discarded() || !j.is_object()) {
      // An unterminated last line that does not parse is a cut file, not a corrupt one.
      return Fail(
          line_terminated_ ? StopReason::kCorrupt : StopReason::kTruncated,
          line_terminated_ ? "not a JSON object" : "truncated: the last line is incomplete");
    }
    auto ev_name = j.find("ev");
    if (ev_name == j.end() || !ev_name->is_string())
      return Fail(StopReason::kCorrupt, "no \"ev\"");
    const std::string type_name = *ev_name;
    const int type = TypeByName(type_name);
    if (type < 0) {
      return Fail(StopReason::kCorrupt, absl::StrCat("unknown event type '", type_name, "'"));
    }
    const format::EventSpec& spec = format::kEventSchema[type];
    *ev = format::MakeEvent(static_cast<EventType>(type));
    uint64_t present = 0;  // bit i: spec.fields[i] was given
    static_assert(sizeof(present) * 8 >= 32, "a schema has at most 32 fields");
    for (auto it = j.begin(); it != j.end(); ++it) {
      const std::string& key = it.key();
      if (key == "ev")
        continue;
      const FieldSpec* f = nullptr;
      for (uint8_t i = 0; i < spec.field_count; ++i) {
        if (key == spec.fields[i].json) {
          f = &spec.fields[i];
          present |= uint64_t{1} << i;
        }
      }
      if (f == nullptr) {
        return Fail(StopReason::kCorrupt,
                    absl::StrCat("unknown field '", key, "' for event '", type_name, "'"));
      }
      const json& val = it.value();
      auto bad = [&](const char* expected) {
        return Fail(StopReason::kCorrupt,
                    absl::StrCat("field '", key, "' of '", type_name, "' must be ", expected));
      };
      uint64_t v = 0;
      // The slot must hold the value as given: "tid": 4294967297 must not become thread 1.
      auto set = [&](uint64_t value) {
        format::SetSlot(ev, f->slot, value);
        return format::GetSlot(*ev, f->slot) == value;
      };
      switch (f->coding) {
        case Coding::kTime:
        case Coding::kUInt:
        case Coding::kSInt:
        case Coding::kDelta:
        case Coding::kDevice:
          if (!val.is_number_integer())
            return bad("an integer");
          if (!GetFieldInteger(val, f->coding, &v) || !set(v))
            return bad("an integer in range");
          break;
        case Coding::kHex:
          if (val.is_string()) {
            if (!ParseHexString(val.get<std::string>(), &v))
              return bad("a \"0x...\" hex string");
          } else if (!GetFieldInteger(val, f->coding, &v)) {
            return bad("a \"0x...\" hex string");
          }
          if (!set(v))
            return bad("a value in range");
          break;
        case Coding::kString:
          if (!val.is_string())
            return bad("a string");
          format::SetSlot(ev, f->slot, strings_.Intern(val.get<std::string>()));
          break;
        case Coding::kStack: {
          if (!val.is_array())
            return bad("a list of frame strings");
          if (val.size() > format::kMaxStackFrames)
            return bad("at most 256 frames");
          std::vector<uint64_t> frames;
          frames.reserve(val.size());
          for (const json& fr : val) {
            if (!fr.is_string())
              return bad("a list of frame strings");
            const std::string s = fr.get<std::string>();
            // A frame word holds a return address of 63 bits (the lowest tags string frames):
            // larger "0x..." text stays text rather than losing its top bit.
            uint64_t pc = 0;
            const bool is_pc = ParseHexString(s, &pc) && pc < (uint64_t{1} << 63);
            frames.push_back(is_pc ? format::PcFrame(pc) : format::StringFrame(strings_.Intern(s)));
          }
          format::SetSlot(ev, f->slot, stacks_.Intern(frames));
          break;
        }
        case Coding::kEnum: {
          if (!val.is_string())
            return bad("a string");
          const auto names = format::NamesOf(static_cast<format::EnumKind>(spec.enum_kind));
          const std::string s = val.get<std::string>();
          int found = -1;
          for (uint8_t k = 0; k < names.count; ++k) {
            if (s == names.names[k])
              found = k;
          }
          if (found < 0) {
            return Fail(StopReason::kCorrupt,
                        absl::StrCat("field '", key, "' has unknown value '", s, "'"));
          }
          format::SetSlot(ev, f->slot, static_cast<uint64_t>(found));
          break;
        }
        case Coding::kDims: {
          if (!val.is_array() || val.size() != 3)
            return bad("[x, y, z]");
          uint32_t* d = format::DimsOf(ev, f->slot);
          for (int k = 0; k < 3; ++k) {
            if (!val[k].is_number_unsigned() || val[k].get<uint64_t>() > UINT32_MAX)
              return bad("[x, y, z] of integers from 0 to 4294967295");
            d[k] = static_cast<uint32_t>(val[k].get<uint64_t>());
          }
          break;
        }
      }
    }
    // Required fields (FieldSpec::always; "ts" first): a push without "name" is not a range.
    for (uint8_t i = 0; i < spec.field_count; ++i) {
      if (spec.fields[i].always && (present & (uint64_t{1} << i)) == 0) {
        return Fail(StopReason::kCorrupt,
                    i == 0 ? std::string("no \"ts\"")
                           : absl::StrCat("'", type_name, "' without its required field '",
                                          spec.fields[i].json, "'"));
      }
    }
    if (ev->type == EventType::kTrailer) {
      trailer_ = *ev;
      if (ev->size != status_.events) {
        return Fail(StopReason::kCorrupt,
                    absl::StrFormat("trailer counts %d events but %d were read: data is missing",
                                    ev->size, status_.events));
      }
      continue;
    }
    ++status_.events;
    ++status_.chunks;
    return true;
  }
}

}  // namespace cuclimb::trace
