//! The plugin SDK: a pass author implements [`aarchx_pass::Pass`] (the
//! trait the built-in passes implement) and [`PluginPass`] (metadata and
//! construction), then exports the plugin with one macro:
//!
//! ```ignore
//! aarchx_plugin_sdk::export_plugin!(MyPass, MyOtherPass);
//! ```
//!
//! The macro defines the `aarchx_plugin_v1` entry point and its
//! descriptors; the C glue (module [`glue`]) decodes regions and options,
//! runs the pass and encodes its result.
//!
//! `no_std` + `alloc` without the default `std` feature, and always on
//! wasm32, so the same source builds as a native `cdylib` and as a
//! `wasm32-unknown-unknown` module; with `std` a panicking native pass
//! returns an error status instead of unwinding across the C boundary. On
//! wasm32 the macro also emits the WASM exports (module [`wasm`]: the
//! per-call entry points, the host imports, the allocator, a panic handler
//! that traps with the panic's message).
#![cfg_attr(any(not(feature = "std"), target_arch = "wasm32"), no_std)]

extern crate alloc;

pub mod glue;
#[cfg(target_arch = "wasm32")]
pub mod wasm;

pub use aarchx_ir as ir;
pub use aarchx_pass::{self as pass, Options, Pass, PassContext, PassError, Stage};
pub use aarchx_plugin_abi::{self as abi, OptionDescriptor, Str};

use aarchx_plugin_abi::descriptor::stage_code;
use aarchx_plugin_abi::{PassDescriptor, PluginDescriptor, ABI_VERSION, IR_ENCODING_VERSION, PLUGIN_MAGIC};

/// What the host learns about a pass before creating it.
pub struct PassMeta {
    /// The name policies refer to it by.
    pub name: &'static str,
    /// The pass's own version.
    pub version: u32,
    pub stage: Stage,
    pub doc: &'static str,
    /// Its documented options (`OptionDescriptor::int(...)` and siblings).
    pub options: &'static [OptionDescriptor],
    /// Passes it must run before, when the policy has them.
    pub before: &'static [Str],
    /// Passes it must run after, when the policy has them.
    pub after: &'static [Str],
}

/// A pass that can be exported from a plugin.
pub trait PluginPass: Pass + Sized + 'static {
    const META: PassMeta;

    /// Creates the pass from its validated options (every declared option
    /// present, defaults filled in).
    fn create(options: &Options) -> Result<Self, PassError>;
}

/// The descriptor of pass `P`, pointing at its glue.
pub const fn pass_descriptor<P: PluginPass>() -> PassDescriptor {
    let m = &P::META;
    PassDescriptor {
        name: Str::new(m.name),
        version: m.version,
        stage: stage_code(m.stage),
        doc: Str::new(m.doc),
        options: m.options.as_ptr(),
        n_options: m.options.len(),
        before: m.before.as_ptr(),
        n_before: m.before.len(),
        after: m.after.as_ptr(),
        n_after: m.after.len(),
        create: glue::create::<P>,
        run: glue::run::<P>,
        destroy: glue::destroy::<P>,
        finish: glue::finish::<P>,
    }
}

/// The plugin descriptor for `passes`.
pub const fn plugin_descriptor(passes: &'static [PassDescriptor]) -> PluginDescriptor {
    PluginDescriptor {
        magic: PLUGIN_MAGIC,
        abi_version: ABI_VERSION,
        ir_encoding_version: IR_ENCODING_VERSION,
        n_passes: passes.len() as u32,
        passes: passes.as_ptr(),
    }
}

/// Exports the listed [`PluginPass`] types as this library's plugin: defines
/// `aarchx_plugin_v1` and, on wasm32, the WASM exports. Use it once per
/// plugin crate.
#[macro_export]
macro_rules! export_plugin {
    ($($pass:ty),+ $(,)?) => {
        /// The plugin's entry point: its descriptor.
        #[no_mangle]
        pub extern "C" fn aarchx_plugin_v1() -> *const $crate::abi::PluginDescriptor {
            static PASSES: &[$crate::abi::PassDescriptor] = &[$($crate::pass_descriptor::<$pass>()),+];
            static PLUGIN: $crate::abi::PluginDescriptor = $crate::plugin_descriptor(PASSES);
            &PLUGIN
        }

        #[cfg(target_arch = "wasm32")]
        $crate::__wasm_exports!();
    };
}
