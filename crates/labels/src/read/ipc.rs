//! Arrow IPC files and streams, which is what Hugging Face `datasets` keeps in its cache
//! (`data-00000-of-00001.arrow`); a `ClassLabel` feature there declares the number of
//! classes.

use super::arrow::{push_batches, resolve_column};
use super::names::open;
use super::positional::read_exact_at;
use super::units::{FilePlan, ReadCtx, ReadOptions, Unit, UnitEnd};
use crate::input::InputFile;
use crate::stats::Stats;
use arrow_array::RecordBatch;
use arrow_schema::{ArrowError, SchemaRef};
use std::io::{BufReader, Read};
use std::path::PathBuf;

type Batches = Box<dyn Iterator<Item = Result<RecordBatch, ArrowError>>>;

/// Opens the file or stream, projected to one column when `projection` is given.
fn batches(file: &InputFile, projection: Option<Vec<usize>>) -> anyhow::Result<(SchemaRef, Batches)> {
    let mut f = open(file)?;
    let mut magic = [0u8; 6];
    let n = f.read(&mut magic)?;
    drop(f);
    let f = open(file)?;
    let unreadable =
        |e: ArrowError| anyhow::anyhow!("{}: not a readable Arrow IPC file: {e}", file.display());
    if n == 6 && &magic == b"ARROW1" {
        check_blocks(&f)
            .map_err(|e| anyhow::anyhow!("{}: not a readable Arrow IPC file: {e}", file.display()))?;
        let reader = arrow_ipc::reader::FileReader::try_new(BufReader::with_capacity(1 << 20, f), projection)
            .map_err(unreadable)?;
        Ok((reader.schema(), Box::new(reader)))
    } else {
        let reader =
            arrow_ipc::reader::StreamReader::try_new(BufReader::with_capacity(1 << 20, f), projection)
                .map_err(unreadable)?;
        Ok((reader.schema(), Box::new(reader)))
    }
}

/// Checks that every block the footer of an IPC file lists lies inside the file: the
/// reader allocates what a block claims before it reads a byte of it.
fn check_blocks(f: &std::fs::File) -> Result<(), String> {
    let len = f.metadata().map_err(|e| e.to_string())?.len();
    let mut tail = [0u8; 10];
    if len < 18 || read_exact_at(f, &mut tail, len - 10).is_err() || &tail[4..] != b"ARROW1" {
        return Err("it does not end with the Arrow magic ARROW1 (truncated?)".into());
    }
    let footer_len = i32::from_le_bytes([tail[0], tail[1], tail[2], tail[3]]);
    let footer_len = u64::try_from(footer_len)
        .ok()
        .filter(|&n| n + 18 <= len)
        .ok_or_else(|| format!("the footer claims {footer_len} bytes but the file has {len}"))?;
    let mut footer = vec![0u8; footer_len as usize];
    read_exact_at(f, &mut footer, len - 10 - footer_len).map_err(|e| e.to_string())?;
    let footer = arrow_ipc::root_as_footer(&footer).map_err(|e| format!("corrupt footer: {e}"))?;
    let blocks =
        footer.recordBatches().into_iter().flatten().chain(footer.dictionaries().into_iter().flatten());
    for (i, block) in blocks.enumerate() {
        let (offset, meta, body) = (block.offset(), i64::from(block.metaDataLength()), block.bodyLength());
        let end = offset.checked_add(meta).and_then(|e| e.checked_add(body));
        if offset < 0 || meta < 0 || body < 0 || end.is_none_or(|e| e as u64 > len) {
            return Err(format!(
                "block {i} of the footer claims {meta} + {body} bytes at byte {offset} of a {len}-byte file"
            ));
        }
    }
    Ok(())
}

pub fn plan(file: &InputFile, opts: &ReadOptions) -> anyhow::Result<FilePlan> {
    let (schema, _) = batches(file, None)?;
    let resolved = resolve_column(file, &schema, opts)?;
    let (column, root_index, nested) = (resolved.column, resolved.root_index, resolved.nested);
    let unit = IpcUnit { path: file.path.clone(), root_index, nested };
    Ok(FilePlan::single(column, Box::new(unit)))
}

pub fn count_rows(file: &InputFile) -> anyhow::Result<u64> {
    let (_, batches) = batches(file, None)?;
    let mut rows = 0u64;
    for batch in batches {
        rows += batch.map_err(|e| anyhow::anyhow!("{}: {e}", file.display()))?.num_rows() as u64;
    }
    Ok(rows)
}

struct IpcUnit {
    path: PathBuf,
    root_index: usize,
    nested: Vec<String>,
}

impl Unit for IpcUnit {
    fn read(&self, ctx: &ReadCtx, stats: &mut Stats) -> anyhow::Result<UnitEnd> {
        let input = InputFile { path: self.path.clone(), format: crate::input::Format::Arrow };
        let (_, batches) = batches(&input, Some(vec![self.root_index]))?;
        let shown = self.path.display();
        push_batches(stats, ctx.bounds, batches, &self.nested, &shown)
    }
}
