//! Per-program rules: `programs.ron` files (the system's in
//! `/etc/aarchx/`, the user's in `$XDG_CONFIG_HOME/aarchx/`) whose rules
//! match a program by basename, absolute path or glob and give it a
//! policy, `--set` overrides and guest environment variables. This module
//! reads a file and finds the rule for a program; `settings.rs` combines
//! the files with the command line. The format (see docs/usage.md):
//!
//! ```ron
//! (
//!     rules: [
//!         (
//!             match: "node",                 // basename, /absolute/path, or a glob
//!             reason: "why this rule exists",
//!             policy: "ordered",             // optional: a name or a path
//!             set: ["dead-flags.abi_calls=true"],
//!             env: { "NODE_OPTIONS": "--jitless" },
//!         ),
//!     ],
//! )
//! ```

use std::collections::BTreeMap;
use std::io::Read;
use std::path::{Component, Path, PathBuf};

use serde::Deserialize;

/// The largest rules file read.
const MAX_RULES_BYTES: u64 = 1 << 20;

/// One rule of a rules file.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Rule {
    /// What programs it applies to: a basename (`node`), an absolute path
    /// (`/opt/app/bin/app`), or a glob (`python3*`, `/opt/*/bin/java`),
    /// matched against the basename when it has no `/`.
    #[serde(rename = "match")]
    pub pattern: String,
    /// Why the rule exists (shown by `aarchx policy show`).
    #[serde(default)]
    pub reason: String,
    /// The policy: an installed policy's name or a file (relative to the
    /// rules file's folder).
    #[serde(default)]
    pub policy: Option<String>,
    /// `PASS.OPTION=VALUE` overrides, applied in order.
    #[serde(default)]
    pub set: Vec<String>,
    /// Variables added to the guest's environment.
    #[serde(default)]
    pub env: BTreeMap<String, String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RulesText {
    rules: Vec<Rule>,
}

/// A rules file that cannot be used; one line naming the file (and line).
#[derive(Debug, thiserror::Error)]
pub enum RulesError {
    #[error("{path}: cannot read per-program rules: {source}")]
    Read {
        path: String,
        #[source]
        source: std::io::Error,
    },
    #[error("{path}: not a per-program rules file: larger than {} KiB", MAX_RULES_BYTES >> 10)]
    TooLarge { path: String },
    #[error("{path}:{line}:{column}: {message}")]
    Syntax { path: String, line: usize, column: usize, message: String },
    #[error("{path}: rule {index} (`{pattern}`): {message}")]
    Rule { path: String, index: usize, pattern: String, message: String },
}

/// A rules file, read.
#[derive(Clone, Debug)]
pub struct Rules {
    pub file: PathBuf,
    pub rules: Vec<Rule>,
}

/// The rule of a file that applies to a program.
#[derive(Clone, Debug)]
pub struct Applied<'a> {
    pub file: &'a Path,
    /// Counted from 1, as `policy show` names it.
    pub index: usize,
    pub rule: &'a Rule,
}

impl Applied<'_> {
    /// `FILE rule N (`PATTERN`)`.
    pub fn describe(&self) -> String {
        format!("{} rule {} (`{}`)", self.file.display(), self.index, self.rule.pattern)
    }
}

