// SPDX-License-Identifier: Apache-2.0
// A program that never touches a GPU and drives libcuclimb.so through the real NVTX headers
// (NVTX_INJECTION64_PATH): ranges, marks, domains, registered strings, the memory extension,
// thread names, and the ways a program ends (exit from a thread, signals, SIGKILL, fork).
// nvtx_injection_test.cpp runs it in each mode and reads the trace back.
//
//   nvtx_program MODE
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <thread>
#include <vector>

#include <dlfcn.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <nvtx3/nvToolsExt.h>
#include <nvtx3/nvToolsExtMem.h>

namespace {

char g_arena[1 << 16];

void Iterations(nvtxDomainHandle_t domain, int first, int count) {
  nvtxStringHandle_t iter = nvtxDomainRegisterStringA(domain, "iteration");
  for (int i = first; i < first + count; ++i) {
    nvtxEventAttributes_t a{};
    a.version = NVTX_VERSION;
    a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
    a.messageType = NVTX_MESSAGE_TYPE_REGISTERED;
    a.message.registered = iter;
    a.payloadType = NVTX_PAYLOAD_TYPE_UNSIGNED_INT64;
    a.payload.ullValue = static_cast<uint64_t>(i);
    nvtxDomainRangePushEx(domain, &a);
    nvtxRangePushA("forward");
    nvtxRangePop();
    nvtxDomainRangePop(domain);
  }
}

void MemoryApi(nvtxDomainHandle_t domain) {
  nvtxMemVirtualRangeDesc_t heap_range{sizeof(g_arena), g_arena};
  nvtxMemHeapDesc_t heap{};
  heap.extCompatID = NVTX_EXT_COMPATID_MEM;
  heap.structSize = sizeof(heap);
  heap.usage = NVTX_MEM_HEAP_USAGE_TYPE_SUB_ALLOCATOR;
  heap.type = NVTX_MEM_TYPE_VIRTUAL_ADDRESS;
  heap.typeSpecificDescSize = sizeof(heap_range);
  heap.typeSpecificDesc = &heap_range;
  heap.messageType = NVTX_MESSAGE_TYPE_ASCII;
  heap.message.ascii = "arena";
  nvtxMemHeapHandle_t h = nvtxMemHeapRegister(domain, &heap);

  nvtxMemVirtualRangeDesc_t regions[2] = {{256, g_arena + 1024}, {512, g_arena + 4096}};
  nvtxMemRegionHandle_t handles[2] = {};
  nvtxMemRegionsRegisterBatch_t reg{};
  reg.extCompatID = NVTX_EXT_COMPATID_MEM;
  reg.structSize = sizeof(reg);
  reg.regionType = NVTX_MEM_TYPE_VIRTUAL_ADDRESS;
  reg.heap = h;
  reg.regionCount = 2;
  reg.regionDescElementSize = sizeof(regions[0]);
  reg.regionDescElements = regions;
  reg.regionHandleElementsOut = handles;
  nvtxMemRegionsRegister(domain, &reg);

  nvtxMemVirtualRangeDesc_t grown{1024, g_arena + 4096};
  nvtxMemRegionsResizeBatch_t resize{};
  resize.extCompatID = NVTX_EXT_COMPATID_MEM;
  resize.structSize = sizeof(resize);
  resize.regionType = NVTX_MEM_TYPE_VIRTUAL_ADDRESS;
  resize.regionDescCount = 1;
  resize.regionDescElementSize = sizeof(grown);
  resize.regionDescElements = &grown;
  nvtxMemRegionsResize(domain, &resize);

  nvtxMemRegionRef_t by_pointer;
  by_pointer.pointer = g_arena + 1024;
  nvtxMemRegionsUnregisterBatch_t unreg{};
  unreg.extCompatID = NVTX_EXT_COMPATID_MEM;
  unreg.structSize = sizeof(unreg);
  unreg.refType = NVTX_MEM_REGION_REF_TYPE_POINTER;
  unreg.refCount = 1;
  unreg.refElementSize = sizeof(by_pointer);
  unreg.refElements = &by_pointer;
  nvtxMemRegionsUnregister(domain, &unreg);

  nvtxMemRegionRef_t by_handle;
  by_handle.handle = handles[1];
  unreg.refType = NVTX_MEM_REGION_REF_TYPE_HANDLE;
  unreg.refElements = &by_handle;
  nvtxMemRegionsUnregister(domain, &unreg);

  nvtxMemHeapReset(domain, h);
  nvtxMemHeapUnregister(domain, h);
  std::printf("heap %p regions %p %p\n", static_cast<void*>(h), static_cast<void*>(handles[0]),
              static_cast<void*>(handles[1]));
}

void Basic() {
  nvtxMarkA("start");
  nvtxNameOsThreadA(static_cast<uint32_t>(syscall(SYS_gettid)), "main-loop");
  nvtxDomainHandle_t domain = nvtxDomainCreateA("test-domain");
  Iterations(domain, 1, 5);
  nvtxRangeId_t id = nvtxRangeStartA("startend");
  nvtxRangeEnd(id);
  nvtxEventAttributes_t mark{};
  mark.version = NVTX_VERSION;
  mark.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
  mark.messageType = NVTX_MESSAGE_TYPE_ASCII;
  mark.message.ascii = "checkpoint";
  mark.payloadType = NVTX_PAYLOAD_TYPE_INT32;
  mark.payload.iValue = -7;
  nvtxDomainMarkEx(domain, &mark);
  nvtxRangePushW(L"wide");
  nvtxRangePop();
  MemoryApi(domain);
  // A second NVTX instance, in a library of its own.
  if (const char* second = std::getenv("CUCLIMB_TEST_NVTX_SECOND")) {
    if (void* lib = dlopen(second, RTLD_NOW | RTLD_LOCAL)) {
      if (auto second_mark =
              reinterpret_cast<void (*)()>(dlsym(lib, "cuclimb_test_second_instance_mark"))) {
        second_mark();
      }
    }
  }
}

void Threads(int threads, int per_thread) {
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([per_thread] {
      for (int i = 0; i < per_thread; ++i) {
        nvtxRangePushA("work");
        nvtxRangePop();
      }
    });
  }
  for (auto& t : pool) t.join();
}

