//! WASM plugins through wasmtime: compiling and checking a module, and its
//! passes behind the [`Pass`] trait. The ABI is the native one over linear
//! memory (docs/plugins.md, "WASM plugins"): the descriptor is read from
//! the module's memory with the wasm32 layout, each call is an exported
//! function taking the pass's index, and the host's callbacks (`write`,
//! `read_code`, and `panic` for a panicking plugin) are imported functions
//! of module `aarchx`.
//!
//! Each pass instance has a store of its own, so passes are isolated from
//! each other. Every call runs under a time limit ([`CALL_LIMIT`], epoch
//! interruption ticked by one background thread) and the store under a
//! memory limit ([`MEMORY_LIMIT`]); a trap, a timeout or the limit fails
//! the call with a one-line message, and the instance is not called again
//! (its memory may be half-updated): its later regions, and its `finish`,
//! fail with that message.
//! Output regions go through the same decoding and verification as a
//! native plugin's.

use std::path::Path;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use aarchx_ir::Region;
use aarchx_pass::{GuestCode, MemoryModel, OptionValue, Options, Pass, PassContext, PassError, Report};
use aarchx_plugin_abi::descriptor::stage_from_code;
use aarchx_plugin_abi::options::encode_options;
use aarchx_plugin_abi::{encode_region, OptionKind, ABI_VERSION, IR_ENCODING_VERSION, PLUGIN_MAGIC};
use wasmtime::{
    Caller, Config, Engine, Instance, InstancePre, Linker, Memory, Module, ResourceLimiter, Store, StoreLimits,
    StoreLimitsBuilder, Trap, TypedFunc,
};

use super::load::{Plugin, PluginError};
use super::native::{region_from_output, report_from_output};
use super::registry::{OptionDef, PassDef, PassSource};

/// How long one call into a plugin may run before it is stopped.
pub const CALL_LIMIT: Duration = Duration::from_secs(1);
/// The epoch tick: a call is stopped between `CALL_LIMIT - TICK` and
/// `CALL_LIMIT` after it starts.
const TICK: Duration = Duration::from_millis(50);
/// The most linear memory one pass instance may have.
pub const MEMORY_LIMIT: usize = 64 << 20;
/// The most WASM stack one call may use.
const STACK_LIMIT: usize = 1 << 20;

/// The wasm32 layouts of the descriptor types (docs/plugins.md; the SDK
/// asserts the same sizes when it builds for wasm32).
const PLUGIN_SIZE: usize = 20;
const PASS_SIZE: usize = 64;
const OPTION_SIZE: usize = 40;
const STR_SIZE: usize = 8;

/// A panic the plugin reported through the `panic` import.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
struct Panicked(String);

/// Memory growth past [`MEMORY_LIMIT`].
#[derive(Debug, thiserror::Error)]
#[error("needed {0} bytes of memory, more than its limit of {limit} MiB", limit = MEMORY_LIMIT >> 20)]
struct MemoryLimit(usize);

/// What the host functions see of a call in progress.
struct Data {
    limits: Limits,
    /// What the plugin wrote through `write` during the current call.
    out: Vec<u8>,
    /// During `run`, the `&dyn GuestCode` of the pass context; null
    /// otherwise.
    code: *const std::ffi::c_void,
}

/// The store's limits, with growth past the memory limit reported as
/// [`MemoryLimit`] (wasmtime's own message does not name the limit).
struct Limits(StoreLimits);

impl ResourceLimiter for Limits {
    fn memory_growing(&mut self, current: usize, desired: usize, maximum: Option<usize>) -> wasmtime::Result<bool> {
        self.0.memory_growing(current, desired, maximum).map_err(|_| wasmtime::Error::new(MemoryLimit(desired)))
    }

    fn table_growing(&mut self, current: usize, desired: usize, maximum: Option<usize>) -> wasmtime::Result<bool> {
        self.0.table_growing(current, desired, maximum)
    }
}

