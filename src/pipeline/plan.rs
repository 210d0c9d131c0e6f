//! Telling every input's format before reading, and grouping the inputs that share reader
//! state.

use std::path::Path;

use crate::read::{self, Reader, Settings};

use super::detect::{choose_reader, open};
use super::error::InputError;
use super::inputs::InputSpec;

/// One input with what is known of it before reading.
#[derive(Clone)]
pub struct Item {
    /// The input.
    pub spec: InputSpec,
    /// Its size in bytes (0 for standard input).
    pub size: u64,
    /// The reader for it; a placeholder until it is read when not `told`.
    pub reader: &'static dyn Reader,
    /// Whether the reader is known before reading: given, or told from a regular file's first
    /// lines. Standard input, pipes and devices are told as they are read, since they can be
    /// read only once.
    pub told: bool,
    /// Whether the reader was given by the user (`--from`), not told from the content.
    pub forced: bool,
    /// Whether an incremental run's manifest says it has not changed since it was converted.
    pub unchanged: bool,
    /// The kind of the first record of a file whose format no reader recognised, read by the
    /// agent whose places it lies in ([`crate::read::owner`]); warned about when it is read.
    pub new_kind: Option<String>,
}

/// Inputs read in order with one reader state: a Claude Code project directory (whose files
/// copy each other's records when sessions are resumed), or a single file.
pub struct Group {
    /// The items, in input order.
    pub items: Vec<Item>,
    /// What the group is keyed on, for sharding.
    pub key: String,
}

/// Tells every file's format (standard input is told when it is read) and groups the inputs.
/// Inputs whose format cannot be told, or that cannot be opened, come back as errors. Inputs for
/// which `unchanged` names a reader are not opened: they are marked unchanged. Files are told
/// on `settings`' threads.
pub fn plan(
    inputs: &[InputSpec],
    given: Option<&'static dyn Reader>,
    unchanged: &(dyn Fn(&InputSpec) -> Option<&'static dyn Reader> + Sync),
    settings: &Settings,
) -> (Vec<Group>, Vec<InputError>) {
    let sniffed: Vec<Result<Item, InputError>> = settings.map(inputs, |spec| {
        if let Some(reader) = unchanged(spec) {
            let item = Item {
                spec: spec.clone(),
                size: 0,
                reader,
                told: true,
                forced: false,
                unchanged: true,
                new_kind: None,
            };
            return Ok(item);
        }
        let name = spec.name().to_owned();
        let meta = match spec {
            InputSpec::Stdin => None,
            InputSpec::File(path) => std::fs::metadata(path).ok(),
        };
        let size = meta.as_ref().map_or(0, std::fs::Metadata::len);
        let (reader, told, new_kind) = match (meta, given) {
            (_, Some(reader)) => (reader, true, None),
            // Standard input, pipes and devices can be read only once: they are told as
            // they are read.
            (None, None) => (read::READERS[0], false, None),
            (Some(meta), None) if !meta.is_file() => (read::READERS[0], false, None),
            (Some(_), None) => match open(spec).and_then(|b| choose_reader(spec.name(), None, false, b)) {
                Ok(Some(chosen)) => (chosen.reader, true, chosen.new_kind),
                Ok(None) => return Err(InputError::unknown_format(&name)),
                Err(source) => return Err(InputError::Unreadable { path: name, source }),
            },
        };
        Ok(Item { spec: spec.clone(), size, reader, told, forced: given.is_some(), unchanged: false, new_kind })
    });
    let mut groups: Vec<Group> = Vec::new();
    let mut errors = Vec::new();
    for item in sniffed {
        let item = match item {
            Ok(item) => item,
            Err(e) => {
                errors.push(e);
                continue;
            }
        };
        let key = group_key(&item);
        match groups.last_mut() {
            Some(last) if key.is_some() && last.key == key.clone().unwrap_or_default() => last.items.push(item),
            _ => {
                let key = key.unwrap_or_else(|| item.spec.name().to_owned());
                groups.push(Group { items: vec![item], key });
            }
        }
    }
    (groups, errors)
}

/// The key of the group an item joins, as its reader says (a Claude Code project directory);
/// inputs a reader does not group, and standard input, stand alone (`None`).
fn group_key(item: &Item) -> Option<String> {
    let InputSpec::File(path) = &item.spec else { return None };
    let key = item.reader.group(Path::new(path))?;
    Some(format!("{}:{key}", item.reader.name()))
}

/// Keeps the groups of shard `k` of `n` (1-based): a stable hash of the group key decides, so
/// that every shard of every run agrees.
pub fn shard(groups: Vec<Group>, k: u32, n: u32) -> Vec<Group> {
    groups
        .into_iter()
        .filter(|g| {
            let id = crate::model::uuid_v5(&uuid::Uuid::NAMESPACE_OID, g.key.as_bytes());
            (id.as_u128() % u128::from(n)) as u32 == k - 1
        })
        .collect()
}
