//! AS105: tokens added to a tokenizer, embeddings never resized.

use super::is_tokenizer;
use crate::lint::{Checker, RuleDoc, Severity};
use ruff_python_ast::{self as ast, Expr};
use ruff_text_size::Ranged;

pub const DOC: RuleDoc = RuleDoc {
    code: "AS105",
    name: "tokens-added-without-resize",
    summary: "`tokenizer.add_tokens` / `add_special_tokens` without `resize_token_embeddings`",
    what_it_does: "Finds `add_tokens(...)` and `add_special_tokens(...)` calls on a tokenizer that add new \
tokens, in a module that loads a pretrained model (`from_pretrained`) but never calls `resize_token_embeddings`. Adding an \
existing token (`{\"pad_token\": tokenizer.eos_token}`) is not reported.",
    why_it_matters: "New tokens get ids at the end of the vocabulary, past the last row of the model's \
embedding matrix. The first batch that contains one trips `srcIndex < srcSelectDimSize` in the \
embedding kernel: a device-side assert (on the CPU, \"index out of range in self\").",
    example: "tokenizer.add_special_tokens({\"pad_token\": \"[PAD]\"})\nmodel = AutoModelForCausalLM.from_pretrained(name)",
    fix: "After adding tokens, call `model.resize_token_embeddings(len(tokenizer))`.",
    cause: "embedding-index-out-of-range",
    severity: Severity::Error,
};

/// The calls that add tokens to a tokenizer, with the receiver: shared with AS106.
pub fn token_additions<'a>(checker: &Checker<'a>) -> Vec<(&'a ast::ExprCall, &'a Expr)> {
    let mut out = Vec::new();
    for site in &checker.sem.calls {
        let Expr::Attribute(attr) = &*site.call.func else { continue };
        let method = attr.attr.as_str();
        if method != "add_tokens" && method != "add_special_tokens" {
            continue;
        }
        if !is_tokenizer(&attr.value) {
            continue;
        }
        if method == "add_special_tokens" && only_existing_tokens(site.call) {
            continue;
        }
        out.push((site.call, &*attr.value));
    }
    out
}

/// `add_special_tokens({"pad_token": tokenizer.eos_token})` reuses a token the vocabulary has.
fn only_existing_tokens(call: &ast::ExprCall) -> bool {
    let Some(Expr::Dict(dict)) = call.arguments.args.first() else { return false };
    dict.items.iter().all(|item| matches!(item.value, Expr::Attribute(_)))
}

fn loads_a_model(checker: &Checker) -> bool {
    checker.sem.calls.iter().any(|site| {
        let Expr::Attribute(attr) = &*site.call.func else { return false };
        let Expr::Name(class) = &*attr.value else { return false };
        let class = class.id.as_str();
        // A model made `from_config` is sized by that config; pretrained weights are fixed.
        attr.attr.as_str() == "from_pretrained" && (class.contains("Model") || class.contains("For"))
    })
}

pub fn check(checker: &Checker) {
    let additions = token_additions(checker);
    if additions.is_empty() {
        return;
    }
    let resized = checker.sem.calls.iter().any(
        |site| matches!(&*site.call.func, Expr::Attribute(a) if a.attr.as_str() == "resize_token_embeddings"),
    );
    if resized || !loads_a_model(checker) {
        return;
    }
    for (call, receiver) in additions {
        let receiver = checker.text(receiver.range());
        checker.report(
            DOC.code,
            call.range(),
            format!("`{receiver}` gains new tokens here, but the model's embeddings are never resized"),
            format!("call `model.resize_token_embeddings(len({receiver}))` after adding tokens"),
        );
    }
}
