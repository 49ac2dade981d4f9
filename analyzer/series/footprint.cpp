// SPDX-License-Identifier: Apache-2.0
// Adding up the series store of an Aggregates by family.
#include "series/footprint.h"

#include <algorithm>
#include <initializer_list>

#include "series/aggregates.h"

namespace cuclimb::analysis {
namespace {

class Tally {
 public:
  explicit Tally(SeriesFootprint* out) : out_(out) {}
  void Family(const char* name) { out_->families.push_back({name}); }
  void Add(std::initializer_list<const SlotVec*> vs) {
    for (const SlotVec* v : vs) Add(v->size(), v->pages(), v->bytes());
  }
  void Add(size_t slots, size_t pages, size_t bytes) {
    SeriesFootprint::Family& f = out_->families.back();
    ++f.series;
    f.pages += pages;
    f.bytes += bytes;
    ++out_->series;
    out_->bytes += bytes;
    out_->slots = std::max(out_->slots, slots);
  }
  void Done() {
    if (out_->families.back().series == 0)
      out_->families.pop_back();
  }

 private:
  SeriesFootprint* out_;
};

}  // namespace

SeriesFootprint MeasureFootprint(const Aggregates& a) {
  SeriesFootprint out;
  Tally t(&out);
  t.Family("alloc");
  for (const AllocSeries& s : a.alloc_series)
    t.Add({&s.allocs, &s.frees, &s.alloc_bytes, &s.free_bytes, &s.temps, &s.temp_bytes});
  t.Done();
  t.Family("handle");
  for (const HandleSeries& s : a.handle_series) t.Add({&s.creates, &s.destroys});
  t.Done();
  t.Family("heap");
  for (const HeapSeries& s : a.heaps) t.Add({&s.regions, &s.frees, &s.bytes, &s.free_bytes});
  t.Done();
  t.Family("gauge");
  for (const GaugeSeries& g : a.gauges)
    t.Add(g.ts.size(), 0,
          g.value.capacity() * sizeof(g.value[0]) + g.ts.capacity() * sizeof(g.ts[0]));
  t.Done();
  t.Family("kernel");
  for (const KernelSeries& s : a.kernels) t.Add({&s.launches, &s.executions, &s.gpu_ns});
  t.Done();
  t.Family("api");
  for (const ApiSeries& s : a.apis) t.Add({&s.calls, &s.ns});
  t.Done();
  t.Family("sync");
  for (const ApiSeries& s : a.syncs) t.Add({&s.calls, &s.ns});
  t.Done();
  t.Family("range");
  for (const RangeSeries& s : a.ranges)
    t.Add({&s.total_ns, &s.count, &s.api_ns, &s.sync_ns, &s.gpu_ns});
  t.Done();
  for (const auto& [name, parts] :
       {std::pair{"range_api", &a.range_apis}, std::pair{"range_sync", &a.range_syncs},
        std::pair{"range_kernel", &a.range_kernels}}) {
    t.Family(name);
    for (const Aggregates::Part& p : *parts) t.Add({&p.ns});
    t.Done();
  }
  t.Family("host_function");
  for (const SlotVec& v : a.function_samples) t.Add({&v});
  for (const SlotVec& v : a.host_functions.inclusive) t.Add({&v});
  t.Done();
  t.Family("totals");
  t.Add({&a.vmm_physical_created, &a.vmm_physical_released, &a.vmm_physical_bytes_delta,
         &a.va_reserved_delta, &a.peak_per_slot, &a.copy_bytes, &a.copies, &a.samples,
         &a.overhead_ns, &a.overhead_events, &a.drops, &a.events_per_slot});
  t.Done();
  return out;
}

}  // namespace cuclimb::analysis
