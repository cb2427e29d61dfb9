//! The C functions a pass descriptor points at: they turn the ABI's bytes
//! into the `Pass` trait's types and back, and keep panics on this side of
//! the boundary.

use alloc::boxed::Box;
use alloc::string::{String, ToString};
use alloc::vec::Vec;
use core::ffi::c_void;

use aarchx_pass::{CpuLevel, GuestCode, MemoryModel, PassContext, TranslationConfig};
use aarchx_plugin_abi::options::decode_options;
use aarchx_plugin_abi::{decode_region, encode_region, encode_report, OutBuf, RunContext, STATUS_ERROR, STATUS_OK};

use crate::PluginPass;

/// `create`: decodes the options and makes a `P`.
///
/// # Safety
/// `options` points at `len` readable bytes and `err` at a valid [`OutBuf`].
pub unsafe extern "C" fn create<P: PluginPass>(options: *const u8, len: usize, err: *mut OutBuf) -> *mut c_void {
    // SAFETY: the host passes its encoded options' buffer and length.
    let bytes = unsafe { core::slice::from_raw_parts(options, len) };
    let made = guard(|| {
        let options = decode_options(bytes).map_err(|e| e.to_string())?;
        P::create(&options).map_err(|e| e.0)
    });
    match made {
        Ok(pass) => Box::into_raw(Box::new(pass)).cast(),
        Err(msg) => {
            // SAFETY: the host passes a valid `OutBuf`.
            unsafe { write(err, msg.as_bytes()) };
            core::ptr::null_mut()
        }
    }
}

/// `run`: decodes the region, runs the pass and encodes the result.
///
/// # Safety
/// `instance` came from [`create::<P>`] and is not in use elsewhere; `cx`
/// and `out` are valid; `region` points at `len` readable bytes.
pub unsafe extern "C" fn run<P: PluginPass>(
    instance: *mut c_void,
    cx: *const RunContext,
    region: *const u8,
    len: usize,
    out: *mut OutBuf,
) -> i32 {
    // SAFETY: per this function's contract.
    let (pass, cx, bytes) = unsafe { (&mut *instance.cast::<P>(), &*cx, core::slice::from_raw_parts(region, len)) };
    let result = guard(|| {
        let mut region = decode_region(bytes).map_err(|e| e.to_string())?;
        let config = TranslationConfig {
            memory_model: if cx.memory_model == 1 { MemoryModel::Ordered } else { MemoryModel::Plain },
            tso_vector: cx.tso_vector != 0,
            // Plugin ABI 1 does not carry the level: a plugin pass lifts
            // for the baseline.
            cpu_level: CpuLevel::V1,
            // Nor tiering: a plugin decode stage builds what it builds.
            superblocks: true,
        };
        let code = HostCode(cx);
        pass.run(&PassContext { code: &code, config: &config }, &mut region).map_err(|e| e.0)?;
        Ok(encode_region(&region))
    });
    // SAFETY: per this function's contract.
    unsafe { answer(out, result) }
}

/// `finish`: hands the pass its counters and encodes its report.
///
/// # Safety
/// `instance` came from [`create::<P>`] and is not in use elsewhere;
/// `counters` points at `n` readable u64; `out` is valid.
pub unsafe extern "C" fn finish<P: PluginPass>(
    instance: *mut c_void,
    counters: *const u64,
    n: usize,
    out: *mut OutBuf,
) -> i32 {
    // SAFETY: per this function's contract; a null pointer only comes with
    // `n == 0`, which reads nothing.
    let (pass, counters) = unsafe {
        (&mut *instance.cast::<P>(), if n == 0 { &[][..] } else { core::slice::from_raw_parts(counters, n) })
    };
    let result = guard(|| pass.finish(counters).map(|r| encode_report(&r)).map_err(|e| e.0));
    // SAFETY: per this function's contract.
    unsafe { answer(out, result) }
}

/// `destroy`: drops an instance.
///
/// # Safety
/// `instance` came from [`create::<P>`] and is not used afterwards.
pub unsafe extern "C" fn destroy<P: PluginPass>(instance: *mut c_void) {
    // SAFETY: per this function's contract, we own the box again.
    drop(unsafe { Box::from_raw(instance.cast::<P>()) });
}

/// Writes `result`'s bytes or error message to `out`; returns the status.
///
/// # Safety
/// `out` points at a valid [`OutBuf`].
unsafe fn answer(out: *mut OutBuf, result: Result<Vec<u8>, String>) -> i32 {
    let (status, bytes) = match result {
        Ok(encoded) => (STATUS_OK, encoded),
        Err(msg) => (STATUS_ERROR, msg.into_bytes()),
    };
    // SAFETY: per this function's contract.
    unsafe { write(out, &bytes) };
    status
}

/// Hands `bytes` to the host.
///
/// # Safety
/// `out` points at a valid [`OutBuf`].
unsafe fn write(out: *mut OutBuf, bytes: &[u8]) {
    // SAFETY: `out` is valid; its callback copies `bytes` before returning.
    unsafe { ((*out).write)((*out).ctx, bytes.as_ptr(), bytes.len()) }
}

/// Guest code read through the host's callback.
struct HostCode<'a>(&'a RunContext);

impl GuestCode for HostCode<'_> {
    fn read(&self, addr: u64, buf: &mut [u8]) -> usize {
        // SAFETY: the host's callback writes at most `buf.len()` bytes.
        unsafe { (self.0.read_code)(self.0.code_ctx, addr, buf.as_mut_ptr(), buf.len()) }
    }
}

/// Runs `f`; with `std`, a panic becomes an error message naming where it
/// happened instead of unwinding into the host.
#[cfg(all(feature = "std", not(target_arch = "wasm32")))]
fn guard<T>(f: impl FnOnce() -> Result<T, String>) -> Result<T, String> {
    use std::cell::RefCell;
    use std::panic::{self, AssertUnwindSafe};
    use std::sync::Once;

    std::thread_local!(static LAST_PANIC: RefCell<Option<String>> = const { RefCell::new(None) });
    static QUIET: Once = Once::new();
    // This hook belongs to the plugin's own copy of std: it silences and
    // records the plugin's panics only, never the host's.
    QUIET.call_once(|| panic::set_hook(Box::new(|info| LAST_PANIC.with(|p| *p.borrow_mut() = Some(info.to_string())))));
    panic::catch_unwind(AssertUnwindSafe(f)).unwrap_or_else(|_| {
        let msg = LAST_PANIC.with(|p| p.borrow_mut().take()).unwrap_or_else(|| String::from("panicked"));
        Err(msg.replace('\n', " "))
    })
}

/// Runs `f`; without `std` a panic aborts (on wasm32: traps).
#[cfg(not(all(feature = "std", not(target_arch = "wasm32"))))]
fn guard<T>(f: impl FnOnce() -> Result<T, String>) -> Result<T, String> {
    f()
}
