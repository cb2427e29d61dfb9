//! Opening a native plugin: the shared library, its entry point, and the
//! checks on its descriptor (magic, ABI version, IR encoding version,
//! well-formed pass declarations) before any of its code runs a pass.
//! A WASM plugin (`.wasm`, or the WASM magic) goes to [`super::wasm`].

use std::path::{Path, PathBuf};
use std::sync::Arc;

use aarchx_pass::OptionValue;
use aarchx_plugin_abi::descriptor::stage_from_code;
use aarchx_plugin_abi::{
    OptionDescriptor, OptionKind, PassDescriptor, PluginDescriptor, Str, ABI_VERSION, ENTRY_SYMBOL,
    IR_ENCODING_VERSION, PLUGIN_MAGIC,
};
use libloading::Library;

use super::native::PluginPass;
use super::registry::{OptionDef, PassDef, PassSource};
use crate::policy::{OnFailure, PluginEntry};

/// A plugin that cannot be used. Each prints as one line naming the file.
#[derive(Debug, thiserror::Error)]
pub enum PluginError {
    #[error("plugin {file}: this aarchx is statically linked and cannot load native plugins")]
    Static { file: String },
    #[error("plugin {file}: this aarchx was built without WASM plugins (cargo feature `wasm`)")]
    NoWasm { file: String },
    #[error("plugin {file}: cannot load: {message}")]
    Open { file: String, message: String },
    #[error("plugin {file}: no entry point `aarchx_plugin_v1`; is it an aarchx plugin?")]
    NoEntry { file: String },
    #[error("plugin {file}: not an aarchx plugin: magic {got:#010x}, expected {want:#010x}")]
    Magic { file: String, got: u32, want: u32 },
    #[error("plugin {file}: built for plugin ABI version {got}, but this aarchx speaks version {want}")]
    AbiVersion { file: String, got: u32, want: u32 },
    #[error("plugin {file}: uses IR encoding version {got}, but this aarchx uses version {want}")]
    EncodingVersion { file: String, got: u32, want: u32 },
    #[error("plugin {file}: malformed descriptor: {message}")]
    Descriptor { file: String, message: String },
    #[error("plugin {file}: pass `{pass}` is already provided by {first}")]
    Duplicate { file: String, pass: String, first: String },
    #[error("plugin {file}: pass `{pass}` could not be created: {message}")]
    Create { file: String, pass: String, message: String },
}

/// A loaded plugin file. Its passes hold it alive.
#[derive(Debug)]
pub struct Plugin {
    /// The file, as messages name it.
    pub file: String,
    /// What a failure of one of its passes does.
    pub on_failure: OnFailure,
    /// Kept loaded while any pass of it exists; none for a WASM plugin,
    /// whose passes hold its module.
    _library: Option<Library>,
}

impl Plugin {
    /// A WASM plugin's entry.
    #[cfg(feature = "wasm")]
    pub(super) fn wasm(file: String, on_failure: OnFailure) -> Plugin {
        Plugin { file, on_failure, _library: None }
    }
}

/// Loads the plugin `entry` names (relative to `base`) and returns its
/// passes.
pub fn load(entry: &PluginEntry, base: &Path) -> Result<Vec<PassDef>, PluginError> {
    let path = resolve(&entry.path, base);
    let file = path.display().to_string();
    if is_wasm(&path) {
        #[cfg(feature = "wasm")]
        return super::wasm::load(&path, Arc::new(Plugin::wasm(file, entry.on_failure)));
        #[cfg(not(feature = "wasm"))]
        return Err(PluginError::NoWasm { file });
    }
    if cfg!(target_feature = "crt-static") {
        // A static executable has no dynamic linker to share with the
        // library, which would bring a second C library.
        return Err(PluginError::Static { file });
    }
    // RTLD_NODELETE: the library stays mapped after its last pass is
    // dropped. A plugin's runtime may leave behind what refers to its
    // code (a Rust plugin that panicked registers thread-local destructors),
    // which the C library runs at exit: unmapped, that was a crash at exit.
    let flags = libloading::os::unix::RTLD_NOW | libloading::os::unix::RTLD_LOCAL | libc::RTLD_NODELETE;
    // SAFETY: loading runs the library's initialisers. A plugin is code the
    // user chose to run, as trusted as aarchx itself; this is the boundary.
    let library: Library = unsafe { libloading::os::unix::Library::open(Some(&path), flags) }
        .map_err(|e| PluginError::Open { file: file.clone(), message: e.to_string() })?
        .into();
    let desc: *const PluginDescriptor = {
        // SAFETY: the symbol's type is the ABI's documented entry signature;
        // a library exporting something else under this name is not a plugin.
        let entry_fn = unsafe { library.get::<unsafe extern "C" fn() -> *const PluginDescriptor>(ENTRY_SYMBOL) }
            .map_err(|_| PluginError::NoEntry { file: file.clone() })?;
        // SAFETY: the entry point takes no arguments and returns a pointer to
        // static data of the library.
        unsafe { entry_fn() }
    };
    let plugin = Arc::new(Plugin { file, on_failure: entry.on_failure, _library: Some(library) });
    let file = &plugin.file;
    // SAFETY: the descriptor is static data of the library, which `plugin`
    // keeps loaded for as long as the descriptor is read here.
    let desc = unsafe { desc.as_ref() }.ok_or_else(|| PluginError::Descriptor {
        file: file.clone(),
        message: "the entry point returned null".into(),
    })?;
    if desc.magic != PLUGIN_MAGIC {
        return Err(PluginError::Magic { file: file.clone(), got: desc.magic, want: PLUGIN_MAGIC });
    }
    if desc.abi_version != ABI_VERSION {
        return Err(PluginError::AbiVersion { file: file.clone(), got: desc.abi_version, want: ABI_VERSION });
    }
    if desc.ir_encoding_version != IR_ENCODING_VERSION {
        return Err(PluginError::EncodingVersion {
            file: file.clone(),
            got: desc.ir_encoding_version,
            want: IR_ENCODING_VERSION,
        });
    }
    // SAFETY: a version-1 descriptor points at `n_passes` pass descriptors
    // in the library's static data.
    let passes: &[PassDescriptor] = unsafe { slice(desc.passes, desc.n_passes as usize) };
    let read = |p: &PassDescriptor| {
        // SAFETY: every `Str` and array of a version-1 pass descriptor
        // points at static data of the library, with its length.
        unsafe { read_pass(p, &plugin) }.map_err(|message| PluginError::Descriptor { file: file.clone(), message })
    };
    passes.iter().map(read).collect()
}

