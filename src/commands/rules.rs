//! `assertscope rules` (not implemented yet).

#[derive(Debug, clap::Args)]
pub struct RulesArgs {}

pub fn execute(_args: RulesArgs) -> anyhow::Result<u8> {
    anyhow::bail!("assertscope rules is not implemented yet")
}
