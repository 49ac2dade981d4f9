// SPDX-License-Identifier: Apache-2.0
// Random and training-loop-shaped synthetic traces.
#include "random_trace.h"

#include <random>
#include <string>

#include "interposer/format/event_fields.h"

namespace cuclimb::testing {

using format::Coding;

TraceBuilder RandomTrace(uint64_t seed, size_t events) {
  TraceBuilder b;
  std::mt19937_64 rng(seed);
  auto pick = [&](uint64_t n) { return n == 0 ? 0 : rng() % n; };
  std::vector<uint32_t> strings;
  for (int i = 0; i < 50; ++i) strings.push_back(b.Str("name_" + std::to_string(rng() % 1000)));
  strings.push_back(b.Str("ünïcödé ✓ \"quoted\" \\ \n tab\t"));
  std::vector<uint32_t> stacks;
  for (int i = 0; i < 20; ++i) {
    stacks.push_back(b.Stack({"0x" + std::to_string(400000 + i), "frame_a", "0x7f00aa"}));
  }
  stacks.push_back(b.Stack({"main"}));
  int64_t ts = 0;
  for (size_t i = 0; i < events; ++i) {
    const auto type = static_cast<EventType>(
        1 + pick(static_cast<uint64_t>(EventType::kCount) - 2));  // never the trailer
    Event& ev = b.Add(type, ts);
    ts += static_cast<int64_t>(pick(5000));
    const format::EventSpec& spec = format::SpecOf(type);
    for (uint8_t f = 0; f < spec.field_count; ++f) {
      const format::FieldSpec& fs = spec.fields[f];
      if (fs.coding != Coding::kTime && !fs.always && pick(4) == 0)
        continue;  // leave absent
      switch (fs.coding) {
        case Coding::kTime:
          break;
        case Coding::kUInt:
        case Coding::kDelta:
          format::SetSlot(&ev, fs.slot, pick(4) == 0 ? rng() : pick(100000));
          break;
        case Coding::kSInt:
          format::SetSlot(&ev, fs.slot, static_cast<uint64_t>(static_cast<int64_t>(rng())));
          break;
        case Coding::kHex:
          format::SetSlot(&ev, fs.slot, 0x7f0000000000ull + pick(1ull << 30));
          break;
        case Coding::kString:
          format::SetSlot(&ev, fs.slot, strings[pick(strings.size())]);
          break;
        case Coding::kStack:
          format::SetSlot(&ev, fs.slot, stacks[pick(stacks.size())]);
          break;
        case Coding::kEnum:
          format::SetSlot(
              &ev, fs.slot,
              pick(format::NamesOf(static_cast<format::EnumKind>(spec.enum_kind)).count));
          break;
        case Coding::kDims: {
          uint32_t* d = format::DimsOf(&ev, fs.slot);
          for (int k = 0; k < 3; ++k) d[k] = static_cast<uint32_t>(1 + pick(1024));
          break;
        }
        case Coding::kDevice:
          ev.device = static_cast<int32_t>(pick(8));
          break;
      }
    }
    // Fields whose tid slot is not in the schema stay zero: keep the event faithful to the form.
    bool has_tid = false;
    for (uint8_t f = 0; f < spec.field_count; ++f)
      has_tid |= spec.fields[f].slot == format::Slot::kTid;
    if (!has_tid)
      ev.tid = 0;
  }
  return b;
}

TraceBuilder TrainingLoopTrace(const TrainingLoopShape& shape) {
  TraceBuilder b;
  std::mt19937_64 rng(shape.seed);
  const char* kKernels[] = {"gemm_tiled<64,64>",    "bias_add",  "relu_forward",
                            "relu_backward",        "mse_loss",  "adam_update",
                            "gemm_tiled_bt<64,64>", "reduce_sum"};
  const uint32_t site_a = b.Stack({"0x55d0a0001234", "0x55d0a0004321", "0x55d0a0000100"});
  const uint32_t site_b = b.Stack({"0x55d0a0001234", "0x55d0a0005555", "0x55d0a0000100"});
  b.Process(0, 4242, "cuclimb-adam --mode climb");
  int64_t ts = 1000;
  uint64_t corr = 1;
  uint64_t next_addr = 0x7f3a00000000ull;
  std::vector<uint64_t> live;
  for (int it = 0; it < shape.iterations; ++it) {
    b.Push(ts, "iter").value = it;
    ts += 200;
    for (int l = 0; l < shape.launches_per_iter; ++l) {
      const char* k = kKernels[l % 8];
      if (l % (shape.launches_per_iter / std::max(1, shape.allocs_per_iter) + 1) == 0) {
        const uint64_t size = 512ull << (rng() % 8);
        b.Alloc(ts, next_addr, size, format::MemoryKind::kPool, "cuMemAllocAsync",
                l % 2 ? site_a : site_b)
            .corr = corr++;
        live.push_back(next_addr);
        next_addr += size;
        ts += 900 + static_cast<int64_t>(rng() % 200);
      }
      b.Launch(ts, 2800 + static_cast<int64_t>(rng() % 400), k, corr);
      if (it % shape.kernel_every == 0)
        b.Kernel(ts + 5000, 1500 + static_cast<int64_t>(rng() % 300), k, corr);
      ++corr;
      ts += 3500 + static_cast<int64_t>(rng() % 500);
      if (live.size() > 8) {
        b.Free(ts, live.front()).corr = corr++;
        live.erase(live.begin());
        ts += 600;
      }
    }
    b.Api(ts, 40000, "cuStreamSynchronize").corr = corr++;
    ts += 40000;
    b.Pop(ts);
    ts += 300;
  }
  return b;
}

}  // namespace cuclimb::testing
