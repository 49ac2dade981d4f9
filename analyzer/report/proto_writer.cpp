// SPDX-License-Identifier: Apache-2.0
// The protobuf wire encoder (proto_writer.h).
#include "report/proto_writer.h"

#include <cstring>

namespace cuclimb::analysis {

void ProtoWriter::Fixed64(uint32_t field, uint64_t v) {
  Tag(field, kFixed64);
  for (int i = 0; i < 8; ++i) bytes_.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

void ProtoWriter::Double(uint32_t field, double v) {
  uint64_t bits = 0;
  static_assert(sizeof bits == sizeof v);
  std::memcpy(&bits, &v, sizeof bits);
  Fixed64(field, bits);
}

void ProtoWriter::Bytes(uint32_t field, std::string_view bytes) {
  Tag(field, kLengthDelimited);
  Varint(bytes.size());
  bytes_.append(bytes);
}

size_t ProtoWriter::BeginMessage(uint32_t field) {
  Tag(field, kLengthDelimited);
  return bytes_.size();
}

void ProtoWriter::EndMessage(size_t mark) {
  // The length goes in front of the content: encode it, then insert it at the mark. Messages
  // here are small (a packet is tens of bytes), so the move costs less than a scratch buffer.
  const uint64_t length = bytes_.size() - mark;
  char prefix[10];
  size_t n = 0;
  for (uint64_t v = length;; v >>= 7) {
    if (v < 0x80) {
      prefix[n++] = static_cast<char>(v);
      break;
    }
    prefix[n++] = static_cast<char>((v & 0x7f) | 0x80);
  }
  bytes_.insert(mark, prefix, n);
}

}  // namespace cuclimb::analysis
