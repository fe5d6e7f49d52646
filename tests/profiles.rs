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
