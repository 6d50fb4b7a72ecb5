//! The example server's one skill (SEP-2640, the extension
//! `io.modelcontextprotocol/skills`), served when it is started with
//! `--skill`: `skills/list` and `skills/get` give its entry, and
//! `resources/list` and `resources/read` its one file, `SKILL.md`, built
//! into the binary, so skills can be tried and tested with no network and
//! no folder on disk.
//!
//! rmcp's `SkillCatalog` serves skills from a folder (feature `skills-fs`);
//! one file compiled in needs only its entry, written here.

use rmcp::model::{
    ErrorData, GetSkillResult, ListSkillsResult, ReadResourceResult, Resource, ResourceContents,
    Skill, SkillFrontmatter, SkillResource, SkillResources,
};

/// The skill's name: its `SKILL.md` URI's last folder.
pub const NAME: &str = "toolbridge-example";

/// Where its `SKILL.md` is.
pub const URI: &str = "skill://toolbridge-example/SKILL.md";

const DESCRIPTION: &str = "Use the toolbridge example server's tools to greet, echo text, and run a slow call with progress";

/// The file itself, frontmatter first (its `name` and `description` are
/// the entry's).
const SKILL_MD: &str = "---
name: toolbridge-example
description: Use the toolbridge example server's tools to greet, echo text, and run a slow call with progress
---

# The toolbridge example server

A small server that ships inside toolbridge, for trying a client against a
real MCP server without installing one.

- `hello` greets someone by `name`.
- `echo` returns `text` unchanged: use it to check that arguments and
  results go through as sent.
- `slow` takes `ms` milliseconds, and reports progress when the call carries
  a progress token; cancelling the call stops it.
- `tiny_image` and `tiny_audio` return a 4x4 PNG and a 50 ms WAV, to see how
  a client shows images and audio.
";

const MIME_TYPE: &str = "text/markdown";

/// The skill's entry, as `skills/list` and `skills/get` give it.
pub fn entry() -> Skill {
    Skill::new(
        URI,
        SkillFrontmatter::new(NAME, DESCRIPTION),
        SkillResources::Files(vec![SkillResource::from_bytes(URI, SKILL_MD.as_bytes())]),
    )
}

/// The answer to `skills/list`.
pub fn list() -> ListSkillsResult {
    ListSkillsResult::with_all_items(vec![entry()])
}

/// The answer to `skills/get` of `uri`; an unknown URI is invalid params,
/// as the extension says.
pub fn get(uri: &str) -> Result<GetSkillResult, ErrorData> {
    if uri == URI {
        Ok(GetSkillResult::new(entry()))
    } else {
        Err(ErrorData::invalid_params(
            format!("no skill at {uri}; the only one is {URI}"),
            None,
        ))
    }
}

/// `SKILL.md` as `resources/list` lists it.
pub fn resource() -> Resource {
    Resource::new(URI, NAME)
        .with_description(DESCRIPTION)
        .with_mime_type(MIME_TYPE)
        .with_size(SKILL_MD.len() as u64)
}

/// The answer to `resources/read` of `uri`, when it is `SKILL.md`.
pub fn read(uri: &str) -> Option<ReadResourceResult> {
    (uri == URI).then(|| {
        ReadResourceResult::new(vec![
            ResourceContents::text(SKILL_MD, URI).with_mime_type(MIME_TYPE),
        ])
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_entry_keeps_the_extensions_rules_and_matches_its_file() {
        let skill = entry();
        skill.validate().expect("a valid entry");
        let SkillResources::Files(files) = &skill.resources else {
            panic!("a manifest of files");
        };
        files[0]
            .verify(SKILL_MD.as_bytes())
            .expect("the digest and size of SKILL.md");
        let frontmatter = SKILL_MD
            .strip_prefix("---\n")
            .and_then(|rest| rest.split_once("\n---\n"))
            .map(|(front, _)| front)
            .expect("frontmatter");
        assert!(frontmatter.contains(&format!("name: {NAME}\n")));
        assert!(frontmatter.ends_with(&format!("description: {DESCRIPTION}")));
    }

    #[test]
    fn an_unknown_uri_is_invalid_params() {
        let error = get("skill://other/SKILL.md").unwrap_err();
        assert_eq!(error.code, rmcp::model::ErrorCode::INVALID_PARAMS);
        assert!(read("skill://other/SKILL.md").is_none());
    }
}
