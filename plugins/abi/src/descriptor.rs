//! The C-ABI types a plugin exports: the plugin descriptor, one descriptor
//! per pass, option declarations, and the callbacks through which data
//! crosses the boundary.
//!
//! Ownership: everything a descriptor points to is static data of the
//! plugin, valid while the plugin is loaded and never written. Data the
//! plugin produces at run time (an output region, an error message) is
//! handed to the host through an [`OutBuf`] callback, which copies it
//! before returning: no allocation ever changes owner.

use core::ffi::c_void;

use aarchx_pass::Stage;

/// The name of the one function a plugin exports, NUL-terminated:
/// `extern "C" fn aarchx_plugin_v1() -> *const PluginDescriptor`.
pub const ENTRY_SYMBOL: &[u8] = b"aarchx_plugin_v1\0";

/// [`PluginDescriptor::magic`]: the bytes `AXPL` read as a little-endian u32.
pub const PLUGIN_MAGIC: u32 = u32::from_le_bytes(*b"AXPL");

/// The version of the layouts in this module. Any change to them bumps it.
pub const ABI_VERSION: u32 = 2;

/// A run or create call that succeeded.
pub const STATUS_OK: i32 = 0;
/// A run or create call that failed; the bytes written to the [`OutBuf`]
/// are a UTF-8 message saying why.
pub const STATUS_ERROR: i32 = 1;

/// A borrowed UTF-8 string: pointer and length, no terminator.
#[derive(Clone, Copy, Debug)]
#[repr(C)]
pub struct Str {
    pub ptr: *const u8,
    pub len: usize,
}

impl Str {
    pub const fn new(s: &'static str) -> Str {
        Str { ptr: s.as_ptr(), len: s.len() }
    }
}

/// What kind of value an option takes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u32)]
pub enum OptionKind {
    Bool = 0,
    Int = 1,
    Str = 2,
}

/// One documented option of a pass.
#[derive(Clone, Copy, Debug)]
#[repr(C)]
pub struct OptionDescriptor {
    pub name: Str,
    /// An [`OptionKind`] as u32; the host rejects unknown kinds.
    pub kind: u32,
    /// The default of a `Bool` (0 or 1) or `Int` option.
    pub default_int: i64,
    /// The default of a `Str` option (empty for the others).
    pub default_str: Str,
    pub doc: Str,
}

impl OptionDescriptor {
    pub const fn bool(name: &'static str, default: bool, doc: &'static str) -> OptionDescriptor {
        OptionDescriptor {
            name: Str::new(name),
            kind: OptionKind::Bool as u32,
            default_int: default as i64,
            default_str: Str::new(""),
            doc: Str::new(doc),
        }
    }

    pub const fn int(name: &'static str, default: i64, doc: &'static str) -> OptionDescriptor {
        OptionDescriptor {
            name: Str::new(name),
            kind: OptionKind::Int as u32,
            default_int: default,
            default_str: Str::new(""),
            doc: Str::new(doc),
        }
    }

    pub const fn string(name: &'static str, default: &'static str, doc: &'static str) -> OptionDescriptor {
        OptionDescriptor {
            name: Str::new(name),
            kind: OptionKind::Str as u32,
            default_int: 0,
            default_str: Str::new(default),
            doc: Str::new(doc),
        }
    }
}

/// A sink for bytes the plugin produces: the plugin calls `write` (any
/// number of times) with `ctx`; the host appends a copy of the bytes to
/// its own buffer before `write` returns.
#[repr(C)]
pub struct OutBuf {
    pub ctx: *mut c_void,
    pub write: unsafe extern "C" fn(ctx: *mut c_void, ptr: *const u8, len: usize),
}

/// What a running pass can see besides its region.
#[repr(C)]
pub struct RunContext {
    /// 0: plain, 1: ordered (x86-TSO).
    pub memory_model: u32,
    /// 1 when SSE accesses are ordered too.
    pub tso_vector: u32,
    pub code_ctx: *const c_void,
    /// Copies up to `len` guest code bytes at `addr` to `buf`; returns how
    /// many it copied.
    pub read_code: unsafe extern "C" fn(ctx: *const c_void, addr: u64, buf: *mut u8, len: usize) -> usize,
}

/// Creates a pass instance from encoded options (module
/// [`options`](crate::options)). Returns null on failure, with the message
/// written to `err`.
pub type CreateFn = unsafe extern "C" fn(options: *const u8, len: usize, err: *mut OutBuf) -> *mut c_void;

/// Runs an instance over an encoded region (module
/// [`encoding`](crate::encoding)). On [`STATUS_OK`] the transformed region
/// was written, encoded, to `out`; on [`STATUS_ERROR`] a message was.
pub type RunFn = unsafe extern "C" fn(
    instance: *mut c_void,
    cx: *const RunContext,
    region: *const u8,
    len: usize,
    out: *mut OutBuf,
) -> i32;

