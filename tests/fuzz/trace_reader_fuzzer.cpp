// SPDX-License-Identifier: Apache-2.0
// Fuzz target: any bytes through the same streaming reader the CLI uses, and every event it
// delivers back out as JSON. Must never crash, hang or allocate past the format's caps.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "trace/jsonl.h"
#include "trace/reader.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto reader = cuclimb::trace::TraceReader::FromBuffer(
      std::string_view(reinterpret_cast<const char*>(data), size));
  if (!reader.ok())
    return 0;
  cuclimb::trace::Event ev{};
  std::string line;
  while ((*reader)->Next(&ev)) {
    line.clear();
    cuclimb::trace::AppendEventLine(ev, (*reader)->strings(), (*reader)->stacks(), &line);
  }
  return 0;
}
