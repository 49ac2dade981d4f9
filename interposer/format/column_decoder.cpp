// SPDX-License-Identifier: Apache-2.0
// Column chunks decoded a batch at a time (column_decoder.h says how).
#include "column_decoder.h"

#include <algorithm>
#include <array>
#include <bit>
#include <cstddef>
#include <cstring>
#include <utility>

#include "event_fields.h"

namespace cuclimb::format {
namespace {

constexpr uint8_t kTrailerType = static_cast<uint8_t>(EventType::kTrailer);
static_assert(kTrailerType == static_cast<uint8_t>(EventType::kCount) - 1,
              "the trailer is the last type: known types other than it are [1, kTrailer)");

// What the widening does to a column's words after assembling them from their planes.
enum class WordCode : uint8_t {
  kRaw,     // kUInt, kString, kStack, kEnum, kDims, and history words
  kZigZag,  // kTime, kHex, kDelta, kSInt
  kDevice,  // kDevice: zigzag, then relative to kNoDevice
};

constexpr WordCode WordCodeOf(uint8_t type, uint8_t field, bool columns_v2) {
  if (columns_v2 && HistoryField(type) == field)
    return WordCode::kRaw;
  switch (kEventSchema[type].fields[field].coding) {
    case Coding::kTime:
    case Coding::kHex:
    case Coding::kDelta:
    case Coding::kSInt:
      return WordCode::kZigZag;
    case Coding::kDevice:
      return WordCode::kDevice;
    default:
      return WordCode::kRaw;
  }
}

// Columns whose zero words leave the blank event as it is, so that an absent column is skipped;
// the others (deltas, times, history words) must be read even when absent.
constexpr bool ZeroIsBlank(const FieldSpec& f) {
  switch (f.coding) {
    case Coding::kUInt:
    case Coding::kSInt:
    case Coding::kString:
    case Coding::kStack:
    case Coding::kEnum:
    case Coding::kDims:
    case Coding::kDevice:
      return true;
    default:
      return false;
  }
}

// An enum field's zero must be a known value, or an absent column would decode as damage.
constexpr bool EveryEnumHasValues() {
  for (uint8_t t = 1; t < static_cast<uint8_t>(EventType::kCount); ++t) {
    const EventSpec& spec = kEventSchema[t];
    for (uint8_t f = 0; f < spec.field_count; ++f) {
      if (spec.fields[f].coding == Coding::kEnum &&
          NamesOf(static_cast<EnumKind>(spec.enum_kind)).count == 0) {
        return false;
      }
    }
  }
  return true;
}
static_assert(EveryEnumHasValues());

// The hot loops (widening planes into words, assembling events) have versions chosen at load
// time: AVX-512 (x86-64-v4: 8 words per instruction; 5-10 % less CPU time decoding on a Zen 4),
// AVX2 (4) and the baseline (SSE2: 2). Valgrind runs the AVX2 ones. Not under ThreadSanitizer: the
// version is chosen by an ifunc resolver that runs while the program is relocated, before TSan's
// runtime is up, and GCC instruments it (it crashes there).
#if defined(__SANITIZE_THREAD__)
#define CUCLIMB_PLANE_VERSIONS
#else
#define CUCLIMB_PLANE_VERSIONS __attribute__((target_clones("arch=x86-64-v4", "avx2", "default")))
#endif
CUCLIMB_PLANE_VERSIONS void SetPlane(uint64_t* out, const uint8_t* p, size_t n, unsigned shift) {
  for (size_t i = 0; i < n; ++i) out[i] = static_cast<uint64_t>(p[i]) << shift;
}
CUCLIMB_PLANE_VERSIONS void OrPlane(uint64_t* out, const uint8_t* p, size_t n, unsigned shift) {
  for (size_t i = 0; i < n; ++i) out[i] |= static_cast<uint64_t>(p[i]) << shift;
}
// The last plane of a zigzag column: w = UnZigZag(w | plane << shift) + bias, in two's
// complement (one pass instead of a second one over the words).
inline uint64_t UnZigZagWord(uint64_t w, uint64_t bias) {
  return ((w >> 1) ^ (0 - (w & 1))) + bias;
}
CUCLIMB_PLANE_VERSIONS void OrPlaneZigZag(uint64_t* out, const uint8_t* p, size_t n, unsigned shift,
                                          uint64_t bias) {
  for (size_t i = 0; i < n; ++i) {
    out[i] = UnZigZagWord(out[i] | static_cast<uint64_t>(p[i]) << shift, bias);
  }
}

// Widens the n words of a column of kPlanes planes from `start` in one pass: one load per plane
// and one store per word (a pass per plane stored and reloaded every word once per plane).
template <int kPlanes>
[[gnu::always_inline]] inline void WidenPlanes(uint64_t* out, const ColumnPlanes& c, size_t start,
                                               size_t n, bool zigzag, uint64_t bias) {
  const uint8_t* p[kPlanes];
  unsigned shift[kPlanes];
  for (int k = 0; k < kPlanes; ++k) {
    p[k] = c.plane[k] + start;
    shift[k] = c.shift[k];
  }
  if (zigzag) {
    for (size_t i = 0; i < n; ++i) {
      uint64_t w = 0;
      for (int k = 0; k < kPlanes; ++k) w |= static_cast<uint64_t>(p[k][i]) << shift[k];
      out[i] = UnZigZagWord(w, bias);
    }
  } else {
    for (size_t i = 0; i < n; ++i) {
      uint64_t w = 0;
      for (int k = 0; k < kPlanes; ++k) w |= static_cast<uint64_t>(p[k][i]) << shift[k];
      out[i] = w;
    }
  }
}
CUCLIMB_PLANE_VERSIONS void WidenPlanes1(uint64_t* out, const ColumnPlanes& c, size_t start,
                                         size_t n, bool zigzag, uint64_t bias) {
  WidenPlanes<1>(out, c, start, n, zigzag, bias);
}
CUCLIMB_PLANE_VERSIONS void WidenPlanes2(uint64_t* out, const ColumnPlanes& c, size_t start,
                                         size_t n, bool zigzag, uint64_t bias) {
  WidenPlanes<2>(out, c, start, n, zigzag, bias);
}
CUCLIMB_PLANE_VERSIONS void WidenPlanes3(uint64_t* out, const ColumnPlanes& c, size_t start,
                                         size_t n, bool zigzag, uint64_t bias) {
  WidenPlanes<3>(out, c, start, n, zigzag, bias);
}
CUCLIMB_PLANE_VERSIONS void WidenPlanes4(uint64_t* out, const ColumnPlanes& c, size_t start,
                                         size_t n, bool zigzag, uint64_t bias) {
  WidenPlanes<4>(out, c, start, n, zigzag, bias);
}

// The largest of n words (a string or stack column's ids, for ColumnDecoder's track_ids).
CUCLIMB_PLANE_VERSIONS uint64_t MaxWord(const uint64_t* words, size_t n) {
  uint64_t m = 0;
  for (size_t i = 0; i < n; ++i) m = words[i] > m ? words[i] : m;
  return m;
}

// A column's n words from `start`, zigzag-decoded (plus bias) when `zigzag`.
void WidenColumn(uint64_t* out, const ColumnPlanes& c, size_t start, size_t n, bool zigzag,
                 uint64_t bias) {
  switch (c.count) {
    case 1:
      return WidenPlanes1(out, c, start, n, zigzag, bias);
    case 2:
      return WidenPlanes2(out, c, start, n, zigzag, bias);
    case 3:
      return WidenPlanes3(out, c, start, n, zigzag, bias);
    case 4:
      return WidenPlanes4(out, c, start, n, zigzag, bias);
    default:
      break;
  }
  // Five planes or more (large values: rare): a pass per plane.
  const uint8_t last = c.count - 1;
  SetPlane(out, c.plane[0] + start, n, c.shift[0]);
  for (uint8_t k = 1; k < last; ++k) OrPlane(out, c.plane[k] + start, n, c.shift[k]);
  if (zigzag) {
    OrPlaneZigZag(out, c.plane[last] + start, n, c.shift[last], bias);
  } else {
    OrPlane(out, c.plane[last] + start, n, c.shift[last]);
  }
}

}  // namespace

// Four histograms over every byte value, summed at the end: no branch per event, and
// consecutive events of one type do not wait on each other's increment.
void CountTypes(const uint8_t* types, size_t n, uint32_t* counts) {
  uint32_t histogram[4][256] = {};
  size_t i = 0;
  for (; i + 4 <= n; i += 4) {
    ++histogram[0][types[i]];
    ++histogram[1][types[i + 1]];
    ++histogram[2][types[i + 2]];
    ++histogram[3][types[i + 3]];
  }
  for (; i < n; ++i) ++histogram[0][types[i]];
  for (uint8_t t = 1; t < static_cast<uint8_t>(EventType::kCount); ++t) {
    counts[t] += histogram[0][t] + histogram[1][t] + histogram[2][t] + histogram[3][t];
  }
}

inline bool ColumnDecoder::HistoryAddress(uint8_t type, uint64_t w, Event* ev) {
  const auto event_type = static_cast<EventType>(type);
  uint64_t addr = 0;
  if (w == 0) [[unlikely]] {
    if (!EscapedAddress(type, &addr))
      return false;
  } else if (!history_.Take(FindList(event_type), w, &addr)) [[unlikely]] {
    history_error_ = Failure::Kind::kPastHistory;
    return false;
  }
  history_.Push(PushList(event_type), addr);
  ev->addr = addr;
  return true;
}

bool ColumnDecoder::EscapedAddress(uint8_t type, uint64_t* addr) {
  uint32_t& used = escapes_used_[type];
  if (used >= escape_count_[type]) {
    history_error_ = Failure::Kind::kNoEscape;
    return false;
  }
  *addr = history_.FromEscape(GatherWord(escapes_[type], used++));
  return true;
}

// MakeEvent(type) in four 32-byte stores and the type's byte (AVX2: five instructions instead of
// eleven for a copy of the constant): every slot is zero except the device, kNoDevice.
using Words4 = uint64_t __attribute__((vector_size(32)));
static_assert(offsetof(Event, device) == 100 && kNoDevice == -1 && sizeof(Event) == 128);
static_assert(offsetof(Event, type) == 0 && sizeof(EventType) == 1);
static_assert(std::endian::native == std::endian::little, "kTail's bytes");
[[gnu::always_inline]] inline void StoreBlank(Event* ev, EventType type) {
  constexpr Words4 kZero = {0, 0, 0, 0};
  constexpr Words4 kTail = {uint64_t{0xffffffff} << 32, 0, 0, 0};  // stack 0, device -1
  auto* p = reinterpret_cast<char*>(ev);
  std::memcpy(p, &kZero, sizeof(kZero));
  std::memcpy(p + 32, &kZero, sizeof(kZero));
  std::memcpy(p + 64, &kZero, sizeof(kZero));
  std::memcpy(p + 96, &kTail, sizeof(kTail));
  ev->type = type;
}

// One event type's assembler: each field from the next word of its column, in schema order.
template <uint8_t kType, bool kColumnsV2>
struct ColumnAssembler {
  static constexpr const EventSpec& kSpec = kEventSchema[kType];

