//! A pass of a native plugin behind the [`Pass`] trait: each run encodes
//! the region, calls the plugin's `run`, decodes what it wrote and runs the
//! verifier on it. The region is replaced only when all of that succeeds,
//! so a failed run leaves it as it was (which `skip` relies on). At exit,
//! `finish` hands the instance its counters and decodes its report.

use std::ffi::c_void;
use std::sync::Arc;

use aarchx_ir::verify::verify;
use aarchx_ir::Region;
use aarchx_pass::{GuestCode, MemoryModel, Options, Pass, PassContext, PassError, Report};
use aarchx_plugin_abi::descriptor::{CreateFn, DestroyFn, FinishFn, RunFn};
use aarchx_plugin_abi::options::encode_options;
use aarchx_plugin_abi::{
    decode_region, decode_report, encode_region, OutBuf, PassDescriptor, RunContext, STATUS_ERROR, STATUS_OK,
};

use super::load::{Plugin, PluginError};

/// A pass of a loaded plugin, ready to create instances.
pub struct PluginPass {
    plugin: Arc<Plugin>,
    name: String,
    create: CreateFn,
    run: RunFn,
    destroy: DestroyFn,
    finish: FinishFn,
}

impl PluginPass {
    /// The pass `desc` describes; its functions stay valid while `plugin`
    /// is loaded, which the returned value guarantees by holding it.
    pub fn new(plugin: Arc<Plugin>, name: String, desc: &PassDescriptor) -> PluginPass {
        PluginPass { plugin, name, create: desc.create, run: desc.run, destroy: desc.destroy, finish: desc.finish }
    }

    pub fn plugin(&self) -> &Arc<Plugin> {
        &self.plugin
    }

    /// Creates an instance with validated `options`.
    pub fn create(&self, options: &Options) -> Result<NativePass, PluginError> {
        let encoded = encode_options(options);
        let mut err = Vec::new();
        let mut out = out_buf(&mut err);
        // SAFETY: `create` is the plugin's, valid while `self.plugin` is
        // loaded; the options buffer and `out` outlive the call.
        let instance = unsafe { (self.create)(encoded.as_ptr(), encoded.len(), &mut out) };
        if instance.is_null() {
            return Err(PluginError::Create {
                file: self.plugin.file.clone(),
                pass: self.name.clone(),
                message: one_line(&err),
            });
        }
        Ok(NativePass {
            _plugin: self.plugin.clone(),
            run: self.run,
            destroy: self.destroy,
            finish: self.finish,
            instance,
        })
    }
}

/// One instance of a plugin pass.
pub struct NativePass {
    /// Keeps the library loaded while the instance exists.
    _plugin: Arc<Plugin>,
    run: RunFn,
    destroy: DestroyFn,
    finish: FinishFn,
    instance: *mut c_void,
}

impl Pass for NativePass {
    fn run(&mut self, cx: &PassContext<'_>, region: &mut Region) -> Result<(), PassError> {
        let input = encode_region(region);
        let mut output = Vec::new();
        let mut out = out_buf(&mut output);
        let code: &dyn GuestCode = cx.code;
        let rcx = RunContext {
            memory_model: u32::from(cx.config.memory_model == MemoryModel::Ordered),
            tso_vector: u32::from(cx.config.tso_vector),
            code_ctx: (&raw const code).cast(),
            read_code,
        };
        // SAFETY: `run` and `instance` are the plugin's, valid while
        // `self.plugin` is loaded; every pointer passed outlives the call.
        let status = unsafe { (self.run)(self.instance, &rcx, input.as_ptr(), input.len(), &mut out) };
        *region = region_from_output(status, &output)?;
        Ok(())
    }

    fn finish(&mut self, counters: &[u64]) -> Result<Report, PassError> {
        let mut output = Vec::new();
        let mut out = out_buf(&mut output);
        // SAFETY: `finish` and `instance` are the plugin's, valid while
        // `self.plugin` is loaded; `counters` and `out` outlive the call.
        let status = unsafe { (self.finish)(self.instance, counters.as_ptr(), counters.len(), &mut out) };
        report_from_output(status, &output)
    }
}

/// What a plugin's `run` returned (native or WASM): the decoded and
/// verified region, or the failure.
pub(crate) fn region_from_output(status: i32, output: &[u8]) -> Result<Region, PassError> {
    match status {
        STATUS_OK => {}
        STATUS_ERROR => return Err(PassError(one_line(output))),
        other => return Err(PassError(format!("returned unknown status {other}"))),
    }
    let result = decode_region(output).map_err(|e| PassError(format!("returned an unreadable region: {e}")))?;
    verify(&result).map_err(|e| PassError(format!("returned IR the verifier rejects: {e}")))?;
    Ok(result)
}

/// What a plugin's `finish` returned (native or WASM): the decoded report,
/// or the failure.
pub(super) fn report_from_output(status: i32, output: &[u8]) -> Result<Report, PassError> {
    match status {
        STATUS_OK => decode_report(output).map_err(|e| PassError(format!("returned an unreadable report: {e}"))),
        STATUS_ERROR => Err(PassError(one_line(output))),
        other => Err(PassError(format!("returned unknown status {other}"))),
    }
}

impl Drop for NativePass {
    fn drop(&mut self) {
        // SAFETY: `instance` came from this pass's `create` and is dropped
        // once; the library is still loaded (`self._plugin`).
        unsafe { (self.destroy)(self.instance) };
    }
}

/// An [`OutBuf`] appending to `buf`.
fn out_buf(buf: &mut Vec<u8>) -> OutBuf {
    OutBuf { ctx: (buf as *mut Vec<u8>).cast(), write: append }
}

/// The [`OutBuf`] callback: copies the plugin's bytes.
///
/// # Safety
/// `ctx` is the `Vec<u8>` of [`out_buf`]; `ptr` points at `len` bytes.
unsafe extern "C" fn append(ctx: *mut c_void, ptr: *const u8, len: usize) {
    if len == 0 {
        return;
    }
    // SAFETY: per this function's contract.
    let (buf, bytes) = unsafe { (&mut *ctx.cast::<Vec<u8>>(), std::slice::from_raw_parts(ptr, len)) };
    buf.extend_from_slice(bytes);
}

/// The [`RunContext::read_code`] callback.
///
/// # Safety
/// `ctx` points at the `&dyn GuestCode` of the running pass; `buf` at `len`
/// writable bytes.
unsafe extern "C" fn read_code(ctx: *const c_void, addr: u64, buf: *mut u8, len: usize) -> usize {
    if len == 0 {
        return 0;
    }
    // SAFETY: per this function's contract.
    let (code, buf) = unsafe { (&*ctx.cast::<&dyn GuestCode>(), std::slice::from_raw_parts_mut(buf, len)) };
    code.read(addr, buf)
}

/// A plugin's message as one line.
fn one_line(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).split_whitespace().collect::<Vec<_>>().join(" ")
}
