//! binfmt_misc: the kernel registration that makes `./prog` of an x86-64
//! ELF executable run through aarchx. This module owns the registration
//! line, installing it (a `binfmt.d` file for every boot, and a live
//! registration through `/proc/sys/fs/binfmt_misc/register`), removing it,
//! refusing to stack over another x86-64 handler, and telling whether this
//! process was started through it. See docs/usage.md for the flags chosen.

use std::io::Write as _;
use std::path::{Path, PathBuf};

/// The entry's name under `/proc/sys/fs/binfmt_misc/`.
pub const NAME: &str = "aarchx";

/// The first 20 bytes of an x86-64 ELF executable: `\x7fELF`, 64-bit,
/// little-endian, ELF version 1, e_type 2 (EXEC) and e_machine 62 (x86-64).
/// The same magic as qemu-user's, FEX's and box64's registrations.
const MAGIC: [u8; 20] = *b"\x7fELF\x02\x01\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x02\x00\x3e\x00";
/// Which bits of [`MAGIC`] must match, as qemu-user, FEX and box64 mask
/// them: the low bit of EI_DATA and EI_VERSION and the whole OS ABI byte
/// free, and e_type's low bit free, so PIE executables and dynamically
/// linked programs (ET_DYN, 3) match as well as ET_EXEC.
const MASK: [u8; 20] = *b"\xff\xff\xff\xff\xff\xfe\xfe\x00\xff\xff\xff\xff\xff\xff\xff\xff\xfe\xff\xff\xff";
/// `P`: preserve argv[0], the path comes as an extra argument (see
/// [`started_by_binfmt`]); `F`: the kernel opens aarchx when the entry is
/// registered, so it runs in containers and chroots that lack the file.
/// Not `O` or `C` (docs/usage.md says why).
const FLAGS: &str = "PF";

/// Linux's `AT_FLAGS_PRESERVE_ARGV0` (include/uapi/linux/binfmts.h): set
/// in the interpreter's `AT_FLAGS` when its binfmt_misc entry has `P`.
const AT_FLAGS_PRESERVE_ARGV0: u64 = 1;

/// A binfmt subcommand that could not do its work; one line each.
#[derive(Debug, thiserror::Error)]
pub enum BinfmtError {
    #[error("binfmt: the interpreter {0} is not an absolute path without `:` or a line break")]
    Interpreter(String),
    #[error("binfmt: {path}: {source}")]
    Io {
        path: String,
        #[source]
        source: std::io::Error,
    },
    #[error(
        "binfmt: another x86-64 handler is registered: {name} ({interpreter}); \
         remove it (echo -1 > {dir}/{name}) or install with --force"
    )]
    Other { name: String, interpreter: String, dir: String },
    #[error("binfmt: wrote {file}, but cannot register now: {path}: {source} (is binfmt_misc mounted?)")]
    Live {
        file: String,
        path: String,
        #[source]
        source: std::io::Error,
    },
}

impl BinfmtError {
    /// The documented exit status: 2 for a bad interpreter, else 1.
    pub fn exit_status(&self) -> u8 {
        match self {
            BinfmtError::Interpreter(_) => 2,
            _ => 1,
        }
    }
}

/// The places a binfmt subcommand acts on, under `root` (`/` but in
/// tests).
#[derive(Clone, Debug)]
pub struct Places {
    /// The file systemd-binfmt registers at every boot.
    pub conf: PathBuf,
    /// The binfmt_misc file system.
    pub misc: PathBuf,
}

impl Places {
    pub fn under(root: &Path) -> Places {
        Places { conf: root.join("etc/binfmt.d/aarchx.conf"), misc: root.join("proc/sys/fs/binfmt_misc") }
    }
}

/// The registration line (with its newline) for `interpreter`, in the
/// format `/proc/sys/fs/binfmt_misc/register` and `binfmt.d` files take:
/// `:name:type:offset:magic:mask:interpreter:flags`.
pub fn registration(interpreter: &Path) -> Result<String, BinfmtError> {
    let text = interpreter.to_str().filter(|t| t.starts_with('/') && !t.contains([':', '\n']));
    let text = text.ok_or_else(|| BinfmtError::Interpreter(interpreter.display().to_string()))?;
    let hex = |bytes: &[u8]| bytes.iter().map(|b| format!("\\x{b:02x}")).collect::<String>();
    Ok(format!(":{NAME}:M::{}:{}:{text}:{FLAGS}\n", hex(&MAGIC), hex(&MASK)))
}

/// Whether the kernel started this process as the interpreter of a
/// binfmt_misc entry with the `P` flag: argv is then `aarchx PATH ARGV0
/// ARGS...` (Linux 5.12 and later say so in `AT_FLAGS`).
pub fn started_by_binfmt() -> bool {
    crate::sys::process::auxv_flags() & AT_FLAGS_PRESERVE_ARGV0 != 0
}

/// An enabled binfmt_misc entry, other than aarchx's, that would take x86-64
/// executables: its name and interpreter.
fn other_handler(misc: &Path) -> Option<(String, String)> {
    let entries = std::fs::read_dir(misc).ok()?;
    let mut found: Vec<(String, String)> = entries
        .filter_map(Result::ok)
        .filter_map(|e| {
            let name = e.file_name().into_string().ok()?;
            if ["register", "status", NAME].contains(&name.as_str()) {
                return None;
            }
            let text = std::fs::read_to_string(e.path()).ok()?;
            takes_x86_64(&text).map(|interpreter| (name, interpreter))
        })
        .collect();
    found.sort();
    found.into_iter().next()
}

