// SPDX-License-Identifier: Apache-2.0
// A shared library with its own NVTX3 instance (NVTX is header-only: every linkage unit that uses
// it carries one), like libtorch or NCCL beside an application. nvtx_program loads it to check
// that libcuclimb.so attaches to every instance, each of which calls InitializeInjectionNvtx2.
#include <nvtx3/nvToolsExt.h>

extern "C" __attribute__((visibility("default"))) void cuclimb_test_second_instance_mark();

extern "C" void cuclimb_test_second_instance_mark() {
  nvtxDomainHandle_t domain = nvtxDomainCreateA("second-instance");
  nvtxEventAttributes_t a{};
  a.version = NVTX_VERSION;
  a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
  a.messageType = NVTX_MESSAGE_TYPE_ASCII;
  a.message.ascii = "from-second-instance";
  nvtxDomainMarkEx(domain, &a);
}
