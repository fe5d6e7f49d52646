//! `--select` / `--ignore`: rule codes or their prefixes (`AS1`, `AS10`, `AS105`, `ALL`).

use super::rules;

#[derive(Debug, Clone, Default)]
pub struct Selection {
    select: Vec<String>,
    ignore: Vec<String>,
}

impl Selection {
    /// Every rule.
    pub fn all() -> Selection {
        Selection::default()
    }

    /// Checks each selector names at least one rule, so a typo is an error, not silence.
    pub fn new(select: &[String], ignore: &[String]) -> anyhow::Result<Selection> {
        let normalise = |list: &[String]| -> anyhow::Result<Vec<String>> {
            list.iter()
                .flat_map(|s| s.split(','))
                .filter(|item| !item.trim().is_empty())
                .map(normalise_code)
                .collect()
        };
        Ok(Selection { select: normalise(select)?, ignore: normalise(ignore)? })
    }

    /// The selection a configuration and the command line make together, as ruff resolves
    /// them: `--select` on the command line starts afresh (the configuration's `select` and
    /// `ignore` no longer apply), and `--ignore` always removes.
    pub fn layered(config: &Selection, command_line: &Selection) -> Selection {
        if command_line.select.is_empty() {
            let mut ignore = config.ignore.clone();
            ignore.extend(command_line.ignore.iter().cloned());
            Selection { select: config.select.clone(), ignore }
        } else {
            command_line.clone()
        }
    }

    /// This selection less `codes` (already checked), for one file's `per-file-ignores`.
    pub fn ignoring(&self, codes: &[String]) -> Selection {
        let mut narrowed = self.clone();
        narrowed.ignore.extend(codes.iter().cloned());
        narrowed
    }

    pub fn selects(&self, code: &str) -> bool {
        let matches = |prefix: &String| prefix == "ALL" || code.starts_with(prefix.as_str());
        let selected = self.select.is_empty() || self.select.iter().any(matches);
        selected && !self.ignore.iter().any(matches)
    }
}

/// One selector, upper-cased, if it names at least one rule (or is `ALL`).
pub fn normalise_code(item: &str) -> anyhow::Result<String> {
    let item = item.trim().to_ascii_uppercase();
    if item != "ALL" && !rules::ALL.iter().any(|r| r.doc.code.starts_with(&item)) {
        anyhow::bail!(
            "`{item}` names no lint rule (codes are AS101..AS{}; `assertscope rules` lists them)",
            rules::ALL.last().map_or("", |r| &r.doc.code[2..])
        );
    }
    Ok(item)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prefixes_select_and_ignore() {
        let s = Selection::new(&["AS1".into()], &["AS105".into()]).unwrap();
        assert!(s.selects("AS101"));
        assert!(!s.selects("AS105"));
        let s = Selection::new(&["as101,AS102".into()], &[]).unwrap();
        assert!(s.selects("AS102") && !s.selects("AS103"));
        assert!(Selection::new(&["AS9".into()], &[]).is_err());
        assert!(Selection::new(&["E501".into()], &[]).is_err());
    }

    #[test]
    fn the_command_line_layers_over_the_configuration_as_in_ruff() {
        let config = Selection::new(&["AS10".into()], &["AS101".into()]).unwrap();
        let none = Selection::all();
        let layered = Selection::layered(&config, &none);
        assert!(!layered.selects("AS101") && layered.selects("AS102") && !layered.selects("AS111"));
        let ignore_more = Selection::new(&[], &["AS102".into()]).unwrap();
        let layered = Selection::layered(&config, &ignore_more);
        assert!(!layered.selects("AS102") && layered.selects("AS103"));
        let select_anew = Selection::new(&["AS101".into()], &[]).unwrap();
        let layered = Selection::layered(&config, &select_anew);
        assert!(layered.selects("AS101") && !layered.selects("AS102"));
        assert!(!layered.ignoring(&["AS1".into()]).selects("AS101"));
    }
}
