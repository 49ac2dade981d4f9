// SPDX-License-Identifier: Apache-2.0
// ByteSource implementations: a sequentially read file and a memory buffer.
#pragma once

#include <cstdio>
#include <memory>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "trace/reader.h"

namespace cuclimb::trace {

class FileSource : public ByteSource {
 public:
  // NotFound / PermissionDenied / FailedPrecondition (a directory) with the path in the message.
  static absl::StatusOr<std::unique_ptr<FileSource>> Open(const std::string& path);
  ~FileSource() override;
  size_t Read(void* out, size_t n) override;
  uint64_t size() const override { return size_; }

 private:
  FileSource(std::FILE* file, uint64_t size) : file_(file), size_(size) {}
  std::FILE* file_;
  uint64_t size_;
};

class MemorySource : public ByteSource {
 public:
  explicit MemorySource(std::string_view bytes) : bytes_(bytes) {}
  size_t Read(void* out, size_t n) override;
  uint64_t size() const override { return bytes_.size(); }

 private:
  std::string_view bytes_;
  size_t pos_ = 0;
};

}  // namespace cuclimb::trace
