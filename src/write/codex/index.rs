//! Codex's thread index (`$CODEX_HOME/state_<N>.sqlite`, table `threads`): one row added for a
//! rollout agentlog wrote, so that Codex's session picker and `codex resume --last` offer it.
//!
//! Codex resumes a rollout by its id without a row (it finds the file by name and adds the row
//! itself), so the row is only ever added when asked (`agentlog handoff --register`). One row is
//! inserted in one immediate transaction, waiting for Codex's own writers (SQLite's locking);
//! nothing else is changed, a row already there is never replaced, and an index with a required
//! column agentlog does not know how to fill is left alone.

use std::path::{Path, PathBuf};
use std::time::Duration;

use rusqlite::{Connection, OpenFlags, TransactionBehavior, params_from_iter, types::Value as Sql};
use serde_json::Value;

/// What became of a registration.
#[derive(Debug, PartialEq, Eq)]
pub enum Registered {
    /// The row was added to this index.
    Added(PathBuf),
    /// Codex has no index yet: it indexes every rollout when it first starts.
    NoIndex,
}

/// Adds the rollout at `rollout` (written under `codex_home`) to Codex's thread index, as the
/// session most recently used.
///
/// # Errors
/// A sentence saying why nothing was added: the rollout cannot be read, the index holds the
/// session already, has a column agentlog cannot fill, or cannot be written.
pub fn register(codex_home: &Path, rollout: &Path) -> Result<Registered, String> {
    let Some(index) = newest_index(codex_home) else { return Ok(Registered::NoIndex) };
    let facts = Facts::of(rollout)?;
    let provider = configured_provider(codex_home);
    let failed = |e: rusqlite::Error| format!("cannot add the session to {}: {e}", index.display());
    let mut db = Connection::open_with_flags(&index, OpenFlags::SQLITE_OPEN_READ_WRITE).map_err(failed)?;
    db.busy_timeout(Duration::from_secs(10)).map_err(failed)?;
    let tx = db.transaction_with_behavior(TransactionBehavior::Immediate).map_err(failed)?;
    let columns = columns(&tx).map_err(failed)?;
    let exists: bool = tx
        .query_row("SELECT EXISTS(SELECT 1 FROM threads WHERE id = ?1)", [&facts.id], |r| r.get(0))
        .map_err(failed)?;
    if exists {
        return Err(format!("{} lists session {} already; left as it is", index.display(), facts.id));
    }
    // Settings Codex records per thread, as its newest thread has them (it applies its own on resume).
    let (sandbox, approval): (String, String) = tx
        .query_row("SELECT sandbox_policy, approval_mode FROM threads ORDER BY updated_at DESC LIMIT 1", [], |r| {
            Ok((r.get(0)?, r.get(1)?))
        })
        .unwrap_or_else(|_| (r#"{"type":"read-only"}"#.to_owned(), "on-request".to_owned()));
    let now = chrono::Utc::now();
    let title = facts.title.clone().unwrap_or_default();
    let row: Vec<(&str, Sql)> = vec![
        ("id", facts.id.clone().into()),
        ("rollout_path", rollout.display().to_string().into()),
        ("created_at", facts.created.timestamp().into()),
        ("updated_at", now.timestamp().into()),
        ("created_at_ms", facts.created.timestamp_millis().into()),
        ("updated_at_ms", now.timestamp_millis().into()),
        ("recency_at", now.timestamp().into()),
        ("recency_at_ms", now.timestamp_millis().into()),
        ("source", "cli".to_owned().into()),
        ("model_provider", provider.into()),
        ("cwd", facts.cwd.clone().into()),
        ("title", title.clone().into()),
        ("first_user_message", title.clone().into()),
        ("preview", title.into()),
        ("has_user_event", i64::from(facts.title.is_some()).into()),
        ("sandbox_policy", sandbox.into()),
        ("approval_mode", approval.into()),
        ("cli_version", facts.cli_version.clone().into()),
        ("thread_source", "user".to_owned().into()),
        ("originator", "agentlog".to_owned().into()),
    ];
    if let Some(missing) = columns.iter().find(|(name, required)| *required && !row.iter().any(|(n, _)| n == name)) {
        return Err(format!(
            "{}'s threads table needs a value for `{}`, which agentlog does not know how to fill; \
             the session was not added (Codex adds it when it resumes the session)",
            index.display(),
            missing.0
        ));
    }
    let row: Vec<(&str, Sql)> = row.into_iter().filter(|(n, _)| columns.iter().any(|(c, _)| c == n)).collect();
    let names: Vec<&str> = row.iter().map(|(n, _)| *n).collect();
    let marks = vec!["?"; row.len()].join(", ");
    let sql = format!("INSERT INTO threads ({}) VALUES ({marks})", names.join(", "));
    tx.execute(&sql, params_from_iter(row.into_iter().map(|(_, v)| v))).map_err(failed)?;
    tx.commit().map_err(failed)?;
    Ok(Registered::Added(index))
}

/// The index of the highest version: `state_5.sqlite` over `state_4.sqlite`.
fn newest_index(codex_home: &Path) -> Option<PathBuf> {
    let entries = std::fs::read_dir(codex_home).ok()?;
    entries
        .flatten()
        .filter_map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            let n: u32 = name.strip_prefix("state_")?.strip_suffix(".sqlite")?.parse().ok()?;
            Some((n, e.path()))
        })
        .max()
        .map(|(_, path)| path)
}

