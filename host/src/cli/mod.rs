//! The `aarchx` command line, defined once with clap's derive: the run
//! form (`aarchx [OPTIONS] PROGRAM ARGS...`, everything from PROGRAM on the
//! guest's, untouched) and the subcommands. The help, the shell
//! completions and the man page are all generated from these definitions.
//! This module also turns clap's errors into aarchx's one-line form and
//! recognises a start through binfmt_misc, whose argv is not a command line.
//!
//! A first word that is exactly a subcommand's name (`passes`, `policy`,
//! `binfmt`, `cache`, `explain`, `completions`, `man`, `help`) is that subcommand; a guest
//! program of such a name is run by a path (`./passes`) or after `--`
//! (`aarchx -- passes`), and after any option (`aarchx --policy P passes`)
//! a word is always PROGRAM.

pub mod cache;
pub mod explain;
pub mod passes;
pub mod show;

use std::ffi::OsString;
use std::path::PathBuf;

use clap::error::{ContextKind, ContextValue, ErrorKind};
use clap::{Args, CommandFactory, Parser, Subcommand};

/// The environment variables and exit statuses, after the options in
/// `aarchx --help` and the man page.
const AFTER_HELP: &str = "\
Everything from PROGRAM on is passed to the guest untouched. A PROGRAM
named like a subcommand is run by a path (./passes) or after `--`.

Environment:
  AARCHX_POLICY   The policy when --policy is not given: a file, or a name
                  looked up as --policy does. Overrides per-program rules.
  AARCHX_LOG      Log filter for aarchx's own messages on stderr, e.g.
                  `debug` or `aarchx=trace` (quiet by default).
  AARCHX_ROOTFS   The guest root when --rootfs is not given.
  AARCHX_STATS    When set, print one `aarchx-stats:` line at exit: regions
                  translated, guest and IR instructions, translation time,
                  (JIT) arm64 code bytes, the time of each pass, the IR
                  verifier and (JIT) lowering (`ns.NAME=`), and how many
                  guest instructions were translated more than once.
  AARCHX_PERF_MAP When set, (JIT) describe the translated code in
                  /tmp/perf-PID.map for Linux perf: each guest instruction's
                  arm64 code a symbol named by its guest address.
  AARCHX_QEMU     The qemu-aarch64 to re-enter an aarch64 aarchx through
                  when the host cannot execute it directly (no binfmt_misc);
                  default: qemu-aarch64 from PATH.
  AARCHX_CACHE    The persistent cache's mode (off, read, readwrite, verify),
                  over the policy's `cache.mode`; --set cache.mode=... wins.
  XDG_CACHE_HOME  The persistent cache is in $XDG_CACHE_HOME/aarchx
                  (default ~/.cache/aarchx) unless the policy's cache.dir
                  names another folder.
  XDG_CONFIG_HOME Per-program rules are read from
                  $XDG_CONFIG_HOME/aarchx/programs.ron (default
                  ~/.config/aarchx/programs.ron) over /etc/aarchx/programs.ron.

Exit status:
  the guest's own exit status; if the guest is killed by a signal, aarchx
  kills itself with the same signal. Subcommands exit 0 on success.
  1    a subcommand could not do what it was asked (binfmt install refused
       or not permitted, cache verify found a damaged file)
  2    usage error, a policy or per-program rules file that does not load
       or validate, a guest root that does not exist or is not a
       directory, or an `explain --at` that names no code
  3    verify mode found a translated block that disagrees with the
       interpreter or with the block's reference translation
  4    translation failed: the lifter or a plugin pass failed or produced
       invalid IR, a Lua policy's on_region hook failed, or, under verify
       mode, any pass failed (otherwise a built-in pass that fails on a
       block is left out of it, with a warning); or the JIT could not
       be set up
  126  PROGRAM is not a runnable x86-64 ELF executable, or its dynamic
       loader is not in the guest root
  127  PROGRAM was not found
  101  an internal error (a bug in aarchx), reported on one line

See docs/usage.md for the subcommands, per-program rules and binfmt_misc.";

