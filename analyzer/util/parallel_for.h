// SPDX-License-Identifier: Apache-2.0
// Runs fn(0) … fn(n − 1) on up to `jobs` threads (the calling thread is one of them), each thread
// taking the next index not yet taken. For independent pieces of work whose results go into
// slots by index, so the outcome does not depend on the order in which they finish. The first
// exception thrown by fn is rethrown on the calling thread once every thread has stopped.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

namespace cuclimb::util {

template <typename Fn>
void ParallelFor(size_t n, int jobs, Fn&& fn) {
  const size_t threads = std::min(n, static_cast<size_t>(std::max(1, jobs)));
  if (threads <= 1) {
    for (size_t i = 0; i < n; ++i) fn(i);
    return;
  }
  std::atomic<size_t> next{0};
  std::exception_ptr first_error;
  std::mutex error_mutex;
  auto work = [&]() {
    for (size_t i = next++; i < n; i = next++) {
      try {
        fn(i);
      } catch (...) {
        std::lock_guard<std::mutex> lock(error_mutex);
        if (!first_error)
          first_error = std::current_exception();
        next = n;  // the others stop at their next index
      }
    }
  };
  std::vector<std::thread> pool;
  for (size_t t = 1; t < threads; ++t) pool.emplace_back(work);
  work();
  for (std::thread& t : pool) t.join();
  if (first_error)
    std::rethrow_exception(first_error);
}

}  // namespace cuclimb::util
