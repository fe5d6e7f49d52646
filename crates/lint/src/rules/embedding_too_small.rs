//! AS106: an embedding table smaller than the ids it will be given.

use super::shared::is_tokenizer;
use super::shared::module_int_constants;
use super::tokens_added_without_resize::token_additions;
use crate::checker::Checker;
use crate::fix::{Applicability, Edit, Fix};
use crate::rule_doc::{Autofix, RuleDoc, Severity};
use assertscope_flow::semantic::{argument, int_literal};
use assertscope_flow::{Evidence, Place};
use ruff_python_ast::Expr;
use ruff_text_size::Ranged;

pub const DOC: RuleDoc = RuleDoc {
    code: "AS106",
    name: "embedding-too-small",
    summary: "`nn.Embedding` sized from the vocabulary before tokens were added, or position embeddings shorter than the sequence length",
    what_it_does: "Finds `nn.Embedding(n, …)` where `n` is `tokenizer.vocab_size` (which never counts added \
tokens) or a `len(tokenizer)` taken before `add_tokens` / `add_special_tokens`, in a module that adds \
tokens; and position embeddings (`pos_embedding`, `position_embeddings`, `wpe`, …) with fewer rows \
than a sequence-length constant of the module (`MAX_LEN`, `max_seq_len`, `block_size`, …).",
    why_it_matters: "Token ids past the table's last row, or positions past the last position row, trip \
`srcIndex < srcSelectDimSize` in the embedding kernel: a device-side assert, on the CPU \"index out of \
range in self\". Sequences at the maximum length are rare, so the crash can come hours in.",
    example: "tokenizer.add_tokens([\"<ent>\", \"</ent>\"])\nself.embed = nn.Embedding(tokenizer.vocab_size, 256)",
    fix: "Size the table with `len(tokenizer)` after all tokens are added; size position embeddings from the \
same constant that bounds the sequence length.",
    cause: "embedding-index-out-of-range",
    severity: Severity::Error,
    autofix: Autofix::Sometimes(
        Applicability::Unsafe,
        "writes `len(tokenizer)` for a `tokenizer.vocab_size` read after the tokens were added, or the sequence-length constant for a position table's literal size (a checkpoint of the old size no longer loads)",
    ),
};

fn is_sequence_length_name(name: &str) -> bool {
    let lower = name.to_ascii_lowercase().replace('_', "");
    [
        "maxlen",
        "maxlength",
        "maxseqlen",
        "maxseqlength",
        "seqlen",
        "seqlength",
        "blocksize",
        "contextlength",
        "contextlen",
        "maxsequencelength",
        "maxtokens",
        "ctxlen",
    ]
    .contains(&lower.as_str())
}

fn is_position_table(name: &str) -> bool {
    let lower = name.to_ascii_lowercase();
    lower.contains("pos") || lower == "wpe"
}

pub fn check(checker: &Checker) {
    let sem = checker.sem;
    let additions = token_additions(checker);
    let lengths = module_int_constants(checker, is_sequence_length_name);
    for site in &sem.calls {
        if sem.api_in(&site.call.func, "torch") != Some("Embedding") {
            continue;
        }
        let Some(rows) = argument(site.call, "num_embeddings", Some(0)) else { continue };
        let (origin, origin_scope) = checker.flow.origin(rows, site.scope);
        // The vocabulary size, read too early.
        if let Some(tokenizer) = vocabulary_of(origin) {
            let receiver = checker.text(tokenizer.range());
            let same: Vec<_> =
                additions.iter().filter(|a| checker.text(a.receiver.range()) == receiver).collect();
            let later = same
                .iter()
                .find(|add| add.call.range().start() > origin.range().start() && add.scope == origin_scope);
            let too_early = match origin {
                Expr::Attribute(_) => same.first(),
                _ => later,
            };
            if let Some(add) = too_early {
                let what = checker.text(origin.range());
                let evidence = vec![
                    Evidence { place: Place::Here(origin.range()), label: format!("`{what}` is taken here") },
                    Evidence {
                        place: Place::Here(add.call.range()),
                        label: "tokens are added here, past the table's last row".to_string(),
                    },
                ];
                // `len(tokenizer)` where the table is built counts the tokens when they were
                // added before it, in source order.
                let fix = (std::ptr::eq(origin, rows)
                    && matches!(origin, Expr::Attribute(_))
                    && add.call.range().end() <= site.call.range().start())
                .then(|| {
                    Fix::new(
                        Applicability::Unsafe,
                        format!("count the added tokens: `len({receiver})`"),
                        vec![Edit::of(rows, format!("len({receiver})"))],
                    )
                });
                checker.report_fixable(
                    DOC.code,
                    rows.range(),
                    format!(
                        "embedding sized by `{what}`, which does not count the tokens added to `{receiver}`"
                    ),
                    format!("size it with `len({receiver})` after the tokens are added"),
                    evidence,
                    fix,
                );
            }
            continue;
        }
        // Position embeddings shorter than the sequence length.
        let is_position =
            sem.assigned_to.get(&site.call.range().start()).is_some_and(|n| is_position_table(n));
        if !is_position {
            continue;
        }
        let Some(count) = checker.flow.int_value(rows, site.scope) else { continue };
        if let Some((name, length)) = lengths.iter().find(|(_, l)| *l > count) {
            let fix = int_literal(rows).is_some().then(|| {
                Fix::new(Applicability::Unsafe, format!("size it with `{name}`"), vec![Edit::of(rows, *name)])
            });
            checker.report_fixable(
                DOC.code,
                rows.range(),
                format!("position embedding has {count} rows, but sequences may be {name} = {length} long"),
                format!("size it from the constant: `{name}` rows"),
                Vec::new(),
                fix,
            );
        }
    }
}

/// The tokenizer an expression takes the vocabulary size of: `len(tokenizer)`, `tokenizer.vocab_size`.
fn vocabulary_of(expr: &Expr) -> Option<&Expr> {
    match expr {
        Expr::Call(call) => match (&*call.func, call.arguments.args.first()) {
            (Expr::Name(f), Some(arg)) if f.id.as_str() == "len" && is_tokenizer(arg) => Some(arg),
            _ => None,
        },
        Expr::Attribute(attr) if attr.attr.as_str() == "vocab_size" && is_tokenizer(&attr.value) => {
            Some(&attr.value)
        }
        _ => None,
    }
}
