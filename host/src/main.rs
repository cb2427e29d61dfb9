//! `aarchx`: runs an x86-64 Linux program by dynamic binary translation.
//! This file is the command line's edge only: logging set-up, dispatching
//! what `cli` parsed (a run or a subcommand), and turning every error into
//! one line on stderr and an exit status.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use aarchx::binfmt::{self, Places};
use aarchx::cli::{self, BinfmtCommand, BinfmtTarget, CacheCommand, Command, Invocation, PolicyCommand, RunOptions};
use aarchx::loader::rootfs::Rootfs;
use aarchx::run::{self, RunError};
use aarchx::settings::{self, Origin, Request, SettingsError};

/// mimalloc instead of glibc's malloc: translation allocates and frees
/// many small objects per region, and glibc's malloc and free were about
/// 30% of a cold start-up's arm64 instructions (docs/benchmarks.md).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn init_logging() {
    let filter = tracing_subscriber::EnvFilter::try_from_env("AARCHX_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("off"));
    tracing_subscriber::fmt().with_env_filter(filter).with_writer(std::io::stderr).with_target(false).init();
}

fn main() -> ExitCode {
    init_logging();
    aarchx::panics::install_hook();
    let invocation = match cli::parse(std::env::args_os().collect(), binfmt::started_by_binfmt()) {
        Ok(i) => i,
        Err(e) => return fail(&e, 2),
    };
    match invocation {
        Invocation::Print(text) => print_out(&text),
        Invocation::Run { options, program, args } => run_program(options, &program, &args),
        Invocation::Command(command) => subcommand(command),
    }
}

/// One line on stderr and the exit status.
fn fail(e: &dyn std::fmt::Display, status: u8) -> ExitCode {
    eprintln!("aarchx: {e}");
    ExitCode::from(status)
}

fn settings_error(e: SettingsError) -> ExitCode {
    fail(&e, 2)
}

fn run_program(options: RunOptions, program: &Path, args: &[std::ffi::OsString]) -> ExitCode {
    let request = Request { policy: options.policy.as_deref(), sets: &options.sets, program: Some(program), args };
    let settings = match settings::resolve(&request) {
        Ok(s) => s,
        Err(e) => return settings_error(e),
    };
    // A guest execve re-enters aarchx with the command line's policy and
    // overrides; per-program rules are looked up again for the new program.
    let relaunch_policy = settings.policy_file.as_deref().filter(|_| settings.policy_origin == Origin::CommandLine);
    aarchx::syscall::init_exec(relaunch_policy, &options.sets);
    for (name, (value, _)) in &settings.env {
        // The guest's environment is aarchx's. The only other thread that
        // can exist here, a Lua policy's watchdog, never reads it.
        std::env::set_var(name, value);
    }
    let root =
        match options.rootfs.or_else(|| std::env::var_os("AARCHX_ROOTFS").filter(|d| !d.is_empty()).map(PathBuf::from))
        {
            Some(dir) => Rootfs::new(&dir),
            None => Ok(Rootfs::host_default()),
        };
    let result = root
        .map_err(RunError::from)
        .and_then(|root| run::run(&settings.policy, &root, program, options.argv0.as_deref(), args));
    match result {
        Ok(status) => ExitCode::from(status),
        Err(e) => fail(&e, e.exit_status()),
    }
}

