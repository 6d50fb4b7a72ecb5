//! deploy/: the Kubernetes manifests are valid Kubernetes objects and agree
//! with the image deploy/Dockerfile builds.
//!
//! The validator is `kubernetes-validate` (PyPI, pinned in
//! scripts/setup-test-deps.sh into .deps/kube-validate), which carries the
//! Kubernetes API's JSON schemas, so the check runs offline. Its PyYAML also
//! turns the manifests into JSON for the cross-checks here: the image name,
//! port 8080, the `/healthz` probes, the Secret key, the ConfigMap at
//! /etc/toolbridge/config.json and the non-root, read-only-root pod.

use crate::common;

use std::{
    path::{Path, PathBuf},
    process::{Command, Output},
};

use common::{root, tempdir};
use serde_json::Value;
use toolbridge::config::Config;

/// The Kubernetes version the manifests are checked against.
const KUBERNETES: &str = "1.37.0";

fn kube_validate() -> PathBuf {
    let venv = root().join(".deps/kube-validate");
    assert!(
        venv.join("bin/kubernetes-validate").exists(),
        "kubernetes-validate is missing from {}: run scripts/setup-test-deps.sh \
         (the README's test command does)",
        venv.display()
    );
    venv
}

fn kubernetes_dir() -> PathBuf {
    root().join("deploy/kubernetes")
}

/// Every Kubernetes object in deploy/kubernetes (the kustomization is
/// kustomize's file, not an object the API server knows).
fn manifests() -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(kubernetes_dir())
        .expect("deploy/kubernetes")
        .map(|entry| entry.expect("a deploy/kubernetes entry").path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "yaml"))
        .filter(|path| !path.ends_with("kustomization.yaml"))
        .collect();
    files.sort();
    assert!(
        files.len() >= 4,
        "too few manifests in deploy/kubernetes: {files:?}"
    );
    files
}

fn validate(files: &[PathBuf]) -> Output {
    // Through the venv's python, not its `kubernetes-validate` script, whose
    // first line names the folder the venv was made in.
    Command::new(kube_validate().join("bin/python"))
        .args(["-m", "kubernetes_validate"])
        .args(["--strict", "--kubernetes-version", KUBERNETES])
        .args(files)
        .output()
        .expect("run kubernetes-validate")
}

fn text(output: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    )
}

/// The documents of a YAML file as JSON (PyYAML from the validator's venv).
fn yaml_documents(path: &Path) -> Vec<Value> {
    let output = Command::new(kube_validate().join("bin/python"))
        .args([
            "-c",
            "import json, sys, yaml\n\
             print(json.dumps([d for d in yaml.safe_load_all(open(sys.argv[1])) if d]))",
        ])
        .arg(path)
        .output()
        .expect("run python");
    assert!(
        output.status.success(),
        "{}: {}",
        path.display(),
        text(&output)
    );
    serde_json::from_slice(&output.stdout).expect("PyYAML's JSON")
}

/// Every object in deploy/kubernetes, found by kind and name.
struct Objects(Vec<Value>);

impl Objects {
    fn load() -> Objects {
        let mut all = Vec::new();
        for file in manifests() {
            all.extend(yaml_documents(&file));
        }
        all.extend(yaml_documents(&kubernetes_dir().join("kustomization.yaml")));
        Objects(all)
    }

    fn get(&self, kind: &str, name: &str) -> &Value {
        self.0
            .iter()
            .find(|o| o["kind"] == kind && o["metadata"]["name"] == name)
            .unwrap_or_else(|| panic!("no {kind} {name} in deploy/kubernetes"))
    }

    fn kustomization(&self) -> &Value {
        self.0
            .iter()
            .find(|o| o["kind"] == "Kustomization")
            .expect("deploy/kubernetes/kustomization.yaml")
    }
}

/// The lines of deploy/Dockerfile that start with `instruction ` (the
/// instruction's arguments).
fn dockerfile(instruction: &str) -> Vec<String> {
    let text =
        std::fs::read_to_string(root().join("deploy/Dockerfile")).expect("deploy/Dockerfile");
    text.lines()
        .filter_map(|line| line.strip_prefix(instruction)?.strip_prefix(' '))
        .map(|rest| rest.trim().to_owned())
        .collect()
}

/// The image deploy/Dockerfile's usage line builds (`docker build ... -t NAME .`).
fn image_name() -> String {
    let text =
        std::fs::read_to_string(root().join("deploy/Dockerfile")).expect("deploy/Dockerfile");
    let line = text
        .lines()
        .find(|line| line.contains("docker build"))
        .expect("a `docker build` line in deploy/Dockerfile");
    let mut words = line.split_whitespace().skip_while(|w| *w != "-t");
    words
        .nth(1)
        .expect("`-t NAME` on deploy/Dockerfile's build line")
        .to_owned()
}

