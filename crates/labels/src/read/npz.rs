//! NumPy `.npz` archives: a zip of `.npy` members. A member stored without compression
//! is read in place like an `.npy` file; a compressed one is streamed.

use super::array::{self, ArraySpec};
use super::names::{open, pick_name};
use super::npy;
use super::units::{FilePlan, ReadCtx, ReadOptions, Unit, UnitEnd};
use crate::input::InputFile;
use crate::stats::Stats;
use std::path::PathBuf;

pub fn plan(file: &InputFile, opts: &ReadOptions) -> anyhow::Result<FilePlan> {
    let (member, spec, placement) = open_member(file, opts)?;
    let column = spec.column(Some(member.trim_end_matches(".npy").to_string()));
    let units = match placement {
        Placement::Stored { data_offset } => {
            array::units(file.path.clone(), data_offset, spec, opts.parallelism)
        }
        Placement::Compressed => {
            vec![Box::new(StreamUnit { path: file.path.clone(), member, spec }) as Box<dyn Unit>]
        }
    };
    Ok(FilePlan { column, units, sequential: None })
}

pub fn count_rows(file: &InputFile, opts: &ReadOptions) -> anyhow::Result<u64> {
    Ok(open_member(file, opts)?.1.rows())
}

enum Placement {
    Stored { data_offset: u64 },
    Compressed,
}

fn archive(file: &InputFile) -> anyhow::Result<zip::ZipArchive<std::fs::File>> {
    zip::ZipArchive::new(open(file)?)
        .map_err(|e| anyhow::anyhow!("{}: not a readable NPZ (zip) archive: {e}", file.display()))
}

fn open_member(file: &InputFile, opts: &ReadOptions) -> anyhow::Result<(String, ArraySpec, Placement)> {
    let mut zip = archive(file)?;
    let names: Vec<String> = zip.file_names().map(|n| n.trim_end_matches(".npy").to_string()).collect();
    let mut names = names;
    names.sort();
    let key = pick_name(file, "array", opts.column.as_deref().map(|c| c.trim_end_matches(".npy")), &names)?;
    let member = if zip.index_for_name(&format!("{key}.npy")).is_some() {
        format!("{key}.npy")
    } else {
        key.to_string()
    };
    let len = file.path.metadata().map(|m| m.len()).unwrap_or(0);
    let mut entry = zip
        .by_name(&member)
        .map_err(|e| anyhow::anyhow!("{}: cannot read member {member}: {e}", file.display()))?;
    let stored = entry.compression() == zip::CompressionMethod::Stored;
    let data_start = entry.data_start();
    let size = entry.size();
    let (spec, header_len) = npy::parse_header(&mut entry)
        .map_err(|e| anyhow::anyhow!("{}: member {member}: {e}", file.display()))?;
    npy::check_length(&spec, size.saturating_sub(header_len))
        .map_err(|e| anyhow::anyhow!("{}: member {member}: {e}", file.display()))?;
    let placement = if stored {
        let data_offset = data_start + header_len;
        if data_offset + spec.byte_len().unwrap_or(0) > len {
            anyhow::bail!("{}: member {member}: truncated archive", file.display());
        }
        Placement::Stored { data_offset }
    } else {
        Placement::Compressed
    };
    Ok((member, spec, placement))
}

struct StreamUnit {
    path: PathBuf,
    member: String,
    spec: ArraySpec,
}

impl Unit for StreamUnit {
    fn read(&self, ctx: &ReadCtx, stats: &mut Stats) -> anyhow::Result<UnitEnd> {
        let input = InputFile { path: self.path.clone(), format: crate::input::Format::Npz };
        let mut zip = archive(&input)?;
        let name = format!("{}: member {}", self.path.display(), self.member);
        let mut entry = zip.by_name(&self.member).map_err(|e| anyhow::anyhow!("{name}: {e}"))?;
        npy::parse_header(&mut entry).map_err(|e| anyhow::anyhow!("{name}: {e}"))?;
        array::read_stream(std::io::BufReader::with_capacity(1 << 20, entry), &self.spec, ctx, stats, &name)
    }
}
