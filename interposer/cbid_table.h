// SPDX-License-Identifier: Apache-2.0
// The one table that drives CUPTI hooking: every driver-API callback id cuclimb enables, the
// option group that enables it and the decoder that turns its parameters into a trace event.
//
// X(name, group, decoder, keeper): CUPTI_DRIVER_TRACE_CBID_<name>, parameters <name>_params
// from generated_cuda_meta.h. Driver ids only: driver callbacks fire inside runtime calls too, so
// the runtime domain would add cost without coverage (shared/notes/cupti-cuda13.md §3.3). Every
// call that has a _ptsz/_ptds twin (per-thread default stream builds) lists it as well.
//
// Groups: kAlways (allocations, VMM, pools, handles, capture tracking, context teardown);
// kApi (launches, synchronizations, copies, event records: CUCLIMB_API=off leaves them off).
//
// Keeper: the state of cuclimb's own that the call changes, kept right whether recording or
// paused: capture tracking (no CUDA query may run during a capture) and the teardown handshakes
// of contexts and pools (the writer must let go first). An id with a keeper stays enabled while
// paused and runs only its keeper then; `Stateless` ids are off while paused.
#pragma once

#define CUCLIMB_DRIVER_CBIDS(X)                                                \
  /* synchronous and host allocations */                                       \
  X(cuMemAlloc_v2, kAlways, AllocDevice, Stateless)                            \
  X(cuMemAllocPitch_v2, kAlways, AllocPitch, Stateless)                        \
  X(cuMemAllocManaged, kAlways, AllocManaged, Stateless)                       \
  X(cuMemAllocHost_v2, kAlways, AllocHost, Stateless)                          \
  X(cuMemHostAlloc, kAlways, AllocHost, Stateless)                             \
  X(cuMemHostRegister_v2, kAlways, HostRegister, Stateless)                    \
  X(cuMemHostUnregister, kAlways, HostUnregister, Stateless)                   \
  X(cuMemFree_v2, kAlways, FreeDevice, Stateless)                              \
  X(cuMemFreeHost, kAlways, FreeHost, Stateless)                               \
  /* stream-ordered allocations */                                             \
  X(cuMemAllocAsync, kAlways, AllocAsync, Stateless)                           \
  X(cuMemAllocAsync_ptsz, kAlways, AllocAsync, Stateless)                      \
  X(cuMemAllocFromPoolAsync, kAlways, AllocAsync, Stateless)                   \
  X(cuMemAllocFromPoolAsync_ptsz, kAlways, AllocAsync, Stateless)              \
  X(cuMemFreeAsync, kAlways, FreeAsync, Stateless)                             \
  X(cuMemFreeAsync_ptsz, kAlways, FreeAsync, Stateless)                        \
  /* memory not owned by this process */                                       \
  X(cuIpcOpenMemHandle_v2, kAlways, IpcOpen, Stateless)                        \
  X(cuIpcCloseMemHandle, kAlways, IpcClose, Stateless)                         \
  X(cuMemImportFromShareableHandle, kAlways, VmmImport, Stateless)             \
  /* virtual memory management */                                              \
  X(cuMemAddressReserve, kAlways, VmmReserve, Stateless)                       \
  X(cuMemAddressFree, kAlways, VmmFreeVa, Stateless)                           \
  X(cuMemCreate, kAlways, VmmCreate, Stateless)                                \
  X(cuMemRelease, kAlways, VmmRelease, Stateless)                              \
  X(cuMemMap, kAlways, VmmMap, Stateless)                                      \
  X(cuMemUnmap, kAlways, VmmUnmap, Stateless)                                  \
  X(cuMemSetAccess, kAlways, VmmSetAccess, Stateless)                          \
  /* memory pools */                                                           \
  X(cuMemPoolCreate, kAlways, PoolCreate, Stateless)                           \
  X(cuMemPoolDestroy, kAlways, PoolDestroy, KeepPoolDestroy)                   \
  X(cuMemPoolTrimTo, kAlways, PoolTrim, Stateless)                             \
  X(cuMemPoolSetAttribute, kAlways, PoolSetAttribute, Stateless)               \
  X(cuDeviceSetMemPool, kAlways, DeviceSetMemPool, Stateless)                  \
  X(cuMemSetMemPool, kAlways, MemSetMemPool, Stateless)                        \
  /* graph memory */                                                           \
  X(cuGraphAddMemAllocNode, kAlways, GraphMemAllocNode, Stateless)             \
  X(cuGraphAddMemFreeNode, kAlways, GraphMemFreeNode, Stateless)               \
  X(cuDeviceGraphMemTrim, kAlways, PlainApi, Stateless)                        \
  /* handles without a CUPTI resource callback */                              \
  X(cuEventCreate, kAlways, EventCreate, Stateless)                            \
  X(cuEventDestroy_v2, kAlways, EventDestroy, Stateless)                       \
  X(cuLibraryLoadData, kAlways, LibraryLoad, Stateless)                        \
  X(cuLibraryLoadFromFile, kAlways, LibraryLoad, Stateless)                    \
  X(cuLibraryUnload, kAlways, LibraryUnload, Stateless)                        \
  /* stream capture: tracked so that no query runs during a capture */         \
  X(cuStreamBeginCapture, kAlways, CaptureBegin, KeepCaptureBegin)             \
  X(cuStreamBeginCapture_ptsz, kAlways, CaptureBegin, KeepCaptureBegin)        \
  X(cuStreamBeginCapture_v2, kAlways, CaptureBegin, KeepCaptureBegin)          \
  X(cuStreamBeginCapture_v2_ptsz, kAlways, CaptureBegin, KeepCaptureBegin)     \
  X(cuStreamBeginCaptureToGraph, kAlways, CaptureBegin, KeepCaptureBegin)      \
  X(cuStreamBeginCaptureToGraph_ptsz, kAlways, CaptureBegin, KeepCaptureBegin) \
  X(cuStreamEndCapture, kAlways, CaptureEnd, KeepCaptureEnd)                   \
  X(cuStreamEndCapture_ptsz, kAlways, CaptureEnd, KeepCaptureEnd)              \
  /* context teardown: stop the writer using the context first */              \
  X(cuCtxDestroy_v2, kAlways, CtxTeardown, KeepCtxDestroy)                     \
  X(cuDevicePrimaryCtxRelease_v2, kAlways, CtxTeardown, KeepPrimaryCtxGone)    \
  X(cuDevicePrimaryCtxReset_v2, kAlways, CtxTeardown, KeepPrimaryCtxGone)      \
  /* launches */                                                               \
  X(cuLaunchKernel, kApi, Launch, Stateless)                                   \
  X(cuLaunchKernel_ptsz, kApi, Launch, Stateless)                              \
  X(cuLaunchKernelEx, kApi, LaunchEx, Stateless)                               \
  X(cuLaunchKernelEx_ptsz, kApi, LaunchEx, Stateless)                          \
  X(cuLaunchCooperativeKernel, kApi, Launch, Stateless)                        \
  X(cuLaunchCooperativeKernel_ptsz, kApi, Launch, Stateless)                   \
  X(cuGraphLaunch, kApi, GraphLaunch, Stateless)                               \
  X(cuGraphLaunch_ptsz, kApi, GraphLaunch, Stateless)                          \
  X(cuGraphUpload, kApi, StreamApi, Stateless)                                 \
  X(cuGraphUpload_ptsz, kApi, StreamApi, Stateless)                            \
  /* synchronization */                                                        \
  X(cuStreamSynchronize, kApi, SyncStream, Stateless)                          \
  X(cuStreamSynchronize_ptsz, kApi, SyncStream, Stateless)                     \
  X(cuEventSynchronize, kApi, SyncEvent, Stateless)                            \
  X(cuCtxSynchronize, kApi, SyncContext, Stateless)                            \
  X(cuCtxSynchronize_v2, kApi, SyncContext, Stateless)                         \
  X(cuStreamWaitEvent, kApi, StreamWaitEvent, Stateless)                       \
  X(cuStreamWaitEvent_ptsz, kApi, StreamWaitEvent, Stateless)                  \
  X(cuEventRecord, kApi, StreamApi, Stateless)                                 \
  X(cuEventRecord_ptsz, kApi, StreamApi, Stateless)                            \
  X(cuEventRecordWithFlags, kApi, StreamApi, Stateless)                        \
  X(cuEventRecordWithFlags_ptsz, kApi, StreamApi, Stateless)                   \
  /* copies and memsets */                                                     \
  X(cuMemcpy, kApi, CopyAny, Stateless)                                        \
  X(cuMemcpy_ptds, kApi, CopyAny, Stateless)                                   \
  X(cuMemcpyAsync, kApi, CopyAny, Stateless)                                   \
  X(cuMemcpyAsync_ptsz, kApi, CopyAny, Stateless)                              \
  X(cuMemcpyHtoD_v2, kApi, CopyHtoD, Stateless)                                \
  X(cuMemcpyHtoD_v2_ptds, kApi, CopyHtoD, Stateless)                           \
  X(cuMemcpyHtoDAsync_v2, kApi, CopyHtoD, Stateless)                           \
  X(cuMemcpyHtoDAsync_v2_ptsz, kApi, CopyHtoD, Stateless)                      \
  X(cuMemcpyDtoH_v2, kApi, CopyDtoH, Stateless)                                \
  X(cuMemcpyDtoH_v2_ptds, kApi, CopyDtoH, Stateless)                           \
  X(cuMemcpyDtoHAsync_v2, kApi, CopyDtoH, Stateless)                           \
  X(cuMemcpyDtoHAsync_v2_ptsz, kApi, CopyDtoH, Stateless)                      \
  X(cuMemcpyDtoD_v2, kApi, CopyDtoD, Stateless)                                \
  X(cuMemcpyDtoD_v2_ptds, kApi, CopyDtoD, Stateless)                           \
  X(cuMemcpyDtoDAsync_v2, kApi, CopyDtoD, Stateless)                           \
  X(cuMemcpyDtoDAsync_v2_ptsz, kApi, CopyDtoD, Stateless)                      \
  X(cuMemcpy2D_v2, kApi, Copy2D, Stateless)                                    \
  X(cuMemcpy2D_v2_ptds, kApi, Copy2D, Stateless)                               \
  X(cuMemcpy2DAsync_v2, kApi, Copy2D, Stateless)                               \
  X(cuMemcpy2DAsync_v2_ptsz, kApi, Copy2D, Stateless)                          \
  X(cuMemcpyBatchAsync, kApi, CopyBatch, Stateless)                            \
  X(cuMemsetD8_v2, kApi, Memset8, Stateless)                                   \
  X(cuMemsetD8_v2_ptds, kApi, Memset8, Stateless)                              \
  X(cuMemsetD8Async, kApi, Memset8, Stateless)                                 \
  X(cuMemsetD8Async_ptsz, kApi, Memset8, Stateless)                            \
  X(cuMemsetD16_v2, kApi, Memset16, Stateless)                                 \
  X(cuMemsetD16_v2_ptds, kApi, Memset16, Stateless)                            \
  X(cuMemsetD16Async, kApi, Memset16, Stateless)                               \
  X(cuMemsetD16Async_ptsz, kApi, Memset16, Stateless)                          \
  X(cuMemsetD32_v2, kApi, Memset32, Stateless)                                 \
  X(cuMemsetD32_v2_ptds, kApi, Memset32, Stateless)                            \
  X(cuMemsetD32Async, kApi, Memset32, Stateless)                               \
  X(cuMemsetD32Async_ptsz, kApi, Memset32, Stateless)

// Resource-domain ids (CUPTI_CBID_RESOURCE_<name>): handles whose creation CUPTI reports from
// inside the creating call, including ones made inside other calls (stream capture makes graphs,
// lazy loading loads modules at the first launch).
#define CUCLIMB_RESOURCE_CBIDS(X) \
  X(CONTEXT_CREATED)              \
  X(CONTEXT_DESTROY_STARTING)     \
  X(STREAM_CREATED)               \
  X(STREAM_DESTROY_STARTING)      \
  X(MODULE_LOADED)                \
  X(MODULE_UNLOAD_STARTING)       \
  X(GRAPH_CREATED)                \
  X(GRAPH_CLONED)                 \
  X(GRAPH_DESTROY_STARTING)       \
  X(GRAPHEXEC_CREATED)            \
  X(GRAPHEXEC_DESTROY_STARTING)
