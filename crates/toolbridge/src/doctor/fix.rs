//! [`Fix`]: what to do about a finding, as data. Its `Display` is the one
//! English sentence the CLI prints (a [`Finding`](super::Finding)'s `fix`);
//! serialized (a finding's `fixKind`) it is its `kind` and the values the
//! sentence is made of, so the settings page can say it in the reader's
//! language from its own strings (`doctor.fixes.KIND`, every kind in
//! [`Fix::KINDS`]).

use std::fmt;

use serde::Serialize;

use crate::deps::InstallPlan;

/// What to do about a finding.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(
    tag = "kind",
    rename_all = "camelCase",
    rename_all_fields = "camelCase"
)]
#[non_exhaustive]
pub enum Fix {
    /// Set an unset `${VAR}`, or give it a default.
    ExportVariable {
        /// The variable.
        var: String,
    },
    /// Set a preset's API key variable.
    ExportKey {
        /// The variable that holds the key.
        var: String,
    },
    /// Set a preset's API key variable; its documentation says how to get one.
    ExportKeyWithDocs {
        /// The variable that holds the key.
        var: String,
        /// The preset's documentation.
        url: String,
    },
    /// A preset's stdio server has no place for its key in `env`.
    AddKeyToEnv {
        /// The variable that holds the key.
        var: String,
    },
    /// A preset's remote server has no `Authorization` header for its key.
    AddKeyToHeaders {
        /// The variable that holds the key.
        var: String,
    },
    /// The key in `env` or `headers` expands to nothing; then `then`.
    EmptyKey {
        /// `env` or `headers`.
        place: String,
        /// How to set the key.
        then: Box<Fix>,
    },
    /// A value does not resolve.
    CorrectValue,
    /// The record does not resolve at all.
    CorrectEntry,
    /// The command is a file without an execute bit.
    MakeExecutable {
        /// The command, expanded.
        command: String,
    },
    /// Install the missing command with the plan's best method.
    Install {
        /// What to install (`Node.js`).
        software: String,
        /// The command line that installs it here.
        line: String,
        /// Its download page.
        url: String,
        /// The server sets its own `PATH` in `env`: the command must be on it.
        own_path: bool,
    },
    /// Install the missing command from its download page.
    InstallFrom {
        /// What to install.
        software: String,
        /// Its download page.
        url: String,
        /// The server sets its own `PATH` in `env`.
        own_path: bool,
    },
    /// Install a command toolbridge has no plan for.
    InstallCommand {
        /// The command, expanded.
        command: String,
        /// The server sets its own `PATH` in `env`.
        own_path: bool,
    },
    /// A remote server does not answer.
    CheckUrlReachable,
    /// A tool hides invisible characters.
    HiddenCharacters {
        /// The server.
        server: String,
    },
    /// A stdio server did not start in time.
    StartTimeoutStdio,
    /// A remote server did not start in time.
    StartTimeoutRemote,
    /// A TLS certificate was not trusted.
    Certificate,
    /// An OAuth server wants its user to sign in.
    SignIn {
        /// The server.
        server: String,
    },
    /// A remote server answered 401 or 403.
    CheckToken,
    /// A remote server answered 404.
    CheckEndpointPath,
    /// A remote server answered another HTTP error.
    CheckUrlAndLogs,
    /// The stdio command could not be run.
    CheckProgram {
        /// The command as configured.
        command: String,
    },
    /// A folder an argument names does not exist.
    CreateFolder {
        /// The folder, as written.
        folder: String,
    },
    /// Several folders the arguments name do not exist.
    CreateFolders {
        /// The folders, as written, joined by ", ".
        folders: String,
    },
    /// The server stopped; its stderr says why.
    ReadStderr,
    /// The server stopped and said nothing.
    RunYourself,
}

impl Fix {
    /// Every kind, as serialized (`kind`): the page has a sentence for each.
    pub const KINDS: &'static [&'static str] = &[
        "exportVariable",
        "exportKey",
        "exportKeyWithDocs",
        "addKeyToEnv",
        "addKeyToHeaders",
        "emptyKey",
        "correctValue",
        "correctEntry",
        "makeExecutable",
        "install",
        "installFrom",
        "installCommand",
        "checkUrlReachable",
        "hiddenCharacters",
        "startTimeoutStdio",
        "startTimeoutRemote",
        "certificate",
        "signIn",
        "checkToken",
        "checkEndpointPath",
        "checkUrlAndLogs",
        "checkProgram",
        "createFolder",
        "createFolders",
        "readStderr",
        "runYourself",
    ];

    /// How to install a missing `command` (`plan`, when toolbridge has
    /// one); `own_path`: the server sets its own `PATH` in `env`.
    pub fn install(command: &str, plan: Option<&InstallPlan>, own_path: bool) -> Fix {
        match plan {
            Some(plan) => match plan.methods.first() {
                Some(method) => Fix::Install {
                    software: plan.software.to_owned(),
                    line: method.display(),
                    url: plan.download_url.to_owned(),
                    own_path,
                },
                None => Fix::InstallFrom {
                    software: plan.software.to_owned(),
                    url: plan.download_url.to_owned(),
                    own_path,
                },
            },
            None => Fix::InstallCommand {
                command: command.to_owned(),
                own_path,
            },
        }
    }

    /// The folders an argument names that are missing (at least one).
    pub fn create_folders(missing: &[String]) -> Fix {
        match missing {
            [one] => Fix::CreateFolder {
                folder: one.clone(),
            },
            many => Fix::CreateFolders {
                folders: many.join(", "),
            },
        }
    }
}

