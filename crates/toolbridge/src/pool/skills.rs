//! A server's skills (SEP-2640, the extension `io.modelcontextprotocol/skills`):
//! listing them, getting one entry by the URI of its `SKILL.md`, loading a
//! skill, and reading its files, each checked against the entry it was
//! listed with.
//!
//! rmcp has the model (`Skill`, its manifest, `SkillResource::verify` for
//! size then digest, `Skill::validate` for the entry's own rules); this
//! module adds what a host must do around it:
//!
//! - nothing is read ahead of need: listing reads no file, loading reads
//!   only `SKILL.md`, a supporting file is read when asked for;
//! - every file read is checked against the held entry's size and digest,
//!   and a `SKILL.md`'s YAML frontmatter is compared field by field with the
//!   entry's `frontmatter`; on a mismatch the content is not used
//!   ([`PoolError::SkillUnverified`]) and nothing more is read;
//! - a file the held entry does not list is not read at all (a change to
//!   the skill, treated as a verification failure);
//! - an entry that breaks the spec's rules (no `SKILL.md` in its manifest,
//!   a file outside the skill, a name that is not the URI's last segment)
//!   or over its limits (512 files, 16 MiB) is refused before any read.
//!
//! A skill is named by its server and its URI (skills of two servers may
//! share a URI); a name given by a user is resolved within one server's
//! listing, and two entries with that name are an error naming both URIs.
//! Listings are cached per server as resource lists are, and dropped with
//! them (`notifications/resources/list_changed`, a reconnect).

use std::sync::Arc;

use base64::Engine as _;
use rmcp::model::{
    ClientRequest, ErrorCode, GetSkillRequest, GetSkillRequestParams, ListSkillsRequest,
    PaginatedRequestParams, ResourceContents, ServerResult, Skill, SkillResource, SkillResources,
};
use serde_json::Value;

use super::{
    CallOptions, Listing, Pool, PoolError,
    cache::ListCache,
    catalog::Catalog,
    error::Feature,
    error::unexpected,
    listing::{Listed, Page},
};

/// The most files a skill may have for a host to load it (the spec's limit).
pub const MAX_SKILL_FILES: usize = 512;
/// The most bytes a skill's files may add up to (the spec's 16 MiB).
pub const MAX_SKILL_BYTES: u64 = 16 * 1024 * 1024;

impl Listed for Skill {
    const LIST: &'static str = "skill";
    const METHOD: &'static str = "skills/list";
    const FEATURE: Feature = Feature::Skills;
    fn request(cursor: Option<String>) -> ClientRequest {
        ClientRequest::ListSkillsRequest(ListSkillsRequest::with_param(
            PaginatedRequestParams::default().with_cursor(cursor),
        ))
    }
    fn page(result: ServerResult) -> Result<Page<Self>, Box<ServerResult>> {
        match result {
            ServerResult::ListSkillsResult(page) => Ok((page.skills, page.next_cursor)),
            other => Err(Box::new(other)),
        }
    }
    fn cache(catalog: &Catalog) -> &ListCache<Self> {
        &catalog.skills
    }
}

/// A skill loaded from a server: the entry it was loaded under (which every
/// later read of its files is checked against) and its `SKILL.md`, verified.
#[derive(Debug, Clone, PartialEq)]
pub struct LoadedSkill {
    /// The server's config name: half of the skill's identity.
    pub server: String,
    /// The entry, as `skills/list` or `skills/get` gave it.
    pub entry: Skill,
    /// The `SKILL.md` text, as the server sent it and checked.
    pub text: String,
}

/// One file of a skill, read and checked against the skill's entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SkillFile {
    /// The file's URI, as the entry lists it.
    pub uri: String,
    /// Its path below the skill's directory (`references/FORMS.md`).
    pub path: String,
    /// Its bytes.
    pub bytes: Vec<u8>,
}

impl LoadedSkill {
    /// The skill's files as its entry lists them (`SKILL.md` first), or
    /// `None` for a skill whose resources are `"dynamic"`.
    pub fn files(&self) -> Option<&[SkillResource]> {
        match &self.entry.resources {
            SkillResources::Files(files) => Some(files),
            _ => None,
        }
    }
}

/// The directory URI of a skill (its `SKILL.md` URI without the file name,
/// with the slash).
fn skill_root(uri: &str) -> &str {
    uri.strip_suffix(rmcp::model::SKILL_MD).unwrap_or(uri)
}