fn subcommand(command: Command) -> ExitCode {
    let stdout = &mut std::io::stdout();
    match command {
        Command::Passes { policy } => {
            let request = Request { policy: policy.policy.as_deref(), sets: &policy.sets, ..Request::default() };
            match settings::resolve(&request).map(|s| cli::passes::listing(&s.policy)) {
                Ok(Ok(text)) => print_out(&text),
                Ok(Err(e)) => fail(&e, 2),
                Err(e) => settings_error(e),
            }
        }
        Command::Policy(PolicyCommand::Check { file }) => {
            let request = Request { policy: Some(&file), ..Request::default() };
            let settings = match settings::resolve(&request) {
                Ok(s) => s,
                Err(e) => return settings_error(e),
            };
            match cli::show::check(&settings.policy) {
                Ok(passes) => print_out(&format!("{}: valid: {}\n", settings.policy_name(), passes.join(", "))),
                Err(e) => fail(&e, e.exit_status()),
            }
        }
        Command::Policy(PolicyCommand::Show { policy, target }) => {
            let file_target = target.as_deref().filter(|t| is_policy_file(t));
            let program = target.as_deref().filter(|t| !is_policy_file(t)).map(Path::new);
            let request =
                Request { policy: policy.policy.as_deref().or(file_target), sets: &policy.sets, program, args: &[] };
            let settings = match settings::resolve(&request) {
                Ok(s) => s,
                Err(e) => return settings_error(e),
            };
            match cli::show::show(&settings, program) {
                Ok(text) => print_out(&text),
                Err(e) => fail(&e, e.exit_status()),
            }
        }
        Command::Explain { policy, at, quick, program } => {
            let request = Request { policy: policy.policy.as_deref(), sets: &policy.sets, ..Request::default() };
            let settings = match settings::resolve(&request) {
                Ok(s) => s,
                Err(e) => return settings_error(e),
            };
            match cli::explain::explain(&settings.policy, &program, &at, quick) {
                Ok(text) => print_out(&text),
                Err(e) => fail(&e, e.exit_status()),
            }
        }
        Command::Binfmt(command) => binfmt_command(command),
        Command::Cache(command) => cache_command(command),
        Command::Completions { shell } => {
            cli::completions(shell, stdout);
            ExitCode::SUCCESS
        }
        Command::Man => match cli::man_page(stdout) {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => fail(&format!("cannot write the man page: {e}"), 1),
        },
    }
}

fn cache_command(command: CacheCommand) -> ExitCode {
    let (CacheCommand::Stats { policy } | CacheCommand::Clear { policy } | CacheCommand::Verify { policy }) = &command;
    let request = Request { policy: policy.policy.as_deref(), sets: &policy.sets, ..Request::default() };
    let settings = match settings::resolve(&request) {
        Ok(s) => s,
        Err(e) => return settings_error(e),
    };
    let Some(root) = cli::cache::folder(&settings.policy) else {
        return fail(&"no cache folder: set XDG_CACHE_HOME or HOME, or the policy's cache.dir", 1);
    };
    match command {
        CacheCommand::Stats { .. } => print_out(&cli::cache::stats(&root, settings.policy.cache.max_mib)),
        CacheCommand::Clear { .. } => match cli::cache::clear(&root) {
            Ok((n, bytes)) => print_out(&format!("{}: removed {n} files ({} bytes)\n", root.display(), bytes)),
            Err(e) => fail(&format!("cannot clear {}: {e}", root.display()), 1),
        },
        CacheCommand::Verify { .. } => match cli::cache::verify(&root) {
            (text, true) => print_out(&text),
            (text, false) => {
                print_out(&text);
                ExitCode::from(1)
            }
        },
    }
}

fn binfmt_command(command: BinfmtCommand) -> ExitCode {
    let (BinfmtCommand::Print { target } | BinfmtCommand::Install { target, .. } | BinfmtCommand::Uninstall { target }) =
        &command;
    let BinfmtTarget { interpreter, root } = target.clone();
    let places = Places::under(root.as_deref().unwrap_or(Path::new("/")));
    let interpreter = match interpreter.map_or_else(std::env::current_exe, Ok) {
        Ok(i) => i,
        Err(e) => return fail(&format!("binfmt: cannot tell where this aarchx is: {e}; give --interpreter"), 1),
    };
    let result = match command {
        BinfmtCommand::Print { .. } => binfmt::registration(&interpreter),
        BinfmtCommand::Install { force, .. } => binfmt::install(&interpreter, &places, force).map(|s| s + "\n"),
        BinfmtCommand::Uninstall { .. } => binfmt::uninstall(&places).map(|s| s + "\n"),
    };
    match result {
        Ok(text) => print_out(&text),
        Err(e) => fail(&e, e.exit_status()),
    }
}

/// `policy show`'s target is a policy file when its name ends in .ron or .lua.
fn is_policy_file(target: &OsStr) -> bool {
    Path::new(target).extension().is_some_and(|e| e == "ron" || e == "lua")
}

/// Writes a subcommand's output; a reader that went away (`| head`) is
/// not an error.
fn print_out(text: &str) -> ExitCode {
    use std::io::Write as _;
    match std::io::stdout().lock().write_all(text.as_bytes()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => ExitCode::SUCCESS,
        Err(e) => fail(&format!("cannot write to stdout: {e}"), 1),
    }
}
