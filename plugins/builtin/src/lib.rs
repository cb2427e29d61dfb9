//! aarchx's built-in passes as one native plugin: `decode`,
//! `state-forward`, `store-forward`, `const-fold`, `cse`, `cond-fusion`, `dead-flags`,
//! `sink`, `dce` and `memory-order` (all but `insn-count`, which ships as
//! its own example plugin), the code of `passes/` behind the plugin
//! interface (`aarchx_passes::plugin`). A policy that loads this plugin
//! runs these copies instead of the built-in ones (plugin passes shadow
//! built-ins of the same name), which measures the plugin boundary on real
//! passes and shows a built-in pass can be shipped apart from aarchx.

use aarchx_passes::plugin::{
    Builtin, CondFusion, ConstFold, Cse, Dce, DeadFlags, Decode, MemoryOrder, Sink, StateForward, StoreForward,
};

aarchx_plugin_sdk::export_plugin!(
    Builtin<Decode>,
    Builtin<StateForward>,
    Builtin<StoreForward>,
    Builtin<ConstFold>,
    Builtin<Cse>,
    Builtin<CondFusion>,
    Builtin<DeadFlags>,
    Builtin<Sink>,
    Builtin<Dce>,
    Builtin<MemoryOrder>,
);