void Sleep(int ms) {
  std::this_thread::sleep_for(std::chrono::milliseconds(ms));
}

// cuclimb's C API, looked up the way a program that may run without cuclimb does.
template <typename F>
F CApi(const char* name) {
  const char* lib = std::getenv("NVTX_INJECTION64_PATH");
  void* handle = lib != nullptr ? dlopen(lib, RTLD_NOW | RTLD_NOLOAD) : nullptr;
  return handle != nullptr ? reinterpret_cast<F>(dlsym(handle, name)) : nullptr;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "basic";
  if (mode == "basic") {
    Basic();
    return 0;
  }
  if (mode == "threads") {
    nvtxMarkA("begin");
    Threads(8, 10000);
    nvtxMarkA("end");
    return 0;
  }
  if (mode == "exit-thread") {
    // exit() from a thread that is not main, while main is blocked.
    nvtxMarkA("before");
    std::thread([] {
      nvtxMarkA("exiting");
      std::exit(3);
    }).detach();
    Sleep(10'000);
    return 0;
  }
  if (mode == "sigterm" || mode == "sigint" || mode == "sighup") {
    nvtxDomainHandle_t domain = nvtxDomainCreateA("test-domain");
    Iterations(domain, 1, 100);
    const int sig = mode == "sigterm" ? SIGTERM : mode == "sigint" ? SIGINT : SIGHUP;
    kill(getpid(), sig);
    Sleep(10'000);  // not reached: the signal's default action ends the process
    return 0;
  }
  if (mode == "handled-sigterm") {
    // The program's own handler must stay in charge.
    signal(SIGTERM, [](int) { _exit(42); });
    nvtxMarkA("before");
    kill(getpid(), SIGTERM);
    Sleep(10'000);
    return 0;
  }
  if (mode == "sigkill") {
    nvtxDomainHandle_t domain = nvtxDomainCreateA("test-domain");
    Iterations(domain, 1, 1000);
    Sleep(1500);  // the writer seals a chunk at least once a second
    Iterations(domain, 1001, 10);
    kill(getpid(), SIGKILL);
    Sleep(10'000);
    return 0;
  }
  if (mode == "fork") {
    nvtxMarkA("parent-before");
    const pid_t child = fork();
    if (child == 0) {
      nvtxMarkA("child");  // must not reach the parent's trace, nor create one
      std::exit(0);        // runs cuclimb's atexit handler in the child: must do nothing
    }
    // The child must end promptly: a hang in its exit path (a lock or condition variable
    // inherited from a parent thread) is the failure this mode exists to catch.
    int status = 0;
    for (int i = 0; i < 500 && waitpid(child, &status, WNOHANG) == 0; ++i) Sleep(10);
    if (waitpid(child, &status, WNOHANG) == 0) {
      kill(child, SIGKILL);
      waitpid(child, &status, 0);
      std::fprintf(stderr, "forked child hung on its way out\n");
      return 5;
    }
    nvtxMarkA("parent-after");
    std::printf("child %d status %d\n", static_cast<int>(child), status);
    return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : 1;
  }
  if (mode == "fork-busy") {
    // Forks 20 times while two threads record as fast as they can and the writer drains, so
    // the children are likely to start with a ring, a table or the writer's lock taken. Each
    // child records, then leaves through exit() (atexit handlers, static destructors): none may
    // hang.
    // NVTX's own first call (which loads cuclimb) is done first: a child forked while another
    // thread is inside it spins forever in NVTX's once-guard, cuclimb or not (docs/recording.md).
    nvtxMarkA("initialized");
    std::atomic<bool> stop{false};
    std::vector<std::thread> busy;
    for (int t = 0; t < 2; ++t) {
      busy.emplace_back([&stop] {
        while (!stop.load()) {
          nvtxRangePushA("work");
          nvtxRangePop();
        }
      });
    }
    int hung = 0;
    int failed = 0;
    for (int i = 0; i < 20; ++i) {
      const pid_t child = fork();
      if (child == 0) {
        nvtxRangePushA("child");
        nvtxRangePop();
        std::exit(0);
      }
      int status = 0;
      int waited = 0;
      while (waitpid(child, &status, WNOHANG) == 0 && waited < 500) {
        Sleep(10);
        ++waited;
      }
      if (waited == 500) {
        kill(child, SIGKILL);
        waitpid(child, &status, 0);
        ++hung;
      } else if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        ++failed;
      }
    }
    stop.store(true);
    for (std::thread& t : busy) t.join();
    std::printf("forks 20 hung %d failed %d\n", hung, failed);
    return hung == 0 && failed == 0 ? 0 : 5;
  }
  if (mode == "pause") {
    // Started with CUCLIMB_PAUSED=1: only the marks after cuclimb_resume are recorded.
    nvtxMarkA("while-paused");
    auto resume = CApi<void (*)()>("cuclimb_resume");
    auto pause = CApi<void (*)()>("cuclimb_pause");
    auto recording = CApi<int (*)()>("cuclimb_is_recording");
    auto mark_iteration = CApi<void (*)(unsigned long long)>("cuclimb_mark_iteration");
    if (resume == nullptr || pause == nullptr || recording == nullptr ||
        mark_iteration == nullptr) {
      std::fprintf(stderr, "C API not found\n");
      return 2;
    }
    if (recording() != 0)
      return 3;
    resume();
    if (recording() != 1)
      return 4;
    nvtxMarkA("while-recording");
    mark_iteration(77);
    pause();
    nvtxMarkA("paused-again");
    return 0;
  }
  if (mode == "env") {
    // What a child would inherit, once cuclimb started (first NVTX call).
    nvtxMarkA("started");
    for (const char* name : {"LD_PRELOAD", "CUDA_INJECTION64_PATH", "NVTX_INJECTION64_PATH"}) {
      const char* value = std::getenv(name);
      std::printf("%s=%s\n", name, value != nullptr ? value : "(unset)");
    }
    return 0;
  }
  if (mode == "errlog") {
    // Writes to its stderr between iterations: started with stderr closed, that write must fail
    // (EBADF), not land in the trace (/work/shared/bad-inputs/stderr-closed-corrupts-trace.sh).
    for (int i = 0; i < 10; ++i) {
      nvtxRangePushA("iteration");
      nvtxRangePop();
    }
    std::fprintf(stderr, "app: warning: disk almost full\n");
    std::fflush(stderr);
    for (int i = 0; i < 10; ++i) {
      nvtxRangePushA("iteration");
      nvtxRangePop();
    }
    return 0;
  }
  if (mode == "fds") {
    // Reports the descriptor of the trace file and whether it is close-on-exec, on fd 1 (or on
    // fd 3 when fd 1 is closed too: the test passes both).
    nvtxMarkA("opened");
    const char* trace = std::getenv("CUCLIMB_OUTPUT");
    std::string report;
    for (int fd = 0; fd < 64; ++fd) {
      char link[64];
      char target[4096] = {};
      std::snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
      if (readlink(link, target, sizeof(target) - 1) <= 0 || trace == nullptr ||
          std::strcmp(target, trace) != 0) {
        continue;
      }
      const int flags = fcntl(fd, F_GETFD);
      report += "trace-fd " + std::to_string(fd) + " cloexec " +
                std::to_string((flags & FD_CLOEXEC) != 0 ? 1 : 0) + "\n";
    }
    const char* out_path = std::getenv("CUCLIMB_TEST_REPORT");
    const int out = out_path != nullptr ? open(out_path, O_WRONLY | O_CREAT | O_TRUNC, 0600) : 1;
    if (out >= 0 && write(out, report.data(), report.size()) < 0)
      return 6;
    return 0;
  }
  std::fprintf(stderr, "unknown mode %s\n", mode.c_str());
  return 2;
}
