//! Lua policies: a script that returns the policy as a table with the
//! fields of a RON policy, computed from the guest's program and arguments,
//! the environment and the host CPU, and that may define `on_region(r)` to
//! switch passes off region by region.
//!
//! The returned table becomes a [`Policy`] through serde
//! (`super::lua_value`), the very derive RON policies go through, so both
//! accept the same fields and values and word the same mistakes alike. Every error is
//! one line starting with `FILE:LINE:`; Lua's own positions are rewritten
//! to the policy's file name, which Lua would cut to 60 characters.
//!
//! The script runs in a small sandbox: the base library without `load`,
//! `loadfile`, `dofile` and `require`, with `print` writing to stderr;
//! `string`, `table`, `math`, `utf8`, `coroutine`; from `os` only `getenv`,
//! `time`, `clock`, `date` and `difftime`; no `io`, no `debug`, no C
//! modules. Memory is capped and a script or hook call that runs longer
//! than a second is stopped with an error; one that runs on inside a call
//! to Lua's C library, where that check cannot reach, is ended by
//! `super::watchdog`, which stops aarchx with the same kind of error.

use std::cell::Cell;
use std::ffi::OsString;
use std::fmt;
use std::io::Write;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;
use std::rc::Rc;
use std::time::{Duration, Instant};

use mlua::{DebugEvent, Function, HookTriggers, Lua, LuaOptions, StdLib, Table, Value, VmState};

use super::lua_value::from_lua;
use super::watchdog::watched;
use super::{error_words, Location, Place, Policy, PolicyError};
use crate::run::RunError;
use crate::translate::TranslateError;

/// The name Lua knows the script by; positions in its messages are
/// rewritten to the policy's real file name.
const CHUNK: &str = "aarchx-policy";
/// What the script may allocate.
const MEMORY_LIMIT: usize = 256 << 20;
/// How long the script, or one call of its hook, may run.
const TIME_LIMIT: Duration = Duration::from_secs(1);
/// VM instructions between checks of the time limit.
const CHECK_EVERY: u32 = 100_000;

/// The guest run a policy script is computed for.
pub struct Invocation<'a> {
    pub program: &'a Path,
    pub args: &'a [OsString],
}

/// What `on_region` is told about one region, after its decode-stage
/// passes ran.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RegionFacts {
    /// Guest address of the region's first instruction.
    pub start: u64,
    /// One past its last guest byte.
    pub stop: u64,
    /// Guest instructions decoded.
    pub insns: u64,
    /// How often the dispatcher looked this address up before this
    /// translation (0 for a first translation; more when the region is
    /// translated again after its code changed).
    pub executions: u64,
}

/// An error of a running `on_region`, at `FILE:LINE`. Translation stops.
#[derive(Debug, thiserror::Error)]
#[error("{at}: {message}")]
pub struct HookError {
    pub at: Place,
    pub message: String,
}

/// A Lua policy's `on_region` function, with the interpreter it lives in.
#[derive(Clone)]
pub struct RegionHook(Rc<Hook>);

struct Hook {
    lua: Lua,
    function: Function,
    origin: String,
    /// The line `on_region` is defined on, for errors about its result.
    line: usize,
    /// When the running call must have returned.
    deadline: Rc<Cell<Instant>>,
}

impl fmt::Debug for RegionHook {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "RegionHook({}:{})", self.0.origin, self.0.line)
    }
}

impl PartialEq for RegionHook {
    fn eq(&self, other: &Self) -> bool {
        Rc::ptr_eq(&self.0, &other.0)
    }
}

impl RegionHook {
    /// Calls `on_region(r)` and returns the names of the passes it
    /// switches off (`nil` or a list of names). A Lua error, a panic, or a
    /// result of another shape is an error at the script's line.
    pub fn passes_off(&self, facts: &RegionFacts) -> Result<Vec<String>, HookError> {
        let hook = &self.0;
        hook.deadline.set(Instant::now() + TIME_LIMIT);
        let call = || -> mlua::Result<Value> {
            let r = hook.lua.create_table()?;
            r.set("start", facts.start)?;
            r.set("stop", facts.stop)?;
            r.set("size", facts.stop - facts.start)?;
            r.set("insns", facts.insns)?;
            r.set("executions", facts.executions)?;
            hook.function.call(r)
        };
        let overrun = RunError::Translate(TranslateError::Hook(self.error(overrun_message())));
        let (line, status) = (format!("aarchx: {overrun}"), overrun.exit_status());
        let value =
            watched(hook.deadline.get(), line, status, || std::panic::catch_unwind(std::panic::AssertUnwindSafe(call)))
                .map_err(|_| self.error("on_region panicked inside aarchx".into()))?
                .map_err(|e| {
                    let (at, message) = describe(&e, &hook.origin, Some(hook.line));
                    HookError { at, message }
                })?;
        let bad = |what: &str| self.error(format!("on_region must return nil or a list of pass names, not {what}"));
        match value {
            Value::Nil => Ok(Vec::new()),
            Value::Table(t) => {
                let names: Vec<Value> =
                    t.sequence_values().collect::<mlua::Result<_>>().map_err(|e| bad(&e.to_string()))?;
                if names.len() != t.pairs::<Value, Value>().count() {
                    return Err(bad("a table with keys other than 1..n"));
                }
                names
                    .into_iter()
                    .map(|v| match v {
                        Value::String(s) => Ok(s.to_string_lossy()),
                        other => Err(bad(&format!("a list holding {}", describe_value(&other)))),
                    })
                    .collect()
            }
            other => Err(bad(&describe_value(&other))),
        }
    }