/// The interpreter of an entry's status text (as the kernel prints
/// `/proc/sys/fs/binfmt_misc/NAME`) when it is enabled and its magic
/// matches an x86-64 executable or PIE header.
fn takes_x86_64(status: &str) -> Option<String> {
    let mut lines = status.lines();
    if lines.next()? != "enabled" {
        return None;
    }
    let field = |key: &str| status.lines().find_map(|l| l.strip_prefix(key)).map(str::trim);
    let hex = |s: &str| -> Option<Vec<u8>> {
        (0..s.len()).step_by(2).map(|i| u8::from_str_radix(s.get(i..i + 2)?, 16).ok()).collect()
    };
    let offset: usize = field("offset ")?.parse().ok()?;
    let magic = hex(field("magic ")?)?;
    let mask = field("mask ").map_or_else(|| Some(vec![0xff; magic.len()]), hex)?;
    let matches = |e_type: u8| {
        let mut header = [0u8; 64];
        header[..MAGIC.len()].copy_from_slice(&MAGIC);
        header[16] = e_type;
        magic.iter().zip(&mask).enumerate().all(|(i, (m, k))| header.get(offset + i).is_some_and(|h| (h ^ m) & k == 0))
    };
    (matches(2) || matches(3)).then(|| field("interpreter ").unwrap_or("?").to_string())
}

fn io_error(path: &Path) -> impl FnOnce(std::io::Error) -> BinfmtError + '_ {
    move |source| BinfmtError::Io { path: path.display().to_string(), source }
}

/// Writes `text` to an existing file (a binfmt_misc control file).
fn write_control(path: &Path, text: &str) -> std::io::Result<()> {
    std::fs::OpenOptions::new().write(true).open(path)?.write_all(text.as_bytes())
}

/// Installs the registration for `interpreter`: refuses when another
/// x86-64 handler is enabled (unless `force`), writes the binfmt.d file,
/// and registers it live (replacing an earlier aarchx entry). Returns what
/// was done, for the user.
pub fn install(interpreter: &Path, places: &Places, force: bool) -> Result<String, BinfmtError> {
    let line = registration(interpreter)?;
    if let (false, Some((name, interpreter))) = (force, other_handler(&places.misc)) {
        return Err(BinfmtError::Other { name, interpreter, dir: places.misc.display().to_string() });
    }
    if let Some(dir) = places.conf.parent() {
        std::fs::create_dir_all(dir).map_err(io_error(dir))?;
    }
    let header = "# x86-64 ELF executables run through aarchx (written by `aarchx binfmt install`).\n";
    std::fs::write(&places.conf, format!("{header}{line}")).map_err(io_error(&places.conf))?;
    let entry = places.misc.join(NAME);
    let register = places.misc.join("register");
    let live = |path: &Path, source| BinfmtError::Live {
        file: places.conf.display().to_string(),
        path: path.display().to_string(),
        source,
    };
    if entry.exists() {
        write_control(&entry, "-1").map_err(|e| live(&entry, e))?;
    }
    write_control(&register, &line).map_err(|e| live(&register, e))?;
    Ok(format!("installed {} and registered {}", places.conf.display(), entry.display()))
}

/// Unregisters the live entry and removes the binfmt.d file, whichever
/// exist. Returns what was done, for the user.
pub fn uninstall(places: &Places) -> Result<String, BinfmtError> {
    let entry = places.misc.join(NAME);
    let mut done = Vec::new();
    if entry.exists() {
        write_control(&entry, "-1").map_err(io_error(&entry))?;
        done.push(format!("unregistered {}", entry.display()));
    }
    match std::fs::remove_file(&places.conf) {
        Ok(()) => done.push(format!("removed {}", places.conf.display())),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(io_error(&places.conf)(e)),
    }
    if done.is_empty() {
        done.push("nothing to uninstall: no aarchx entry and no binfmt.d file".into());
    }
    Ok(done.join("; "))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn status_texts_of_other_handlers() {
        let qemu = "enabled\ninterpreter /usr/libexec/qemu-binfmt/x86_64-binfmt-P\nflags: POCF\noffset 0\n\
                    magic 7f454c4602010100000000000000000002003e00\nmask fffffffffffefe00fffffffffffffffffeffffff\n";
        assert_eq!(takes_x86_64(qemu).as_deref(), Some("/usr/libexec/qemu-binfmt/x86_64-binfmt-P"));
        assert_eq!(takes_x86_64(&qemu.replace("enabled", "disabled")), None);
        // qemu-aarch64's entry: e_machine 183.
        assert_eq!(takes_x86_64(&qemu.replace("3e00\n", "b700\n")), None);
        // An entry matching ELF64 of any machine takes x86-64 too.
        let any = "enabled\ninterpreter /x\nflags: \noffset 0\nmagic 7f454c4602\nmask ffffffffff\n";
        assert_eq!(takes_x86_64(any).as_deref(), Some("/x"));
        assert_eq!(takes_x86_64("enabled\ninterpreter /wine\nflags: \nextension .exe\n"), None);
    }
}
