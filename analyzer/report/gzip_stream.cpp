// SPDX-License-Identifier: Apache-2.0
// GzipStream over zlib's deflate (gzip framing: windowBits 15 + 16).
#include "report/gzip_stream.h"

#include <algorithm>

#include <zlib.h>

#include "absl/strings/str_cat.h"

namespace cuclimb::analysis {

struct GzipStream::State {
  z_stream z{};
  bool open = false;
  std::string out = std::string(256u << 10, '\0');
};

GzipStream::GzipStream(Sink sink, int level)
    : state_(std::make_unique<State>()), sink_(std::move(sink)) {
  if (deflateInit2(&state_->z, level, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
    status_ = absl::ResourceExhaustedError("gzip: cannot start the compressor");
    return;
  }
  state_->open = true;
}

GzipStream::~GzipStream() {
  if (state_->open)
    deflateEnd(&state_->z);
}

absl::Status GzipStream::Pump(int flush) {
  z_stream& z = state_->z;
  for (;;) {
    z.next_out = reinterpret_cast<Bytef*>(state_->out.data());
    z.avail_out = static_cast<uInt>(state_->out.size());
    const int rc = deflate(&z, flush);
    if (rc == Z_STREAM_ERROR)
      return status_ = absl::InternalError("gzip: the compressor failed");
    const size_t produced = state_->out.size() - z.avail_out;
    if (produced > 0) {
      if (absl::Status s = sink_(std::string_view(state_->out.data(), produced)); !s.ok())
        return status_ = s;
    }
    // More output is pending only when the buffer filled up.
    if (z.avail_out != 0 && (flush != Z_FINISH || rc == Z_STREAM_END))
      return absl::OkStatus();
  }
}

absl::Status GzipStream::Write(std::string_view bytes) {
  if (!status_.ok())
    return status_;
  z_stream& z = state_->z;
  while (!bytes.empty()) {
    // avail_in is 32 bits: feed at most 1 GiB at a time.
    const size_t n = std::min<size_t>(bytes.size(), 1u << 30);
    z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(bytes.data()));
    z.avail_in = static_cast<uInt>(n);
    if (absl::Status s = Pump(Z_NO_FLUSH); !s.ok())
      return s;
    bytes.remove_prefix(n);
  }
  return absl::OkStatus();
}

absl::Status GzipStream::Finish() {
  if (!status_.ok())
    return status_;
  state_->z.avail_in = 0;
  return Pump(Z_FINISH);
}

}  // namespace cuclimb::analysis