/// The columns of `threads`, and whether each needs a value (NOT NULL without a default).
fn columns(db: &Connection) -> rusqlite::Result<Vec<(String, bool)>> {
    let mut statement = db.prepare("SELECT name, \"notnull\", dflt_value, pk FROM pragma_table_info('threads')")?;
    let rows = statement.query_map([], |r| {
        let required = r.get::<_, i64>(1)? == 1 && r.get::<_, Option<String>>(2)?.is_none() && r.get::<_, i64>(3)? == 0;
        Ok((r.get::<_, String>(0)?, required))
    })?;
    let columns: Vec<(String, bool)> = rows.collect::<rusqlite::Result<_>>()?;
    if columns.is_empty() {
        return Err(rusqlite::Error::InvalidQuery);
    }
    Ok(columns)
}

/// The model provider Codex is configured with (`model_provider` in `config.toml`): a thread of
/// another provider is refused on resume. `openai`, Codex's default, when the file names none.
fn configured_provider(codex_home: &Path) -> String {
    #[derive(serde::Deserialize)]
    struct Config {
        model_provider: Option<String>,
    }
    let text = std::fs::read_to_string(codex_home.join("config.toml")).unwrap_or_default();
    let config = toml::from_str::<Config>(&text).ok().and_then(|c| c.model_provider);
    config.unwrap_or_else(|| "openai".to_owned())
}

/// What the row says of a rollout, from its `session_meta` and first typed prompt.
struct Facts {
    id: String,
    cwd: String,
    created: chrono::DateTime<chrono::Utc>,
    cli_version: String,
    title: Option<String>,
}