/// The value the Dockerfile's `ENV` sets for `name`.
fn dockerfile_env(name: &str) -> String {
    let text =
        std::fs::read_to_string(root().join("deploy/Dockerfile")).expect("deploy/Dockerfile");
    text.lines()
        .filter(|line| !line.trim_start().starts_with('#'))
        .flat_map(str::split_whitespace)
        .find_map(|word| word.strip_prefix(name)?.strip_prefix('='))
        .unwrap_or_else(|| panic!("deploy/Dockerfile sets no {name}"))
        .to_owned()
}

#[test]
fn every_manifest_is_a_valid_kubernetes_object_with_no_unknown_field() {
    let files = manifests();
    let output = validate(&files);
    let report = text(&output);
    assert!(
        output.status.success(),
        "kubernetes-validate {KUBERNETES}:\n{report}"
    );
    assert!(
        !report.contains("WARN") && !report.contains("ERROR"),
        "kubernetes-validate {KUBERNETES}:\n{report}"
    );
    let objects: usize = files.iter().map(|f| yaml_documents(f).len()).sum();
    assert_eq!(
        report.matches(" passed for resource ").count(),
        objects,
        "every object must be checked against a schema:\n{report}"
    );
}

/// The check above can fail: a misspelt field (which Kubernetes would drop
/// silently, leaving the root filesystem writable) and a wrong type.
#[test]
fn the_validator_rejects_a_misspelt_field_and_a_wrong_type() {
    let deployment =
        std::fs::read_to_string(kubernetes_dir().join("deployment.yaml")).expect("deployment.yaml");
    let dir = tempdir();
    for (bad, from, to) in [
        (
            "readOnlyRootFileSystem",
            "readOnlyRootFilesystem: true",
            "readOnlyRootFileSystem: true",
        ),
        (
            "containerPort",
            "containerPort: 8080",
            "containerPort: [8080]",
        ),
    ] {
        assert!(deployment.contains(from), "deployment.yaml has no `{from}`");
        let broken = dir.path().join(format!("{bad}.yaml"));
        std::fs::write(&broken, deployment.replace(from, to)).expect("write");
        let output = validate(&[broken]);
        let report = text(&output);
        assert!(!output.status.success(), "{bad}: accepted:\n{report}");
        assert!(report.contains(bad), "{bad}: not named:\n{report}");
    }
}

#[test]
fn the_deployment_runs_the_image_as_the_dockerfile_builds_it() {
    let objects = Objects::load();
    let deployment = objects.get("Deployment", "toolbridge");
    let pod = &deployment["spec"]["template"]["spec"];
    let containers = pod["containers"].as_array().expect("containers");
    assert_eq!(containers.len(), 1);
    let container = &containers[0];

    // The image and its port.
    let image = container["image"].as_str().expect("image");
    assert_eq!(
        image.split(':').next(),
        Some(image_name().as_str()),
        "image {image}"
    );
    assert_eq!(dockerfile("EXPOSE"), ["8080"]);
    let ports = container["ports"].as_array().expect("ports");
    assert_eq!(ports.len(), 1);
    assert_eq!(ports[0]["containerPort"], 8080);
    let port_name = ports[0]["name"].as_str().expect("a named port");
    let args: Vec<&str> = container["args"]
        .as_array()
        .expect("args")
        .iter()
        .map(|a| a.as_str().expect("an arg"))
        .collect();
    assert_eq!(args, ["serve", "--listen", "0.0.0.0:8080"]);

    // Probes on /healthz (which needs no token) at that port.
    for probe in ["readinessProbe", "livenessProbe"] {
        let get = &container[probe]["httpGet"];
        assert_eq!(get["path"], "/healthz", "{probe}");
        assert!(
            get["port"] == port_name || get["port"] == 8080,
            "{probe}: {get}"
        );
    }

    // The token from the Secret, under the key the Secret has.
    let token = container["env"]
        .as_array()
        .expect("env")
        .iter()
        .find(|e| e["name"] == "TOOLBRIDGE_GATEWAY_TOKEN")
        .expect("TOOLBRIDGE_GATEWAY_TOKEN in the Deployment's env");
    let key_ref = &token["valueFrom"]["secretKeyRef"];
    let secret = objects.get("Secret", key_ref["name"].as_str().expect("secret name"));
    let key = key_ref["key"].as_str().expect("secret key");
    assert!(
        secret["stringData"].get(key).is_some(),
        "the Secret has no key {key}"
    );

    // The ConfigMap kustomize makes from config.json, mounted as the folder
    // /etc/toolbridge: /etc/toolbridge/config.json, the default config
    // location under the image's XDG_CONFIG_HOME.
    assert_eq!(dockerfile_env("XDG_CONFIG_HOME"), "/etc");
    let mounts = container["volumeMounts"].as_array().expect("volumeMounts");
    let volumes = pod["volumes"].as_array().expect("volumes");
    let mount = |path: &str| {
        let mount = mounts
            .iter()
            .find(|m| m["mountPath"] == path)
            .unwrap_or_else(|| panic!("nothing mounted at {path}"));
        volumes
            .iter()
            .find(|v| v["name"] == mount["name"])
            .unwrap_or_else(|| panic!("no volume {}", mount["name"]))
    };
    let config_map = mount("/etc/toolbridge")["configMap"]["name"].clone();
    let generated = objects.kustomization()["configMapGenerator"]
        .as_array()
        .expect("configMapGenerator")
        .iter()
        .find(|g| g["name"] == config_map)
        .unwrap_or_else(|| panic!("the kustomization makes no ConfigMap {config_map}"));
    assert_eq!(generated["files"][0], "config.json");
    assert_eq!(
        generated["options"]["disableNameSuffixHash"], true,
        "a fixed name: edits reach running pods"
    );
    let config =
        Config::load(&kubernetes_dir().join("config.json")).expect("deploy/kubernetes/config.json");
    assert!(config.warnings().is_empty(), "{:?}", config.warnings());
    assert!(!config.server_names().is_empty());

    // Non-root as the image's user, read-only root, the writable places
    // (HOME for caches and sign-in tokens, /tmp) on emptyDirs.
    let user = dockerfile("USER");
    assert_eq!(user, ["10001:10001"]);
    let security = &pod["securityContext"];
    assert_eq!(security["runAsNonRoot"], true);
    assert_eq!(security["runAsUser"], 10001);
    assert_eq!(security["runAsGroup"], 10001);
    let container_security = &container["securityContext"];
    assert_eq!(container_security["readOnlyRootFilesystem"], true);
    assert_eq!(container_security["allowPrivilegeEscalation"], false);
    assert_eq!(container_security["capabilities"]["drop"][0], "ALL");
    for writable in [dockerfile_env("HOME"), "/tmp".to_owned()] {
        assert!(
            mount(&writable).get("emptyDir").is_some(),
            "{writable} is not an emptyDir"
        );
    }
    assert!(
        dockerfile_env("XDG_CACHE_HOME").starts_with(&format!("{}/", dockerfile_env("HOME"))),
        "the cache must be under the writable HOME"
    );
}