/// The engine all plugins share: Cranelift, epoch interruption, no signal
/// handlers (aarchx owns the process's signals, for the guest), so every
/// bounds check is explicit code.
fn engine() -> Result<&'static Engine, String> {
    static ENGINE: OnceLock<Result<Engine, String>> = OnceLock::new();
    ENGINE
        .get_or_init(|| {
            let mut config = Config::new();
            config.epoch_interruption(true);
            config.signals_based_traps(false);
            config.memory_guard_size(0);
            config.memory_reservation(MEMORY_LIMIT as u64);
            config.max_wasm_stack(STACK_LIMIT);
            // SAFETY: these flags only turn off Spectre hardening of
            // bounds checks, which relies on faulting loads and so on the
            // signal handlers disabled above; wasmtime requires both off.
            unsafe {
                config.cranelift_flag_set("enable_heap_access_spectre_mitigation", "false");
                config.cranelift_flag_set("enable_table_access_spectre_mitigation", "false");
            }
            Engine::new(&config).map_err(|e| one_line(&e.to_string()))
        })
        .as_ref()
        .map_err(Clone::clone)
}

/// Starts the thread that advances the engine's epoch, once per process
/// (again in a forked child, which has no threads but the forking one).
/// The thread starts with every signal blocked, so the guest's signals
/// reach the main thread.
fn ensure_ticker(engine: &'static Engine) -> Result<(), String> {
    static TICKER_PID: AtomicU32 = AtomicU32::new(0);
    let pid = std::process::id();
    if TICKER_PID.load(Ordering::Relaxed) == pid {
        return Ok(());
    }
    let spawned = crate::signals::spawn_quiet("aarchx-wasm-epoch", move || loop {
        std::thread::sleep(TICK);
        engine.increment_epoch();
    });
    spawned.map_err(|e| format!("cannot start the WASM time-limit thread: {e}"))?;
    TICKER_PID.store(pid, Ordering::Relaxed);
    Ok(())
}

/// A compiled plugin module, ready to instantiate.
pub struct WasmModule {
    plugin: Arc<Plugin>,
    pre: InstancePre<Data>,
}

/// One pass of a WASM plugin, ready to create instances.
pub struct WasmPassDef {
    module: Arc<WasmModule>,
    index: u32,
    name: String,
}

impl WasmPassDef {
    pub fn plugin(&self) -> &Arc<Plugin> {
        &self.module.plugin
    }

    /// Creates an instance with validated `options`, in a store of its own.
    pub fn create(&self, options: &Options) -> Result<WasmPass, PluginError> {
        let failed = |message: String| PluginError::Create {
            file: self.module.plugin.file.clone(),
            pass: self.name.clone(),
            message,
        };
        let mut call = Call::new(&self.module.pre).map_err(failed)?;
        let exports = Exports::of(&call.instance, &mut call.store).map_err(failed)?;
        let encoded = encode_options(options);
        let (handle, out) = call
            .with_input(&exports, &encoded, |store, ptr, len| exports.create.call(store, (self.index, ptr, len)))
            .map_err(failed)?;
        if handle == 0 {
            return Err(failed(one_line(&String::from_utf8_lossy(&out))));
        }
        Ok(WasmPass { call, exports, index: self.index, handle, broken: None })
    }
}

/// The exported functions a plugin must have besides its entry point.
struct Exports {
    memory: Memory,
    alloc: TypedFunc<u32, u32>,
    free: TypedFunc<(u32, u32), ()>,
    create: TypedFunc<(u32, u32, u32), u32>,
    run: TypedFunc<(u32, u32, u32, u32, u32, u32), i32>,
    finish: TypedFunc<(u32, u32, u32, u32), i32>,
    destroy: TypedFunc<(u32, u32), ()>,
}

impl Exports {
    fn of(instance: &Instance, store: &mut Store<Data>) -> Result<Exports, String> {
        let memory =
            instance.get_memory(&mut *store, "memory").ok_or_else(|| "no exported memory `memory`".to_string())?;
        macro_rules! func {
            ($name:literal) => {
                instance
                    .get_typed_func(&mut *store, $name)
                    .map_err(|e| format!("export `{}`: {}", $name, one_line(&e.to_string())))?
            };
        }
        Ok(Exports {
            memory,
            alloc: func!("aarchx_alloc"),
            free: func!("aarchx_free"),
            create: func!("aarchx_create"),
            run: func!("aarchx_run"),
            finish: func!("aarchx_finish"),
            destroy: func!("aarchx_destroy"),
        })
    }
}

