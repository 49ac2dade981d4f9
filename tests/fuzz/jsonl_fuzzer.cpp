// SPDX-License-Identifier: Apache-2.0
// Fuzz target: any bytes through the JSON Lines reader, with conversion as the oracle. Every
// event read is written back as a line; reading those lines again, and converting the events to
// binary and reading that, must give the same lines (conversion is lossless once strings are
// UTF-8). Must never crash, hang or disagree with itself: a mismatch aborts.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <string_view>

#include "trace/binary_writer.h"
#include "trace/byte_source.h"
#include "trace/jsonl.h"
#include "trace/reader.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

namespace {

using cuclimb::trace::Event;

// The events of a trace as JSON lines (header excluded); false when the reader did not start.
bool Lines(std::unique_ptr<cuclimb::trace::TraceReader> reader, std::string* out) {
  Event ev{};
  while (reader->Next(&ev))
    cuclimb::trace::AppendEventLine(ev, reader->strings(), reader->stacks(), out);
  return true;
}

[[noreturn]] void Mismatch(const char* what, const std::string& a, const std::string& b) {
  std::fprintf(stderr, "jsonl_fuzzer: %s differ\n--- first\n%s--- second\n%s", what, a.c_str(),
               b.c_str());
  std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto reader = std::make_unique<cuclimb::trace::JsonLinesReader>(
      std::make_unique<cuclimb::trace::MemorySource>(
          std::string_view(reinterpret_cast<const char*>(data), size)));
  if (!reader->Start().ok())
    return 0;
  std::string header;
  cuclimb::trace::AppendHeaderLine(reader->header(), &header);
  // Read once, keeping the events for the binary writer.
  std::string first;
  std::string binary;
  cuclimb::trace::BinaryTraceWriter writer(reader->header(), cuclimb::trace::StringSink(&binary));
  bool written = true;
  Event ev{};
  while (reader->Next(&ev)) {
    cuclimb::trace::AppendEventLine(ev, reader->strings(), reader->stacks(), &first);
    written = written && writer.Add(ev, reader->strings(), reader->stacks()).ok();
  }
  written = written && writer.FinishWithoutTrailer().ok();
  // JSON Lines again.
  const std::string again_input = header + first;
  auto again = cuclimb::trace::TraceReader::FromBuffer(again_input);
  if (!again.ok())
    Mismatch("re-read header", header, again.status().ToString() + "\n");
  std::string second;
  Lines(*std::move(again), &second);
  if (second != first)
    Mismatch("JSON Lines written and read back", first, second);
  // Binary. Strings over the binary cap cannot be converted: the writer says so.
  if (!written)
    return 0;
  auto from_binary = cuclimb::trace::TraceReader::FromBuffer(binary);
  if (!from_binary.ok())
    Mismatch("binary header", header, from_binary.status().ToString() + "\n");
  std::string third;
  Lines(*std::move(from_binary), &third);
  if (third != first)
    Mismatch("JSON Lines converted to binary and read back", first, third);
  return 0;
}