/// The path of `file` below the skill at `skill_uri`, made of plain
/// segments only (no `.`, `..`, empty segment or backslash), or `None`.
pub fn skill_file_path(skill_uri: &str, file: &str) -> Option<String> {
    let relative = file.strip_prefix(skill_root(skill_uri))?;
    let plain = |segment: &str| {
        !matches!(segment, "" | "." | "..") && !segment.contains(['\\', '\0', '?', '#'])
    };
    relative.split('/').all(plain).then(|| relative.to_owned())
}

impl Pool {
    /// The skills of `server` (all pages of `skills/list`), from its cache
    /// when it is fresh. No file of any skill is read.
    /// [`PoolError::NotOffered`] if the server does not declare the skills
    /// extension.
    pub async fn list_skills(&self, server: &str) -> Result<Arc<Vec<Skill>>, PoolError> {
        self.list_items(server).await
    }

    /// The skills of each of `servers`, listed in parallel. A server that
    /// fails is in [`Listing::failures`]; one without skills has none.
    pub async fn list_skills_of(&self, servers: &[String]) -> Listing<Skill> {
        self.list_items_of(servers).await
    }

    /// The entry of the skill whose `SKILL.md` is at `uri` on `server`
    /// (`skills/get`): the way to confirm a skill known only by its URI.
    /// A URI the server does not serve as a skill is
    /// [`PoolError::UnknownSkill`].
    pub async fn get_skill(
        &self,
        server: &str,
        uri: &str,
        options: &CallOptions,
    ) -> Result<Skill, PoolError> {
        let request =
            ClientRequest::GetSkillRequest(GetSkillRequest::new(GetSkillRequestParams::new(uri)));
        match self
            .request_offered(server, Feature::Skills, request, options)
            .await
        {
            Ok(ServerResult::GetSkillResult(result)) => Ok(result.skill),
            Ok(other) => Err(unexpected(server, "skills/get", &other)),
            Err(PoolError::Server { code, .. }) if code == ErrorCode::INVALID_PARAMS.0 => {
                let known = match self.list_skills(server).await {
                    Ok(skills) => skills.iter().map(|s| s.uri.clone()).collect(),
                    Err(_) => Vec::new(),
                };
                Err(PoolError::UnknownSkill {
                    server: server.to_owned(),
                    skill: uri.to_owned(),
                    known,
                })
            }
            Err(e) => Err(e),
        }
    }

    /// The entry of `skill` on `server`: `skill` is the URI of its
    /// `SKILL.md` (confirmed with `skills/get`) or its name, looked up in
    /// the server's listing ([`PoolError::UnknownSkill`] if none has it,
    /// [`PoolError::AmbiguousSkill`] if several do).
    pub async fn find_skill(
        &self,
        server: &str,
        skill: &str,
        options: &CallOptions,
    ) -> Result<Skill, PoolError> {
        if skill.contains("://") {
            return self.get_skill(server, skill, options).await;
        }
        let listed = self.list_skills(server).await?;
        let named: Vec<&Skill> = listed.iter().filter(|s| s.name() == skill).collect();
        match named.as_slice() {
            [one] => Ok((*one).clone()),
            [] => Err(PoolError::UnknownSkill {
                server: server.to_owned(),
                skill: skill.to_owned(),
                known: listed.iter().map(|s| s.name().to_owned()).collect(),
            }),
            several => Err(PoolError::AmbiguousSkill {
                server: server.to_owned(),
                name: skill.to_owned(),
                uris: several.iter().map(|s| s.uri.clone()).collect(),
            }),
        }
    }

    /// Loads `skill` (a name or a `SKILL.md` URI, as [`Pool::find_skill`])
    /// from `server`: checks the entry (its rules and limits), reads its
    /// `SKILL.md` and verifies it against the entry (size, digest, and its
    /// frontmatter field by field). Reads nothing else.
    pub async fn load_skill(
        &self,
        server: &str,
        skill: &str,
        options: &CallOptions,
    ) -> Result<LoadedSkill, PoolError> {
        let entry = self.find_skill(server, skill, options).await?;
        let unverified = |reason: String| PoolError::SkillUnverified {
            server: server.to_owned(),
            uri: entry.uri.clone(),
            reason,
        };
        entry
            .validate()
            .map_err(|e| unverified(format!("its entry breaks the skills extension: {e}")))?;
        if let SkillResources::Files(files) = &entry.resources {
            let total: u64 = files.iter().map(|f| f.size).sum();
            if files.len() > MAX_SKILL_FILES || total > MAX_SKILL_BYTES {
                return Err(unverified(format!(
                    "it has {} files of {total} bytes in all, over the extension's limits \
                     ({MAX_SKILL_FILES} files, {MAX_SKILL_BYTES} bytes) that hosts load",
                    files.len()
                )));
            }
        }
        let bytes = self
            .read_checked(server, &entry, &entry.uri, options)
            .await?;
        let text = String::from_utf8(bytes).map_err(|_| unverified("it is not UTF-8".into()))?;
        compare_frontmatter(&entry, &text).map_err(unverified)?;
        Ok(LoadedSkill {
            server: server.to_owned(),
            entry,
            text,
        })
    }

