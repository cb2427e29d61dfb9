//! Panics as one-line messages. A panic is a bug of aarchx's, never a
//! user's mistake: the hook `main` installs reports one that escapes on one
//! line (with Rust's backtrace only under `RUST_BACKTRACE`), and
//! [`without_panicking`] turns a pass's panic into an error its caller
//! reports (see [`crate::translate`]).

use std::any::Any;
use std::cell::Cell;
use std::panic::{catch_unwind, AssertUnwindSafe};

thread_local! {
    /// Whether a panic on this thread is being caught by
    /// [`without_panicking`], which reports it itself.
    static CATCHING: Cell<bool> = const { Cell::new(false) };
}

/// The message a panic was raised with.
fn message(payload: &(dyn Any + Send)) -> String {
    payload
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| String::from("a panic without a message"))
}

/// Installs the hook that reports a panic: silent for one
/// [`without_panicking`] catches, one line for any other (Rust's own report,
/// with its backtrace, when `RUST_BACKTRACE` is set).
pub fn install_hook() {
    let rust = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        if CATCHING.with(Cell::get) {
            return;
        }
        if std::env::var_os("RUST_BACKTRACE").is_some() {
            return rust(info);
        }
        let at = info.location().map_or_else(String::new, |l| format!(" at {}:{}", l.file(), l.line()));
        eprintln!(
            "aarchx: internal error{at}: {} (a bug in aarchx; RUST_BACKTRACE=1 shows where it came from)",
            message(info.payload())
        );
    }));
}

/// Runs `f`, turning a panic into its message; the hook stays quiet for
/// it.
pub fn without_panicking<T>(f: impl FnOnce() -> T) -> Result<T, String> {
    CATCHING.with(|c| c.set(true));
    let result = catch_unwind(AssertUnwindSafe(f));
    CATCHING.with(|c| c.set(false));
    result.map_err(|payload| message(payload.as_ref()))
}
