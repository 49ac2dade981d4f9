// SPDX-License-Identifier: Apache-2.0
// The one table that drives CUPTI hooking: every driver-API callback id cuclimb enables, the
// option group that enables it and the decoder that turns its parameters into a trace event.
//
// X(name, group, decoder): CUPTI_DRIVER_TRACE_CBID_<name>, parameters <name>_params from
// generated_cuda_meta.h. Driver ids only: driver callbacks fire inside runtime calls too, so
// the runtime domain would add cost without coverage (shared/notes/cupti-cuda13.md §3.3). Every
// call that has a _ptsz/_ptds twin (per-thread default stream builds) lists it as well.
//
// Groups: kAlways (allocations, VMM, pools, handles, capture tracking, context teardown);
// kApi (launches, synchronizations, copies, event records: CUCLIMB_API=off leaves them off).
#pragma once

#define CUCLIMB_DRIVER_CBIDS(X)                                        \
  /* synchronous and host allocations */                               \
  X(cuMemAlloc_v2, kAlways, AllocDevice)                               \
  X(cuMemAllocPitch_v2, kAlways, AllocPitch)                           \
  X(cuMemAllocManaged, kAlways, AllocManaged)                          \
  X(cuMemAllocHost_v2, kAlways, AllocHost)                             \
  X(cuMemHostAlloc, kAlways, AllocHost)                                \
  X(cuMemHostRegister_v2, kAlways, HostRegister)                       \
  X(cuMemHostUnregister, kAlways, HostUnregister)                      \
  X(cuMemFree_v2, kAlways, FreeDevice)                                 \
  X(cuMemFreeHost, kAlways, FreeHost)                                  \
  /* stream-ordered allocations */                                     \
  X(cuMemAllocAsync, kAlways, AllocAsync)                              \
  X(cuMemAllocAsync_ptsz, kAlways, AllocAsync)                         \
  X(cuMemAllocFromPoolAsync, kAlways, AllocAsync)                      \
  X(cuMemAllocFromPoolAsync_ptsz, kAlways, AllocAsync)                 \
  X(cuMemFreeAsync, kAlways, FreeAsync)                                \
  X(cuMemFreeAsync_ptsz, kAlways, FreeAsync)                           \
  /* memory not owned by this process */                               \
  X(cuIpcOpenMemHandle_v2, kAlways, IpcOpen)                           \
  X(cuIpcCloseMemHandle, kAlways, IpcClose)                            \
  X(cuMemImportFromShareableHandle, kAlways, VmmImport)                \
  /* virtual memory management */                                      \
  X(cuMemAddressReserve, kAlways, VmmReserve)                          \
  X(cuMemAddressFree, kAlways, VmmFreeVa)                              \
  X(cuMemCreate, kAlways, VmmCreate)                                   \
  X(cuMemRelease, kAlways, VmmRelease)                                 \
  X(cuMemMap, kAlways, VmmMap)                                         \
  X(cuMemUnmap, kAlways, VmmUnmap)                                     \
  X(cuMemSetAccess, kAlways, VmmSetAccess)                             \
  /* memory pools */                                                   \
  X(cuMemPoolCreate, kAlways, PoolCreate)                              \
  X(cuMemPoolDestroy, kAlways, PoolDestroy)                            \
  X(cuMemPoolTrimTo, kAlways, PoolTrim)                                \
  X(cuMemPoolSetAttribute, kAlways, PoolSetAttribute)                  \
  X(cuDeviceSetMemPool, kAlways, DeviceSetMemPool)                     \
  X(cuMemSetMemPool, kAlways, MemSetMemPool)                           \
  /* graph memory */                                                   \
  X(cuGraphAddMemAllocNode, kAlways, GraphMemAllocNode)                \
  X(cuGraphAddMemFreeNode, kAlways, GraphMemFreeNode)                  \
  X(cuDeviceGraphMemTrim, kAlways, PlainApi)                           \
  /* handles without a CUPTI resource callback */                      \
  X(cuEventCreate, kAlways, EventCreate)                               \
  X(cuEventDestroy_v2, kAlways, EventDestroy)                          \
  X(cuLibraryLoadData, kAlways, LibraryLoad)                           \
  X(cuLibraryLoadFromFile, kAlways, LibraryLoad)                       \
  X(cuLibraryUnload, kAlways, LibraryUnload)                           \
  /* stream capture: tracked so that no query runs during a capture */ \
  X(cuStreamBeginCapture, kAlways, CaptureBegin)                       \
  X(cuStreamBeginCapture_ptsz, kAlways, CaptureBegin)                  \
  X(cuStreamBeginCapture_v2, kAlways, CaptureBegin)                    \
  X(cuStreamBeginCapture_v2_ptsz, kAlways, CaptureBegin)               \
  X(cuStreamBeginCaptureToGraph, kAlways, CaptureBegin)                \
  X(cuStreamBeginCaptureToGraph_ptsz, kAlways, CaptureBegin)           \
  X(cuStreamEndCapture, kAlways, CaptureEnd)                           \
  X(cuStreamEndCapture_ptsz, kAlways, CaptureEnd)                      \
  /* context teardown: stop the writer using the context first */      \
  X(cuCtxDestroy_v2, kAlways, CtxTeardown)                             \
  X(cuDevicePrimaryCtxRelease_v2, kAlways, CtxTeardown)                \
  X(cuDevicePrimaryCtxReset_v2, kAlways, CtxTeardown)                  \
  /* launches */                                                       \
  X(cuLaunchKernel, kApi, Launch)                                      \
  X(cuLaunchKernel_ptsz, kApi, Launch)                                 \
  X(cuLaunchKernelEx, kApi, LaunchEx)                                  \
  X(cuLaunchKernelEx_ptsz, kApi, LaunchEx)                             \
  X(cuLaunchCooperativeKernel, kApi, Launch)                           \
  X(cuLaunchCooperativeKernel_ptsz, kApi, Launch)                      \
  X(cuGraphLaunch, kApi, GraphLaunch)                                  \
  X(cuGraphLaunch_ptsz, kApi, GraphLaunch)                             \
  X(cuGraphUpload, kApi, StreamApi)                                    \
  X(cuGraphUpload_ptsz, kApi, StreamApi)                               \
  /* synchronization */                                                \
  X(cuStreamSynchronize, kApi, SyncStream)                             \
  X(cuStreamSynchronize_ptsz, kApi, SyncStream)                        \
  X(cuEventSynchronize, kApi, SyncEvent)                               \
  X(cuCtxSynchronize, kApi, SyncContext)                               \
  X(cuCtxSynchronize_v2, kApi, SyncContext)                            \
  X(cuStreamWaitEvent, kApi, StreamWaitEvent)                          \
  X(cuStreamWaitEvent_ptsz, kApi, StreamWaitEvent)                     \
  X(cuEventRecord, kApi, StreamApi)                                    \
  X(cuEventRecord_ptsz, kApi, StreamApi)                               \
  X(cuEventRecordWithFlags, kApi, StreamApi)                           \
  X(cuEventRecordWithFlags_ptsz, kApi, StreamApi)                      \
  /* copies and memsets */                                             \
  X(cuMemcpy, kApi, CopyAny)                                           \
  X(cuMemcpy_ptds, kApi, CopyAny)                                      \
  X(cuMemcpyAsync, kApi, CopyAny)                                      \
  X(cuMemcpyAsync_ptsz, kApi, CopyAny)                                 \
  X(cuMemcpyHtoD_v2, kApi, CopyHtoD)                                   \
  X(cuMemcpyHtoD_v2_ptds, kApi, CopyHtoD)                              \
  X(cuMemcpyHtoDAsync_v2, kApi, CopyHtoD)                              \
  X(cuMemcpyHtoDAsync_v2_ptsz, kApi, CopyHtoD)                         \
  X(cuMemcpyDtoH_v2, kApi, CopyDtoH)                                   \
  X(cuMemcpyDtoH_v2_ptds, kApi, CopyDtoH)                              \
  X(cuMemcpyDtoHAsync_v2, kApi, CopyDtoH)                              \
  X(cuMemcpyDtoHAsync_v2_ptsz, kApi, CopyDtoH)                         \
  X(cuMemcpyDtoD_v2, kApi, CopyDtoD)                                   \
  X(cuMemcpyDtoD_v2_ptds, kApi, CopyDtoD)                              \
  X(cuMemcpyDtoDAsync_v2, kApi, CopyDtoD)                              \
  X(cuMemcpyDtoDAsync_v2_ptsz, kApi, CopyDtoD)                         \
  X(cuMemcpy2D_v2, kApi, Copy2D)                                       \
  X(cuMemcpy2D_v2_ptds, kApi, Copy2D)                                  \
  X(cuMemcpy2DAsync_v2, kApi, Copy2D)                                  \
  X(cuMemcpy2DAsync_v2_ptsz, kApi, Copy2D)                             \
  X(cuMemcpyBatchAsync, kApi, CopyBatch)                               \
  X(cuMemsetD8_v2, kApi, Memset8)                                      \
  X(cuMemsetD8_v2_ptds, kApi, Memset8)                                 \
  X(cuMemsetD8Async, kApi, Memset8)                                    \
  X(cuMemsetD8Async_ptsz, kApi, Memset8)                               \
  X(cuMemsetD16_v2, kApi, Memset16)                                    \
  X(cuMemsetD16_v2_ptds, kApi, Memset16)                               \
  X(cuMemsetD16Async, kApi, Memset16)                                  \
  X(cuMemsetD16Async_ptsz, kApi, Memset16)                             \
  X(cuMemsetD32_v2, kApi, Memset32)                                    \
  X(cuMemsetD32_v2_ptds, kApi, Memset32)                               \
  X(cuMemsetD32Async, kApi, Memset32)                                  \
  X(cuMemsetD32Async_ptsz, kApi, Memset32)

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