impl Rules {
    /// Reads the rules file at `path`; a file that does not exist holds no
    /// rules (`None`).
    pub fn load(path: &Path) -> Result<Option<Rules>, RulesError> {
        let name = path.display().to_string();
        let mut text = String::new();
        match std::fs::File::open(path) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(source) => return Err(RulesError::Read { path: name, source }),
            Ok(f) => f
                .take(MAX_RULES_BYTES + 1)
                .read_to_string(&mut text)
                .map_err(|source| RulesError::Read { path: name.clone(), source })?,
        };
        if text.len() as u64 > MAX_RULES_BYTES {
            return Err(RulesError::TooLarge { path: name });
        }
        Rules::parse(&text, path).map(Some)
    }

    /// Parses rules text; `path` names it in errors.
    pub fn parse(text: &str, path: &Path) -> Result<Rules, RulesError> {
        let name = path.display().to_string();
        let options = ron::Options::default().with_default_extension(ron::extensions::Extensions::IMPLICIT_SOME);
        let parsed: RulesText = options.from_str(text).map_err(|e| RulesError::Syntax {
            path: name.clone(),
            line: e.position.line,
            column: e.position.col,
            message: e.code.to_string(),
        })?;
        for (i, rule) in parsed.rules.iter().enumerate() {
            let bad = |message: String| RulesError::Rule {
                path: name.clone(),
                index: i + 1,
                pattern: rule.pattern.clone(),
                message,
            };
            if rule.pattern.is_empty() {
                return Err(bad("`match` is empty".into()));
            }
            if let Err(e) = glob::Pattern::new(&rule.pattern) {
                return Err(bad(format!("`match` is not a glob: {e}")));
            }
            if let Some(set) = rule.set.iter().find(|s| !is_set_form(s)) {
                return Err(bad(format!("`{set}` in `set` is not PASS.OPTION=VALUE")));
            }
            if let Some(key) = rule.env.keys().find(|k| k.is_empty() || k.contains('=')) {
                return Err(bad(format!("`{key}` in `env` is not a variable name")));
            }
        }
        Ok(Rules { file: path.to_path_buf(), rules: parsed.rules })
    }

    /// The first rule that matches `program` (a path as given; it is also
    /// matched as its canonical path, so a rule for `python3` matches a
    /// link `python3` to `python3.11` and a rule for `python3.11` a run of
    /// the link).
    pub fn find(&self, program: &Path) -> Option<Applied<'_>> {
        let names = candidate_paths(program);
        self.rules.iter().enumerate().find_map(|(i, rule)| {
            names.iter().any(|p| matches(&rule.pattern, p)).then_some(Applied { file: &self.file, index: i + 1, rule })
        })
    }
}

/// `PASS.OPTION=VALUE`, the form `--set` takes.
fn is_set_form(set: &str) -> bool {
    set.split_once('=').and_then(|(key, _)| key.split_once('.')).is_some_and(|(p, o)| !p.is_empty() && !o.is_empty())
}

/// `program` made absolute (lexically, `.` and `..` removed) and, when it
/// exists, its canonical path.
fn candidate_paths(program: &Path) -> Vec<PathBuf> {
    let absolute = std::env::current_dir().map(|cwd| cwd.join(program)).unwrap_or_else(|_| program.to_path_buf());
    let mut lexical = PathBuf::new();
    for c in absolute.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                lexical.pop();
            }
            c => lexical.push(c),
        }
    }
    let mut out = vec![lexical];
    if let Ok(canonical) = std::fs::canonicalize(program) {
        if canonical != out[0] {
            out.push(canonical);
        }
    }
    out
}

/// Whether `pattern` matches the absolute `path`: a pattern with a `/` is
/// matched against the whole path, one without against its basename.
fn matches(pattern: &str, path: &Path) -> bool {
    let Ok(glob) = glob::Pattern::new(pattern) else { return false };
    let options = glob::MatchOptions { case_sensitive: true, require_literal_separator: true, ..Default::default() };
    if pattern.contains('/') {
        glob.matches_path_with(path, options)
    } else {
        path.file_name().and_then(|n| n.to_str()).is_some_and(|n| glob.matches_with(n, options))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rules(text: &str) -> Rules {
        Rules::parse(text, Path::new("t.ron")).unwrap()
    }

    #[test]
    fn basename_path_and_glob() {
        let r = rules(
            r#"(rules: [
                (match: "/opt/app/bin/tool"),
                (match: "python3*"),
                (match: "node"),
                (match: "/usr/*/java"),
            ])"#,
        );
        let hit = |p: &str| r.find(Path::new(p)).map(|a| a.index);
        assert_eq!(hit("/opt/app/bin/tool"), Some(1));
        assert_eq!(hit("/elsewhere/tool"), None);
        assert_eq!(hit("/usr/bin/python3.11"), Some(2));
        assert_eq!(hit("/x/y/node"), Some(3));
        assert_eq!(hit("/x/y/nodejs"), None);
        assert_eq!(hit("/usr/lib/java"), Some(4));
        // `*` does not cross a `/`.
        assert_eq!(hit("/usr/lib/jvm/bin/java"), None);
    }

    #[test]
    fn mistakes_name_the_line_or_rule() {
        let e = Rules::parse("(rules: [\n  (match: \"x\", polcy: \"p\"),\n])", Path::new("r.ron")).unwrap_err();
        assert!(e.to_string().starts_with("r.ron:2:"), "{e}");
        assert!(e.to_string().contains("polcy"), "{e}");
        let e = Rules::parse("(rules: [(match: \"x\"), (match: \"y\", set: [\"nodot\"])])", Path::new("r.ron"))
            .unwrap_err();
        assert_eq!(e.to_string(), "r.ron: rule 2 (`y`): `nodot` in `set` is not PASS.OPTION=VALUE");
    }
}
