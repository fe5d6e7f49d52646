//! assertscope's reading of crash logs and its knowledge base.
//!
//! - [`log`]: one streaming pass over a log (a file, a pipe, a directory of per-rank logs,
//!   a Ray session) into the events a diagnosis needs: kernel assertion lines, tracebacks,
//!   standalone error lines, stated sizes, signs of divergence. Lines without any of a
//!   few literals ([`log::TRIGGERS`]) are skipped undecoded; large files are memory-mapped
//!   and prefiltered on every core ([`log::mapped`]); what an input is (text, UTF-16,
//!   binary) is decided from its start ([`log::sniff`], [`log::input`]).
//! - [`kb`]: the knowledge base (`python/assertscope/kb/*.toml`, embedded and checked at
//!   load): each cause's title, explanation and fix, the kernels' assertion texts, hints.
//!
//! Neither prints, and neither knows of the diagnosis built from them (the `assertscope`
//! crate's `diagnose`).

pub mod kb;
pub mod log;
