//! `[tool.assertscope.lint]` of a pyproject.toml, read strictly: every key and rule code is
//! checked, and anything unknown is one line naming the file and the key.

use crate::selection;
use std::path::Path;

/// The lint options of one configuration file, as written.
#[derive(Debug, Default, Clone)]
pub struct LintOptions {
    /// Rules to check (codes or prefixes); `None`: every rule.
    pub select: Option<Vec<String>>,
    pub ignore: Vec<String>,
    /// `(glob, codes)` in file order.
    pub per_file_ignores: Vec<(String, Vec<String>)>,
    /// Replaces the default exclusions when given.
    pub exclude: Option<Vec<String>>,
    pub extend_exclude: Vec<String>,
}

/// The keys `[tool.assertscope.lint]` knows, as people write them.
pub const LINT_KEYS: &[&str] = &["select", "ignore", "per-file-ignores", "exclude", "extend-exclude"];

/// Reads `path`: `Ok(None)` when it has no `[tool.assertscope]` table (ruff likewise skips a
/// pyproject.toml without `[tool.ruff]`), an error naming the file and key otherwise.
pub fn read(path: &Path) -> anyhow::Result<Option<LintOptions>> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| anyhow::anyhow!("{}: cannot read the configuration: {e}", path.display()))?;
    parse(path, &text)
}

/// Parses the text of `path` (named in errors).
pub fn parse(path: &Path, text: &str) -> anyhow::Result<Option<LintOptions>> {
    let fail = |what: String| anyhow::anyhow!("{}: {what}", path.display());
    let document: toml::Table = toml::from_str(text).map_err(|e| fail(toml_error(text, &e)))?;
    let Some(tool) = document.get("tool").and_then(|t| t.as_table()) else { return Ok(None) };
    let Some(ours) = tool.get("assertscope") else { return Ok(None) };
    let ours = ours.as_table().ok_or_else(|| fail("`tool.assertscope` must be a table".into()))?;
    for key in ours.keys() {
        if key != "lint" {
            return Err(fail(format!(
                "unknown key `tool.assertscope.{key}` (assertscope reads `tool.assertscope.lint`)"
            )));
        }
    }
    let Some(lint) = ours.get("lint") else { return Ok(Some(LintOptions::default())) };
    let lint = lint.as_table().ok_or_else(|| fail("`tool.assertscope.lint` must be a table".into()))?;
    let mut options = LintOptions::default();
    for (key, value) in lint {
        let name = format!("tool.assertscope.lint.{key}");
        let list_of = |value: &toml::Value| {
            strings(value).ok_or_else(|| fail(format!("`{name}` must be a list of strings")))
        };
        match key.as_str() {
            "select" => {
                options.select = Some(codes(&list_of(value)?).map_err(|e| fail(format!("`{name}`: {e}")))?)
            }
            "ignore" => {
                options.ignore = codes(&list_of(value)?).map_err(|e| fail(format!("`{name}`: {e}")))?
            }
            "exclude" => {
                options.exclude = Some(globs(&list_of(value)?).map_err(|e| fail(format!("`{name}`: {e}")))?)
            }
            "extend-exclude" => {
                options.extend_exclude =
                    globs(&list_of(value)?).map_err(|e| fail(format!("`{name}`: {e}")))?
            }
            "per-file-ignores" => {
                let table = value.as_table().ok_or_else(|| {
                    fail(format!("`{name}` must be a table of glob = [codes] (\"tests/*\" = [\"AS101\"])"))
                })?;
                for (glob, codes_value) in table {
                    let entry = format!("{name}.\"{glob}\"");
                    globs(std::slice::from_ref(glob)).map_err(|e| fail(format!("`{entry}`: {e}")))?;
                    let list = strings(codes_value)
                        .ok_or_else(|| fail(format!("`{entry}` must be a list of rule codes")))?;
                    let list = codes(&list).map_err(|e| fail(format!("`{entry}`: {e}")))?;
                    options.per_file_ignores.push((glob.clone(), list));
                }
            }
            _ => {
                return Err(fail(format!("unknown key `{name}` (the keys are {})", LINT_KEYS.join(", "))));
            }
        }
    }
    Ok(Some(options))
}

