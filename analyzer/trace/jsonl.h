// SPDX-License-Identifier: Apache-2.0
// The JSON Lines form of a trace: one object per line, the same events as the binary form.
//
// Field names come from the schema in interposer/format/trace_format.h. Optional fields are
// omitted when absent; "ev" and "ts" are always present. A first line {"ev":"header",...} carries
// the file header and a last line {"ev":"trailer",...} the totals; both are optional on input.
#pragma once

#include <memory>
#include <string>

#include "absl/status/status.h"
#include "trace/reader.h"

namespace cuclimb::trace {

// Appends the header line (with '\n').
void AppendHeaderLine(const TraceHeader& header, std::string* out);
// Appends one event as a line (with '\n'). Strings that are not valid UTF-8 have the bad bytes
// replaced by U+FFFD: the only case where conversion to JSON loses information.
void AppendEventLine(const Event& ev, const StringTable& strings, const StackTable& stacks,
                     std::string* out);
// Appends s as a quoted JSON string.
void AppendJsonString(std::string_view s, std::string* out);

class JsonLinesReader : public TraceReader {
 public:
  explicit JsonLinesReader(std::unique_ptr<ByteSource> source);
  ~JsonLinesReader() override;
  absl::Status Start();
  bool Next(Event* ev) override;

 private:
  // Reads the next line into line_; false at the end of input.
  bool ReadLine();
  bool Fail(StopReason reason, const std::string& what);

  std::unique_ptr<ByteSource> source_;
  std::string buffer_;
  size_t buffer_pos_ = 0;
  bool source_done_ = false;
  std::string line_;
  bool line_terminated_ = false;
  uint64_t line_offset_ = 0;
  uint64_t line_number_ = 0;
  bool pending_line_ = false;  // line_ holds a line Start() read but did not consume
};

}  // namespace cuclimb::trace