#[test]
fn the_services_and_haproxy_reach_the_gateway_pods() {
    let objects = Objects::load();
    let kustomization = objects.kustomization();
    let resources: Vec<&str> = kustomization["resources"]
        .as_array()
        .expect("resources")
        .iter()
        .map(|r| r.as_str().expect("a resource"))
        .collect();
    for resource in &resources {
        assert!(
            kubernetes_dir().join(resource).exists(),
            "the kustomization lists a missing {resource}"
        );
    }
    assert!(
        !resources.contains(&"secret.yaml"),
        "the placeholder token must not be applied"
    );

    let pod_labels = |deployment: &str| {
        objects.get("Deployment", deployment)["spec"]["template"]["metadata"]["labels"].clone()
    };
    let replicas = objects.get("Service", "toolbridge-replicas");
    assert_eq!(
        replicas["spec"]["clusterIP"], "None",
        "headless: one DNS record per pod"
    );
    assert_eq!(replicas["spec"]["selector"], pod_labels("toolbridge"));
    assert_eq!(replicas["spec"]["ports"][0]["port"], 8080);
    let front = objects.get("Service", "toolbridge");
    assert_eq!(front["spec"]["selector"], pod_labels("toolbridge-haproxy"));
    assert_eq!(front["spec"]["ports"][0]["port"], 8080);

    let haproxy =
        std::fs::read_to_string(kubernetes_dir().join("haproxy.cfg")).expect("haproxy.cfg");
    let namespace = kustomization["namespace"].as_str().expect("namespace");
    let target = format!("toolbridge-replicas.{namespace}.svc.cluster.local:8080");
    assert!(
        haproxy.contains(&target),
        "haproxy.cfg does not name {target}"
    );
    assert!(
        haproxy.contains("uri /healthz"),
        "haproxy.cfg checks no /healthz"
    );
    let haproxy_pod = &objects.get("Deployment", "toolbridge-haproxy")["spec"]["template"]["spec"];
    let generated = &objects.kustomization()["configMapGenerator"];
    let haproxy_config = haproxy_pod["volumes"][0]["configMap"]["name"].clone();
    assert!(
        generated
            .as_array()
            .expect("configMapGenerator")
            .iter()
            .any(|g| g["name"] == haproxy_config && g["files"][0] == "haproxy.cfg"),
        "HAProxy mounts {haproxy_config}, which the kustomization does not make from haproxy.cfg"
    );
}