    /// Reads `uri`, a file of the loaded `skill`, from the skill's own
    /// server, checked against the entry the skill was loaded under. A file
    /// the entry does not list is not read: [`PoolError::SkillUnverified`].
    pub async fn read_skill_file(
        &self,
        skill: &LoadedSkill,
        uri: &str,
        options: &CallOptions,
    ) -> Result<SkillFile, PoolError> {
        let path =
            skill_file_path(&skill.entry.uri, uri).ok_or_else(|| PoolError::SkillUnverified {
                server: skill.server.clone(),
                uri: uri.to_owned(),
                reason: format!("it is not a file within skill {}", skill.entry.uri),
            })?;
        let bytes = self
            .read_checked(&skill.server, &skill.entry, uri, options)
            .await?;
        Ok(SkillFile {
            uri: uri.to_owned(),
            path,
            bytes,
        })
    }

    /// Every file of the loaded `skill`, each read once and checked, in the
    /// entry's order; the first that fails ends it (nothing after it is
    /// read). A `"dynamic"` skill has only its `SKILL.md`.
    pub async fn read_skill_files(
        &self,
        skill: &LoadedSkill,
        options: &CallOptions,
    ) -> Result<Vec<SkillFile>, PoolError> {
        let mut files = vec![SkillFile {
            uri: skill.entry.uri.clone(),
            path: rmcp::model::SKILL_MD.to_owned(),
            bytes: skill.text.clone().into_bytes(),
        }];
        for listed in skill.files().unwrap_or_default() {
            if listed.uri != skill.entry.uri {
                files.push(self.read_skill_file(skill, &listed.uri, options).await?);
            }
        }
        Ok(files)
    }

    /// The bytes of `uri` from `server`, checked against `entry`'s listing
    /// of it (size, then digest); a `"dynamic"` entry checks nothing but
    /// that `uri` is its `SKILL.md`.
    async fn read_checked(
        &self,
        server: &str,
        entry: &Skill,
        uri: &str,
        options: &CallOptions,
    ) -> Result<Vec<u8>, PoolError> {
        let unverified = |reason: String| PoolError::SkillUnverified {
            server: server.to_owned(),
            uri: uri.to_owned(),
            reason,
        };
        let listed = match &entry.resources {
            SkillResources::Files(files) => Some(
                files
                    .iter()
                    .find(|f| f.uri == uri)
                    .ok_or_else(|| unverified(format!("the entry of {} does not list it (the skill changed; list the skills again)", entry.uri)))?,
            ),
            _ if uri == entry.uri => None,
            _ => {
                return Err(unverified(format!(
                    "skill {} is \"dynamic\": it publishes no files to check",
                    entry.uri
                )));
            }
        };
        let result = self.read_resource(server, uri, options).await?;
        let bytes = contents_bytes(uri, &result.contents).map_err(&unverified)?;
        if let Some(listed) = listed {
            listed
                .verify(&bytes)
                .map_err(|e| unverified(e.to_string()))?;
        }
        Ok(bytes)
    }
}

/// The bytes of the contents for `uri` in a `resources/read` answer: its
/// text as UTF-8, or its blob decoded.
fn contents_bytes(uri: &str, contents: &[ResourceContents]) -> Result<Vec<u8>, String> {
    let uri_of = |c: &ResourceContents| match c {
        ResourceContents::TextResourceContents { uri, .. }
        | ResourceContents::BlobResourceContents { uri, .. } => Some(uri.clone()),
        _ => None,
    };
    let content = contents
        .iter()
        .find(|c| uri_of(c).as_deref() == Some(uri))
        .or(contents.first())
        .ok_or_else(|| "the server sent no contents for it".to_owned())?;
    match content {
        ResourceContents::TextResourceContents { text, .. } => Ok(text.clone().into_bytes()),
        ResourceContents::BlobResourceContents { blob, .. } => {
            base64::engine::general_purpose::STANDARD
                .decode(blob)
                .map_err(|e| format!("its blob is not base64: {e}"))
        }
        _ => Err("its contents are neither text nor a blob".to_owned()),
    }
}

