// SPDX-License-Identifier: Apache-2.0
// A gzip stream in front of a byte sink, for exports that are big as text: Chrome JSON trace
// events compress about 15× and ui.perfetto.dev opens a .json.gz as it is.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "absl/status/status.h"

namespace cuclimb::analysis {

class GzipStream {
 public:
  using Sink = std::function<absl::Status(std::string_view)>;
  // level: zlib's 1 (fast) to 9 (small); 6 is zlib's own default.
  explicit GzipStream(Sink sink, int level = 6);
  ~GzipStream();
  GzipStream(const GzipStream&) = delete;
  GzipStream& operator=(const GzipStream&) = delete;

  // Compresses bytes on to the sink; the first sink error is returned and kept.
  absl::Status Write(std::string_view bytes);
  // Ends the gzip member (trailer with CRC and size); call once, after the last Write().
  absl::Status Finish();

 private:
  absl::Status Pump(int flush);

  struct State;
  std::unique_ptr<State> state_;
  Sink sink_;
  absl::Status status_;
};

}  // namespace cuclimb::analysis
