//! The change log of a conversion: what was changed in a tool for a
//! provider, and whether the provider would have refused it unchanged.
//! Every converter records into `Notes`; [`check`](super::check()) reports them.

use serde::Serialize;
use std::fmt;

/// What kind of change conversion made.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum ChangeKind {
    /// Characters of the tool name were replaced.
    NameSanitized,
    /// The tool name was too long and got a hash suffix.
    NameShortened,
    /// The tool name collided with another and got a hash suffix.
    NameDeduplicated,
    /// A second tool of one server with the same name: it is left out of
    /// every provider format, the first one is sent.
    DuplicateTool,
    /// A keyword the provider does not accept was removed.
    KeywordDropped,
    /// A `$ref` was replaced by the schema it points to.
    RefInlined,
    /// A `$ref` pointing outside the schema (or nowhere) was removed.
    RefUnresolved,
    /// A recursive `$ref` was cut at the point it recurs.
    RefCycle,
    /// A part nested deeper than the limit was cut.
    DepthLimit,
    /// A `type` was added, changed or removed.
    TypeRewritten,
    /// `["T","null"]` or `anyOf [T, null]` became `nullable: true`.
    NullableRewritten,
    /// `oneOf`/`allOf`/type lists were rewritten as `anyOf` or merged.
    CompositionRewritten,
    /// `const` became a one-value `enum`.
    ConstToEnum,
    /// Enum values were turned into strings, or nulls moved to `nullable`.
    EnumRewritten,
    /// A `format` the provider does not accept was removed.
    FormatDropped,
    /// `required` named something that is not a property.
    RequiredFiltered,
    /// An array without `items` got one.
    ItemsAdded,
    /// A property whose schema is `false` (never valid) was removed.
    PropertyDropped,
    /// A tool without arguments is declared without `parameters`.
    ParametersOmitted,
    /// An object whose keys are free cannot be described to this provider;
    /// the model sees a plain object.
    FreeFormObject,
    /// A value that is not a schema was replaced.
    InvalidSchema,
    /// Strict mode closed an object or made an optional property required
    /// and nullable.
    StrictAdjusted,
    /// Strict mode was asked for but the schema cannot be made strict; the
    /// tool is sent non-strict.
    StrictFallback,
    /// The tool is not sent to the provider at all (it can only be called
    /// as a task, which may run far longer than a model's turn waits).
    LeftOut,
    /// The definition holds characters a person cannot see (zero-width,
    /// bidirectional controls, tag characters, control characters); they
    /// are removed from descriptions and titles (see
    /// [`hidden_chars`](crate::hidden_chars)).
    HiddenCharacters,
}

impl ChangeKind {
    /// Every kind, in declaration order (the page has a sentence for each,
    /// `tools.changeKinds.KIND`, KIND as serialized).
    pub const ALL: [ChangeKind; 25] = [
        ChangeKind::NameSanitized,
        ChangeKind::NameShortened,
        ChangeKind::NameDeduplicated,
        ChangeKind::DuplicateTool,
        ChangeKind::KeywordDropped,
        ChangeKind::RefInlined,
        ChangeKind::RefUnresolved,
        ChangeKind::RefCycle,
        ChangeKind::DepthLimit,
        ChangeKind::TypeRewritten,
        ChangeKind::NullableRewritten,
        ChangeKind::CompositionRewritten,
        ChangeKind::ConstToEnum,
        ChangeKind::EnumRewritten,
        ChangeKind::FormatDropped,
        ChangeKind::RequiredFiltered,
        ChangeKind::ItemsAdded,
        ChangeKind::PropertyDropped,
        ChangeKind::ParametersOmitted,
        ChangeKind::FreeFormObject,
        ChangeKind::InvalidSchema,
        ChangeKind::StrictAdjusted,
        ChangeKind::StrictFallback,
        ChangeKind::LeftOut,
        ChangeKind::HiddenCharacters,
    ];
}