  template <size_t kField>
  [[gnu::always_inline]] static bool Field(ColumnDecoder* d, Event* ev, uint32_t k,
                                           uint32_t present) {
    constexpr FieldSpec f = kSpec.fields[kField];
    if constexpr (ZeroIsBlank(f)) {
      if ((present & (1u << kField)) == 0)
        return true;  // the blank holds it
    }
    const uint64_t* words = d->words_[kType][kField];
    DecodeState& st = d->delta_;
    if constexpr (f.coding == Coding::kDims) {
      uint32_t* dims = DimsOf(ev, f.slot);
      for (uint32_t j = 0; j < 3; ++j) dims[j] = static_cast<uint32_t>(words[3 * k + j]);
      return true;
    } else {
      const uint64_t w = words[k];
      if constexpr (f.coding == Coding::kTime) {
        st.prev_ts = WrappingAdd(kColumnsV2 ? st.prev_end : st.prev_ts, static_cast<int64_t>(w));
        ev->ts = st.prev_ts;
      } else if constexpr (kColumnsV2 && HistoryField(kType) == static_cast<int>(kField)) {
        return d->HistoryAddress(kType, w, ev);
      } else if constexpr (f.coding == Coding::kHex || f.coding == Coding::kDelta) {
        uint64_t& prev = st.prev[static_cast<int>(f.slot)];
        prev += w;
        SetSlot(ev, f.slot, prev);
      } else if constexpr (f.coding == Coding::kUInt || f.coding == Coding::kSInt) {
        SetSlot(ev, f.slot, w);
      } else if constexpr (f.coding == Coding::kDevice) {
        ev->device = static_cast<int32_t>(w);
      } else if constexpr (f.coding == Coding::kString) {
        if (w >= st.strings)
          return false;
        SetSlot(ev, f.slot, w);
      } else if constexpr (f.coding == Coding::kStack) {
        if (w >= st.stacks)
          return false;
        SetSlot(ev, f.slot, w);
      } else if constexpr (f.coding == Coding::kEnum) {
        constexpr auto names = NamesOf(static_cast<EnumKind>(kSpec.enum_kind));
        if (w >= names.count)
          return false;
        SetSlot(ev, f.slot, w);
      } else {
        static_assert(f.coding == Coding::kTime, "a coding without a column assembler");
      }
      return true;
    }
  }

