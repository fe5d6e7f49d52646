//! `assertscope doctor` (not implemented yet).

#[derive(Debug, clap::Args)]
pub struct DoctorArgs {}

pub fn execute(_args: DoctorArgs) -> anyhow::Result<u8> {
    anyhow::bail!("assertscope doctor is not implemented yet")
}
