//! The provider-neutral part of schema conversion: the spec's
//! `processJsonSchema` ([`normalize`]), local `$ref`s (`refs`), bounded
//! walks over subschemas (`walk`), one node's members (`node`) and JSON
//! pointers (`pointer`). Each provider's own rules live in its folder and
//! reach this module only as data (`TopLevelRules`); nothing here knows a
//! provider.

pub(crate) mod node;
pub mod normalize;
pub(crate) mod pointer;
pub(crate) mod refs;
pub(crate) mod walk;

use serde_json::{Map, Value};

/// A JSON object; what a schema is when it is not `true` or `false`.
pub type JsonObject = Map<String, Value>;

pub(crate) use node::{SeenNames, has_type, is_untyped, members, object, ordered, types_of};
pub(crate) use normalize::{
    Normalized, TOP_LEVEL_COMPOSITION, TopLevelRules, normalize, normalize_with,
};
pub use normalize::{empty_object_schema, process_json_schema};
pub(crate) use pointer::Pointer;
pub(crate) use refs::{inline, is_root_ref, resolve_local_ref};
pub(crate) use walk::{MAX_DEPTH, may_match, walk_mut};
