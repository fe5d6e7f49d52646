//! `assertscope lint` (not implemented yet).

#[derive(Debug, clap::Args)]
pub struct LintArgs {}

pub fn execute(_args: LintArgs) -> anyhow::Result<u8> {
    anyhow::bail!("assertscope lint is not implemented yet")
}
