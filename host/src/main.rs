//! `aarchx`: runs an x86-64 Linux program by dynamic binary translation.
//! This file is the command line only: argument parsing, logging set-up,
//! and turning every error into one line on stderr and an exit status.

use std::ffi::OsString;
use std::path::PathBuf;
use std::process::ExitCode;

use aarchx::loader::rootfs::Rootfs;
use aarchx::policy;
use aarchx::run::{self, RunError};

const USAGE: &str = "\
aarchx: run an x86-64 Linux program on this machine by dynamic binary translation

Usage: aarchx [OPTIONS] [--] PROGRAM [ARGS...]

Options:
  --policy FILE   Translation policy: a RON file, or a Lua script (a name
                  ending in .lua) that computes one; see docs/policies.md.
                  Default: the built-in policies/default.ron.
  --set PASS.OPTION=VALUE
                  Override one option of a pass the policy lists (VALUE:
                  true, false, an integer, or text). Repeatable; for
                  sweeps without writing policy files.
  --rootfs DIR    The x86-64 guest root: a dynamic program's loader and
                  libraries come from it, and absolute paths the guest
                  names resolve inside it first (links and `..` kept
                  inside it), then, when not there, on the host.
                  Default: $AARCHX_ROOTFS, else / when it holds an x86-64
                  /lib64/ld-linux-x86-64.so.2, else /usr/x86_64-linux-gnu.
  --argv0 NAME    The argv[0] the guest sees (default: PROGRAM as given).
                  A guest execve of an x86-64 program re-enters aarchx
                  with it, so the new program sees the argv[0] passed.
  -h, --help      Print this help and exit.
  -V, --version   Print the version and exit.

Everything from PROGRAM on is passed to the guest untouched.

Environment:
  AARCHX_LOG      Log filter for aarchx's own messages on stderr, e.g.
                  `debug` or `aarchx=trace` (quiet by default).
  AARCHX_ROOTFS   The guest root when --rootfs is not given.
  AARCHX_STATS    When set, print one `aarchx-stats:` line at exit: regions
                  translated, guest and IR instructions, translation time
                  and (JIT) arm64 code bytes.
  AARCHX_QEMU     The qemu-aarch64 to re-enter an aarch64 aarchx through
                  when the host cannot execute it directly (no binfmt_misc);
                  default: qemu-aarch64 from PATH.

Exit status:
  the guest's own exit status; if the guest is killed by a signal, aarchx
  kills itself with the same signal.
  2    usage error, a policy that does not load or validate, or a guest
       root that does not exist or is not a directory
  3    verify mode found a translated block that disagrees with the
       interpreter or with the block's reference translation
  4    translation failed: the lifter or a plugin pass failed or produced
       invalid IR, a Lua policy's on_region hook failed, or, under verify
       mode, any pass failed (otherwise a built-in pass that fails on a
       block is left out of it, with a warning)
  126  PROGRAM is not a runnable x86-64 ELF executable, or its dynamic
       loader is not in the guest root
  127  PROGRAM was not found
  101  an internal error (a bug in aarchx), reported on one line
";

/// The options given before PROGRAM.
#[derive(Default)]
struct RunOptions {
    policy: Option<PathBuf>,
    rootfs: Option<PathBuf>,
    /// `--set PASS.OPTION=VALUE` overrides, in order.
    sets: Vec<String>,
    /// `--argv0 NAME`: the guest's argv[0].
    argv0: Option<OsString>,
}

/// What the command line asks for.
enum Command {
    Help,
    Version,
    Run { options: RunOptions, program: PathBuf, args: Vec<OsString> },
}

/// The value of option `name` given as `name VALUE` or `name=VALUE` in
/// `arg`; `None` if `arg` is not that option. `what` names the value in
/// the error for a missing one.
fn option_value(
    name: &str,
    what: &str,
    arg: &str,
    argv: &mut impl Iterator<Item = OsString>,
) -> Option<Result<OsString, String>> {
    if arg == name {
        Some(argv.next().ok_or_else(|| format!("{name} needs a {what}")))
    } else {
        arg.strip_prefix(name).and_then(|rest| rest.strip_prefix('=')).map(|v| Ok(OsString::from(v)))
    }
}

fn parse_args(mut argv: impl Iterator<Item = OsString>) -> Result<Command, String> {
    let mut options = RunOptions::default();
    while let Some(arg) = argv.next() {
        let Some(s) = arg.to_str() else {
            return Ok(Command::Run { options, program: arg.into(), args: argv.collect() });
        };
        if let Some(v) = option_value("--policy", "FILE", s, &mut argv) {
            options.policy = Some(v?.into());
        } else if let Some(v) = option_value("--rootfs", "DIR", s, &mut argv) {
            options.rootfs = Some(v?.into());
        } else if let Some(v) = option_value("--argv0", "NAME", s, &mut argv) {
            options.argv0 = Some(v?);
        } else if let Some(v) = option_value("--set", "PASS.OPTION=VALUE", s, &mut argv) {
            options.sets.push(v?.into_string().map_err(|_| "--set needs UTF-8 text".to_string())?);
        } else {
            match s {
                "-h" | "--help" => return Ok(Command::Help),
                "-V" | "--version" => return Ok(Command::Version),
                "--" => {
                    let program = argv.next().ok_or("missing PROGRAM after --")?;
                    return Ok(Command::Run { options, program: program.into(), args: argv.collect() });
                }
                _ if s.starts_with('-') && s.len() > 1 => return Err(format!("unknown option `{s}`")),
                _ => return Ok(Command::Run { options, program: arg.into(), args: argv.collect() }),
            }
        }
    }
    Err("missing PROGRAM".into())
}

fn init_logging() {
    let filter = tracing_subscriber::EnvFilter::try_from_env("AARCHX_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("off"));
    tracing_subscriber::fmt().with_env_filter(filter).with_writer(std::io::stderr).with_target(false).init();
}

fn main() -> ExitCode {
    init_logging();
    aarchx::panics::install_hook();
    let command = match parse_args(std::env::args_os().skip(1)) {
        Ok(c) => c,
        Err(msg) => {
            eprintln!("aarchx: {msg} (see `aarchx --help`)");
            return ExitCode::from(2);
        }
    };
    let (options, program, args) = match command {
        Command::Help => {
            print!("{USAGE}");
            return ExitCode::SUCCESS;
        }
        Command::Version => {
            println!("aarchx {}", env!("CARGO_PKG_VERSION"));
            return ExitCode::SUCCESS;
        }
        Command::Run { options, program, args } => (options, program, args),
    };
    aarchx::syscall::init_exec(options.policy.as_deref(), &options.sets);
    let policy = match &options.policy {
        Some(p) => policy::load(p, &program, &args),
        None => Ok(policy::builtin_default()),
    };
    let policy = policy.and_then(|mut p| {
        options.sets.iter().try_for_each(|set| p.apply_set(set))?;
        Ok(p)
    });
    let root =
        match options.rootfs.or_else(|| std::env::var_os("AARCHX_ROOTFS").filter(|d| !d.is_empty()).map(PathBuf::from))
        {
            Some(dir) => Rootfs::new(&dir),
            None => Ok(Rootfs::host_default()),
        };
    let result =
        policy.map_err(RunError::Policy).and_then(|p| run::run(&p, &root?, &program, options.argv0.as_deref(), &args));
    match result {
        Ok(status) => ExitCode::from(status),
        Err(e) => {
            eprintln!("aarchx: {e}");
            ExitCode::from(e.exit_status())
        }
    }
}
