// SPDX-License-Identifier: Apache-2.0
// A std-only Rust program that drives the CUDA driver the way cudarc does: libcuda.so.1 is
// dlopen'ed and every entry point is found with dlsym(handle) (an LD_PRELOAD wrapper never sees
// these calls; CUPTI does). Each iteration launches one kernel (embedded PTX, so the iterations
// can be found by launch period), makes a temporary allocation it frees, and leaks one 64 KiB
// scratch buffer from `keep_scratch_buffer`: the accumulator cuclimb must name by that function.
//
//   scratch_leak [ITERATIONS]      exit 77 without a CUDA driver or device
use std::ffi::{c_char, c_int, c_uint, c_void, CStr};
use std::process::exit;

type CuResult = c_int;
type Device = c_int;
type Context = *mut c_void;
type Module = *mut c_void;
type Function = *mut c_void;
type DevicePtr = u64;

const RTLD_NOW: c_int = 2;
const SCRATCH_BYTES: usize = 64 << 10;
const TEMP_WORDS: u32 = 256;

extern "C" {
    fn dlopen(filename: *const c_char, flags: c_int) -> *mut c_void;
    fn dlsym(handle: *mut c_void, symbol: *const c_char) -> *mut c_void;
}

const PTX: &CStr = c"
.version 7.0
.target sm_70
.address_size 64
.visible .entry touch(.param .u64 data, .param .u32 count)
{
    .reg .pred %p<2>;
    .reg .b32 %r<4>;
    .reg .b64 %rd<5>;
    ld.param.u64 %rd1, [data];
    ld.param.u32 %r1, [count];
    mov.u32 %r2, %tid.x;
    setp.ge.u32 %p1, %r2, %r1;
    @%p1 bra DONE;
    cvta.to.global.u64 %rd2, %rd1;
    mul.wide.u32 %rd3, %r2, 4;
    add.s64 %rd4, %rd2, %rd3;
    st.global.u32 [%rd4], %r2;
DONE:
    ret;
}
";

/// The driver entry points this program uses, resolved from the dlopen'ed library.
struct Driver {
    init: unsafe extern "C" fn(c_uint) -> CuResult,
    device_get_count: unsafe extern "C" fn(*mut c_int) -> CuResult,
    device_get: unsafe extern "C" fn(*mut Device, c_int) -> CuResult,
    primary_ctx_retain: unsafe extern "C" fn(*mut Context, Device) -> CuResult,
    ctx_set_current: unsafe extern "C" fn(Context) -> CuResult,
    module_load_data: unsafe extern "C" fn(*mut Module, *const c_void) -> CuResult,
    module_get_function: unsafe extern "C" fn(*mut Function, Module, *const c_char) -> CuResult,
    mem_alloc: unsafe extern "C" fn(*mut DevicePtr, usize) -> CuResult,
    mem_free: unsafe extern "C" fn(DevicePtr) -> CuResult,
    launch_kernel: unsafe extern "C" fn(
        Function, c_uint, c_uint, c_uint, c_uint, c_uint, c_uint, c_uint, *mut c_void,
        *mut *mut c_void, *mut *mut c_void,
    ) -> CuResult,
    ctx_synchronize: unsafe extern "C" fn() -> CuResult,
}

fn symbol(handle: *mut c_void, name: &CStr) -> *mut c_void {
    let p = unsafe { dlsym(handle, name.as_ptr()) };
    if p.is_null() {
        eprintln!("scratch_leak: libcuda.so.1 has no {:?}", name);
        exit(77);
    }
    p
}

