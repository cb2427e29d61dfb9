//! The last resort behind a Lua policy's time limit. Lua checks the limit
//! between VM instructions only, so one call into its C library that runs
//! on (a pattern match backtracking through a long string,
//! `string.rep("", 1 << 60)`, `table.move` over 2^40 empty slots) is
//! never stopped by it, and memory is not what runs out. While a call
//! into a script runs, a thread of aarchx's own watches the clock: `GRACE`
//! after the call's deadline it prints the one-line error the call stands
//! for and ends aarchx with that error's exit status.

use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard, OnceLock};
use std::time::{Duration, Instant};

/// How long past its deadline a call may run before aarchx ends.
const GRACE: Duration = Duration::from_secs(2);
/// How often the watchdog looks at the clock.
const TICK: Duration = Duration::from_millis(100);

/// The running call's deadline, in nanoseconds after [`epoch`] (0: no
/// call runs). The watchdog reads it without a lock, so a guest `fork`
/// while it looks leaves the child no lock held by a thread it does not
/// have.
static DEADLINE: AtomicU64 = AtomicU64::new(0);

/// How aarchx ends if the running call has not returned: the line to
/// print and the exit status. Taken by the watchdog only to end aarchx.
static ENDING: Mutex<Option<(String, u8)>> = Mutex::new(None);

fn ending() -> MutexGuard<'static, Option<(String, u8)>> {
    ENDING.lock().unwrap_or_else(|e| e.into_inner())
}

/// The instant deadlines are counted from.
fn epoch() -> Instant {
    static EPOCH: OnceLock<Instant> = OnceLock::new();
    *EPOCH.get_or_init(Instant::now)
}

fn nanos_since_epoch(t: Instant) -> u64 {
    u64::try_from(t.saturating_duration_since(epoch()).as_nanos()).unwrap_or(u64::MAX).max(1)
}

/// Disarms the watchdog when the call returns or unwinds.
struct Disarm;

impl Drop for Disarm {
    fn drop(&mut self) {
        DEADLINE.store(0, Ordering::SeqCst);
    }
}

/// Runs `call` under the watchdog: if it is still running `GRACE` after
/// `deadline`, aarchx prints `line` on stderr and exits with `status`.
pub fn watched<T>(deadline: Instant, line: String, status: u8, call: impl FnOnce() -> T) -> T {
    ensure_watchdog();
    *ending() = Some((line, status));
    DEADLINE.store(nanos_since_epoch(deadline + GRACE), Ordering::SeqCst);
    let _disarm = Disarm;
    call()
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
        let deadline = DEADLINE.load(Ordering::SeqCst);
        if deadline != 0 && nanos_since_epoch(Instant::now()) > deadline {
            if let Some((line, status)) = ending().as_ref() {
                eprintln!("{line}");
                std::process::exit(i32::from(*status));
            }
        }
    });
    if let Err(e) = started {
        tracing::debug!("no Lua watchdog: {e}");
    }
}
