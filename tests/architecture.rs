//! ARCHITECTURE.md draws the workspace's crates and which uses which; `cargo metadata`
//! must show the same edges (normal dependencies between workspace members).

use std::collections::BTreeMap;
use std::process::Command;

/// `crate -> [crates]` from the ```` ```text crates ```` block of ARCHITECTURE.md.
fn drawn() -> BTreeMap<String, Vec<String>> {
    let text = include_str!("../ARCHITECTURE.md");
    let block = text.split("```text crates\n").nth(1).expect("ARCHITECTURE.md has a ```text crates block");
    let block = block.split("```").next().unwrap();
    block
        .lines()
        .filter(|line| !line.trim().is_empty())
        .map(|line| {
            let (from, to) = line.split_once("->").expect("each line is `crate -> crates`");
            let mut to: Vec<String> =
                to.split(',').map(str::trim).filter(|t| !t.is_empty()).map(String::from).collect();
            to.sort();
            (from.trim().to_string(), to)
        })
        .collect()
}

fn in_cargo_metadata() -> BTreeMap<String, Vec<String>> {
    let output = Command::new(env!("CARGO"))
        .args(["metadata", "--format-version", "1", "--no-deps", "--offline"])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("run cargo metadata");
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let metadata: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    let packages = metadata["packages"].as_array().unwrap();
    let members: Vec<&str> = packages.iter().map(|p| p["name"].as_str().unwrap()).collect();
    packages
        .iter()
        .map(|p| {
            let mut uses: Vec<String> = p["dependencies"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|d| d["kind"].is_null() && members.contains(&d["name"].as_str().unwrap()))
                .map(|d| d["name"].as_str().unwrap().to_string())
                .collect();
            uses.sort();
            (p["name"].as_str().unwrap().to_string(), uses)
        })
        .collect()
}

#[test]
fn the_crates_and_their_edges_are_as_architecture_md_draws_them() {
    assert_eq!(drawn(), in_cargo_metadata(), "ARCHITECTURE.md's crates block against cargo metadata");
}