impl Facts {
    fn of(rollout: &Path) -> Result<Facts, String> {
        let text = std::fs::read_to_string(rollout).map_err(|e| format!("cannot read {}: {e}", rollout.display()))?;
        let lines: Vec<Value> = text.lines().filter_map(|l| serde_json::from_str(l).ok()).collect();
        let meta = lines
            .iter()
            .find(|l| l["type"] == "session_meta")
            .map(|l| &l["payload"])
            .ok_or_else(|| format!("{} has no session_meta line", rollout.display()))?;
        let field = |k: &str| meta[k].as_str().unwrap_or_default().to_owned();
        let title = lines
            .iter()
            .find(|l| l["type"] == "event_msg" && l["payload"]["type"] == "user_message")
            .and_then(|l| l["payload"]["message"].as_str())
            .map(|m| m.lines().next().unwrap_or_default().chars().take(200).collect());
        Ok(Facts {
            id: field("id"),
            cwd: field("cwd"),
            created: crate::read::parse_time(meta["timestamp"].as_str().unwrap_or_default()).unwrap_or_default(),
            cli_version: field("cli_version"),
            title,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A rollout and an index of Codex 0.169's `threads` columns that matter here.
    fn home(extra_required: &str) -> (tempfile::TempDir, PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let rollout = dir.path().join("sessions/rollout-2026-01-01T00-00-00-abc.jsonl");
        std::fs::create_dir_all(rollout.parent().unwrap()).unwrap();
        std::fs::write(
            &rollout,
            concat!(
                r#"{"timestamp":"2026-01-01T00:00:00.000Z","type":"session_meta","payload":{"id":"abc","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/w","originator":"agentlog","cli_version":"0.169.0"}}"#,
                "\n",
                r#"{"timestamp":"2026-01-01T00:00:01.000Z","type":"event_msg","payload":{"type":"user_message","message":"fix the build\nplease"}}"#,
                "\n"
            ),
        )
        .unwrap();
        std::fs::write(
            dir.path().join("config.toml"),
            "model_provider = \"local\"\n[model_providers.local]\nname = \"x\"\n",
        )
        .unwrap();
        let db = Connection::open(dir.path().join("state_5.sqlite")).unwrap();
        db.execute_batch(&format!(
            "CREATE TABLE threads (id TEXT PRIMARY KEY, rollout_path TEXT NOT NULL, created_at INTEGER NOT NULL,
             updated_at INTEGER NOT NULL, source TEXT NOT NULL, model_provider TEXT NOT NULL, cwd TEXT NOT NULL,
             title TEXT NOT NULL, sandbox_policy TEXT NOT NULL, approval_mode TEXT NOT NULL,
             has_user_event INTEGER NOT NULL DEFAULT 0, first_user_message TEXT NOT NULL DEFAULT ''{extra_required});"
        ))
        .unwrap();
        std::fs::write(dir.path().join("state_4.sqlite"), b"an older index, never opened").unwrap();
        (dir, rollout)
    }

    #[test]
    fn one_row_goes_into_the_newest_index_and_never_twice() {
        let (dir, rollout) = home("");
        assert_eq!(register(dir.path(), &rollout), Ok(Registered::Added(dir.path().join("state_5.sqlite"))));
        let db = Connection::open(dir.path().join("state_5.sqlite")).unwrap();
        let row: (String, String, String, String, i64, i64) = db
            .query_row("SELECT id, model_provider, cwd, title, has_user_event, created_at FROM threads", [], |r| {
                Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?, r.get(5)?))
            })
            .unwrap();
        assert_eq!(row, ("abc".into(), "local".into(), "/w".into(), "fix the build".into(), 1, 1_767_225_600));
        let again = register(dir.path(), &rollout).unwrap_err();
        assert!(again.contains("already"), "{again}");
        let rows: i64 = db.query_row("SELECT COUNT(*) FROM threads", [], |r| r.get(0)).unwrap();
        assert_eq!(rows, 1);
    }

    #[test]
    fn an_index_with_a_column_it_cannot_fill_is_left_alone() {
        let (dir, rollout) = home(", workspace_id TEXT NOT NULL");
        let refused = register(dir.path(), &rollout).unwrap_err();
        assert!(refused.contains("workspace_id"), "{refused}");
        let db = Connection::open(dir.path().join("state_5.sqlite")).unwrap();
        let rows: i64 = db.query_row("SELECT COUNT(*) FROM threads", [], |r| r.get(0)).unwrap();
        assert_eq!(rows, 0);
    }

    #[test]
    fn without_an_index_codex_indexes_the_rollout_itself() {
        let (dir, rollout) = home("");
        std::fs::remove_file(dir.path().join("state_5.sqlite")).unwrap();
        std::fs::remove_file(dir.path().join("state_4.sqlite")).unwrap();
        assert_eq!(register(dir.path(), &rollout), Ok(Registered::NoIndex));
    }
}
