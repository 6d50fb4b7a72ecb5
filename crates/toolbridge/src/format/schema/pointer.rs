//! Where a node sits in a schema, as a JSON pointer spelled out only when a
//! change is recorded there.

use std::fmt::{self, Write};

/// A node's place in a schema, as a JSON pointer that is only spelled out
/// (by `Display`) when a change is recorded there; most nodes need none.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Pointer<'a> {
    /// The whole schema: `""`.
    Root,
    /// A member of the parent: `/key`, escaped.
    Key(&'a Pointer<'a>, &'a str),
    /// An item of the parent: `/3`.
    Index(&'a Pointer<'a>, usize),
}

impl Pointer<'_> {
    /// The member `key` of this node.
    pub(crate) fn key<'b>(&'b self, key: &'b str) -> Pointer<'b> {
        Pointer::Key(self, key)
    }

    /// The item `index` of this node.
    pub(crate) fn index(&self, index: usize) -> Pointer<'_> {
        Pointer::Index(self, index)
    }

    /// Whether this is the whole schema.
    pub(crate) fn is_root(&self) -> bool {
        matches!(self, Pointer::Root)
    }
}

impl fmt::Display for Pointer<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Pointer::Root => Ok(()),
            Pointer::Key(parent, key) => write!(f, "{parent}/{}", Segment(key)),
            Pointer::Index(parent, index) => write!(f, "{parent}/{index}"),
        }
    }
}

/// A key as one JSON pointer segment (`~` → `~0`, `/` → `~1`).
pub(crate) struct Segment<'a>(pub(crate) &'a str);

impl fmt::Display for Segment<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for c in self.0.chars() {
            match c {
                '~' => f.write_str("~0")?,
                '/' => f.write_str("~1")?,
                c => f.write_char(c)?,
            }
        }
        Ok(())
    }
}

/// The inverse of [`Segment`]'s escaping.
pub(crate) fn unescape_pointer(segment: &str) -> String {
    segment.replace("~1", "/").replace("~0", "~")
}
