//! `assertscope explain` (not implemented yet).

#[derive(Debug, clap::Args)]
pub struct ExplainArgs {}

pub fn execute(_args: ExplainArgs) -> anyhow::Result<u8> {
    anyhow::bail!("assertscope explain is not implemented yet")
}
