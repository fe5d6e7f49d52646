//! The `dist` profile, which published wheels and benchmarks are built with, optimises every
//! crate fully. A crate the release profile names at a lower level keeps that level in
//! `dist` unless `dist` names it too: Cargo ranks a named crate's line above `"*"`.

#[test]
fn dist_raises_every_crate_the_release_profile_lowers() {
    let manifest: toml::Table = toml::from_str(include_str!("../Cargo.toml")).expect("Cargo.toml parses");
    let profiles = manifest["profile"].as_table().expect("[profile] tables");
    let named = |profile: &str| -> toml::Table {
        profiles[profile].get("package").and_then(|p| p.as_table()).cloned().unwrap_or_default()
    };
    let level = |settings: Option<&toml::Value>| settings.and_then(|s| s.get("opt-level")).cloned();
    let full = toml::Value::Integer(3);

    assert_eq!(level(profiles.get("dist")), Some(full.clone()), "[profile.dist] opt-level");
    let dist = named("dist");
    assert_eq!(level(dist.get("*")), Some(full.clone()), "[profile.dist.package.\"*\"] opt-level");
    let lowered: Vec<String> = named("release")
        .iter()
        .filter(|(_, settings)| level(Some(settings)).is_some_and(|l| l != full))
        .map(|(name, _)| name.clone())
        .collect();
    assert!(!lowered.is_empty(), "the release profile lowers no crate: this test reads the wrong tables");
    let left_lower: Vec<&String> =
        lowered.iter().filter(|name| level(dist.get(name.as_str())) != Some(full.clone())).collect();
    assert!(
        left_lower.is_empty(),
        "[profile.dist] must set opt-level = 3 for {left_lower:?}, which the release profile builds lower"
    );
}

/// The release binary is stripped (the README says so): Cargo takes the link's `strip` from
/// the binary's own package table when a profile has one, and without a `strip` line there
/// it strips only the debug info (measured: 16.4 MB with the symbol table, 12.6 MB without).
#[test]
fn a_profile_that_strips_repeats_it_in_the_binarys_own_table() {
    let manifest: toml::Table = toml::from_str(include_str!("../Cargo.toml")).expect("Cargo.toml parses");
    let profiles = manifest["profile"].as_table().expect("[profile] tables");
    let strips_itself = |name: &str| {
        profiles[name].get("strip").is_some_and(|s| s.as_bool() == Some(true) || s.as_str() == Some("symbols"))
    };
    let strips = |name: &str| {
        strips_itself(name)
            || profiles[name].get("inherits").and_then(|i| i.as_str()).is_some_and(|i| strips_itself(i))
    };
    assert!(strips("release"), "the release profile is meant to strip");
    for (name, profile) in profiles {
        let own = profile.get("package").and_then(|p| p.get("assertscope"));
        if let (true, Some(own)) = (strips(name), own) {
            assert_eq!(own.get("strip"), Some(&toml::Value::Boolean(true)), "[profile.{name}.package.assertscope] strip");
        }
    }
}
