//! Telling every input's format before reading, and grouping the inputs that share reader
//! state.

use std::io::BufRead as _;
use std::path::Path;

use crate::read::{self, Reader, Settings, store};

use super::detect::{choose_reader, open_head};
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

/// Files of a group read whole before the group is read (by a look through their bytes),
/// read from memory rather than opened again. A reading thread keeps one, emptied for each
/// group, so that its buffer is reused.
#[derive(Default)]
pub struct Held {
    /// The files' bytes, one after another; shared with the readers while the group is read.
    pub bytes: std::sync::Arc<Vec<u8>>,
    /// Which files they are, in the group's order.
    pub files: Vec<HeldFile>,
}

/// One file of a group held in memory ([`Held`]).
pub struct HeldFile {
    /// The file's place among the group's items.
    pub item: usize,
    /// Its bytes' place in [`Held::bytes`].
    pub range: std::ops::Range<usize>,
    /// Where the text looked for starts in them, in order, when the look found every place:
    /// lines elsewhere lack it ([`crate::read::Settings::found_at`]).
    pub found: Option<std::sync::Arc<[u64]>>,
}

impl Held {
    /// Holds nothing, keeping the buffer.
    pub fn clear(&mut self) {
        std::sync::Arc::make_mut(&mut self.bytes).clear();
        self.files.clear();
    }

    /// The files held, named as the group's items name them.
    pub fn in_memory(&self, group: &Group) -> crate::read::InMemory {
        let named = |f: &HeldFile| Some((group.items.get(f.item)?.spec.name().into(), f.range.clone()));
        crate::read::InMemory::new(self.bytes.clone(), self.files.iter().filter_map(named).collect())
    }
}

/// Whether a group is read, as a look through its bytes beforehand decides.
pub enum Look {
    /// Not read: it cannot hold what is looked for.
    Skip,
    /// Read, the files the look held from memory.
    Read,
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
    let sniffed: Vec<Vec<Result<Item, InputError>>> = settings.map(inputs, |spec| {
        if let Some(reader) = unchanged(spec) {
            return vec![Ok(Item::unchanged(spec.clone(), reader))];
        }
        if let InputSpec::Stored(stored) = spec {
            // A session listed before (an archive hands its sessions on to a conversion).
            let Some(reader) = given.or_else(|| read::reader(stored.reader)) else {
                return vec![Err(InputError::unknown_format(&stored.name))];
            };
            let forced = given.is_some();
            let item = Item {
                spec: spec.clone(),
                size: stored.size,
                reader,
                told: true,
                forced,
                unchanged: false,
                new_kind: None,
            };
            return vec![Ok(item)];
        }
        let name = spec.name().to_owned();
        let meta = match spec {
            InputSpec::File(path) => std::fs::metadata(path).ok(),
            InputSpec::Stdin | InputSpec::Stored(_) => None,
        };
        // A reader given is trusted without opening the file, but for a database's name.
        if let (InputSpec::File(path), Some(meta), Some(_)) = (spec, &meta, given)
            && meta.is_file()
            && path.ends_with(".db")
            && open_head(spec).is_ok_and(|mut b| b.fill_buf().is_ok_and(store::is_sqlite))
        {
            return stored_sessions(path, given, unchanged);
        }
        let size = meta.as_ref().map_or(0, std::fs::Metadata::len);
        let (reader, told, new_kind) = match (meta, given) {
            (_, Some(reader)) => (reader, true, None),
            // Standard input, pipes and devices can be read only once: they are told as
            // they are read.
            (None, None) => (read::READERS[0], false, None),
            (Some(meta), None) if !meta.is_file() => (read::READERS[0], false, None),
            (Some(_), None) => match open_head(spec).and_then(|mut bytes| {
                // A database is told by its first bytes, which the line formats' sniffing would
                // take for a line of binary.
                if bytes.fill_buf().is_ok_and(store::is_sqlite) {
                    return Ok(Err(()));
                }
                choose_reader(spec.name(), None, false, bytes).map(Ok)
            }) {
                Ok(Err(())) => return stored_sessions(spec.name(), None, unchanged),
                Ok(Ok(Some(chosen))) => (chosen.reader, true, chosen.new_kind),
                Ok(Ok(None)) => return vec![Err(InputError::unknown_format(&name))],
                Err(source) => return vec![Err(InputError::Unreadable { path: name, source })],
            },
        };
        vec![Ok(Item { spec: spec.clone(), size, reader, told, forced: given.is_some(), unchanged: false, new_kind })]
    });
    let mut groups: Vec<Group> = Vec::new();
    let mut errors = Vec::new();
    for item in sniffed.into_iter().flatten() {
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

impl Item {
    /// An input an incremental run's manifest says has not changed, to be read by `reader`.
    fn unchanged(spec: InputSpec, reader: &'static dyn Reader) -> Self {
        Item { spec, size: 0, reader, told: true, forced: false, unchanged: true, new_kind: None }
    }
}

/// The sessions of the database at `path`, each an item of its own, listed by the reader given
/// or by the first reader whose agent's database it is.
fn stored_sessions(
    path: &str,
    given: Option<&'static dyn Reader>,
    unchanged: &(dyn Fn(&InputSpec) -> Option<&'static dyn Reader> + Sync),
) -> Vec<Result<Item, InputError>> {
    let failed = |source| vec![Err(InputError::Database { path: path.to_owned(), source: Box::new(source) })];
    let db = match store::Db::open(path) {
        Ok(db) => db,
        Err(source) => return failed(source),
    };
    let readers: &[&'static dyn Reader] = match &given {
        Some(reader) => std::slice::from_ref(reader),
        None => read::READERS,
    };
    let Some((reader, listed)) = readers.iter().find_map(|r| Some((*r, r.stored_sessions(&db)?))) else {
        // A database the agent has just made holds no table yet, and so no session.
        if db.is_empty() {
            return Vec::new();
        }
        return vec![Err(InputError::unknown_format(path))];
    };
    let sessions = match listed {
        Ok(sessions) => sessions,
        Err(source) => return failed(source),
    };
    sessions
        .into_iter()
        .map(|stored| {
            let size = stored.size;
            let spec = InputSpec::Stored(stored);
            Ok(match unchanged(&spec) {
                Some(reader) => Item::unchanged(spec, reader),
                None => {
                    Item { spec, size, reader, told: true, forced: given.is_some(), unchanged: false, new_kind: None }
                }
            })
        })
        .collect()
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
