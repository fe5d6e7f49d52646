//! The `dist` profile, which published wheels and benchmarks are built with, optimises every
//! crate fully. A profile inherits its parent's per-crate lines, and Cargo ranks a named
//! crate's line above `"*"` and both above the profile's own level: a crate the release
//! profile builds lower must not reach `dist` at that level through inheritance.

/// The opt-level Cargo builds `package` at in `profile`, following `inherits`.
fn effective_level(profiles: &toml::Table, profile: &str, package: &str) -> Option<toml::Value> {
    let level = |settings: Option<&toml::Value>| settings.and_then(|s| s.get("opt-level")).cloned();
    let mut chain = vec![profile.to_string()];
    while let Some(parent) =
        profiles.get(chain.last()?).and_then(|p| p.get("inherits")).and_then(|i| i.as_str())
    {
        chain.push(parent.to_string());
    }
    let per_package = |key: &str| {
        chain.iter().find_map(|name| {
            level(profiles.get(name).and_then(|p| p.get("package")).and_then(|p| p.get(key)))
        })
    };
    per_package(package)
        .or_else(|| per_package("*"))
        .or_else(|| chain.iter().find_map(|name| level(profiles.get(name))))
}

#[test]
fn dist_builds_every_crate_fully_optimised() {
    let manifest: toml::Table = toml::from_str(include_str!("../Cargo.toml")).expect("Cargo.toml parses");
    let profiles = manifest["profile"].as_table().expect("[profile] tables");
    let full = Some(toml::Value::Integer(3));
    let release_named: Vec<String> = profiles["release"]
        .get("package")
        .and_then(|p| p.as_table())
        .map(|t| t.keys().cloned().collect())
        .unwrap_or_default();
    let lowered: Vec<&String> =
        release_named.iter().filter(|name| effective_level(profiles, "release", name) != full).collect();
    assert!(!lowered.is_empty(), "the release profile lowers no crate: this test reads the wrong tables");
    let mut not_full: Vec<&str> = release_named
        .iter()
        .map(String::as_str)
        .chain(["*", "some-crate-no-profile-names"])
        .filter(|name| effective_level(profiles, "dist", name) != full)
        .collect();
    not_full.dedup();
    assert!(not_full.is_empty(), "[profile.dist] builds {not_full:?} below opt-level 3");
}

/// The release binary is stripped (the README says so): Cargo takes the link's `strip` from
/// the binary's own package table when a profile has one, and without a `strip` line there
/// it strips only the debug info (measured: 16.4 MB with the symbol table, 12.6 MB without).
#[test]
fn a_profile_that_strips_repeats_it_in_the_binarys_own_table() {
    let manifest: toml::Table = toml::from_str(include_str!("../Cargo.toml")).expect("Cargo.toml parses");
    let profiles = manifest["profile"].as_table().expect("[profile] tables");
    let strips_itself = |name: &str| {
        profiles[name]
            .get("strip")
            .is_some_and(|s| s.as_bool() == Some(true) || s.as_str() == Some("symbols"))
    };
    let strips = |name: &str| {
        strips_itself(name)
            || profiles[name].get("inherits").and_then(|i| i.as_str()).is_some_and(&strips_itself)
    };
    assert!(strips("release"), "the release profile is meant to strip");
    for (name, profile) in profiles {
        let own = profile.get("package").and_then(|p| p.get("assertscope"));
        if let (true, Some(own)) = (strips(name), own) {
            assert_eq!(
                own.get("strip"),
                Some(&toml::Value::Boolean(true)),
                "[profile.{name}.package.assertscope] strip"
            );
        }
    }
}