impl Driver {
    fn load() -> Option<Driver> {
        let handle = unsafe { dlopen(c"libcuda.so.1".as_ptr(), RTLD_NOW) };
        if handle.is_null() {
            return None;
        }
        macro_rules! entry {
            ($name:expr) => {
                unsafe { std::mem::transmute(symbol(handle, $name)) }
            };
        }
        Some(Driver {
            init: entry!(c"cuInit"),
            device_get_count: entry!(c"cuDeviceGetCount"),
            device_get: entry!(c"cuDeviceGet"),
            primary_ctx_retain: entry!(c"cuDevicePrimaryCtxRetain"),
            ctx_set_current: entry!(c"cuCtxSetCurrent"),
            module_load_data: entry!(c"cuModuleLoadData"),
            module_get_function: entry!(c"cuModuleGetFunction"),
            mem_alloc: entry!(c"cuMemAlloc_v2"),
            mem_free: entry!(c"cuMemFree_v2"),
            launch_kernel: entry!(c"cuLaunchKernel"),
            ctx_synchronize: entry!(c"cuCtxSynchronize"),
        })
    }
}

fn check(what: &str, result: CuResult) {
    if result != 0 {
        eprintln!("scratch_leak: {} failed with CUresult {}", what, result);
        exit(1);
    }
}

/// The leak: a scratch buffer that is kept "for later" and never given back.
#[inline(never)]
fn keep_scratch_buffer(driver: &Driver, kept: &mut Vec<DevicePtr>) {
    let mut ptr: DevicePtr = 0;
    check("cuMemAlloc", unsafe { (driver.mem_alloc)(&mut ptr, SCRATCH_BYTES) });
    kept.push(ptr);
}

/// One step: a temporary buffer, one kernel on it, a synchronization, the buffer freed.
#[inline(never)]
fn run_step(driver: &Driver, kernel: Function) {
    let mut temp: DevicePtr = 0;
    check("cuMemAlloc", unsafe { (driver.mem_alloc)(&mut temp, TEMP_WORDS as usize * 4) });
    let mut count = TEMP_WORDS;
    let mut params: [*mut c_void; 2] = [
        &mut temp as *mut DevicePtr as *mut c_void,
        &mut count as *mut u32 as *mut c_void,
    ];
    check("cuLaunchKernel", unsafe {
        (driver.launch_kernel)(
            kernel, 1, 1, 1, TEMP_WORDS, 1, 1, 0, std::ptr::null_mut(),
            params.as_mut_ptr(), std::ptr::null_mut(),
        )
    });
    check("cuCtxSynchronize", unsafe { (driver.ctx_synchronize)() });
    check("cuMemFree", unsafe { (driver.mem_free)(temp) });
}

fn main() {
    let iterations: usize = std::env::args().nth(1).and_then(|s| s.parse().ok()).unwrap_or(200);
    let Some(driver) = Driver::load() else {
        eprintln!("scratch_leak: no libcuda.so.1 (no NVIDIA driver): skipped");
        exit(77);
    };
    let mut devices: c_int = 0;
    if unsafe { (driver.init)(0) } != 0
        || unsafe { (driver.device_get_count)(&mut devices) } != 0
        || devices == 0
    {
        eprintln!("scratch_leak: no CUDA device: skipped");
        exit(77);
    }
    let mut device: Device = 0;
    check("cuDeviceGet", unsafe { (driver.device_get)(&mut device, 0) });
    let mut context: Context = std::ptr::null_mut();
    check("cuDevicePrimaryCtxRetain", unsafe { (driver.primary_ctx_retain)(&mut context, device) });
    check("cuCtxSetCurrent", unsafe { (driver.ctx_set_current)(context) });
    let mut module: Module = std::ptr::null_mut();
    check("cuModuleLoadData", unsafe {
        (driver.module_load_data)(&mut module, PTX.as_ptr() as *const c_void)
    });
    let mut kernel: Function = std::ptr::null_mut();
    check("cuModuleGetFunction", unsafe {
        (driver.module_get_function)(&mut kernel, module, c"touch".as_ptr())
    });
    let mut kept = Vec::new();
    for _ in 0..iterations {
        run_step(&driver, kernel);
        keep_scratch_buffer(&driver, &mut kept);
    }
    println!(
        "scratch_leak: {} iterations, {} scratch buffers kept ({} KiB)",
        iterations,
        kept.len(),
        kept.len() * SCRATCH_BYTES / 1024
    );
}
