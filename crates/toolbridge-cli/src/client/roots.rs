//! `--root DIR`: folders offered to servers as roots (`roots/list`).

#![allow(deprecated)] // roots: SEP-2577 deprecates them, the protocols carry them

use std::path::{Path, PathBuf};

use anyhow::Context as _;
use futures::future::BoxFuture;
use toolbridge::{
    pool::{RequestOrigin, RootsProvider},
    rmcp_model::{ErrorData, ListRootsResult, Root},
};

/// Folders as roots: `file://` URIs of their canonical paths, named by the
/// folder.
#[derive(Debug, Clone, PartialEq)]
pub struct Folders {
    roots: Vec<Root>,
}

impl Folders {
    /// The roots for `dirs`, each canonicalised (symlinks and `..`
    /// resolved); one that is not an existing folder is an error naming it.
    pub fn from_dirs(dirs: &[PathBuf]) -> anyhow::Result<Folders> {
        let roots = dirs
            .iter()
            .map(|dir| root(dir))
            .collect::<anyhow::Result<_>>()?;
        Ok(Folders { roots })
    }
}

fn root(dir: &Path) -> anyhow::Result<Root> {
    let path = dir.canonicalize().with_context(|| {
        format!(
            "--root {}: no such folder; give a folder that exists",
            dir.display()
        )
    })?;
    if !path.is_dir() {
        anyhow::bail!("--root {}: not a folder; give a folder", dir.display());
    }
    let uri = url::Url::from_directory_path(&path).map_err(|()| {
        anyhow::anyhow!(
            "--root {}: cannot be written as a file:// URI",
            dir.display()
        )
    })?;
    let name = path.file_name().map_or_else(
        || path.display().to_string(),
        |n| n.to_string_lossy().into_owned(),
    );
    // Without the trailing slash, as clients usually send folders.
    let uri = uri.as_str().trim_end_matches('/');
    let uri = if uri == "file://" { "file:///" } else { uri };
    Ok(Root::new(uri).with_name(name))
}

impl RootsProvider for Folders {
    fn list_roots(
        &self,
        _origin: RequestOrigin,
    ) -> BoxFuture<'_, Result<ListRootsResult, ErrorData>> {
        let roots = self.roots.clone();
        Box::pin(async move { Ok(ListRootsResult::new(roots)) })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_folder_becomes_a_canonical_file_uri_named_after_it() {
        let dir = tempfile::tempdir().unwrap();
        let inner = dir.path().join("my project");
        std::fs::create_dir(&inner).unwrap();
        let dotted = inner.join("..").join("my project");
        let folders = Folders::from_dirs(&[dotted]).unwrap();
        let root = &folders.roots[0];
        let canonical = inner.canonicalize().unwrap();
        assert_eq!(
            root.uri,
            format!("file://{}", canonical.display()).replace(' ', "%20")
        );
        assert_eq!(root.name.as_deref(), Some("my project"));
    }

    #[test]
    fn a_missing_folder_is_named_in_the_error() {
        let error = Folders::from_dirs(&[PathBuf::from("/no/such/dir")]).unwrap_err();
        assert!(
            error
                .to_string()
                .contains("--root /no/such/dir: no such folder")
        );
    }
}
