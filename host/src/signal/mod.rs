//! Guest signal delivery, the runtime side: the x86-64 signal frame
//! (`frame`), its FP area saved and restored by the lifter's fxsave and
//! fxrstor (`fpstate`), guest memory accesses that survive a fault
//! (`probe`) and host system calls that a signal cancels before they block
//! (`interruptible`). The system calls and the delivery itself are in
//! `crate::syscall::signal`; the host's handlers in `crate::signals`.
//! The whole mechanism is described in `docs/signals.md`.

pub mod fpstate;
pub mod frame;
pub mod interruptible;
pub mod probe;
