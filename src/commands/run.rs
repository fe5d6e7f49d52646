//! `assertscope run` (not implemented yet).

#[derive(Debug, clap::Args)]
pub struct RunArgs {}

pub fn execute(_args: RunArgs) -> anyhow::Result<u8> {
    anyhow::bail!("assertscope run is not implemented yet")
}
