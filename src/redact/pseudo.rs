//! Stable keyed pseudonyms for user names, e-mail addresses, host names and paths: the same
//! value under the same key always gets the same pseudonym, so joins across sessions still
//! work, and without the key a pseudonym cannot be turned back into its value.

use std::borrow::Cow;
use std::fmt::Write as _;

use hmac::{Hmac, KeyInit, Mac};
use regex::{Captures, Regex};
use sha2::Sha256;

/// What to pseudonymise.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Kinds {
    /// The user name of home directories (`/home/<user>`, `/Users/<user>`, `C:\Users\<user>`),
    /// wherever it appears as a word.
    pub user: bool,
    /// E-mail addresses.
    pub email: bool,
    /// Host names in URLs.
    pub host: bool,
    /// Absolute paths, component by component.
    pub path: bool,
}

impl Kinds {
    /// The kinds named in a comma-separated list (`user,email,host,path`).
    ///
    /// # Errors
    /// On a name that is not one of the four.
    pub fn parse(list: &str) -> Result<Self, String> {
        let mut kinds = Kinds::default();
        for name in list.split(',').map(str::trim).filter(|s| !s.is_empty()) {
            match name {
                "user" => kinds.user = true,
                "email" => kinds.email = true,
                "host" => kinds.host = true,
                "path" => kinds.path = true,
                "all" => kinds = Kinds { user: true, email: true, host: true, path: true },
                other => {
                    return Err(format!(
                        "unknown kind to pseudonymize `{other}`: expected user, email, host, path or all"
                    ));
                }
            }
        }
        Ok(kinds)
    }

    /// Whether any kind is asked for.
    pub fn any(self) -> bool {
        self.user || self.email || self.host || self.path
    }
}

/// Path components kept as they are: system directories, and the directories of tools and
/// agents that say nothing of whose machine or which project it is.
const KEPT_COMPONENTS: &[&str] = &[
    "",
    ".",
    "..",
    "~",
    "home",
    "Users",
    "usr",
    "local",
    "bin",
    "sbin",
    "lib",
    "lib64",
    "include",
    "share",
    "etc",
    "var",
    "tmp",
    "opt",
    "private",
    "mnt",
    "Volumes",
    "dev",
    "proc",
    "sys",
    "root",
    "srv",
    "run",
    "nix",
    "snap",
    "Applications",
    "Library",
    "Application Support",
    "System",
    "Documents",
    "Desktop",
    "Downloads",
    "src",
    "node_modules",
    ".git",
    ".claude",
    ".codex",
    "projects",
    "sessions",
    "site-packages",
    "dist-packages",
    "target",
    "build",
    "dist",
    "debug",
    "release",
    ".venv",
    "venv",
    ".cache",
    ".config",
    ".local",
    ".npm",
    ".cargo",
    ".rustup",
    "registry",
    "Windows",
    "Program Files",
    "AppData",
    "Roaming",
    "Temp",
];

/// Account names that identify nobody, left as they are.
const GENERIC_USERS: &[&str] =
    &["root", "user", "ubuntu", "admin", "runner", "vscode", "node", "ec2-user", "codespace"];

/// Replaces values by keyed pseudonyms.
pub struct Pseudonyms {
    kinds: Kinds,
    mac: Hmac<Sha256>,
    email: Regex,
    host: Regex,
    path: Regex,
    home: Regex,
    project_key: Regex,
}

impl Pseudonyms {
    /// Pseudonyms of `kinds` under `key`.
    pub fn new(kinds: Kinds, key: &[u8]) -> Self {
        Pseudonyms {
            kinds,
            mac: Hmac::new_from_slice(key).expect("HMAC takes keys of any length"),
            email: Regex::new(r"[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}").expect("valid"),
            host: Regex::new(r"(?P<pre>\b[A-Za-z][A-Za-z0-9+.-]{1,20}://(?:[^\s/@?#]*@)?)(?P<host>[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*)")
                .expect("valid"),
            path: Regex::new(r#"(?P<pre>^|[\s'"`(=,\[{>:])(?P<path>(?:~|[A-Za-z]:)?/[^/\s'"`()\[\]{}<>,;:|*?]+(?:/[^/\s'"`()\[\]{}<>,;:|*?]*)*|[A-Za-z]:\\[^\s'"`()\[\]{}<>,;:|*?]+)"#)
                .expect("valid"),
            project_key: Regex::new(r"(?:^|[/\\])-(?:Users|home)-(?P<user>[A-Za-z0-9_.]+)-").expect("valid"),
            home: Regex::new(r"(?P<pre>(?:^|[^A-Za-z0-9_.-])(?:/home/|/Users/|[A-Za-z]:[\\/]Users[\\/]))(?P<user>[A-Za-z0-9_.-]+)").expect("valid"),
        }
    }

    /// What this pseudonymises.
    pub fn kinds(&self) -> Kinds {
        self.kinds
    }

    /// The user names of home directories in `text` that identify someone, also in the form
    /// Claude Code gives a project directory's name (`-Users-<user>-work`).
    pub fn users_in<'a>(&'a self, text: &'a str) -> impl Iterator<Item = &'a str> + 'a {
        self.home
            .captures_iter(text)
            .chain(self.project_key.captures_iter(text))
            .filter_map(|c| c.name("user"))
            .map(|m| m.as_str())
            .filter(|name| name.len() >= 3 && !GENERIC_USERS.contains(name))
    }