/// A store with one instance of a plugin module, and how to call it.
struct Call {
    store: Store<Data>,
    instance: Instance,
}

impl Call {
    fn new(pre: &InstancePre<Data>) -> Result<Call, String> {
        let engine = engine()?;
        let limits = Limits(StoreLimitsBuilder::new().memory_size(MEMORY_LIMIT).trap_on_grow_failure(true).build());
        let mut store = Store::new(engine, Data { limits, out: Vec::new(), code: std::ptr::null() });
        store.limiter(|d| &mut d.limits);
        store.epoch_deadline_trap();
        let instance = guarded(&mut store, |s| pre.instantiate(s))?;
        Ok(Call { store, instance })
    }

    /// Copies `input` into the module's memory, runs `f` with its address
    /// and length, and frees it; returns `f`'s result and what the plugin
    /// wrote.
    fn with_input<R>(
        &mut self,
        exports: &Exports,
        input: &[u8],
        f: impl FnOnce(&mut Store<Data>, u32, u32) -> wasmtime::Result<R>,
    ) -> Result<(R, Vec<u8>), String> {
        let len = u32::try_from(input.len()).map_err(|_| "input larger than 4 GiB".to_string())?;
        let ptr = guarded(&mut self.store, |s| exports.alloc.call(s, len))?;
        if ptr == 0 {
            return Err(format!("could not allocate {len} bytes for its input"));
        }
        exports
            .memory
            .write(&mut self.store, ptr as usize, input)
            .map_err(|_| format!("allocated {len} bytes outside its memory"))?;
        self.store.data_mut().out.clear();
        let result = guarded(&mut self.store, |s| f(s, ptr, len))?;
        let out = std::mem::take(&mut self.store.data_mut().out);
        guarded(&mut self.store, |s| exports.free.call(s, (ptr, len)))?;
        Ok((result, out))
    }
}

/// Runs `f` on `store` under the time limit; a trap, a timeout or a host
/// function's error becomes a one-line message.
fn guarded<R>(store: &mut Store<Data>, f: impl FnOnce(&mut Store<Data>) -> wasmtime::Result<R>) -> Result<R, String> {
    ensure_ticker(engine()?)?;
    store.set_epoch_deadline((CALL_LIMIT.as_millis() / TICK.as_millis()) as u64);
    f(store).map_err(|e| describe(&e))
}

/// A trap or error from wasmtime as one line.
fn describe(e: &wasmtime::Error) -> String {
    if let Some(p) = e.downcast_ref::<Panicked>() {
        return one_line(&p.0);
    }
    if let Some(m) = e.downcast_ref::<MemoryLimit>() {
        return m.to_string();
    }
    match e.downcast_ref::<Trap>() {
        Some(Trap::Interrupt) => format!("did not return within {} s and was stopped", CALL_LIMIT.as_secs_f32()),
        Some(trap) => trap.to_string(),
        None => format!("trapped: {}", one_line(&e.root_cause().to_string())),
    }
}

/// One instance of a WASM plugin pass.
pub struct WasmPass {
    call: Call,
    exports: Exports,
    index: u32,
    /// The instance's handle in the module (what `aarchx_create` returned).
    handle: u32,
    /// Why the instance stopped being callable, after a trap or timeout.
    broken: Option<String>,
}

impl WasmPass {
    /// Calls into the instance unless it broke earlier; a failure of the
    /// call itself (not an error status) breaks it.
    fn call<R>(
        &mut self,
        input: &[u8],
        f: impl FnOnce(&Exports, &mut Store<Data>, u32, u32) -> wasmtime::Result<R>,
    ) -> Result<(R, Vec<u8>), PassError> {
        if let Some(why) = &self.broken {
            return Err(PassError(format!("stopped after an earlier failure: {why}")));
        }
        let exports = &self.exports;
        self.call.with_input(exports, input, |s, ptr, len| f(exports, s, ptr, len)).map_err(|why| {
            self.broken = Some(why.clone());
            PassError(why)
        })
    }
}

