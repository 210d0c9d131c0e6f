//! The names and places of the agents' files, shared by the readers.

/// An input's file name without its directory: `abc.jsonl` for `dir/abc.jsonl`.
pub(crate) fn file_name(path: &str) -> &str {
    path.rsplit(['/', '\\']).next().unwrap_or(path)
}

/// The stem of an input's file name: `abc` for `dir/abc.jsonl`.
pub fn file_stem(path: &str) -> &str {
    let name = file_name(path);
    name.split('.').next().unwrap_or(name)
}

/// Session files under `root` (walked recursively, in name order) whose names `keep` accepts;
/// missing roots give nothing.
pub(crate) fn files_under(root: &std::path::Path, keep: impl Fn(&str) -> bool) -> Vec<std::path::PathBuf> {
    walkdir::WalkDir::new(root)
        .follow_links(true)
        .sort_by_file_name()
        .into_iter()
        .filter_map(Result::ok)
        .filter(|e| e.file_type().is_file() && keep(&e.file_name().to_string_lossy()))
        .map(walkdir::DirEntry::into_path)
        .collect()
}

/// `$HOME` joined with `rel`.
pub(crate) fn home_dir(env: &dyn Fn(&str) -> Option<std::ffi::OsString>, rel: &str) -> Option<std::path::PathBuf> {
    env("HOME").filter(|h| !h.is_empty()).map(|h| std::path::PathBuf::from(h).join(rel))
}
