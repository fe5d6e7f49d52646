//! `assertscope scan` (not implemented yet).

#[derive(Debug, clap::Args)]
pub struct ScanArgs {}

pub fn execute(_args: ScanArgs) -> anyhow::Result<u8> {
    anyhow::bail!("assertscope scan is not implemented yet")
}
