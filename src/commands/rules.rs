//! `assertscope rules`: every known cause and lint rule, or one explained in full.

use crate::kb::KnowledgeBase;
use crate::lint::RuleDoc;
use crate::render::style::{ColorChoice, Palette};
use std::io::Write;

#[derive(Debug, clap::Args)]
#[command(
    after_help = "Examples:\n  assertscope rules\n  assertscope rules target-out-of-range\n  assertscope rules AS101"
)]
pub struct RulesArgs {
    /// A cause id (target-out-of-range), or a lint rule's code (AS101) or name
    pub id: Option<String>,
    /// Print JSON
    #[arg(long)]
    pub json: bool,
    /// When to use colours
    #[arg(long, value_enum, default_value_t)]
    pub color: ColorChoice,
}

pub fn execute(args: RulesArgs) -> anyhow::Result<u8> {
    let kb = KnowledgeBase::get();
    let p = Palette::new(args.color.for_stdout());
    let rules = crate::lint::rule_docs();
    let out = match args.id.as_deref() {
        None => index(kb, &rules, args.json, &p)?,
        Some(id) => page(kb, &rules, id, args.json, &p)?,
    };
    let mut stdout = std::io::stdout().lock();
    match stdout.write_all(out.as_bytes()) {
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => {}
        other => other?,
    }
    Ok(crate::exit::OK)
}

/// Every cause and lint rule, one line each (or as JSON).
fn index(kb: &KnowledgeBase, rules: &[RuleDoc], json: bool, p: &Palette) -> anyhow::Result<String> {
    if json {
        let causes: Vec<_> = kb
            .causes
            .iter()
            .map(|c| serde_json::json!({"id": c.id, "title": c.title, "checklist_step": c.checklist_step()}))
            .collect();
        let lint: Vec<_> = rules
            .iter()
            .map(|r| serde_json::json!({"code": r.code, "name": r.name, "summary": r.summary, "cause": r.cause}))
            .collect();
        return Ok(
            serde_json::to_string_pretty(&serde_json::json!({"causes": causes, "lint_rules": lint}))? + "\n"
        );
    }
    let mut out = format!("{}causes{} (assertscope rules ID explains one)\n", p.bold, p.reset);
    let width = kb.causes.iter().map(|c| c.id.len()).max().unwrap_or(0);
    for c in &kb.causes {
        out.push_str(&format!("  {:width$}  {}\n", c.id, c.title));
    }
    if !rules.is_empty() {
        out.push_str(&format!("\n{}lint rules{} (assertscope lint)\n", p.bold, p.reset));
        let width = rules.iter().map(|r| r.name.len()).max().unwrap_or(0);
        for r in rules {
            out.push_str(&format!("  {}  {:width$}  {}\n", r.code, r.name, r.summary));
        }
    }
    Ok(out)
}

/// One cause's page or one lint rule's (or as JSON).
fn page(kb: &KnowledgeBase, rules: &[RuleDoc], id: &str, json: bool, p: &Palette) -> anyhow::Result<String> {
    // A cause id names the cause page (what every report's `more:` line points to);
    // a lint rule goes by its code or its name, which may be a cause id too.
    let rule = rules.iter().find(|r| r.code.eq_ignore_ascii_case(id) || r.name == id);
    let out = match (kb.cause(id), rule) {
        (Some(c), rule) => {
            let also = rule.map(|r| r.code);
            if json {
                let mut page = serde_json::json!({
                    "id": c.id, "title": c.title, "explanation": c.explanation_and_sources(None), "fix": c.fix,
                    "example": c.example, "checklist_step": c.checklist_step(),
                });
                if let Some(code) = also {
                    page["lint_rule"] = code.into();
                }
                serde_json::to_string_pretty(&page)? + "\n"
            } else {
                let mut out = crate::render::human::explain_cause(kb, id, p).expect("the cause exists");
                if let Some(code) = also {
                    out.push_str(&format!(
                        "\n{}note{}: `{id}` is also the name of lint rule {code} (`assertscope rules {code}`)\n",
                        p.note, p.reset
                    ));
                }
                out
            }
        }
        (None, Some(rule)) if json => {
            serde_json::to_string_pretty(&serde_json::json!({
                "code": rule.code, "name": rule.name, "summary": rule.summary,
                "what_it_does": rule.what_it_does, "why_it_matters": rule.why_it_matters,
                "example": rule.example, "fix": rule.fix, "cause": rule.cause,
            }))? + "\n"
        }
        (None, Some(rule)) => crate::lint_render::rule_page(rule, p),
        (None, None) => {
            let mut known: Vec<&str> = kb.causes.iter().map(|c| c.id.as_str()).collect();
            known.extend(rules.iter().map(|r| r.code));
            anyhow::bail!("no cause or lint rule named {id:?}; known: {}", known.join(", "));
        }
    };
    Ok(out)
}