    /// An error about the hook's result, at the line `on_region` is
    /// defined on.
    pub fn error(&self, message: String) -> HookError {
        HookError { at: Place { origin: self.0.origin.clone(), at: Some(Location::line(self.0.line)) }, message }
    }
}

/// Runs the policy script `text` (from file `origin`) for `guest` and
/// turns the table it returns into a [`Policy`]; a global function
/// `on_region` becomes its region hook.
pub fn run_script(text: &str, origin: &str, guest: &Invocation<'_>) -> Result<Policy, PolicyError> {
    let deadline = Rc::new(Cell::new(Instant::now() + TIME_LIMIT));
    let overrun = RunError::Policy(PolicyError::Lua {
        at: Place { origin: origin.to_string(), at: None },
        message: overrun_message(),
    });
    let (line, status) = (format!("aarchx: {overrun}"), overrun.exit_status());
    watched(deadline.get(), line, status, || evaluate(text, origin, guest, deadline))
}

/// [`run_script`]'s work, all of it watched: the script, reading its
/// table (which may run the collector, and so finalizers), and closing
/// the Lua state when there is no hook (every finalizer left runs then).
fn evaluate(
    text: &str,
    origin: &str,
    guest: &Invocation<'_>,
    deadline: Rc<Cell<Instant>>,
) -> Result<Policy, PolicyError> {
    let lua_error = |e: &mlua::Error| {
        let (at, message) = describe(e, origin, None);
        PolicyError::Lua { at, message }
    };
    let lua = sandbox(guest).map_err(|e| lua_error(&e))?;
    // The line of the main chunk's `return`, where field errors point.
    let return_line = Rc::new(Cell::new(None));
    {
        let (deadline, return_line) = (deadline.clone(), return_line.clone());
        let triggers =
            HookTriggers { on_returns: true, every_nth_instruction: Some(CHECK_EVERY), ..HookTriggers::new() };
        lua.set_global_hook(triggers, move |_, debug| {
            match debug.event() {
                DebugEvent::Ret if debug.source().what == "main" => return_line.set(debug.current_line()),
                DebugEvent::Count if Instant::now() > deadline.get() => {
                    let line = debug.current_line().map_or(String::new(), |l| format!("{l}:"));
                    return Err(mlua::Error::runtime(format!(
                        "{CHUNK}:{line} stopped: ran longer than {} s",
                        TIME_LIMIT.as_secs()
                    )));
                }
                _ => {}
            }
            Ok(VmState::Continue)
        })
        .map_err(|e| lua_error(&e))?;
    }
    let value: Value = lua.load(text).set_name(format!("={CHUNK}")).eval().map_err(|e| lua_error(&e))?;
    let at = Place { origin: origin.to_string(), at: return_line.get().map(Location::line) };
    let Value::Table(table) = value else {
        return Err(PolicyError::Lua {
            at,
            message: format!("the script must return the policy as a table, not {}", describe_value(&value)),
        });
    };
    let mut policy: Policy = from_lua(Value::Table(table))
        .map_err(|e| PolicyError::Syntax { at: at.clone(), message: error_words(&e.code, e.field.as_deref()) })?;
    policy.origin = origin.to_string();
    for entry in &mut policy.passes {
        entry.source.at = at.at;
    }
    policy.region_hook = match lua.globals().get::<Value>("on_region").map_err(|e| lua_error(&e))? {
        Value::Nil => None,
        Value::Function(function) => {
            let line = function.info().line_defined.unwrap_or(0);
            Some(RegionHook(Rc::new(Hook { lua, function, origin: origin.to_string(), line, deadline })))
        }
        other => {
            return Err(PolicyError::Lua {
                at,
                message: format!("`on_region` must be a function, not {}", describe_value(&other)),
            })
        }
    };
    Ok(policy)
}

/// What ends a call into the script that runs on inside Lua's library,
/// past the time limit (see `super::watchdog`).
fn overrun_message() -> String {
    format!("stopped: ran longer than {} s inside a call to Lua's library", TIME_LIMIT.as_secs())
}