impl Pass for WasmPass {
    fn run(&mut self, cx: &PassContext<'_>, region: &mut Region) -> Result<(), PassError> {
        let input = encode_region(region);
        let code: &dyn GuestCode = cx.code;
        self.call.store.data_mut().code = (&raw const code).cast();
        let args = (u32::from(cx.config.memory_model == MemoryModel::Ordered), u32::from(cx.config.tso_vector));
        let (index, handle) = (self.index, self.handle);
        let result = self.call(&input, |e, s, ptr, len| e.run.call(s, (index, handle, args.0, args.1, ptr, len)));
        self.call.store.data_mut().code = std::ptr::null();
        let (status, output) = result?;
        *region = region_from_output(status, &output)?;
        Ok(())
    }

    fn finish(&mut self, counters: &[u64]) -> Result<Report, PassError> {
        let input: Vec<u8> = counters.iter().flat_map(|c| c.to_le_bytes()).collect();
        let (index, handle, n) = (self.index, self.handle, counters.len() as u32);
        let (status, output) = self.call(&input, |e, s, ptr, _| e.finish.call(s, (index, handle, ptr, n)))?;
        report_from_output(status, &output)
    }
}

impl Drop for WasmPass {
    fn drop(&mut self) {
        if self.broken.is_none() {
            let (index, handle) = (self.index, self.handle);
            // The store goes with the instance; a failing `destroy` changes
            // nothing worth reporting at exit.
            let _ = guarded(&mut self.call.store, |s| self.exports.destroy.call(s, (index, handle)));
        }
    }
}

/// The host functions a plugin imports, module `aarchx`.
fn linker(engine: &Engine) -> wasmtime::Result<Linker<Data>> {
    let mut linker = Linker::new(engine);
    linker.func_wrap("aarchx", "write", |mut caller: Caller<'_, Data>, ptr: u32, len: u32| {
        let memory = memory_of(&mut caller)?;
        let (mem, data) = memory.data_and_store_mut(&mut caller);
        data.out.extend_from_slice(range(mem, ptr, len)?);
        Ok(())
    })?;
    linker.func_wrap("aarchx", "read_code", |mut caller: Caller<'_, Data>, addr: u64, buf: u32, len: u32| {
        let memory = memory_of(&mut caller)?;
        let (mem, data) = memory.data_and_store_mut(&mut caller);
        if data.code.is_null() {
            wasmtime::bail!("called `read_code` outside `run`");
        }
        // SAFETY: a non-null `code` is the `&dyn GuestCode` of the running
        // pass's context, set by `WasmPass::run` for this call only.
        let code = unsafe { &*data.code.cast::<&dyn GuestCode>() };
        let buf = range_mut(mem, buf, len)?;
        Ok(code.read(addr, buf) as u32)
    })?;
    linker.func_wrap(
        "aarchx",
        "panic",
        |mut caller: Caller<'_, Data>, ptr: u32, len: u32| -> wasmtime::Result<()> {
            let memory = memory_of(&mut caller)?;
            let message = String::from_utf8_lossy(range(memory.data(&caller), ptr, len)?).into_owned();
            Err(wasmtime::Error::new(Panicked(message)))
        },
    )?;
    Ok(linker)
}

fn memory_of(caller: &mut Caller<'_, Data>) -> wasmtime::Result<Memory> {
    match caller.get_export("memory") {
        Some(wasmtime::Extern::Memory(m)) => Ok(m),
        _ => wasmtime::bail!("no exported memory `memory`"),
    }
}

fn range(mem: &[u8], ptr: u32, len: u32) -> wasmtime::Result<&[u8]> {
    let (at, len) = (ptr as usize, len as usize);
    mem.get(at..at.saturating_add(len)).ok_or_else(|| wasmtime::format_err!("passed bytes outside its memory"))
}

fn range_mut(mem: &mut [u8], ptr: u32, len: u32) -> wasmtime::Result<&mut [u8]> {
    let (at, len) = (ptr as usize, len as usize);
    mem.get_mut(at..at.saturating_add(len)).ok_or_else(|| wasmtime::format_err!("passed bytes outside its memory"))
}

