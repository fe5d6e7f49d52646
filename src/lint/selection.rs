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
            let mut out = Vec::new();
            for item in list.iter().flat_map(|s| s.split(',')) {
                let item = item.trim().to_ascii_uppercase();
                if item.is_empty() {
                    continue;
                }
                if item != "ALL" && !rules::ALL.iter().any(|r| r.doc.code.starts_with(&item)) {
                    anyhow::bail!(
                        "`{item}` names no lint rule (codes are AS101..AS{}; `assertscope rules` lists them)",
                        rules::ALL.last().map_or("", |r| &r.doc.code[2..])
                    );
                }
                out.push(item);
            }
            Ok(out)
        };
        Ok(Selection { select: normalise(select)?, ignore: normalise(ignore)? })
    }

    pub fn selects(&self, code: &str) -> bool {
        let matches = |prefix: &String| prefix == "ALL" || code.starts_with(prefix.as_str());
        let selected = self.select.is_empty() || self.select.iter().any(matches);
        selected && !self.ignore.iter().any(matches)
    }
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
}
