//! The Linux implementation of the host boundary (see `crate::sys`).

pub mod mem;
pub mod process;
pub mod signals;
