//! Skills (SEP-2640, issue 25) against a server nobody here wrote: FastMCP
//! 4's own skills support (`tests/servers/skills_server.py`, which serves
//! the skill folders of a directory and reads each file when asked), with
//! every request it is sent recorded, so the tests see what was read when.
//!
//! The conformance suite's `sep-2640-client-*` scenarios (run by
//! scripts/conformance.sh) check the same rules against its own servers.

use crate::common;

use std::path::Path;

use common::fixtures::*;
use toolbridge::{
    config::ServerSpec,
    pool::{CallOptions, PoolError},
    rmcp_model::SkillResources,
};

/// One FastMCP server at a time: on a loaded machine its start (about 8 s
/// of imports at a load of 16 on 2 cores) runs into rmcp's 10 s
/// `server/discover` timeout when several start at once, and rmcp then
/// falls back to `initialize`, which FastMCP refuses once it has seen
/// discover (the discover-timeout defect of issue 24).
static ONE_SERVER: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

/// FastMCP's venv (scripts/setup-test-deps.sh).
fn fastmcp_python() -> String {
    common::deps()
        .join("py-tb-fastmcp/bin/python")
        .to_string_lossy()
        .into_owned()
}

/// The skills server `name` over the skills below `skills`, each request it
/// is sent appended to `record`.
fn skills_server(name: &str, skills: &Path, record: &Path) -> ServerSpec {
    ServerSpec::stdio(
        name,
        "sh",
        [
            "-c".to_owned(),
            r#"tee -a "$0" | exec "$1" "$2" "$3""#.to_owned(),
            record.to_string_lossy().into_owned(),
            fastmcp_python(),
            test_server("skills_server.py"),
            skills.to_string_lossy().into_owned(),
        ],
    )
}

/// How many `resources/read` of `uri` the server was sent.
fn reads(record: &Path, uri: &str) -> usize {
    std::fs::read_to_string(record)
        .unwrap_or_default()
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter(|m| m["method"] == "resources/read" && m["params"]["uri"] == uri)
        .count()
}

/// A copy of `tests/servers/skills` in a new folder, to change.
fn skills_copy() -> tempfile::TempDir {
    let dir = tempdir();
    let from = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/servers/skills/release-notes");
    let to = dir.path().join("release-notes");
    std::fs::create_dir_all(to.join("references")).unwrap();
    for file in ["SKILL.md", "references/STYLE.md"] {
        std::fs::copy(from.join(file), to.join(file)).unwrap();
    }
    dir
}

const SKILL: &str = "skill://release-notes/SKILL.md";
const STYLE: &str = "skill://release-notes/references/STYLE.md";

#[tokio::test]
async fn skills_are_listed_without_reads_and_each_file_is_read_when_asked_verified() {
    let _one = ONE_SERVER.lock().await;
    let skills = skills_copy();
    let record = skills.path().join("requests.jsonl");
    let pool = pool(vec![skills_server("docs", skills.path(), &record)]);
    let options = CallOptions::default();

    let listed = pool.list_skills("docs").await.unwrap();
    assert_eq!(listed.len(), 1, "{listed:?}");
    let entry = &listed[0];
    assert_eq!(entry.uri, SKILL);
    assert_eq!(entry.name(), "release-notes");
    assert_eq!(
        entry.frontmatter.extra.get("license"),
        Some(&serde_json::json!("MIT")),
        "every frontmatter field passes through: {entry:?}"
    );
    let SkillResources::Files(files) = &entry.resources else {
        panic!("a static skill lists its files: {entry:?}");
    };
    let uris: Vec<&str> = files.iter().map(|f| f.uri.as_str()).collect();
    assert!(uris.contains(&SKILL) && uris.contains(&STYLE), "{uris:?}");
    assert_eq!((reads(&record, SKILL), reads(&record, STYLE)), (0, 0));

    let loaded = pool
        .load_skill("docs", "release-notes", &options)
        .await
        .unwrap();
    let on_disk = std::fs::read_to_string(skills.path().join("release-notes/SKILL.md")).unwrap();
    assert_eq!(loaded.text, on_disk);
    assert_eq!(loaded.server, "docs");
    assert_eq!((reads(&record, SKILL), reads(&record, STYLE)), (1, 0));

    let style = pool
        .read_skill_file(&loaded, STYLE, &options)
        .await
        .unwrap();
    assert_eq!(style.path, "references/STYLE.md");
    assert_eq!(
        style.bytes,
        std::fs::read(skills.path().join("release-notes/references/STYLE.md")).unwrap()
    );
    assert_eq!(reads(&record, STYLE), 1);

    // By URI: confirmed with skills/get, the same entry.
    let by_uri = pool.load_skill("docs", SKILL, &options).await.unwrap();
    assert_eq!(by_uri.entry, loaded.entry);
}

