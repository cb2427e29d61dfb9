//! aarchx's built-in passes as one native plugin: `decode`, `dead-flags`,
//! `dce` and `memory-order`, the code of `passes/` behind the plugin
//! interface (`aarchx_passes::plugin`). A policy that loads this plugin
//! runs these copies instead of the built-in ones (plugin passes shadow
//! built-ins of the same name), which measures the plugin boundary on real
//! passes and shows a built-in pass can be shipped apart from aarchx.

use aarchx_passes::plugin::{Builtin, Dce, DeadFlags, Decode, MemoryOrder};

aarchx_plugin_sdk::export_plugin!(Builtin<Decode>, Builtin<DeadFlags>, Builtin<Dce>, Builtin<MemoryOrder>);
