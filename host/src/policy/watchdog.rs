//! The last resort behind a Lua policy's time limit. Lua checks the limit
//! between VM instructions only, so one call into its C library that runs
//! on (a pattern match backtracking through a long string,
//! `string.rep("", 1 << 60)`, `table.move` over 2^40 empty slots) is
//! never stopped by it, and memory is not what runs out. While a call
//! into a script runs, a thread of aarchx's own watches the clock: `GRACE`
//! after the call's deadline it prints the one-line error the call stands
//! for and ends aarchx with that error's exit status.

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// How long past its deadline a call may run before aarchx ends.
const GRACE: Duration = Duration::from_secs(2);
/// How often the watchdog looks at the clock.
const TICK: Duration = Duration::from_millis(100);

/// The running call: when it must have returned, and how aarchx ends if
/// it has not.
struct Armed {
    deadline: Instant,
    line: String,
    status: u8,
}

static ARMED: Mutex<Option<Armed>> = Mutex::new(None);

fn armed() -> MutexGuard<'static, Option<Armed>> {
    ARMED.lock().unwrap_or_else(|e| e.into_inner())
}

/// Runs `call` under the watchdog: if it is still running `GRACE` after
/// `deadline`, aarchx prints `line` on stderr and exits with `status`.
pub fn watched<T>(deadline: Instant, line: String, status: u8, call: impl FnOnce() -> T) -> T {
    ensure_watchdog();
    *armed() = Some(Armed { deadline, line, status });
    let result = call();
    *armed() = None;
    result
}

/// Starts the watchdog thread, once per process (again in a forked child,
/// which has no threads but the forking one). Without it (no thread could
/// be made) Lua's own check still stops every script that runs Lua code.
fn ensure_watchdog() {
    static WATCHDOG_PID: AtomicU32 = AtomicU32::new(0);
    let pid = std::process::id();
    if WATCHDOG_PID.swap(pid, Ordering::Relaxed) == pid {
        return;
    }
    let started = crate::signals::spawn_quiet("aarchx-lua-watchdog", || loop {
        std::thread::sleep(TICK);
        if let Some(a) = armed().as_ref().filter(|a| Instant::now() > a.deadline + GRACE) {
            eprintln!("{}", a.line);
            std::process::exit(i32::from(a.status));
        }
    });
    if let Err(e) = started {
        tracing::debug!("no Lua watchdog: {e}");
    }
}
