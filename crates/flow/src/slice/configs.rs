//! The field of a model configuration that sizes a layer the library builds from it: a
//! transformers config documents which of its fields size which tables
//! (`vocab_size`, `max_position_embeddings`, `type_vocab_size` the embeddings, `num_labels`
//! the classifier). Of those the config's construction sets, the one whose value is the
//! size the runtime saw the layer built with is the step; none, or several, and there is
//! no step.

use super::follow::{Cursor, Draft, Walker};
use super::made;
use super::project::Module;
use super::query::Role;
use super::resolve::Object;
use crate::semantic::{Bound, ScopeId};
use ruff_python_ast::{self as ast, Expr};
use ruff_text_size::Ranged;

/// The configuration fields that size a torch class a model builds from them.
fn size_fields(class: &str) -> &'static [&'static str] {
    match class {
        "Embedding" => &["vocab_size", "max_position_embeddings", "type_vocab_size"],
        "Linear" => &["num_labels"],
        _ => &[],
    }
}

impl<'p, 'a> Walker<'p, 'a> {
    /// For a library call given a configuration (`Model(config)`, `from_config(config)`):
    /// the keyword of the config's construction that set `size`, as a step, and its value.
    pub(super) fn config_field(
        &self,
        m: &'a Module<'a>,
        scope: ScopeId,
        call: &'a ast::ExprCall,
        class: &str,
        size: i64,
    ) -> Option<(Draft<'a>, Cursor<'a>)> {
        let fields = size_fields(class);
        if fields.is_empty() {
            return None;
        }
        let (cm, cscope, config) = call
            .arguments
            .args
            .iter()
            .chain(call.arguments.keywords.iter().map(|k| &k.value))
            .find_map(|arg| self.config_call(m, scope, arg))?;
        let cursor =
            |expr: &'a Expr| Cursor { m: cm, scope: cscope, expr, path: Vec::new(), env: Default::default() };
        let matching: Vec<&'a ast::Keyword> = config
            .arguments
            .keywords
            .iter()
            .filter(|k| k.arg.as_ref().is_some_and(|a| fields.contains(&a.as_str())))
            .filter(|k| self.constant(&cursor(&k.value), &k.value) == Some(size as f64))
            .collect();
        let [keyword] = matching[..] else { return None };
        let field = keyword.arg.as_ref()?.as_str();
        let note = format!(
            "`{field}={}` in the configuration sets it ({size})",
            made::text_of(cm.file.text(), &keyword.value)
        );
        let draft = self.draft(cm, keyword.start(), Role::Read, note);
        Some((draft, cursor(&keyword.value)))
    }

    /// A transformers configuration built by a call (`BertConfig(…)`), directly or through
    /// the name it was assigned to.
    fn config_call(
        &self,
        m: &'a Module<'a>,
        scope: ScopeId,
        arg: &'a Expr,
    ) -> Option<(&'a Module<'a>, ScopeId, &'a ast::ExprCall)> {
        let (s, call) = match arg {
            Expr::Call(call) => (scope, call),
            Expr::Name(name) => {
                let (s, binding) = m.sem.lookup(scope, name.id.as_str(), name.range.start())?;
                let Bound::Value(Expr::Call(call)) = &binding.value else { return None };
                (s, call)
            }
            _ => return None,
        };
        match self.project.resolve(m, s, &call.func) {
            Some(Object::Api("transformers", name)) if name.ends_with("Config") => Some((m, s, call)),
            _ => None,
        }
    }
}