/// Compiles the WASM plugin at `path` for `plugin`, checks its descriptor
/// and returns its passes.
pub fn load(path: &Path, plugin: Arc<Plugin>) -> Result<Vec<PassDef>, PluginError> {
    let file = plugin.file.clone();
    let open = |message: String| PluginError::Open { file: file.clone(), message };
    let bytes = std::fs::read(path).map_err(|e| open(e.to_string()))?;
    let engine = engine().map_err(open)?;
    let module = Module::new(engine, &bytes).map_err(|e| open(one_line(&format!("{e:#}"))))?;
    if !module.get_export("aarchx_plugin_v1").is_some_and(|e| e.func().is_some()) {
        return Err(PluginError::NoEntry { file });
    }
    let malformed = |message: String| PluginError::Descriptor { file: file.clone(), message };
    let pre = linker(engine).and_then(|l| l.instantiate_pre(&module)).map_err(|e| open(one_line(&format!("{e:#}"))))?;
    let mut call = Call::new(&pre).map_err(open)?;
    let entry = call
        .instance
        .get_typed_func::<(), u32>(&mut call.store, "aarchx_plugin_v1")
        .map_err(|e| malformed(format!("`aarchx_plugin_v1`: {}", one_line(&e.to_string()))))?;
    let desc = guarded(&mut call.store, |s| entry.call(s, ())).map_err(|e| malformed(format!("entry point {e}")))?;
    let memory = call
        .instance
        .get_memory(&mut call.store, "memory")
        .ok_or_else(|| malformed("no exported memory `memory`".into()))?;
    let mem = Mem(memory.data(&call.store));
    let header = mem.bytes(desc, PLUGIN_SIZE).map_err(malformed)?;
    let word = |at: usize| u32::from_le_bytes([header[at], header[at + 1], header[at + 2], header[at + 3]]);
    let (magic, abi, encoding, n_passes, passes) = (word(0), word(4), word(8), word(12), word(16));
    if magic != PLUGIN_MAGIC {
        return Err(PluginError::Magic { file, got: magic, want: PLUGIN_MAGIC });
    }
    if abi != ABI_VERSION {
        return Err(PluginError::AbiVersion { file, got: abi, want: ABI_VERSION });
    }
    if encoding != IR_ENCODING_VERSION {
        return Err(PluginError::EncodingVersion { file, got: encoding, want: IR_ENCODING_VERSION });
    }
    let descs: Vec<Pass32> = (0..n_passes)
        .map(|i| mem.pass(passes.wrapping_add(i * PASS_SIZE as u32)))
        .collect::<Result<_, _>>()
        .map_err(malformed)?;
    Exports::of(&call.instance, &mut call.store).map_err(malformed)?;
    let module = Arc::new(WasmModule { plugin, pre });
    Ok(descs
        .into_iter()
        .zip(0..)
        .map(|(d, index)| PassDef {
            source: PassSource::Wasm(WasmPassDef { module: module.clone(), index, name: d.name.clone() }),
            name: d.name,
            stage: d.stage,
            options: d.options,
            before: d.before,
            after: d.after,
        })
        .collect())
}

/// A pass descriptor as read from a module's memory.
struct Pass32 {
    name: String,
    stage: aarchx_pass::Stage,
    options: Vec<OptionDef>,
    before: Vec<String>,
    after: Vec<String>,
}

/// A module's linear memory, read with the wasm32 layouts.
struct Mem<'a>(&'a [u8]);