/// The note an install fix ends with when the server sets its own `PATH`.
const OWN_PATH: &str = " (this server sets its own PATH in env; the command must be on that one)";

/// What to do when a TLS certificate was not trusted: the trust-store
/// variables stdio servers inherit (see `transport::stdio::INHERITED_ENV`),
/// which toolbridge's own HTTPS client reads too.
const CERTIFICATE: &str = "a TLS certificate was not trusted (a TLS-intercepting proxy or a \
     private CA?): export SSL_CERT_FILE=/path/to/ca-bundle.pem before running toolbridge, and \
     NODE_EXTRA_CA_CERTS (Node servers) or REQUESTS_CA_BUNDLE (Python servers) to the same \
     file; stdio servers inherit them, as they do HTTPS_PROXY and NO_PROXY";

impl fmt::Display for Fix {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let note = |own_path: &bool| if *own_path { OWN_PATH } else { "" };
        match self {
            Fix::ExportVariable { var } => write!(
                f,
                "export {var}=... before starting toolbridge, or write ${{{var}:-default}} \
                 in the config"
            ),
            Fix::ExportKey { var } => write!(f, "export {var}=<your key>"),
            Fix::ExportKeyWithDocs { var, url } => {
                write!(f, "export {var}=<your key> (how to get one: {url})")
            }
            Fix::AddKeyToEnv { var } => write!(
                f,
                "add \"{var}\": \"${{{var}}}\" to the server's env and export {var}"
            ),
            Fix::AddKeyToHeaders { var } => write!(
                f,
                "add \"Authorization\": \"Bearer ${{{var}}}\" to the server's headers and \
                 export {var}"
            ),
            Fix::EmptyKey { place, then } => {
                write!(f, "the key in the server's {place} is empty; {then}")
            }
            Fix::CorrectValue => f.write_str("correct that value in the config file"),
            Fix::CorrectEntry => f.write_str("correct its entry in the config file"),
            Fix::MakeExecutable { command } => write!(
                f,
                "make it executable (chmod +x {command}), or correct \"command\""
            ),
            Fix::Install {
                software,
                line,
                url,
                own_path,
            } => write!(
                f,
                "install {software}: `{line}`{} (or see {url})",
                note(own_path)
            ),
            Fix::InstallFrom {
                software,
                url,
                own_path,
            } => write!(f, "install {software} from {url}{}", note(own_path)),
            Fix::InstallCommand { command, own_path } => write!(
                f,
                "install \"{command}\" or put its directory on PATH{}",
                note(own_path)
            ),
            Fix::CheckUrlReachable => {
                f.write_str("check the URL, and that the server is running and reachable from here")
            }
            Fix::HiddenCharacters { server } => write!(
                f,
                "they are removed from what providers are sent; read the definition with \
                 `toolbridge tools --check --server {server}` and ask the server's author why \
                 it has them, or remove the server"
            ),
            Fix::StartTimeoutStdio | Fix::StartTimeoutRemote => {
                let check = if matches!(self, Fix::StartTimeoutStdio) {
                    "that the command runs an MCP server on stdio (not a prompt or a web server)"
                } else {
                    "that the URL is the server's MCP endpoint"
                };
                write!(
                    f,
                    "if it is only slow to start (a first npx or uvx download), set \
                     \"startupTimeout\" in its config or run `toolbridge doctor --start-timeout \
                     120`; otherwise check {check}"
                )
            }
            Fix::Certificate => f.write_str(CERTIFICATE),
            Fix::SignIn { server } => write!(f, "sign in: run `toolbridge auth login {server}`"),
            Fix::CheckToken => f.write_str(
                "check the token: the Authorization value in the server's \"headers\" (or the \
                 variable it comes from) is missing, expired or wrong",
            ),
            Fix::CheckEndpointPath => f.write_str(
                "check the URL: the server answers, but has no MCP endpoint at this path (often \
                 /mcp, or /sse for legacy servers)",
            ),
            Fix::CheckUrlAndLogs => f.write_str(
                "check the URL, and the server's own logs for the error it answered with",
            ),
            Fix::CheckProgram { command } => {
                write!(f, "check that \"{command}\" is a program this user can run")
            }
            Fix::CreateFolder { folder } => write!(
                f,
                "create the folder {folder}, or correct the path in the server's \"args\""
            ),
            Fix::CreateFolders { folders } => write!(
                f,
                "create the folders {folders}, or correct the path in the server's \"args\""
            ),
            Fix::ReadStderr => f.write_str(
                "its stderr (below) says why it stopped (often a missing API key in \"env\", a \
                 missing folder or a wrong argument); correct that in the config",
            ),
            Fix::RunYourself => {
                f.write_str("run the command yourself to see why it stops, and correct the config")
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One of each kind (the match fails to compile when a kind is added
    /// without an example here).
    fn examples() -> Vec<Fix> {
        let s = |t: &str| t.to_owned();
        let all = vec![
            Fix::ExportVariable { var: s("V") },
            Fix::ExportKey { var: s("V") },
            Fix::ExportKeyWithDocs {
                var: s("V"),
                url: s("u"),
            },
            Fix::AddKeyToEnv { var: s("V") },
            Fix::AddKeyToHeaders { var: s("V") },
            Fix::EmptyKey {
                place: s("env"),
                then: Box::new(Fix::ExportKey { var: s("V") }),
            },
            Fix::CorrectValue,
            Fix::CorrectEntry,
            Fix::MakeExecutable { command: s("c") },
            Fix::Install {
                software: s("s"),
                line: s("l"),
                url: s("u"),
                own_path: false,
            },
            Fix::InstallFrom {
                software: s("s"),
                url: s("u"),
                own_path: true,
            },
            Fix::InstallCommand {
                command: s("c"),
                own_path: false,
            },
            Fix::CheckUrlReachable,
            Fix::HiddenCharacters { server: s("x") },
            Fix::StartTimeoutStdio,
            Fix::StartTimeoutRemote,
            Fix::Certificate,
            Fix::SignIn { server: s("x") },
            Fix::CheckToken,
            Fix::CheckEndpointPath,
            Fix::CheckUrlAndLogs,
            Fix::CheckProgram { command: s("c") },
            Fix::CreateFolder { folder: s("f") },
            Fix::CreateFolders { folders: s("f, g") },
            Fix::ReadStderr,
            Fix::RunYourself,
        ];
        for fix in &all {
            match fix {
                Fix::ExportVariable { .. }
                | Fix::ExportKey { .. }
                | Fix::ExportKeyWithDocs { .. }
                | Fix::AddKeyToEnv { .. }
                | Fix::AddKeyToHeaders { .. }
                | Fix::EmptyKey { .. }
                | Fix::CorrectValue
                | Fix::CorrectEntry
                | Fix::MakeExecutable { .. }
                | Fix::Install { .. }
                | Fix::InstallFrom { .. }
                | Fix::InstallCommand { .. }
                | Fix::CheckUrlReachable
                | Fix::HiddenCharacters { .. }
                | Fix::StartTimeoutStdio
                | Fix::StartTimeoutRemote
                | Fix::Certificate
                | Fix::SignIn { .. }
                | Fix::CheckToken
                | Fix::CheckEndpointPath
                | Fix::CheckUrlAndLogs
                | Fix::CheckProgram { .. }
                | Fix::CreateFolder { .. }
                | Fix::CreateFolders { .. }
                | Fix::ReadStderr
                | Fix::RunYourself => {}
            }
        }
        all
    }

    #[test]
    fn kinds_lists_every_kind_as_serialized_once() {
        let serialized: Vec<String> = examples()
            .iter()
            .map(|fix| {
                serde_json::to_value(fix).unwrap()["kind"]
                    .as_str()
                    .unwrap()
                    .to_owned()
            })
            .collect();
        assert_eq!(
            serialized,
            Fix::KINDS,
            "Fix::KINDS is not every kind in order"
        );
    }

    #[test]
    fn a_fix_serializes_the_values_its_sentence_is_made_of() {
        let fix = Fix::EmptyKey {
            place: "headers".into(),
            then: Box::new(Fix::ExportKeyWithDocs {
                var: "K".into(),
                url: "https://example.com/keys".into(),
            }),
        };
        assert_eq!(
            serde_json::to_value(&fix).unwrap(),
            serde_json::json!({"kind": "emptyKey", "place": "headers", "then":
                {"kind": "exportKeyWithDocs", "var": "K", "url": "https://example.com/keys"}})
        );
        assert_eq!(
            fix.to_string(),
            "the key in the server's headers is empty; export K=<your key> (how to get one: \
             https://example.com/keys)"
        );
    }
}
