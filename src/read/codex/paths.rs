//! Where Codex keeps rollouts: `$CODEX_HOME` (default `~/.codex`), `sessions/YYYY/MM/DD/`
//! (flat `sessions/` before 0.8) and the flat `archived_sessions/`.

use std::collections::HashSet;
use std::ffi::OsString;
use std::path::PathBuf;

/// Whether a file name is a rollout: `rollout-*.jsonl`, `*.jsonl.zst`, or a TypeScript-era
/// `rollout-*.json`.
pub fn is_rollout(name: &str) -> bool {
    name.starts_with("rollout-")
        && (name.ends_with(".jsonl") || name.ends_with(".jsonl.zst") || name.ends_with(".json"))
}

/// Every rollout under `sessions/` and `archived_sessions/`, then the side files (prompt
/// history, thread names); an archived copy of a rollout that is also active is left out (the
/// active one wins).
pub fn discover(env: &dyn Fn(&str) -> Option<OsString>) -> Vec<PathBuf> {
    let Some(home) =
        env("CODEX_HOME").filter(|v| !v.is_empty()).map(PathBuf::from).or_else(|| crate::read::home_dir(env, ".codex"))
    else {
        return Vec::new();
    };
    let active = crate::read::files_under(&home.join("sessions"), is_rollout);
    let names: HashSet<OsString> = active.iter().filter_map(|p| p.file_name().map(OsString::from)).collect();
    let archived = crate::read::files_under(&home.join("archived_sessions"), is_rollout)
        .into_iter()
        .filter(|p| p.file_name().is_none_or(|n| !names.contains(n)));
    let side = super::side::discover(&home);
    active.into_iter().chain(archived).chain(side).collect()
}