impl Mem<'_> {
    fn bytes(&self, at: u32, len: usize) -> Result<&[u8], String> {
        let at = at as usize;
        self.0
            .get(at..at.saturating_add(len))
            .ok_or_else(|| format!("{len} bytes at {at:#x} lie outside the module's memory"))
    }

    fn u32(&self, at: u32) -> Result<u32, String> {
        let b = self.bytes(at, 4)?;
        Ok(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }

    /// A `Str` (pointer, length) at `at`.
    fn text(&self, at: u32) -> Result<String, String> {
        let (ptr, len) = (self.u32(at)?, self.u32(at + 4)?);
        String::from_utf8(self.bytes(ptr, len as usize)?.to_vec())
            .map_err(|_| "a name or doc string is not UTF-8".to_string())
    }

    /// `n` `Str`s from the array at `ptr`.
    fn names(&self, ptr: u32, n: u32) -> Result<Vec<String>, String> {
        (0..n).map(|i| self.text(ptr.wrapping_add(i * STR_SIZE as u32))).collect()
    }

    fn pass(&self, at: u32) -> Result<Pass32, String> {
        self.bytes(at, PASS_SIZE)?;
        let field = |off: u32| self.u32(at + off);
        let name = self.text(at)?;
        let code = field(12)?;
        let stage = stage_from_code(code).ok_or_else(|| format!("pass `{name}` has unknown stage {code}"))?;
        let (options, n_options) = (field(24)?, field(28)?);
        let options = (0..n_options)
            .map(|i| self.option(options.wrapping_add(i * OPTION_SIZE as u32)))
            .collect::<Result<_, _>>()
            .map_err(|e| format!("pass `{name}`: {e}"))?;
        let before = self.names(field(32)?, field(36)?)?;
        let after = self.names(field(40)?, field(44)?)?;
        Ok(Pass32 { name, stage, options, before, after })
    }

    fn option(&self, at: u32) -> Result<OptionDef, String> {
        self.bytes(at, OPTION_SIZE)?;
        let name = self.text(at)?;
        let kind = self.u32(at + 8)?;
        let b = self.bytes(at + 16, 8)?;
        let default_int = i64::from_le_bytes([b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7]]);
        let default = match kind {
            k if k == OptionKind::Bool as u32 => OptionValue::Bool(default_int != 0),
            k if k == OptionKind::Int as u32 => OptionValue::Int(default_int),
            k if k == OptionKind::Str as u32 => OptionValue::Str(self.text(at + 24)?),
            k => return Err(format!("option `{name}` has unknown kind {k}")),
        };
        Ok(OptionDef { name, default, doc: self.text(at + 32)? })
    }
}

/// `text` with every run of whitespace (newlines included) as one space.
fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Writes little-endian u32s at `at`.
    fn put(mem: &mut [u8], at: usize, words: &[u32]) {
        for (i, w) in words.iter().enumerate() {
            mem[at + 4 * i..at + 4 * i + 4].copy_from_slice(&w.to_le_bytes());
        }
    }

    /// The documented wasm32 layouts, written by hand, read back.
    #[test]
    fn reads_the_wasm32_layouts() {
        let mut mem = vec![0u8; 512];
        mem[400..403].copy_from_slice(b"opt");
        mem[410..413].copy_from_slice(b"doc");
        mem[420..424].copy_from_slice(b"dflt");
        // OptionDescriptor at 0: a string option.
        put(&mut mem, 0, &[400, 3, OptionKind::Str as u32]);
        put(&mut mem, 24, &[420, 4, 410, 3]);
        // At 40: an integer option defaulting to -5.
        put(&mut mem, 40, &[410, 3, OptionKind::Int as u32]);
        mem[56..64].copy_from_slice(&(-5i64).to_le_bytes());
        put(&mut mem, 72, &[410, 3]);
        // A `Str` array of one at 300.
        put(&mut mem, 300, &[410, 3]);
        // PassDescriptor at 100: transform stage, both options, before `doc`.
        put(&mut mem, 100, &[400, 3, 7, 2, 410, 3, 0, 2, 300, 1, 0, 0]);
        let pass = Mem(&mem).pass(100).unwrap();
        assert_eq!((pass.name.as_str(), pass.stage), ("opt", aarchx_pass::Stage::Transform));
        assert_eq!(
            pass.options,
            [
                OptionDef { name: "opt".into(), default: OptionValue::Str("dflt".into()), doc: "doc".into() },
                OptionDef { name: "doc".into(), default: OptionValue::Int(-5), doc: "doc".into() },
            ]
        );
        assert_eq!((pass.before, pass.after), (vec!["doc".to_string()], vec![]));

        put(&mut mem, 112, &[9]);
        assert_eq!(Mem(&mem).pass(100).err().unwrap(), "pass `opt` has unknown stage 9");
        put(&mut mem, 112, &[2]);
        put(&mut mem, 0, &[500, 30]);
        assert_eq!(Mem(&mem).pass(100).err().unwrap(), "pass `opt`: 30 bytes at 0x1f4 lie outside the module's memory");
    }
}
