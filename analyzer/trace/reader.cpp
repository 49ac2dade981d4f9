// SPDX-License-Identifier: Apache-2.0
// Opening a trace: the form is decided by the first bytes, never by the file name.
#include "trace/reader.h"

#include <cstring>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "trace/binary_reader.h"
#include "trace/byte_source.h"
#include "trace/jsonl.h"

namespace cuclimb::trace {

const char* ClockName(format::ClockId clock) {
  switch (clock) {
    case format::ClockId::kMonotonic:
      return "monotonic";
    case format::ClockId::kMonotonicRaw:
      return "monotonic_raw";
    case format::ClockId::kSynthetic:
      return "synthetic";
    case format::ClockId::kUnknown:
      break;
  }
  return "unknown";
}

const char* StopReasonName(StopReason reason) {
  switch (reason) {
    case StopReason::kComplete:
      return "complete";
    case StopReason::kNoTrailer:
      return "no_trailer";
    case StopReason::kTruncated:
      return "truncated";
    case StopReason::kCorrupt:
      return "corrupt";
    case StopReason::kReading:
      break;
  }
  return "reading";
}

namespace {

// Gives back a peeked prefix before the rest of the inner source.
class PrefixedSource : public ByteSource {
 public:
  PrefixedSource(std::string prefix, std::unique_ptr<ByteSource> inner)
      : prefix_(std::move(prefix)), inner_(std::move(inner)) {}
  size_t Read(void* out, size_t n) override {
    size_t k = 0;
    if (pos_ < prefix_.size()) {
      k = std::min(n, prefix_.size() - pos_);
      std::memcpy(out, prefix_.data() + pos_, k);
      pos_ += k;
    }
    if (k < n)
      k += inner_->Read(static_cast<char*>(out) + k, n - k);
    return k;
  }
  uint64_t size() const override { return inner_->size(); }

 private:
  std::string prefix_;
  size_t pos_ = 0;
  std::unique_ptr<ByteSource> inner_;
};

absl::StatusOr<std::unique_ptr<TraceReader>> OpenSource(std::unique_ptr<ByteSource> source) {
  std::string prefix(sizeof(format::kMagic), '\0');
  prefix.resize(source->Read(prefix.data(), prefix.size()));
  if (prefix.empty())
    return absl::InvalidArgumentError("not a cuclimb trace: the file is empty");
  const bool binary = prefix.size() == sizeof(format::kMagic) &&
                      std::memcmp(prefix.data(), format::kMagic, sizeof(format::kMagic)) == 0;
  const size_t first = prefix.find_first_not_of(" \t\r\n");
  const bool json = !binary && first != std::string::npos && prefix[first] == '{';
  const bool all_space = !binary && first == std::string::npos;
  auto wrapped = std::make_unique<PrefixedSource>(prefix, std::move(source));
  if (binary) {
    auto reader = std::make_unique<BinaryReader>(std::move(wrapped));
    if (absl::Status s = reader->Start(); !s.ok())
      return s;
    return std::unique_ptr<TraceReader>(std::move(reader));
  }
  if (json || all_space) {  // leading blank lines: let the JSON reader look further
    auto reader = std::make_unique<JsonLinesReader>(std::move(wrapped));
    if (absl::Status s = reader->Start(); !s.ok())
      return s;
    return std::unique_ptr<TraceReader>(std::move(reader));
  }
  std::string shown;
  for (unsigned char c : prefix) shown += absl::StrFormat("%02x", c);
  return absl::InvalidArgumentError(
      absl::StrCat("not a cuclimb trace: starts with bytes ", shown,
                   " (expected the binary magic \"CUCLIMB\\0\" or a JSON Lines object)"));
}

}  // namespace

absl::StatusOr<std::unique_ptr<TraceReader>> TraceReader::Open(const std::string& path) {
  auto source = FileSource::Open(path);
  if (!source.ok())
    return source.status();
  auto reader = OpenSource(std::move(source).value());
  if (!reader.ok()) {
    return absl::Status(reader.status().code(),
                        absl::StrCat(path, ": ", reader.status().message()));
  }
  return reader;
}

absl::StatusOr<std::unique_ptr<TraceReader>> TraceReader::FromBuffer(std::string_view bytes) {
  return OpenSource(std::make_unique<MemorySource>(bytes));
}

}  // namespace cuclimb::trace
