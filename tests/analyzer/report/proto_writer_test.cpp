// SPDX-License-Identifier: Apache-2.0
// The protobuf wire encoder against bytes worked out by hand from the encoding spec
// (https://protobuf.dev/programming-guides/encoding/): varints at their length boundaries,
// two's-complement and zigzag negatives, fixed64 and double byte order, field numbers past the
// one-byte tag, and nested message lengths of one and two bytes.
#include "report/proto_writer.h"

#include <cstdint>
#include <limits>
#include <string>

#include <gtest/gtest.h>

namespace cuclimb::analysis {
namespace {

std::string Hex(const std::string& bytes) {
  static const char* digits = "0123456789abcdef";
  std::string out;
  for (unsigned char c : bytes) {
    out.push_back(digits[c >> 4]);
    out.push_back(digits[c & 15]);
  }
  return out;
}

std::string Varint(uint64_t v) {
  ProtoWriter w;
  w.Varint(v);
  return Hex(w.bytes());
}

TEST(ProtoWriter, Varints) {
  EXPECT_EQ(Varint(0), "00");
  EXPECT_EQ(Varint(1), "01");
  EXPECT_EQ(Varint(127), "7f");
  EXPECT_EQ(Varint(128), "8001");
  EXPECT_EQ(Varint(150), "9601");  // the spec's example
  EXPECT_EQ(Varint(300), "ac02");
  EXPECT_EQ(Varint(16383), "ff7f");
  EXPECT_EQ(Varint(16384), "808001");
  EXPECT_EQ(Varint(std::numeric_limits<uint64_t>::max()), "ffffffffffffffffff01");
  for (uint64_t v : {uint64_t{0}, uint64_t{127}, uint64_t{128}, uint64_t{1} << 35,
                     std::numeric_limits<uint64_t>::max()}) {
    EXPECT_EQ(ProtoWriter::VarintSize(v) * 2, Varint(v).size()) << v;
  }
}

TEST(ProtoWriter, TagsAndScalars) {
  ProtoWriter w;
  w.UInt64(1, 150);
  EXPECT_EQ(Hex(w.bytes()), "089601");
  w.clear();
  w.UInt64(16, 1);  // field 16 needs a two-byte tag: (16 << 3) | 0 = 128
  EXPECT_EQ(Hex(w.bytes()), "800101");
  w.clear();
  w.Int64(2, -1);  // int64: ten bytes of two's complement
  EXPECT_EQ(Hex(w.bytes()), "10ffffffffffffffffff01");
  w.clear();
  w.Bool(3, true);
  w.Bool(3, false);
  EXPECT_EQ(Hex(w.bytes()), "18011800");
}

TEST(ProtoWriter, ZigZag) {
  EXPECT_EQ(ProtoWriter::ZigZag(0), 0u);
  EXPECT_EQ(ProtoWriter::ZigZag(-1), 1u);
  EXPECT_EQ(ProtoWriter::ZigZag(1), 2u);
  EXPECT_EQ(ProtoWriter::ZigZag(-2), 3u);
  EXPECT_EQ(ProtoWriter::ZigZag(std::numeric_limits<int64_t>::max()), 0xfffffffffffffffeu);
  EXPECT_EQ(ProtoWriter::ZigZag(std::numeric_limits<int64_t>::min()), 0xffffffffffffffffu);
  ProtoWriter w;
  w.SInt64(1, -2);
  EXPECT_EQ(Hex(w.bytes()), "0803");
}

TEST(ProtoWriter, Fixed64AndDouble) {
  ProtoWriter w;
  w.Fixed64(47, 0x0102030405060708u);  // tag (47 << 3) | 1 = 377 = f9 02; little-endian bytes
  EXPECT_EQ(Hex(w.bytes()), "f9020807060504030201");
  w.clear();
  w.Double(5, 1.0);  // 0x3ff0000000000000
  EXPECT_EQ(Hex(w.bytes()), "29000000000000f03f");
}

TEST(ProtoWriter, StringsAndNestedLengths) {
  ProtoWriter w;
  w.Bytes(2, "testing");  // the spec's example: 12 07 74 65 73 74 69 6e 67
  EXPECT_EQ(Hex(w.bytes()), "120774657374696e67");
  w.clear();
  w.Bytes(2, "");
  EXPECT_EQ(Hex(w.bytes()), "1200");

  // A message inside a message inside a message; the outer length needs two bytes.
  w.clear();
  const size_t outer = w.BeginMessage(1);
  const size_t inner = w.BeginMessage(3);
  w.UInt64(1, 150);
  w.EndMessage(inner);
  w.Bytes(2, std::string(130, 'x'));
  w.EndMessage(outer);
  // inner: 1a 03 08 96 01 (5 bytes); string: 12 82 01 + 130 bytes (133); total 138 = 8a 01.
  const std::string expected =
      "0a8a01"
      "1a03089601"
      "128201" +
      Hex(std::string(130, 'x'));
  EXPECT_EQ(Hex(w.bytes()), expected);

  // An empty nested message is its tag and a zero length.
  w.clear();
  w.EndMessage(w.BeginMessage(60));
  EXPECT_EQ(Hex(w.bytes()), "e20300");
}

TEST(ProtoWriter, LongNestedMessage) {
  ProtoWriter w;
  const size_t m = w.BeginMessage(1);
  const std::string big(300000, 'y');
  w.Bytes(1, big);  // 0a + varint(300000) = e0 a7 12 (3 bytes) + 300000
  w.EndMessage(m);
  ASSERT_EQ(w.size(), 1 + 3 + 1 + 3 + big.size());
  EXPECT_EQ(Hex(w.bytes().substr(0, 8)), "0ae4a7120ae0a712");  // 300004 = e4 a7 12
}

}  // namespace
}  // namespace cuclimb::analysis
