#pragma once
// core/daemon/process_metrics.h — the daemon's own footprint as metrics:
// resident memory (all of it, and the anonymous part alone), open file
// descriptors, CPU seconds, threads, start time and build information,
// refreshed at every scrape; and giving the heap that start-up freed back.
#include <cstdint>

#include "base/metrics.h"

namespace dranet::daemon {
void RegisterProcessMetrics(MetricsRegistry& registry, const char* version);

// The process's resident anonymous memory (RssAnon of /proc/self/status:
// heap, thread stacks, written data), in bytes; 0 if it cannot be read.
// Unlike the whole resident size, it excludes the file pages of the code,
// which the page cache shares and can reclaim.
uint64_t ResidentAnonymousBytes();

// Returns the free memory of every malloc arena to the kernel (malloc_trim):
// what start-up allocated and freed again (discovery, plugin probes, the
// first publish) stays resident otherwise, as glibc gives back only the top
// of the main heap by itself. Call it once start-up is over; it walks every
// arena, so not on a hot path. Resident anonymous bytes before and after.
struct HeapReturned {
  uint64_t before = 0, after = 0;
};
HeapReturned ReturnFreeHeap();
}  // namespace dranet::daemon
