//! AS105: tokens added to a tokenizer, embeddings never resized.

use super::shared::is_tokenizer;
use crate::checker::Checker;
use crate::rule_doc::{Autofix, RuleDoc, Severity};
use assertscope_flow::semantic::ScopeId;
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
    autofix: Autofix::None,
};

/// A call that adds tokens to a tokenizer: shared with AS106.
pub struct TokenAddition<'a> {
    pub call: &'a ast::ExprCall,
    pub receiver: &'a Expr,
    pub scope: ScopeId,
}

/// The calls that add tokens to a tokenizer, in source order.
pub fn token_additions<'a>(checker: &Checker<'a>) -> Vec<TokenAddition<'a>> {
    let mut out = Vec::new();
    let sites = checker.sem.calls_of("add_tokens").chain(checker.sem.calls_of("add_special_tokens"));
    for site in sites {
        let Expr::Attribute(attr) = &*site.call.func else { continue };
        let method = attr.attr.as_str();
        if !is_tokenizer(&attr.value) {
            continue;
        }
        if method == "add_special_tokens" && only_existing_tokens(site.call) {
            continue;
        }
        out.push(TokenAddition { call: site.call, receiver: &attr.value, scope: site.scope });
    }
    out.sort_by_key(|a| a.call.range().start());
    out
}

/// `add_special_tokens({"pad_token": tokenizer.eos_token})` reuses a token the vocabulary has.
fn only_existing_tokens(call: &ast::ExprCall) -> bool {
    let Some(Expr::Dict(dict)) = call.arguments.args.first() else { return false };
    dict.items.iter().all(|item| matches!(item.value, Expr::Attribute(_)))
}

fn loads_a_model(checker: &Checker) -> bool {
    checker.sem.calls_of("from_pretrained").any(|site| {
        let Expr::Attribute(attr) = &*site.call.func else { return false };
        let Expr::Name(class) = &*attr.value else { return false };
        let class = class.id.as_str();
        // A model made `from_config` is sized by that config; pretrained weights are fixed.
        // TensorFlow and Flax models (`TFAutoModel…`, `FlaxAutoModel…`) gather without asserting.
        let other_framework = class.starts_with("TF") || class.starts_with("Flax");
        (class.contains("Model") || class.contains("For")) && !other_framework
    })
}

/// Whether the module resizes the embeddings: `model.resize_token_embeddings(…)`, or a helper
/// of its own that says so in its name (`resize_token_embeddings(model, n)`,
/// `smart_tokenizer_and_embedding_resize(…)`, `resize_embeddings(…)`).
fn resizes_embeddings(checker: &Checker) -> bool {
    checker.sem.calls_by_callee.keys().any(|name| {
        let lower = name.to_ascii_lowercase();
        lower.contains("resize") && ["embed", "token", "vocab"].iter().any(|w| lower.contains(w))
    })
}

/// Whether the model is configured for the tokens the module adds: a `vocab_size=` given to a
/// config or model (`GPT2Config(vocab_size=tokenizer.vocab_size + 1)  # +1 for the new EOS token`).
fn sized_for_added_tokens(checker: &Checker) -> bool {
    checker.sem.calls.iter().any(|site| {
        site.call
            .arguments
            .keywords
            .iter()
            .any(|k| k.arg.as_ref().is_some_and(|a| matches!(a.as_str(), "vocab_size" | "n_vocab")))
    })
}

pub fn check(checker: &Checker) {
    let additions = token_additions(checker);
    if additions.is_empty()
        || resizes_embeddings(checker)
        || sized_for_added_tokens(checker)
        || !loads_a_model(checker)
    {
        return;
    }
    for addition in additions {
        let receiver = checker.text(addition.receiver.range());
        checker.report(
            DOC.code,
            addition.call.range(),
            format!("`{receiver}` gains new tokens here, but the model's embeddings are never resized"),
            format!("call `model.resize_token_embeddings(len({receiver}))` after adding tokens"),
        );
    }
}