fn strings(value: &toml::Value) -> Option<Vec<String>> {
    value.as_array()?.iter().map(|v| v.as_str().map(str::to_string)).collect()
}

/// Checks each code names a rule, as `--select` does.
fn codes(list: &[String]) -> Result<Vec<String>, String> {
    list.iter().map(|code| selection::normalise_code(code).map_err(|e| e.to_string())).collect()
}

fn globs(list: &[String]) -> Result<Vec<String>, String> {
    for glob in list {
        globset::Glob::new(glob).map_err(|e| format!("`{glob}` is not a glob: {}", e.kind()))?;
    }
    Ok(list.to_vec())
}

/// A TOML error in one line, with the line it is on.
fn toml_error(text: &str, error: &toml::de::Error) -> String {
    let message = error.message().trim().replace('\n', "; ");
    match error.span() {
        Some(span) => {
            let line = text[..span.start.min(text.len())].matches('\n').count() + 1;
            format!("not valid TOML (line {line}): {message}")
        }
        None => format!("not valid TOML: {message}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_str(text: &str) -> anyhow::Result<Option<LintOptions>> {
        parse(Path::new("pyproject.toml"), text)
    }

    #[test]
    fn reads_every_key() {
        let options = parse_str(
            "[tool.assertscope.lint]\nselect = [\"AS1\"]\nignore = [\"as105\"]\nexclude = [\"gen\"]\n\
             extend-exclude = [\"vendor/*.py\"]\n[tool.assertscope.lint.per-file-ignores]\n\"tests/*\" = [\"AS101\"]\n",
        )
        .unwrap()
        .unwrap();
        assert_eq!(options.select, Some(vec!["AS1".to_string()]));
        assert_eq!(options.ignore, vec!["AS105"]);
        assert_eq!(options.exclude, Some(vec!["gen".to_string()]));
        assert_eq!(options.extend_exclude, vec!["vendor/*.py"]);
        assert_eq!(options.per_file_ignores, vec![("tests/*".to_string(), vec!["AS101".to_string()])]);
    }

    #[test]
    fn a_pyproject_without_our_table_is_not_a_configuration() {
        assert!(parse_str("[project]\nname = \"x\"\n[tool.ruff]\nline-length = 100\n").unwrap().is_none());
    }

    #[test]
    fn unknown_keys_and_codes_are_one_line_naming_file_and_key() {
        let error = |text: &str| parse_str(text).unwrap_err().to_string();
        let e = error("[tool.assertscope.lint]\nselct = [\"AS101\"]\n");
        assert!(e.starts_with("pyproject.toml: unknown key `tool.assertscope.lint.selct`"), "{e}");
        let e = error("[tool.assertscope.lint]\nignore = [\"E501\"]\n");
        assert!(
            e.starts_with("pyproject.toml: `tool.assertscope.lint.ignore`: `E501` names no lint rule"),
            "{e}"
        );
        let e = error("[tool.assertscope.lint.per-file-ignores]\n\"tests/*\" = [\"AS999\"]\n");
        assert!(e.contains("`tool.assertscope.lint.per-file-ignores.\"tests/*\"`: `AS999`"), "{e}");
        let e = error("[tool.assertscope.lint]\nselect = \"AS101\"\n");
        assert!(e.contains("`tool.assertscope.lint.select` must be a list of strings"), "{e}");
        let e = error("[tool.assertscope]\nlnit = {}\n");
        assert!(e.contains("unknown key `tool.assertscope.lnit`"), "{e}");
        let e = error("[tool.assertscope.lint\nselect = 1\n");
        assert!(e.starts_with("pyproject.toml: not valid TOML (line 1)"), "{e}");
        assert!(!e.contains('\n'), "{e}");
    }
}
