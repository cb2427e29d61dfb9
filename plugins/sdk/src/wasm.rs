//! The wasm32 side of the plugin ABI. A WASM module cannot hand the host
//! function pointers (they are indices into its own table) and its
//! pointers are offsets into its linear memory, so on top of the
//! descriptor (read by the host with the wasm32 layout) a plugin exports
//! one function per call, taking the pass's index, and the host's two
//! callbacks become imported functions. `export_plugin!` emits the exports
//! through [`__wasm_exports!`](crate::__wasm_exports); this module has what
//! they call, the imports, the global allocator and the panic handler.
//! `docs/plugins.md` ("WASM plugins") documents the exports and imports.
//!
//! The calls reuse the native glue (module [`glue`](crate::glue)) through
//! the descriptor's own function pointers, with an [`OutBuf`] and a
//! [`RunContext`] whose callbacks forward to the imports.

use alloc::alloc::Layout;
use alloc::string::ToString;
use core::ffi::c_void;

use aarchx_plugin_abi::{OutBuf, PassDescriptor, PluginDescriptor, RunContext};

/// The host's layouts assume these sizes (docs/plugins.md, "WASM plugins").
const _: () = assert!(core::mem::size_of::<PluginDescriptor>() == 20);
const _: () = assert!(core::mem::size_of::<PassDescriptor>() == 64);
const _: () = assert!(core::mem::size_of::<aarchx_plugin_abi::OptionDescriptor>() == 40);

/// A general-purpose allocator over `memory.grow`: dlmalloc, the allocator
/// Rust's own wasm32 std uses.
#[global_allocator]
static ALLOCATOR: dlmalloc::GlobalDlmalloc = dlmalloc::GlobalDlmalloc;

/// The functions the host provides, module `aarchx`.
mod host {
    #[link(wasm_import_module = "aarchx")]
    extern "C" {
        /// Appends `len` bytes at `ptr` to the output of the current call.
        pub fn write(ptr: *const u8, len: usize);
        /// Copies up to `len` guest code bytes at `addr` to `buf`; returns
        /// how many.
        pub fn read_code(addr: u64, buf: *mut u8, len: usize) -> usize;
        /// Ends the current call with a trap whose message is the UTF-8
        /// text at `ptr`.
        pub fn panic(ptr: *const u8, len: usize) -> !;
    }
}

/// A panic hands its message to the host, which traps: the pass fails with
/// that message, like a native pass's caught panic.
#[panic_handler]
fn panic(info: &core::panic::PanicInfo<'_>) -> ! {
    let message = info.to_string();
    // SAFETY: the import reads `message` and never returns.
    unsafe { host::panic(message.as_ptr(), message.len()) }
}