/// Whether `path` names a WASM plugin: a `.wasm` file, or any file that
/// starts with the WASM magic.
fn is_wasm(path: &Path) -> bool {
    let mut magic = [0u8; 4];
    path.extension().is_some_and(|e| e == "wasm")
        || std::fs::File::open(path).and_then(|mut f| std::io::Read::read_exact(&mut f, &mut magic)).is_ok()
            && magic == *b"\0asm"
}

/// `path` relative to `base`, always with a directory part so the dynamic
/// linker never searches its library path for it.
fn resolve(path: &Path, base: &Path) -> PathBuf {
    let joined = base.join(path);
    if joined.parent().is_some_and(|p| !p.as_os_str().is_empty()) {
        joined
    } else {
        Path::new(".").join(joined)
    }
}

/// Reads one pass descriptor of `plugin`.
///
/// # Safety
/// Every pointer in `p` is valid for its length.
unsafe fn read_pass(p: &PassDescriptor, plugin: &Arc<Plugin>) -> Result<PassDef, String> {
    // SAFETY: per this function's contract.
    let name = unsafe { text(p.name) }?;
    let stage = stage_from_code(p.stage).ok_or_else(|| format!("pass `{name}` has unknown stage {}", p.stage))?;
    let mut options = Vec::new();
    // SAFETY: per this function's contract.
    for o in unsafe { slice(p.options, p.n_options) } {
        // SAFETY: per this function's contract.
        options.push(unsafe { read_option(o) }.map_err(|e| format!("pass `{name}`: {e}"))?);
    }
    // SAFETY: per this function's contract.
    let (before, after) = unsafe { (names(p.before, p.n_before)?, names(p.after, p.n_after)?) };
    let source = PassSource::Plugin(PluginPass::new(plugin.clone(), name.clone(), p));
    Ok(PassDef { name, stage, options, before, after, source })
}

/// # Safety
/// `ptr` points at `n` `Str`s, each valid for its length.
unsafe fn names(ptr: *const Str, n: usize) -> Result<Vec<String>, String> {
    // SAFETY: per this function's contract.
    let strs = unsafe { slice(ptr, n) };
    strs.iter()
        .map(|s| {
            // SAFETY: per this function's contract.
            unsafe { text(*s) }
        })
        .collect()
}

/// # Safety
/// The strings of `o` are valid for their lengths.
unsafe fn read_option(o: &OptionDescriptor) -> Result<OptionDef, String> {
    // SAFETY: per this function's contract.
    let (name, doc) = unsafe { (text(o.name)?, text(o.doc)?) };
    let default = match o.kind {
        k if k == OptionKind::Bool as u32 => OptionValue::Bool(o.default_int != 0),
        k if k == OptionKind::Int as u32 => OptionValue::Int(o.default_int),
        // SAFETY: per this function's contract.
        k if k == OptionKind::Str as u32 => OptionValue::Str(unsafe { text(o.default_str) }?),
        k => return Err(format!("option `{name}` has unknown kind {k}")),
    };
    Ok(OptionDef { name, default, doc })
}

/// # Safety
/// `s` points at `s.len` readable bytes (or is empty).
unsafe fn text(s: Str) -> Result<String, String> {
    // SAFETY: per this function's contract.
    let bytes = unsafe { slice(s.ptr, s.len) };
    String::from_utf8(bytes.to_vec()).map_err(|_| "a name or doc string is not UTF-8".to_string())
}

/// A slice from a descriptor's pointer and length; empty when the length is
/// 0, whatever the pointer.
///
/// # Safety
/// For a non-zero `n`, `ptr` points at `n` readable, initialised `T`s that
/// outlive the returned slice's use.
unsafe fn slice<'a, T>(ptr: *const T, n: usize) -> &'a [T] {
    if n == 0 || ptr.is_null() {
        &[]
    } else {
        // SAFETY: per this function's contract.
        unsafe { std::slice::from_raw_parts(ptr, n) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_always_have_a_folder() {
        assert_eq!(resolve(Path::new("libx.so"), Path::new("")), Path::new("./libx.so"));
        assert_eq!(resolve(Path::new("libx.so"), Path::new("policies")), Path::new("policies/libx.so"));
        assert_eq!(resolve(Path::new("/opt/libx.so"), Path::new("policies")), Path::new("/opt/libx.so"));
    }
}