/// A Lua state with the sandboxed libraries and the `aarchx` table.
fn sandbox(guest: &Invocation<'_>) -> mlua::Result<Lua> {
    let libs = StdLib::COROUTINE | StdLib::TABLE | StdLib::STRING | StdLib::UTF8 | StdLib::MATH | StdLib::OS;
    let lua = Lua::new_with(libs, LuaOptions::default())?;
    lua.set_memory_limit(MEMORY_LIMIT)?;
    let globals = lua.globals();
    for name in ["load", "loadfile", "dofile", "require"] {
        globals.raw_remove(name)?;
    }
    let os: Table = globals.get("os")?;
    let kept = lua.create_table()?;
    for name in ["getenv", "time", "clock", "date", "difftime"] {
        kept.set(name, os.get::<Value>(name)?)?;
    }
    globals.set("os", kept)?;
    let print = lua.create_function(|_, args: mlua::Variadic<Value>| {
        let words: Vec<String> = args.iter().map(|v| v.to_string().unwrap_or_else(|_| describe_value(v))).collect();
        // A closed stderr loses the line rather than panicking.
        let _ = writeln!(std::io::stderr(), "{}", words.join("\t"));
        Ok(())
    })?;
    globals.set("print", print)?;

    let aarchx = lua.create_table()?;
    aarchx.set("program", lua.create_string(guest.program.as_os_str().as_bytes())?)?;
    let args = lua.create_table()?;
    for (i, a) in guest.args.iter().enumerate() {
        args.raw_set(i + 1, lua.create_string(a.as_bytes())?)?;
    }
    aarchx.set("args", args)?;
    let host = lua.create_table()?;
    host.set("arch", std::env::consts::ARCH)?;
    let features = lua.create_table()?;
    for f in host_features() {
        features.set(f, true)?;
    }
    host.set("features", features)?;
    aarchx.set("host", host)?;
    globals.set("aarchx", aarchx)?;
    Ok(lua)
}

/// The host CPU features std detects at run time (HWCAP on aarch64, CPUID
/// on x86-64), by std's names.
fn host_features() -> Vec<&'static str> {
    macro_rules! detect {
        ($detected:ident, $($name:tt),* $(,)?) => {
            [$(($name, std::arch::$detected!($name))),*].into_iter().filter(|(_, on)| *on).map(|(n, _)| n).collect()
        };
    }
    #[cfg(target_arch = "aarch64")]
    #[rustfmt::skip]
    return detect!(
        is_aarch64_feature_detected,
        "asimd", "fp", "fp16", "aes", "pmull", "sha2", "sha3", "crc", "lse", "lse2", "rcpc", "rcpc2", "dotprod",
        "fhm", "fcma", "jsconv", "frintts", "i8mm", "bf16", "sve", "sve2", "flagm", "dit", "sb", "ssbs", "bti",
        "paca", "pacg", "rand", "mte", "dpb", "dpb2",
    );
    #[cfg(target_arch = "x86_64")]
    #[rustfmt::skip]
    return detect!(
        is_x86_feature_detected,
        "sse2", "sse3", "ssse3", "sse4.1", "sse4.2", "popcnt", "lzcnt", "bmi1", "bmi2", "avx", "avx2", "fma", "f16c",
        "aes", "pclmulqdq", "sha", "adx", "movbe", "rdrand", "rdseed", "xsave", "avx512f",
    );
    #[cfg(not(any(target_arch = "aarch64", target_arch = "x86_64")))]
    return Vec::new();
}

/// A Lua error as a place and a one-line message. Lua puts `CHUNK:LINE:`
/// in front of most messages; where it did not, the line comes from the
/// traceback or, failing that, `fallback`.
fn describe(e: &mlua::Error, origin: &str, fallback: Option<usize>) -> (Place, String) {
    let text = match e {
        mlua::Error::CallbackError { cause, .. } => cause.to_string(),
        mlua::Error::SyntaxError { message, .. } => message.clone(),
        mlua::Error::RuntimeError(message) => message.clone(),
        other => other.to_string(),
    };
    let first = text.lines().next().unwrap_or("").trim();
    let located = |s: &str| -> Option<(usize, String)> {
        let rest = s.split_once(&format!("{CHUNK}:"))?.1;
        let (line, msg) = rest.split_once(':')?;
        Some((line.parse().ok()?, msg.trim().to_string()))
    };
    let (line, message) = match located(first) {
        Some((line, msg)) => (Some(line), msg),
        None => {
            let traced = text.lines().skip(1).find_map(located).map(|(l, _)| l);
            (traced.or(fallback), first.to_string())
        }
    };
    (Place { origin: origin.to_string(), at: line.map(Location::line) }, message)
}

/// A Lua value in words: its type, and the value itself when short.
fn describe_value(v: &Value) -> String {
    match v {
        Value::Nil => "nil".to_string(),
        Value::Boolean(b) => format!("a boolean ({b})"),
        Value::Integer(i) => format!("a number ({i})"),
        other => format!("a {}", other.type_name()),
    }
}