/// The descriptor of pass `pass` of `plugin`; a wrong index panics (traps).
fn pass_at(plugin: &'static PluginDescriptor, pass: u32) -> &'static PassDescriptor {
    assert!(pass < plugin.n_passes, "the plugin has no pass {pass}");
    // SAFETY: `passes` points at the `n_passes` static descriptors of
    // `export_plugin!`.
    unsafe { &*plugin.passes.add(pass as usize) }
}

/// An [`OutBuf`] writing to the host.
fn host_out() -> OutBuf {
    OutBuf { ctx: core::ptr::null_mut(), write: write_to_host }
}

unsafe extern "C" fn write_to_host(_: *mut c_void, ptr: *const u8, len: usize) {
    // SAFETY: the glue passes bytes it owns; the host copies them.
    unsafe { host::write(ptr, len) }
}

unsafe extern "C" fn read_code_from_host(_: *const c_void, addr: u64, buf: *mut u8, len: usize) -> usize {
    // SAFETY: `buf` is `len` writable bytes of this module's memory.
    unsafe { host::read_code(addr, buf, len) }
}

/// `aarchx_alloc`: `len` bytes (8-aligned) for the host to fill; null when
/// memory is exhausted.
pub fn alloc(len: usize) -> *mut u8 {
    match Layout::from_size_align(len.max(1), 8) {
        // SAFETY: the layout has a non-zero size.
        Ok(layout) => unsafe { alloc::alloc::alloc(layout) },
        Err(_) => core::ptr::null_mut(),
    }
}

/// `aarchx_free`: frees what [`alloc`] returned for the same `len`.
///
/// # Safety
/// `ptr` came from [`alloc`]`(len)` and is not used afterwards.
pub unsafe fn free(ptr: *mut u8, len: usize) {
    if let Ok(layout) = Layout::from_size_align(len.max(1), 8) {
        // SAFETY: per this function's contract.
        unsafe { alloc::alloc::dealloc(ptr, layout) }
    }
}

/// `aarchx_create`: the pass's `create` with an error buffer writing to
/// the host.
///
/// # Safety
/// `options` points at `len` bytes of this module's memory.
pub unsafe fn create(plugin: &'static PluginDescriptor, pass: u32, options: *const u8, len: usize) -> *mut c_void {
    let mut err = host_out();
    // SAFETY: per this function's contract; `err` outlives the call.
    unsafe { (pass_at(plugin, pass).create)(options, len, &mut err) }
}

/// `aarchx_run`: the pass's `run` with a context and output buffer
/// forwarding to the host.
///
/// # Safety
/// `instance` came from [`create`] for the same pass; `region` points at
/// `len` bytes of this module's memory.
pub unsafe fn run(
    plugin: &'static PluginDescriptor,
    pass: u32,
    instance: *mut c_void,
    memory_model: u32,
    tso_vector: u32,
    region: *const u8,
    len: usize,
) -> i32 {
    let cx = RunContext { memory_model, tso_vector, code_ctx: core::ptr::null(), read_code: read_code_from_host };
    let mut out = host_out();
    // SAFETY: per this function's contract; `cx` and `out` outlive the call.
    unsafe { (pass_at(plugin, pass).run)(instance, &cx, region, len, &mut out) }
}

/// `aarchx_finish`: the pass's `finish` with an output buffer writing to
/// the host.
///
/// # Safety
/// `instance` came from [`create`] for the same pass; `counters` points at
/// `n` u64 of this module's memory.
pub unsafe fn finish(
    plugin: &'static PluginDescriptor,
    pass: u32,
    instance: *mut c_void,
    counters: *const u64,
    n: usize,
) -> i32 {
    let mut out = host_out();
    // SAFETY: per this function's contract; `out` outlives the call.
    unsafe { (pass_at(plugin, pass).finish)(instance, counters, n, &mut out) }
}

/// `aarchx_destroy`: the pass's `destroy`.
///
/// # Safety
/// `instance` came from [`create`] for the same pass and is not used
/// afterwards.
pub unsafe fn destroy(plugin: &'static PluginDescriptor, pass: u32, instance: *mut c_void) {
    // SAFETY: per this function's contract.
    unsafe { (pass_at(plugin, pass).destroy)(instance) }
}

/// The WASM exports of a plugin whose `aarchx_plugin_v1` is in scope; used
/// by `export_plugin!` on wasm32.
#[doc(hidden)]
#[macro_export]
macro_rules! __wasm_exports {
    () => {
        #[no_mangle]
        pub extern "C" fn aarchx_alloc(len: usize) -> *mut u8 {
            $crate::wasm::alloc(len)
        }

        /// # Safety
        /// Called by the host with what `aarchx_alloc` returned.
        #[no_mangle]
        pub unsafe extern "C" fn aarchx_free(ptr: *mut u8, len: usize) {
            // SAFETY: per this function's contract.
            unsafe { $crate::wasm::free(ptr, len) }
        }

        /// # Safety
        /// Called by the host per the ABI.
        #[no_mangle]
        pub unsafe extern "C" fn aarchx_create(pass: u32, options: *const u8, len: usize) -> *mut ::core::ffi::c_void {
            // SAFETY: per this function's contract; the descriptor is static.
            unsafe { $crate::wasm::create(&*aarchx_plugin_v1(), pass, options, len) }
        }

        /// # Safety
        /// Called by the host per the ABI.
        #[no_mangle]
        pub unsafe extern "C" fn aarchx_run(
            pass: u32,
            instance: *mut ::core::ffi::c_void,
            memory_model: u32,
            tso_vector: u32,
            region: *const u8,
            len: usize,
        ) -> i32 {
            // SAFETY: per this function's contract; the descriptor is static.
            unsafe { $crate::wasm::run(&*aarchx_plugin_v1(), pass, instance, memory_model, tso_vector, region, len) }
        }

        /// # Safety
        /// Called by the host per the ABI.
        #[no_mangle]
        pub unsafe extern "C" fn aarchx_finish(
            pass: u32,
            instance: *mut ::core::ffi::c_void,
            counters: *const u64,
            n: usize,
        ) -> i32 {
            // SAFETY: per this function's contract; the descriptor is static.
            unsafe { $crate::wasm::finish(&*aarchx_plugin_v1(), pass, instance, counters, n) }
        }

        /// # Safety
        /// Called by the host per the ABI.
        #[no_mangle]
        pub unsafe extern "C" fn aarchx_destroy(pass: u32, instance: *mut ::core::ffi::c_void) {
            // SAFETY: per this function's contract; the descriptor is static.
            unsafe { $crate::wasm::destroy(&*aarchx_plugin_v1(), pass, instance) }
        }
    };
}