    /// An input file's path: with `path`, every component that could identify someone is
    /// replaced, relative paths too; the user names are replaced as in any text.
    pub fn file(&self, path: &str, users: &[String], count: &mut u64) -> Option<String> {
        if !self.kinds.path {
            return self.apply(path, users, count);
        }
        let new = self.path(path);
        if new == path {
            return None;
        }
        *count += 1;
        Some(self.apply(&new, users, count).unwrap_or(new))
    }

    /// A pseudonym: `tag` and a keyed hash of `value`, 10 hex digits.
    fn name(&self, tag: &str, value: &str) -> String {
        let mut mac = self.mac.clone();
        mac.update(tag.as_bytes());
        mac.update(&[0]);
        mac.update(value.as_bytes());
        let digest = mac.finalize().into_bytes();
        let mut out = String::with_capacity(tag.len() + 11);
        out.push_str(tag);
        out.push('-');
        for b in &digest[..5] {
            let _ = write!(out, "{b:02x}");
        }
        out
    }

    /// The pseudonym of a user name.
    fn user(&self, name: &str) -> String {
        self.name("user", name)
    }

    /// `text` with its values of the asked kinds replaced; `users` are the user names known to
    /// belong to this run's sessions, replaced wherever they stand as a word. Counts each
    /// replacement in `count`.
    pub fn apply(&self, text: &str, users: &[String], count: &mut u64) -> Option<String> {
        let mut out: Cow<'_, str> = Cow::Borrowed(text);
        if self.kinds.email && out.contains('@') {
            out = self.replace(out, &self.email, count, |c| format!("{}@email.invalid", self.name("user", &c[0])));
        }
        if self.kinds.host && out.contains("://") {
            out = self.replace(out, &self.host, count, |c| {
                let host = &c["host"];
                if matches!(host, "localhost" | "127.0.0.1" | "0.0.0.0") || host.ends_with(".invalid") {
                    c[0].to_owned()
                } else {
                    format!("{}{}.invalid", &c["pre"], self.name("host", &host.to_ascii_lowercase()))
                }
            });
        }
        if self.kinds.path && out.contains(['/', '\\']) {
            out = self.replace(out, &self.path, count, |c| format!("{}{}", &c["pre"], self.path(&c["path"])));
        }
        if self.kinds.user {
            if out.contains("Users") || out.contains("/home/") {
                out = self.replace(out, &self.home, count, |c| {
                    let name = &c["user"];
                    if name.len() < 3 || GENERIC_USERS.contains(&name) || name.starts_with("user-") {
                        c[0].to_owned()
                    } else {
                        format!("{}{}", &c["pre"], self.user(name))
                    }
                });
            }
            for name in users {
                if let Some(new) = replace_word(&out, name, &self.user(name), count) {
                    out = Cow::Owned(new);
                }
            }
        }
        match out {
            Cow::Borrowed(_) => None,
            Cow::Owned(s) => (s != text).then_some(s),
        }
    }

    fn replace<'t>(
        &self,
        text: Cow<'t, str>,
        regex: &Regex,
        count: &mut u64,
        f: impl Fn(&Captures<'_>) -> String,
    ) -> Cow<'t, str> {
        if !regex.is_match(&text) {
            return text;
        }
        let new = regex.replace_all(&text, |c: &Captures<'_>| {
            let replaced = f(c);
            *count += u64::from(replaced != c[0]);
            replaced
        });
        Cow::Owned(new.into_owned())
    }

    /// A path with each component that could identify someone replaced, the extension of
    /// the last one kept; the user of a home directory gets the user pseudonym.
    fn path(&self, path: &str) -> String {
        let sep = if path.contains('\\') && !path.contains('/') { '\\' } else { '/' };
        let parts: Vec<&str> = path.split(sep).collect();
        let last = parts.len() - 1;
        let mut out = String::with_capacity(path.len() + 16);
        for (i, part) in parts.iter().enumerate() {
            if i > 0 {
                out.push(sep);
            }
            let after_home = i > 0 && matches!(parts[i - 1], "home" | "Users");
            if KEPT_COMPONENTS.contains(part) || (i == 0 && part.len() == 2 && part.ends_with(':')) {
                out.push_str(part);
            } else if after_home && !GENERIC_USERS.contains(part) {
                out.push_str(&self.user(part));
            } else if after_home || part.starts_with("user-") || part.starts_with("p-") {
                out.push_str(part);
            } else if i == last {
                match part.rsplit_once('.') {
                    Some((stem, ext)) if !stem.is_empty() && ext.len() <= 8 => {
                        out.push_str(&self.name("p", stem));
                        out.push('.');
                        out.push_str(ext);
                    }
                    _ => out.push_str(&self.name("p", part)),
                }
            } else {
                out.push_str(&self.name("p", part));
            }
        }
        out
    }
}

/// `text` with each occurrence of `word` that stands between non-alphanumeric characters
/// replaced by `by`; `None` when there is none.
fn replace_word(text: &str, word: &str, by: &str, count: &mut u64) -> Option<String> {
    let mut out = String::new();
    let mut copied = 0;
    for (at, _) in text.match_indices(word) {
        let before = text[..at].chars().next_back();
        let after = text[at + word.len()..].chars().next();
        if before.is_some_and(char::is_alphanumeric) || after.is_some_and(char::is_alphanumeric) {
            continue;
        }
        out.push_str(&text[copied..at]);
        out.push_str(by);
        copied = at + word.len();
        *count += 1;
    }
    if copied == 0 {
        return None;
    }
    out.push_str(&text[copied..]);
    Some(out)
}
