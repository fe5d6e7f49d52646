//! The backward slice: from the value an op refused, at the user's line, back through the
//! statements that provably carried it, to the statement that computed it ("made here"),
//! or to the point past which the analysis cannot prove where it came from (the end of
//! the trail, said as such). Every step drawn is a step followed in the source; runtime
//! facts (the call stack, lines the bad value was seen on, live reads of the dataset)
//! confirm steps or choose between branches the source leaves open, never replace one.
//!
//! ```text
//! loss = F.cross_entropy(logits, topic)          the operand `topic`
//! for features, topic in loader:                 unpack: element 1 of a batch
//! loader = DataLoader(Docs(DOCS, TOPICS), …)     move: the default collate stacks samples
//! return features, self.topic_to_id[topic]       read from `self.topic_to_id`
//! self.topic_to_id = {n: i for i, n in enumerate(topics, start=1)}   made: numbered from 1
//! ```
//!
//! [`trace`] answers one [`Query`]; [`project`] reads and parses the files it needs;
//! [`follow`] takes the steps; [`made`] says which expressions compute a value and why
//! that gives the bad one; [`ops`] knows where an op's operand sits in a call.

mod access;
mod attributes;
mod calls;
mod collate;
mod configs;
mod follow;
mod heads;
pub mod index;
mod iteration;
mod library;
mod literals;
mod loaders;
mod made;
mod mutations;
mod names;
pub mod ops;
mod params;
mod permute;
pub mod project;
mod query;
mod resolve;
mod returns;
mod rows;
mod shapes;
mod size;
mod start;
mod text;
mod trail;

pub use project::{Arena, Module, Project, Sources, Stamp, Store};
pub use query::{BadValues, Chain, Frame, Observed, Operand, Query, Role, SizeQuery};
pub use trail::{End, Step, Trail};

/// Follows the operand of `query` back to where it was made.
pub fn trace(project: &Project<'_>, query: &Query) -> Trail {
    trail::value_trail(project, query)
}

/// Follows a module's size back to where it was computed.
pub fn trace_size(project: &Project<'_>, query: &SizeQuery) -> Trail {
    size::size_trail(project, query)
}

/// The size trail of what the op's values broke, found by flow: `one_hot`'s `num_classes`,
/// the length of an indexed tensor and, with `modules`, the module the op ran with (the
/// classes a loss's input scores, the rows of an embedding table) when no runtime fact
/// names it.
pub fn trace_size_by_flow(project: &Project<'_>, query: &Query, modules: bool) -> Trail {
    size::size_by_flow(project, query, modules)
}

/// The one bad value of `query` when it looks like padding or a void label (negative, 255):
/// such a value breaks the loss's `ignore_index`, not the size of a head.
pub fn void_label(query: &Query) -> Option<f64> {
    size::void_label(&query.bad.values)
}

/// Runs `f` with a project over `sources`: the files it reads live as long as the call.
pub fn with_project<R>(sources: Sources, f: impl FnOnce(&Project<'_>) -> R) -> R {
    let store = Store::default();
    let project = Project::new(&store, sources);
    f(&project)
}