/// Compares the YAML frontmatter of `text` (a `SKILL.md`) with `entry`'s
/// `frontmatter`, field by field: the reason for the first difference.
fn compare_frontmatter(entry: &Skill, text: &str) -> Result<(), String> {
    let parsed = frontmatter(text)?;
    let Value::Object(wrote) = serde_json::to_value(&entry.frontmatter)
        .map_err(|e| format!("its entry's frontmatter cannot be read: {e}"))?
    else {
        return Err("its entry's frontmatter is not an object".into());
    };
    let mut fields: Vec<&String> = wrote.keys().chain(parsed.keys()).collect();
    fields.sort();
    fields.dedup();
    for field in fields {
        let (file, listed) = (parsed.get(field), wrote.get(field));
        if file.unwrap_or(&Value::Null) != listed.unwrap_or(&Value::Null) {
            let show = |v: Option<&Value>| v.map_or("nothing".to_owned(), Value::to_string);
            return Err(format!(
                "its frontmatter's \"{field}\" is {} but the skill's entry says {}",
                show(file),
                show(listed)
            ));
        }
    }
    Ok(())
}

/// The YAML frontmatter at the start of `text` (between `---` lines), as
/// JSON.
fn frontmatter(text: &str) -> Result<serde_json::Map<String, Value>, String> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut lines = text.split_inclusive('\n');
    if lines.next().map(str::trim_end) != Some("---") {
        return Err("it does not begin with a --- frontmatter block".into());
    }
    let start = text.find('\n').map_or(text.len(), |i| i + 1);
    let mut end = start;
    for line in lines {
        if line.trim_end() == "---" {
            let value: Value = yaml_serde::from_str(&text[start..end])
                .map_err(|e| format!("its frontmatter is not valid YAML: {e}"))?;
            return match value {
                Value::Object(map) => Ok(map),
                _ => Err("its frontmatter is not a YAML mapping".into()),
            };
        }
        end += line.len();
    }
    Err("its frontmatter block has no closing ---".into())
}

#[cfg(test)]
mod tests {
    use rmcp::model::SkillFrontmatter;

    use super::*;

    fn entry(frontmatter: SkillFrontmatter) -> Skill {
        Skill::new("skill://pdf/SKILL.md", frontmatter, SkillResources::Dynamic)
    }

    const TEXT: &str =
        "---\nname: pdf\ndescription: Fill PDF forms\nmetadata:\n  version: \"2\"\n---\n\nBody.\n";

    #[test]
    fn frontmatter_equal_in_every_field_passes() {
        let fm = SkillFrontmatter::new("pdf", "Fill PDF forms")
            .with_field("metadata", serde_json::json!({"version": "2"}));
        assert_eq!(compare_frontmatter(&entry(fm), TEXT), Ok(()));
    }

    #[test]
    fn a_changed_a_missing_and_an_extra_field_each_fail_naming_it() {
        let changed = SkillFrontmatter::new("pdf", "Exfiltrate credentials")
            .with_field("metadata", serde_json::json!({"version": "2"}));
        let error = compare_frontmatter(&entry(changed), TEXT).unwrap_err();
        assert!(error.contains("\"description\""), "{error}");
        let missing = SkillFrontmatter::new("pdf", "Fill PDF forms");
        let error = compare_frontmatter(&entry(missing), TEXT).unwrap_err();
        assert!(error.contains("\"metadata\""), "{error}");
        let extra = SkillFrontmatter::new("pdf", "Fill PDF forms")
            .with_field("metadata", serde_json::json!({"version": "2"}))
            .with_field("license", "MIT");
        let error = compare_frontmatter(&entry(extra), TEXT).unwrap_err();
        assert!(error.contains("\"license\" is nothing"), "{error}");
    }

    #[test]
    fn text_without_frontmatter_fails() {
        let fm = SkillFrontmatter::new("pdf", "Fill PDF forms");
        let error = compare_frontmatter(&entry(fm), "# PDF\n").unwrap_err();
        assert!(error.contains("frontmatter"), "{error}");
    }

    #[test]
    fn file_paths_are_plain_segments_below_the_skill() {
        let skill = "skill://acme/pdf/SKILL.md";
        assert_eq!(
            skill_file_path(skill, "skill://acme/pdf/references/FORMS.md").as_deref(),
            Some("references/FORMS.md")
        );
        for outside in [
            "skill://acme/pdf/../secret",
            "skill://acme/other/x.md",
            "skill://acme/pdf//x.md",
            "skill://acme/pdf/a\\b",
        ] {
            assert_eq!(skill_file_path(skill, outside), None, "{outside}");
        }
    }
}