/// aarchx: run an x86-64 Linux program on this machine by dynamic binary
/// translation.
#[derive(Debug, Parser)]
#[command(
    name = "aarchx",
    version,
    args_conflicts_with_subcommands = true,
    after_long_help = AFTER_HELP,
    override_usage = "aarchx [OPTIONS] [--] PROGRAM [ARGS]...\n       aarchx <COMMAND>"
)]
pub struct Cli {
    #[command(flatten)]
    pub options: RunOptions,
    /// The x86-64 program to run, then its arguments, all passed untouched.
    #[arg(value_name = "PROGRAM", trailing_var_arg = true, num_args = 1.., value_parser = clap::value_parser!(OsString))]
    pub command_line: Vec<OsString>,
    #[command(subcommand)]
    pub command: Option<Command>,
}

/// The options that choose how a program is run.
#[derive(Clone, Debug, Default, Args)]
pub struct RunOptions {
    /// Translation policy: a RON file, a Lua script (a name ending in
    /// .lua) that computes one, or the name of an installed policy
    /// (`ordered`: NAME.ron or NAME.lua in ../share/aarchx/policies beside
    /// the aarchx binary, then in the source tree's policies/). Default:
    /// $AARCHX_POLICY, else a per-program rule's, else the built-in
    /// policies/default.ron. See docs/policies.md.
    #[arg(long, value_name = "FILE", value_parser = clap::value_parser!(OsString))]
    pub policy: Option<OsString>,
    /// Override one option of a pass the policy lists (VALUE: true, false,
    /// an integer, or text), of the persistent cache (cache.mode=Off|Read|
    /// ReadWrite|Verify, cache.dir=DIR, cache.max_mib=N), or whether float
    /// code uses FEAT_AFP (afp=Auto|On|Off). Repeatable; applied after the
    /// per-program rules' overrides.
    #[arg(long = "set", value_name = "PASS.OPTION=VALUE")]
    pub sets: Vec<String>,
    /// The x86-64 guest root: a dynamic program's loader and libraries come
    /// from it, and absolute paths the guest names resolve inside it first
    /// (links and `..` kept inside it), then, when not there, on the host.
    /// Default: $AARCHX_ROOTFS, else / when it holds an x86-64
    /// /lib64/ld-linux-x86-64.so.2, else /usr/x86_64-linux-gnu.
    #[arg(long, value_name = "DIR")]
    pub rootfs: Option<PathBuf>,
    /// The argv[0] the guest sees (default: PROGRAM as given). A guest
    /// execve of an x86-64 program re-enters aarchx with it, so the new
    /// program sees the argv[0] passed.
    #[arg(long, value_name = "NAME", value_parser = clap::value_parser!(OsString))]
    pub argv0: Option<OsString>,
}

