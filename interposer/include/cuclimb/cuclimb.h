/* SPDX-License-Identifier: Apache-2.0 */
/* Optional C API of libcuclimb.so for programs that want to steer recording.
 *
 * The functions exist only while the program runs under cuclimb (`cuclimb record`, or
 * CUDA_INJECTION64_PATH / LD_PRELOAD pointing at libcuclimb.so). A program that must also run
 * without cuclimb looks them up at run time instead of linking them:
 *
 *     void (*mark)(unsigned long long) =
 *         (void (*)(unsigned long long))dlsym(RTLD_DEFAULT, "cuclimb_mark_iteration");
 *     if (mark) mark(step);
 *
 * (dlsym(RTLD_DEFAULT) finds them when the library was preloaded; when the driver loaded it,
 * dlopen(getenv("CUDA_INJECTION64_PATH"), RTLD_NOLOAD | RTLD_NOW) gives the handle.)
 * All functions are thread-safe, never block on the GPU and never fail the program.
 */
#ifndef CUCLIMB_CUCLIMB_H_
#define CUCLIMB_CUCLIMB_H_

#ifdef __cplusplus
extern "C" {
#endif

/// Marks the start of training iteration `iteration` (the same as an NVTX range named
/// "iteration" with that payload): pool gauges are sampled and kernel timing windows start at
/// iteration boundaries.
void cuclimb_mark_iteration(unsigned long long iteration);

/// Pauses recording: callbacks are switched off in CUPTI, so the program runs at untraced
/// speed; a `recording` event with on=0 is written. Idempotent.
void cuclimb_pause(void);

/// Resumes recording after cuclimb_pause() or CUCLIMB_PAUSED=1. Idempotent.
void cuclimb_resume(void);

/// 1 while recording (started and not paused), else 0.
int cuclimb_is_recording(void);

/// Writes everything recorded so far to the trace file (drains the rings, flushes CUPTI
/// activity). Blocks the caller for up to a few milliseconds; not for hot loops.
void cuclimb_flush(void);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* CUCLIMB_CUCLIMB_H_ */
