// SPDX-License-Identifier: Apache-2.0
// Id renumbering, chunk sealing and the trailer.
#include "trace_encoder.h"

#include <new>

#include "event_accessors.h"
#include "event_fields.h"

namespace cuclimb::format {
namespace {

// Grows a producer-id map to cover id; false when memory ran out.
bool Cover(std::vector<uint32_t>* map, uint32_t id) {
  if (id < map->size())
    return true;
  try {
    map->resize(static_cast<size_t>(id) + 1024, 0);
  } catch (const std::bad_alloc&) {
    return false;
  }
  return true;
}

}  // namespace

uint32_t TraceEncoder::FileString(uint32_t id, const SourceTables& tables) {
  if (id == 0)
    return 0;
  if (!Cover(&string_ids_, id)) {
    ++definition_failures_;
    return 0;
  }
  uint32_t& mapped = string_ids_[id];
  if (mapped == 0) {
    if (next_string_ >= kMaxStrings || !encoder_.DefineString(next_string_, tables.String(id))) {
      ++definition_failures_;
      return 0;
    }
    mapped = next_string_++;
  }
  return mapped;
}

uint32_t TraceEncoder::FileStack(uint32_t id, const SourceTables& tables) {
  if (id == 0)
    return 0;
  if (!Cover(&stack_ids_, id)) {
    ++definition_failures_;
    return 0;
  }
  if (stack_ids_[id] == 0) {
    try {
      tables.Stack(id, &frames_);
    } catch (const std::bad_alloc&) {
      ++definition_failures_;
      return 0;
    }
    for (uint64_t& f : frames_) {
      if (IsStringFrame(f))
        f = StringFrame(FileString(static_cast<uint32_t>(FrameValue(f)), tables));
    }
    if (next_stack_ >= kMaxStacks ||
        !encoder_.DefineStack(next_stack_, frames_.data(), frames_.size())) {
      ++definition_failures_;
      return 0;
    }
    stack_ids_[id] = next_stack_++;
  }
  return stack_ids_[id];
}

bool TraceEncoder::Add(const Event& ev, const SourceTables& tables, std::string* out) {
  if (!IsEventType(static_cast<uint8_t>(ev.type)))
    return false;
  Event mapped = ev;
  const EventSpec& spec = SpecOf(ev.type);
  for (uint8_t i = 0; i < spec.field_count; ++i) {
    const FieldSpec& f = spec.fields[i];
    if (f.coding == Coding::kString) {
      SetSlot(&mapped, f.slot, FileString(static_cast<uint32_t>(GetSlot(ev, f.slot)), tables));
    } else if (f.coding == Coding::kStack) {
      SetSlot(&mapped, f.slot, FileStack(static_cast<uint32_t>(GetSlot(ev, f.slot)), tables));
    }
  }
  if (!encoder_.Add(mapped))
    return false;
  ++events_;
  // A failed seal keeps the records pending: the next event tries again.
  if (encoder_.pending_bytes() >= chunk_bytes_ && !SealEvents(out, SealPace::kEarly))
    ++seal_failures_;
  return true;
}

bool TraceEncoder::SealEvents(std::string* out, SealPace pace) {
  if (encoder_.pending_records() == 0)
    return true;
  if (!encoder_.Seal(ChunkType::kEvents, out, pace))
    return false;
  ++chunks_;
  return true;
}

bool TraceEncoder::Finish(int64_t ts, int64_t dropped, std::string_view status, std::string* out) {
  if (!SealEvents(out))
    return false;
  Event trailer = MakeEvent(EventType::kTrailer);
  trailer.ts = ts;
  SetTrailerEvents(&trailer, events_);
  SetTrailerDropped(&trailer, dropped);
  if (!status.empty()) {
    if (next_string_ < kMaxStrings && encoder_.DefineString(next_string_, status)) {
      SetTrailerStatus(&trailer, next_string_++);
    } else {
      ++definition_failures_;
    }
  }
  if (!encoder_.Add(trailer) || !encoder_.Seal(ChunkType::kTrailer, out))
    return false;
  ++chunks_;
  return true;
}

}  // namespace cuclimb::format
