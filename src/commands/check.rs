//! `assertscope check` (not implemented yet).

#[derive(Debug, clap::Args)]
pub struct CheckArgs {}

pub fn execute(_args: CheckArgs) -> anyhow::Result<u8> {
    anyhow::bail!("assertscope check is not implemented yet")
}
