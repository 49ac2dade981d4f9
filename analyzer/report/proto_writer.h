// SPDX-License-Identifier: Apache-2.0
// A protocol-buffers wire-format encoder, just enough for Perfetto's trace format
// (report/perfetto_proto_export.h): varints, zigzag, fixed64, doubles, length-delimited strings
// and nested messages, appended to one growing byte string. No schema and no reflection: the
// caller names the field numbers (https://protobuf.dev/programming-guides/encoding/).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace cuclimb::analysis {

class ProtoWriter {
 public:
  // Wire types of the encoding; a field's tag is (number << 3) | wire type.
  enum WireType : uint32_t { kVarint = 0, kFixed64 = 1, kLengthDelimited = 2, kFixed32 = 5 };

  // int32/int64/uint32/uint64/bool/enum fields: the value as a varint. A negative int64 is its
  // two's complement, 10 bytes, as protobuf encodes int64 (use SInt64 for sint64 fields).
  void UInt64(uint32_t field, uint64_t v) {
    Tag(field, kVarint);
    Varint(v);
  }
  void Int64(uint32_t field, int64_t v) { UInt64(field, static_cast<uint64_t>(v)); }
  void Bool(uint32_t field, bool v) { UInt64(field, v ? 1 : 0); }
  // sint32/sint64 fields: zigzag, so small negative numbers stay short.
  void SInt64(uint32_t field, int64_t v) { UInt64(field, ZigZag(v)); }
  // fixed64 fields: 8 bytes, little-endian.
  void Fixed64(uint32_t field, uint64_t v);
  void Double(uint32_t field, double v);
  // string and bytes fields.
  void Bytes(uint32_t field, std::string_view bytes);
  // Nested messages: BeginMessage returns a mark for EndMessage, which writes the length in front
  // of what was appended in between (moving it by the length's 1-5 bytes). Marks nest.
  size_t BeginMessage(uint32_t field);
  void EndMessage(size_t mark);

  void Tag(uint32_t field, WireType type) { Varint((uint64_t{field} << 3) | type); }
  void Varint(uint64_t v) {
    while (v >= 0x80) {
      bytes_.push_back(static_cast<char>((v & 0x7f) | 0x80));
      v >>= 7;
    }
    bytes_.push_back(static_cast<char>(v));
  }
  // Appends bytes that are already encoded (a message built in another writer).
  void Raw(std::string_view bytes) { bytes_.append(bytes); }

  static uint64_t ZigZag(int64_t v) {
    return (static_cast<uint64_t>(v) << 1) ^ static_cast<uint64_t>(v >> 63);
  }
  static size_t VarintSize(uint64_t v) {
    size_t n = 1;
    for (; v >= 0x80; v >>= 7) ++n;
    return n;
  }

  const std::string& bytes() const { return bytes_; }
  size_t size() const { return bytes_.size(); }
  bool empty() const { return bytes_.empty(); }
  void clear() { bytes_.clear(); }

 private:
  std::string bytes_;
};

}  // namespace cuclimb::analysis