#[tokio::test]
async fn a_skill_changed_after_its_listing_is_refused_and_nothing_after_it_is_read() {
    let _one = ONE_SERVER.lock().await;
    let skills = skills_copy();
    let record = skills.path().join("requests.jsonl");
    let pool = pool(vec![skills_server("docs", skills.path(), &record)]);
    let options = CallOptions::default();
    pool.list_skills("docs").await.unwrap();
    let skill_md = skills.path().join("release-notes/SKILL.md");
    let original = std::fs::read_to_string(&skill_md).unwrap();

    // Same length, other bytes: the digest tells.
    std::fs::write(&skill_md, original.replace("by area", "by AREA")).unwrap();
    let refused = pool
        .load_skill("docs", "release-notes", &options)
        .await
        .unwrap_err();
    assert!(
        matches!(&refused, PoolError::SkillUnverified { server, uri, reason }
            if server == "docs" && uri == SKILL && reason.contains("digest")),
        "{refused:?}"
    );
    assert!(
        refused
            .to_string()
            .contains("toolbridge skills list --server docs"),
        "says what to do: {refused}"
    );

    // Back as listed, the skill loads; then a supporting file that grew is
    // refused when it is read.
    std::fs::write(&skill_md, &original).unwrap();
    let loaded = pool
        .load_skill("docs", "release-notes", &options)
        .await
        .unwrap();
    let style = skills.path().join("release-notes/references/STYLE.md");
    std::fs::write(&style, "Short sentences. Say why. And then some.\n").unwrap();
    let refused = pool.read_skill_files(&loaded, &options).await.unwrap_err();
    assert!(
        matches!(&refused, PoolError::SkillUnverified { uri, reason, .. }
            if uri == STYLE && reason.contains("bytes")),
        "{refused:?}"
    );
}

#[tokio::test]
async fn unknown_skills_and_unlisted_files_are_errors_that_read_nothing() {
    let _one = ONE_SERVER.lock().await;
    let skills = skills_copy();
    let record = skills.path().join("requests.jsonl");
    let pool = pool(vec![
        skills_server("docs", skills.path(), &record),
        example("example"),
    ]);
    let options = CallOptions::default();

    let unknown = pool
        .load_skill("docs", "pdf-processing", &options)
        .await
        .unwrap_err();
    assert!(
        matches!(&unknown, PoolError::UnknownSkill { known, .. } if known == &["release-notes"]),
        "{unknown:?}"
    );
    assert!(unknown.is_usage(), "{unknown:?}");
    let unknown = pool
        .get_skill("docs", "skill://pdf-processing/SKILL.md", &options)
        .await
        .unwrap_err();
    assert!(
        matches!(&unknown, PoolError::UnknownSkill { skill, .. } if skill == "skill://pdf-processing/SKILL.md"),
        "{unknown:?}"
    );

    let loaded = pool
        .load_skill("docs", "release-notes", &options)
        .await
        .unwrap();
    // A file the entry does not list is never asked for, even if it exists.
    std::fs::write(skills.path().join("release-notes/extra.md"), "new\n").unwrap();
    let extra = "skill://release-notes/extra.md";
    let refused = pool
        .read_skill_file(&loaded, extra, &options)
        .await
        .unwrap_err();
    assert!(
        matches!(&refused, PoolError::SkillUnverified { reason, .. } if reason.contains("does not list it")),
        "{refused:?}"
    );
    assert_eq!(reads(&record, extra), 0);

    // A server without the extension offers no skills; among others it has none.
    let not_offered = pool.list_skills("example").await.unwrap_err();
    assert!(
        not_offered
            .to_string()
            .starts_with("server \"example\" offers no skills"),
        "{not_offered}"
    );
    let both = pool
        .list_skills_of(&["example".to_owned(), "docs".to_owned()])
        .await;
    assert!(both.failures.is_empty(), "{:?}", both.failures);
    let counts: Vec<(&str, usize)> = both
        .servers
        .iter()
        .map(|(server, skills)| (server.as_str(), skills.len()))
        .collect();
    assert_eq!(counts, [("example", 0), ("docs", 1)]);
}