/// One change conversion made to one tool for one provider.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Change {
    /// JSON pointer into the tool's input schema (`""` for the tool itself).
    pub path: String,
    /// What kind of change.
    pub kind: ChangeKind,
    /// Whether the provider would have refused the tool without this change.
    pub would_reject: bool,
    /// A sentence for the user.
    pub detail: String,
}

impl Change {
    /// A change at `path`.
    pub fn new(
        path: impl Into<String>,
        kind: ChangeKind,
        would_reject: bool,
        detail: impl Into<String>,
    ) -> Self {
        Change {
            path: path.into(),
            kind,
            would_reject,
            detail: detail.into(),
        }
    }
}

/// Where one conversion records its changes.
///
/// Converting tools for a request throws the changes away, so a discarding
/// list does not even format their paths and messages; only `check` and the
/// public per-tool functions record them.
#[derive(Debug, Default)]
pub(crate) struct Notes {
    changes: Vec<Change>,
    keep: bool,
}

impl Notes {
    /// A list that keeps every change.
    pub(crate) fn recording() -> Self {
        Notes {
            changes: Vec::new(),
            keep: true,
        }
    }

    /// A list that keeps nothing.
    pub(crate) fn discarding() -> Self {
        Notes::default()
    }

    /// A new, empty list that records if this one does; for changes kept
    /// only when a step succeeds.
    pub(crate) fn fork(&self) -> Self {
        Notes {
            changes: Vec::new(),
            keep: self.keep,
        }
    }

    /// Records a change at `path`; `path` and `detail` are only formatted
    /// when the list keeps changes.
    pub(crate) fn add(
        &mut self,
        path: impl fmt::Display,
        kind: ChangeKind,
        would_reject: bool,
        detail: impl fmt::Display,
    ) {
        if self.keep {
            self.changes.push(Change::new(
                path.to_string(),
                kind,
                would_reject,
                detail.to_string(),
            ));
        }
    }

    /// Moves the changes of `other` (a fork) to the end of this list.
    pub(crate) fn append(&mut self, mut other: Notes) {
        self.changes.append(&mut other.changes);
    }

    /// Runs `convert` with a recording list and moves what it recorded to
    /// the end of `out`: the public per-tool functions, which report every
    /// change, over converters that take a [`Notes`].
    pub(crate) fn record_into<T>(
        out: &mut Vec<Change>,
        convert: impl FnOnce(&mut Notes) -> T,
    ) -> T {
        let mut recorded = Notes::recording();
        let converted = convert(&mut recorded);
        out.append(&mut recorded.changes);
        converted
    }
}

#[cfg(test)]
mod tests {
    use super::ChangeKind;

    /// Each kind's place in declaration order (a new kind does not compile
    /// here until it has one).
    fn position(kind: ChangeKind) -> usize {
        use ChangeKind::*;
        match kind {
            NameSanitized => 0,
            NameShortened => 1,
            NameDeduplicated => 2,
            DuplicateTool => 3,
            KeywordDropped => 4,
            RefInlined => 5,
            RefUnresolved => 6,
            RefCycle => 7,
            DepthLimit => 8,
            TypeRewritten => 9,
            NullableRewritten => 10,
            CompositionRewritten => 11,
            ConstToEnum => 12,
            EnumRewritten => 13,
            FormatDropped => 14,
            RequiredFiltered => 15,
            ItemsAdded => 16,
            PropertyDropped => 17,
            ParametersOmitted => 18,
            FreeFormObject => 19,
            InvalidSchema => 20,
            StrictAdjusted => 21,
            StrictFallback => 22,
            LeftOut => 23,
            HiddenCharacters => 24,
        }
    }

    #[test]
    fn all_is_every_kind_once_in_order() {
        let positions: Vec<usize> = ChangeKind::ALL.into_iter().map(position).collect();
        assert_eq!(positions, (0..25).collect::<Vec<_>>());
    }
}