/// Frees an instance made by [`CreateFn`].
pub type DestroyFn = unsafe extern "C" fn(instance: *mut c_void);

/// Reports on an instance when the guest ends: `counters` points at `n`
/// u64, the final values of the instance's counters in its own numbering.
/// On [`STATUS_OK`] the report was written to `out` in the encoding of
/// module [`report`](crate::report); on [`STATUS_ERROR`] a message was.
pub type FinishFn =
    unsafe extern "C" fn(instance: *mut c_void, counters: *const u64, n: usize, out: *mut OutBuf) -> i32;

/// One pass a plugin provides.
#[repr(C)]
pub struct PassDescriptor {
    pub name: Str,
    /// The pass's own version, reported in messages.
    pub version: u32,
    /// A [`Stage`] as u32: 0 decode, 1 region, 2 transform, 3 lowering.
    pub stage: u32,
    pub doc: Str,
    pub options: *const OptionDescriptor,
    pub n_options: usize,
    /// Passes this one must run before, when the policy has them.
    pub before: *const Str,
    pub n_before: usize,
    /// Passes this one must run after, when the policy has them.
    pub after: *const Str,
    pub n_after: usize,
    pub create: CreateFn,
    pub run: RunFn,
    pub destroy: DestroyFn,
    /// Called at most once per instance, before `destroy`.
    pub finish: FinishFn,
}

/// What [`ENTRY_SYMBOL`] returns.
#[repr(C)]
pub struct PluginDescriptor {
    /// [`PLUGIN_MAGIC`].
    pub magic: u32,
    /// [`ABI_VERSION`] of the ABI the plugin was built against.
    pub abi_version: u32,
    /// [`IR_ENCODING_VERSION`](crate::IR_ENCODING_VERSION) the plugin reads
    /// and writes.
    pub ir_encoding_version: u32,
    pub n_passes: u32,
    pub passes: *const PassDescriptor,
}

// SAFETY: descriptors point only at immutable static data of the plugin
// (see the module docs), so sharing them between threads is sound.
unsafe impl Sync for PluginDescriptor {}
// SAFETY: as for `PluginDescriptor`.
unsafe impl Sync for PassDescriptor {}
// SAFETY: as for `PluginDescriptor`.
unsafe impl Sync for OptionDescriptor {}
// SAFETY: as for `PluginDescriptor`.
unsafe impl Sync for Str {}

/// The ABI number of a stage.
pub const fn stage_code(stage: Stage) -> u32 {
    match stage {
        Stage::Decode => 0,
        Stage::Region => 1,
        Stage::Transform => 2,
        Stage::Lowering => 3,
    }
}

/// The stage an ABI number names.
pub fn stage_from_code(code: u32) -> Option<Stage> {
    [Stage::Decode, Stage::Region, Stage::Transform, Stage::Lowering].get(code as usize).copied()
}

#[cfg(all(test, target_pointer_width = "64"))]
mod tests {
    use core::mem::{offset_of, size_of};

    use super::*;

    /// docs/plugins.md gives these offsets; a change here is an ABI change.
    #[test]
    fn layouts_match_the_documentation() {
        assert_eq!(size_of::<Str>(), 16);
        assert_eq!(size_of::<PluginDescriptor>(), 24);
        assert_eq!(offset_of!(PluginDescriptor, passes), 16);
        assert_eq!(size_of::<PassDescriptor>(), 120);
        assert_eq!(offset_of!(PassDescriptor, version), 16);
        assert_eq!(offset_of!(PassDescriptor, doc), 24);
        assert_eq!(offset_of!(PassDescriptor, options), 40);
        assert_eq!(offset_of!(PassDescriptor, before), 56);
        assert_eq!(offset_of!(PassDescriptor, after), 72);
        assert_eq!(offset_of!(PassDescriptor, create), 88);
        assert_eq!(offset_of!(PassDescriptor, destroy), 104);
        assert_eq!(offset_of!(PassDescriptor, finish), 112);
        assert_eq!(size_of::<OptionDescriptor>(), 64);
        assert_eq!(offset_of!(OptionDescriptor, default_int), 24);
        assert_eq!(offset_of!(OptionDescriptor, default_str), 32);
        assert_eq!(offset_of!(OptionDescriptor, doc), 48);
        assert_eq!(size_of::<RunContext>(), 24);
    }

    #[test]
    fn stage_codes_round_trip() {
        for s in [Stage::Decode, Stage::Region, Stage::Transform, Stage::Lowering] {
            assert_eq!(stage_from_code(stage_code(s)), Some(s));
        }
        assert_eq!(stage_from_code(4), None);
        assert_eq!(&PLUGIN_MAGIC.to_le_bytes(), b"AXPL");
    }
}
