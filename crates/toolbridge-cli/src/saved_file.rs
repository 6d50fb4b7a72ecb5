//! Writing what `call --save DIR`, `resources read --save DIR` and `skills get
//! --save DIR` save: a new file in DIR, never through a link and never over an existing file.
//!
//! DIR may hold what someone else put there (a shared or world-writable
//! folder): a symlink named `1.png` pointing at `~/.bashrc` must not be
//! followed, and a file the user already has must not be replaced without a
//! word. Each file is created with `O_CREAT | O_EXCL | O_NOFOLLOW`: when the
//! name is taken (by anything, a link included), the next free one is
//! used, `1-2.png`, `1-3.png`..., and the path printed is the one written.

use std::{
    io::Write as _,
    os::unix::fs::OpenOptionsExt as _,
    path::{Path, PathBuf},
};

use anyhow::Context as _;

/// How many names are tried before giving up.
const MAX_TRIES: u32 = 1000;

/// Writes `bytes` to a new file in `dir` (created if missing) named `name`,
/// or `STEM-N.EXT` when that is taken; the path written.
pub fn write_new(dir: &Path, name: &str, bytes: &[u8]) -> anyhow::Result<PathBuf> {
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let (stem, ext) = match name.rsplit_once('.') {
        Some((stem, ext)) if !stem.is_empty() => (stem, Some(ext)),
        _ => (name, None),
    };
    for n in 1..=MAX_TRIES {
        let candidate = match (n, ext) {
            (1, _) => name.to_owned(),
            (n, Some(ext)) => format!("{stem}-{n}.{ext}"),
            (n, None) => format!("{stem}-{n}"),
        };
        let path = dir.join(&candidate);
        match create_new(&path) {
            Ok(mut file) => {
                file.write_all(bytes)
                    .with_context(|| format!("cannot write {}", path.display()))?;
                return Ok(path);
            }
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e).with_context(|| format!("cannot write {}", path.display())),
        }
    }
    anyhow::bail!(
        "cannot save {name} in {}: {MAX_TRIES} names like it are taken; choose another folder \
         with --save",
        dir.display()
    )
}

/// A new file at `path` (never through a link, never over a file there).
fn create_new(path: &Path) -> std::io::Result<std::fs::File> {
    std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .custom_flags(libc::O_NOFOLLOW)
        .mode(0o644)
        .open(path)
}

/// Writes `bytes` to a new file at `path`; an error if anything is there.
pub fn write_exclusive(path: &Path, bytes: &[u8]) -> anyhow::Result<()> {
    create_new(path)
        .and_then(|mut file| file.write_all(bytes))
        .with_context(|| format!("cannot write {}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_link_or_a_file_in_the_way_gets_a_new_name_and_stays_as_it_was() {
        let dir = tempfile::tempdir().unwrap();
        let victim = dir.path().join("victim");
        std::fs::write(&victim, "precious").unwrap();
        std::os::unix::fs::symlink(&victim, dir.path().join("1.png")).unwrap();
        let written = write_new(dir.path(), "1.png", b"PNG").unwrap();
        assert_eq!(written, dir.path().join("1-2.png"));
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious");
        let again = write_new(dir.path(), "1.png", b"PNG2").unwrap();
        assert_eq!(again, dir.path().join("1-3.png"));
        assert_eq!(std::fs::read(&written).unwrap(), b"PNG");
        assert_eq!(
            write_new(dir.path(), "x", b"").unwrap(),
            dir.path().join("x")
        );
        assert_eq!(
            write_new(dir.path(), "x", b"").unwrap(),
            dir.path().join("x-2")
        );
    }
}