/// The policy options of the subcommands that resolve a policy.
#[derive(Clone, Debug, Default, Args)]
pub struct PolicyOptions {
    /// The policy (a file or an installed policy's name), as for a run.
    #[arg(long, value_name = "FILE", value_parser = clap::value_parser!(OsString))]
    pub policy: Option<OsString>,
    /// Override one option of a pass, as for a run. Repeatable.
    #[arg(long = "set", value_name = "PASS.OPTION=VALUE")]
    pub sets: Vec<String>,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// List every pass a policy can name (built in, and from the policy's
    /// plugins): its stage and its options with their types and defaults.
    Passes {
        #[command(flatten)]
        policy: PolicyOptions,
    },
    /// Check a policy file, or show the settings a run would use.
    #[command(subcommand)]
    Policy(PolicyCommand),
    /// Print, install or remove the binfmt_misc handler that runs x86-64
    /// programs through aarchx as `./prog`.
    #[command(subcommand)]
    Binfmt(BinfmtCommand),
    /// Inspect, check or empty the persistent translation cache (the
    /// folder the policy's `cache.dir` names, by default
    /// $XDG_CACHE_HOME/aarchx).
    #[command(subcommand)]
    Cache(CacheCommand),
    /// Show one region of a program as a developer inspects it: its guest
    /// x86-64 instructions, its IR after each pass of the policy, and the
    /// arm64 code the JIT makes of it, with its size.
    Explain {
        #[command(flatten)]
        policy: PolicyOptions,
        /// Where the region starts: an address of the file (0x401000, or
        /// decimal; a PIE's as if loaded at 0) or a symbol of its .symtab
        /// or .dynsym, with an optional offset (main, main+0x10).
        #[arg(long, value_name = "ADDR")]
        at: String,
        /// Show the quick translation a region first gets under tiering
        /// (no branch followed) instead of its superblock.
        #[arg(long)]
        quick: bool,
        /// The x86-64 program (or shared library) whose code it is.
        program: PathBuf,
    },
    /// Print a shell completion script for SHELL.
    Completions {
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
    /// Print the man page (roff) to stdout.
    Man,
}

#[derive(Debug, Subcommand)]
pub enum PolicyCommand {
    /// Load and validate a policy file (its plugins loaded, every pass and
    /// option checked); prints its passes when it is valid.
    Check {
        /// The policy file, or an installed policy's name.
        #[arg(value_parser = clap::value_parser!(OsString))]
        file: OsString,
    },
    /// Print the settings a run would use, each with where it came from:
    /// the policy (command line, AARCHX_POLICY, a per-program rule or the
    /// built-in default), each pass option (the file, the pass's default,
    /// a --set) and the guest environment a rule adds.
    Show {
        #[command(flatten)]
        policy: PolicyOptions,
        /// A program, to show the per-program rule that applies to it; or a
        /// policy file (a name ending in .ron or .lua), shown as --policy
        /// would use it.
        #[arg(value_name = "PROGRAM|FILE", value_parser = clap::value_parser!(OsString))]
        target: Option<OsString>,
    },
}

#[derive(Debug, Subcommand)]
pub enum CacheCommand {
    /// Print the cache folder's size, in all and per policy.
    Stats {
        #[command(flatten)]
        policy: PolicyOptions,
    },
    /// Remove every cache file.
    Clear {
        #[command(flatten)]
        policy: PolicyOptions,
    },
    /// Check every cache file whole (format, checksums, each region's IR);
    /// exits 1 if one is damaged.
    Verify {
        #[command(flatten)]
        policy: PolicyOptions,
    },
}

#[derive(Debug, Subcommand)]
pub enum BinfmtCommand {
    /// Print the registration line (the kernel's and binfmt.d's format).
    Print {
        #[command(flatten)]
        target: BinfmtTarget,
    },
    /// Write /etc/binfmt.d/aarchx.conf and register the handler now
    /// through /proc/sys/fs/binfmt_misc/register.
    Install {
        #[command(flatten)]
        target: BinfmtTarget,
        /// Install even when another x86-64 handler (qemu-x86_64, box64,
        /// FEX) is registered; it is not removed, aarchx's registration is
        /// newer and the kernel tries the newest first.
        #[arg(long)]
        force: bool,
    },
    /// Unregister the handler and remove /etc/binfmt.d/aarchx.conf.
    Uninstall {
        #[command(flatten)]
        target: BinfmtTarget,
    },
}

/// Where a binfmt subcommand acts.
#[derive(Clone, Debug, Args)]
pub struct BinfmtTarget {
    /// The interpreter the registration names (default: this aarchx).
    #[arg(long, value_name = "PATH")]
    pub interpreter: Option<PathBuf>,
    /// Act under DIR instead of / (DIR/etc/binfmt.d,
    /// DIR/proc/sys/fs/binfmt_misc): for tests and package builds.
    #[arg(long, value_name = "DIR", hide = true)]
    pub root: Option<PathBuf>,
}

/// What the command line asks for.
#[derive(Debug)]
pub enum Invocation {
    /// Run PROGRAM.
    Run { options: RunOptions, program: PathBuf, args: Vec<OsString> },
    /// A subcommand.
    Command(Command),
    /// Print this text on stdout and exit with status 0 (help, version).
    Print(String),
}

/// A command line that is not one: the one line to print after `aarchx: `.
#[derive(Debug, thiserror::Error)]
#[error("{0} (see `aarchx --help`)")]
pub struct UsageError(String);

/// Reads aarchx's argv (with argv[0]). When the kernel started aarchx
/// through its binfmt_misc registration with the `P` flag
/// (`started_by_binfmt`), argv is `aarchx PATH ARGV0 ARGS...`, not a command
/// line: PATH is run with ARGV0 as its argv[0], no option is read.
pub fn parse(argv: Vec<OsString>, started_by_binfmt: bool) -> Result<Invocation, UsageError> {
    if started_by_binfmt && argv.len() >= 3 {
        let mut rest = argv.into_iter().skip(1);
        let program = rest.next().map(PathBuf::from).unwrap_or_default();
        let argv0 = rest.next();
        return Ok(Invocation::Run {
            options: RunOptions { argv0, ..RunOptions::default() },
            program,
            args: rest.collect(),
        });
    }
    let cli = match Cli::try_parse_from(argv) {
        Ok(cli) => cli,
        Err(e) if matches!(e.kind(), ErrorKind::DisplayHelp | ErrorKind::DisplayVersion) => {
            return Ok(Invocation::Print(e.render().to_string()))
        }
        Err(e) => return Err(UsageError(one_line(&e))),
    };
    if let Some(command) = cli.command {
        return Ok(Invocation::Command(command));
    }
    let mut words = cli.command_line.into_iter();
    let program = words.next().ok_or_else(|| UsageError("missing PROGRAM".into()))?;
    Ok(Invocation::Run { options: cli.options, program: program.into(), args: words.collect() })
}

/// clap's error as one line: its first paragraph without `error: `, a missing
/// value worded as `--rootfs needs a DIR`, a missing subcommand by its
/// usage.
fn one_line(e: &clap::Error) -> String {
    if e.kind() == ErrorKind::InvalidValue {
        if let (Some(ContextValue::String(arg)), Some(ContextValue::String(value))) =
            (e.get(ContextKind::InvalidArg), e.get(ContextKind::InvalidValue))
        {
            if value.is_empty() {
                if let Some((name, what)) = arg.split_once(' ') {
                    return format!("{name} needs a {}", what.trim_matches(|c| c == '<' || c == '>'));
                }
            }
        }
    }
    let text = e.render().to_string();
    if e.kind() == ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand {
        let usage = text.lines().find_map(|l| l.strip_prefix("Usage: ")).unwrap_or("aarchx <COMMAND>");
        return format!("missing COMMAND: usage: {}", usage.trim());
    }
    // A message ending in `:` goes on in indented lines (the missing
    // arguments) up to a blank line.
    let words: Vec<&str> = text.lines().take_while(|l| !l.trim().is_empty()).map(str::trim).collect();
    let line = words.join(" ");
    line.strip_prefix("error: ").unwrap_or(&line).to_string()
}

/// The clap command, for completions and the man page.
pub fn command() -> clap::Command {
    Cli::command()
}

/// Writes the completion script for `shell` to `out`.
pub fn completions(shell: clap_complete::Shell, out: &mut dyn std::io::Write) {
    clap_complete::generate(shell, &mut command(), "aarchx", out);
}

/// Writes the man page (roff) to `out`.
pub fn man_page(out: &mut dyn std::io::Write) -> std::io::Result<()> {
    clap_mangen::Man::new(command()).render(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn argv(words: &[&str]) -> Vec<OsString> {
        std::iter::once("aarchx").chain(words.iter().copied()).map(OsString::from).collect()
    }

    #[test]
    fn the_definition_is_consistent() {
        command().debug_assert();
    }

    #[test]
    fn everything_after_program_is_the_guests() {
        let Ok(Invocation::Run { options, program, args }) =
            parse(argv(&["--set", "a.b=1", "./prog", "--policy", "x", "--", "-h", "passes"]), false)
        else {
            panic!("not a run")
        };
        assert_eq!(options.sets, ["a.b=1"]);
        assert_eq!(options.policy, None);
        assert_eq!(program, PathBuf::from("./prog"));
        assert_eq!(args, ["--policy", "x", "--", "-h", "passes"]);
    }

    #[test]
    fn a_subcommand_name_is_a_program_after_dashes_or_an_option() {
        assert!(matches!(parse(argv(&["passes"]), false), Ok(Invocation::Command(Command::Passes { .. }))));
        for words in [&["--", "passes"][..], &["--rootfs", "/", "passes"][..]] {
            let Ok(Invocation::Run { program, .. }) = parse(argv(words), false) else { panic!("{words:?}") };
            assert_eq!(program, PathBuf::from("passes"));
        }
    }

    #[test]
    fn binfmt_argv_is_path_argv0_args() {
        let Ok(Invocation::Run { options, program, args }) =
            parse(argv(&["/usr/bin/prog", "prog", "--policy", "x"]), true)
        else {
            panic!("not a run")
        };
        assert_eq!(program, PathBuf::from("/usr/bin/prog"));
        assert_eq!(options.argv0, Some("prog".into()));
        assert_eq!(args, ["--policy", "x"]);
    }
}