  template <size_t... kFields>
  [[gnu::always_inline]] static bool Fields(ColumnDecoder* d, Event* ev,
                                            std::index_sequence<kFields...>) {
    StoreBlank(ev, static_cast<EventType>(kType));
    const uint32_t k = d->index_[kType]++;
    const uint32_t present = d->present_[kType];
    const bool ok = (Field<kFields>(d, ev, k, present) && ...);
    d->delta_.prev_end = WrappingAdd(ev->ts, ev->dur);  // every type's ts is its field 0
    return ok;
  }

  [[gnu::always_inline]] static bool Assemble(ColumnDecoder* d, Event* ev) {
    return Fields(d, ev, std::make_index_sequence<kSpec.field_count>());
  }
};

// The window's events [begin, end) in order, each by its type's assembler, inlined in one switch
// (a call per event through a table cost a tenth of the decoding). Events of unknown types are
// skipped and counted. Returns the events written; *stop is end, or the index of the event that
// stopped the loop: a trailer event, or one that did not decode.
struct ColumnLoop {
  template <bool kColumnsV2>
  [[gnu::always_inline]] static uint32_t Run(ColumnDecoder* d, Event* out, uint32_t begin,
                                             uint32_t end, uint32_t* skipped, uint32_t* stop) {
    const uint8_t* types = d->types_;
    uint32_t n = 0;
    for (uint32_t i = begin; i < end; ++i) {
      Event* ev = out + n;
      bool ok = false;
      switch (types[i]) {
#define CUCLIMB_ASSEMBLE(T)                               \
  case T:                                                 \
    ok = ColumnAssembler<T, kColumnsV2>::Assemble(d, ev); \
    break;
        CUCLIMB_ASSEMBLE(1)
        CUCLIMB_ASSEMBLE(2)
        CUCLIMB_ASSEMBLE(3)
        CUCLIMB_ASSEMBLE(4)
        CUCLIMB_ASSEMBLE(5)
        CUCLIMB_ASSEMBLE(6)
        CUCLIMB_ASSEMBLE(7)
        CUCLIMB_ASSEMBLE(8)
        CUCLIMB_ASSEMBLE(9)
        CUCLIMB_ASSEMBLE(10)
        CUCLIMB_ASSEMBLE(11)
        CUCLIMB_ASSEMBLE(12)
        CUCLIMB_ASSEMBLE(13)
        CUCLIMB_ASSEMBLE(14)
        CUCLIMB_ASSEMBLE(15)
        CUCLIMB_ASSEMBLE(16)
        CUCLIMB_ASSEMBLE(17)
        CUCLIMB_ASSEMBLE(18)
        CUCLIMB_ASSEMBLE(19)
        CUCLIMB_ASSEMBLE(20)
        CUCLIMB_ASSEMBLE(21)
        CUCLIMB_ASSEMBLE(22)
        CUCLIMB_ASSEMBLE(23)
        CUCLIMB_ASSEMBLE(24)
        CUCLIMB_ASSEMBLE(25)
        CUCLIMB_ASSEMBLE(26)
        CUCLIMB_ASSEMBLE(27)
        CUCLIMB_ASSEMBLE(28)
        CUCLIMB_ASSEMBLE(29)
        CUCLIMB_ASSEMBLE(30)
        CUCLIMB_ASSEMBLE(31)
#undef CUCLIMB_ASSEMBLE
        case kTrailerType:
          *stop = i;
          return n;
        default:
          ++*skipped;  // an event type of a newer minor, whose columns were skipped
          continue;
      }
      if (!ok) [[unlikely]] {
        *stop = i;
        return n;
      }
      ++n;
    }
    *stop = end;
    return n;
  }
};
static_assert(kTrailerType == 32, "ColumnLoop::Run has a case for every type before the trailer");

namespace {

// The loop for either layout, with vector versions (AVX2: the blank event in four stores).
CUCLIMB_PLANE_VERSIONS uint32_t RunColumns(ColumnDecoder* d, Event* out, uint32_t begin,
                                           uint32_t end, uint32_t* skipped, uint32_t* stop) {
  return ColumnLoop::Run<false>(d, out, begin, end, skipped, stop);
}
CUCLIMB_PLANE_VERSIONS uint32_t RunColumnsV2(ColumnDecoder* d, Event* out, uint32_t begin,
                                             uint32_t end, uint32_t* skipped, uint32_t* stop) {
  return ColumnLoop::Run<true>(d, out, begin, end, skipped, stop);
}

}  // namespace

void ColumnDecoder::Start(bool columns_v2, const uint32_t escape_counts[kTypes]) {
  for (auto& by_field : planes_) {
    for (ColumnPlanes& c : by_field) c.count = 0;
  }
  for (ColumnPlanes& c : escapes_) c.count = 0;
  std::memset(position_, 0, sizeof(position_));
  std::memset(window_count_, 0, sizeof(window_count_));
  delta_ = DecodeState{};
  columns_v2_ = columns_v2;
  history_.Reset();
  history_error_ = Failure::Kind::kNone;
  std::memset(escapes_used_, 0, sizeof(escapes_used_));
  std::memcpy(escape_count_, escape_counts, sizeof(escape_count_));
}

void ColumnDecoder::Begin(const uint8_t* types, uint32_t events, uint64_t strings, uint64_t stacks,
                          bool track_ids) {
  types_ = types;
  track_ids_ = track_ids;
  max_string_id_ = 0;
  max_stack_id_ = 0;
  events_ = events;
  next_ = 0;
  window_end_ = 0;
  std::memset(window_count_, 0, sizeof(window_count_));
  delta_.strings = strings;
  delta_.stacks = stacks;
  for (uint8_t t = 1; t < kTypes; ++t) {
    present_[t] = 0;
    for (uint8_t f = 0; f < kEventSchema[t].field_count; ++f) {
      present_[t] |= planes_[t][f].count > 0 ? 1u << f : 0;
    }
  }
}

uint8_t ColumnDecoder::UnusedEscapes() const {
  for (uint8_t t = 1; t < kTypes; ++t) {
    if (escapes_used_[t] != escape_count_[t])
      return t;
  }
  return 0;
}

void ColumnDecoder::OpenWindow() {
  uint32_t* counts = window_count_;
  for (uint8_t t = 1; t < kTrailerType; ++t) position_[t] += counts[t];
  std::memset(window_count_, 0, sizeof(window_count_));
  window_end_ = std::min(events_, next_ + kColumnWindow);
  CountTypes(types_ + next_, window_end_ - next_, counts);
  size_t words = 0;
  for (uint8_t t = 1; t < kTrailerType; ++t) {
    const EventSpec& spec = kEventSchema[t];
    for (uint8_t f = 0; counts[t] > 0 && f < spec.field_count; ++f) {
      if (planes_[t][f].count > 0)
        words += size_t{counts[t]} * (spec.fields[f].coding == Coding::kDims ? 3 : 1);
    }
  }
  if (buffer_.size() < words)
    buffer_.resize(std::max(words, 2 * buffer_.size()));
  if (zeros_.empty())
    zeros_.assign(3 * kColumnWindow, 0);
  uint64_t* out = buffer_.data();
  for (uint8_t t = 1; t < kTrailerType; ++t) {
    index_[t] = 0;
    if (counts[t] == 0)
      continue;
    const EventSpec& spec = kEventSchema[t];
    for (uint8_t f = 0; f < spec.field_count; ++f) {
      const ColumnPlanes& c = planes_[t][f];
      if (c.count == 0) {
        words_[t][f] = zeros_.data();
        continue;
      }
      const uint32_t per_event = spec.fields[f].coding == Coding::kDims ? 3 : 1;
      const size_t n = size_t{counts[t]} * per_event;
      const size_t start = size_t{position_[t]} * per_event;
      const WordCode code = WordCodeOf(t, f, columns_v2_);
      WidenColumn(out, c, start, n, code != WordCode::kRaw,
                  code == WordCode::kDevice ? static_cast<uint64_t>(int64_t{kNoDevice}) : 0);
      if (track_ids_) {
        const Coding coding = spec.fields[f].coding;
        if (coding == Coding::kString)
          max_string_id_ = std::max(max_string_id_, MaxWord(out, n));
        else if (coding == Coding::kStack)
          max_stack_id_ = std::max(max_stack_id_, MaxWord(out, n));
      }
      words_[t][f] = out;
      out += n;
    }
  }
}

uint32_t ColumnDecoder::Decode(Event* out, uint32_t max, uint32_t* skipped, Failure* failure) {
  *failure = Failure{};
  *skipped = 0;
  uint32_t n = 0;
  while (n < max && next_ < events_) {
    if (next_ == window_end_)
      OpenWindow();
    const uint32_t end = window_end_ - next_ > max - n ? next_ + (max - n) : window_end_;
    uint32_t stop = end;
    n += columns_v2_ ? RunColumnsV2(this, out + n, next_, end, skipped, &stop)
                     : RunColumns(this, out + n, next_, end, skipped, &stop);
    next_ = stop;
    if (stop < end) [[unlikely]] {
      const uint8_t t = types_[stop];
      failure->index = stop;
      failure->type = t;
      if (t == kTrailerType) {
        failure->kind = Failure::Kind::kTrailer;
        return n;
      }
      failure->position = position_[t] + index_[t] - 1;  // index_ counts this event
      failure->kind = history_error_;
      if (failure->kind != Failure::Kind::kNone) {
        failure->field = static_cast<uint8_t>(HistoryField(t));
        failure->word = GatherWord(planes_[t][failure->field], failure->position);
      } else {
        Explain(failure);
      }
      if (failure->kind == Failure::Kind::kNone)
        failure->kind = Failure::Kind::kOther;
      return n;
    }
  }
  return n;
}

void ColumnDecoder::Explain(Failure* failure) const {
  const EventSpec& spec = kEventSchema[failure->type];
  for (uint8_t f = 0; f < spec.field_count; ++f) {
    const Coding coding = spec.fields[f].coding;
    const uint64_t w = GatherWord(planes_[failure->type][f], failure->position);
    const bool bad =
        (coding == Coding::kString && w >= delta_.strings) ||
        (coding == Coding::kStack && w >= delta_.stacks) ||
        (coding == Coding::kEnum && w >= NamesOf(static_cast<EnumKind>(spec.enum_kind)).count);
    if (bad) {
      failure->kind = Failure::Kind::kValue;
      failure->field = f;
      failure->word = w;
      return;
    }
  }
}

}  // namespace cuclimb::format
