//! JSON Lines: one JSON value per line; the label is the whole value or the field that
//! `--column a.b.c` names. Lists of numbers are sequences (token ids) or one-hot rows.

use super::lines::{first_line, for_each_line, naming_file, split};
use super::names::{list_names, open};
use super::units::{ColumnInfo, FilePlan, Layout, NeedsSequential, ReadCtx, ReadOptions, Unit, UnitEnd};
use crate::input::InputFile;
use crate::stats::{Bounds, Pos, Stats};
use anyhow::bail;
use serde_json::Value;
use std::path::PathBuf;
use std::sync::Arc;

pub fn plan(file: &InputFile, opts: &ReadOptions) -> anyhow::Result<FilePlan> {
    let f = open(file)?;
    let len = f.metadata()?.len();
    let path: Arc<Vec<String>> = Arc::new(
        opts.column.as_deref().map(|c| c.split('.').map(str::to_string).collect()).unwrap_or_default(),
    );
    let layout = check_first_record(file, &f, &path)?;
    let column = ColumnInfo::new(opts.column.clone(), "", layout);
    let shared = Arc::new(file.path.clone());
    let units = split(0, len, opts.parallelism)
        .into_iter()
        .map(|(start, end)| {
            Box::new(JsonlUnit { file: shared.clone(), path: path.clone(), start, end, exact: false })
                as Box<dyn Unit>
        })
        .collect();
    let sequential = Box::new(JsonlUnit { file: shared, path, start: 0, end: len, exact: true });
    Ok(FilePlan { column, units, sequential: Some(sequential) })
}

pub fn count_rows(file: &InputFile, _opts: &ReadOptions) -> anyhow::Result<u64> {
    let f = open(file)?;
    let len = f.metadata()?.len();
    let mut rows = 0u64;
    for_each_line::<std::io::Error>(
        &f,
        0,
        len,
        |_| Ok(()),
        |line| {
            rows += u64::from(!line.trim_ascii().is_empty());
            Ok(())
        },
    )
    .map_err(naming_file(&file.path))?;
    Ok(rows)
}

/// Fails early, listing the fields there are, when the first record lacks the field.
fn check_first_record(file: &InputFile, f: &std::fs::File, path: &[String]) -> anyhow::Result<Layout> {
    let line = first_line(f, 64 << 20)?;
    if line.trim_ascii().is_empty() {
        return Ok(Layout::Scalar);
    }
    let value: Value = serde_json::from_slice(&line)
        .map_err(|e| anyhow::anyhow!("{}:1: not valid JSON: {e}", file.display()))?;
    let mut at = &value;
    for (depth, key) in path.iter().enumerate() {
        match at {
            Value::Object(map) => match map.get(key) {
                Some(v) => at = v,
                None => {
                    let keys: Vec<String> = map.keys().cloned().collect();
                    let parent =
                        if depth == 0 { "the first record".to_string() } else { path[..depth].join(".") };
                    bail!(
                        "{}:1: no field `{}`; {parent} has: {}",
                        file.display(),
                        path.join("."),
                        list_names(&keys)
                    );
                }
            },
            _ => bail!(
                "{}:1: `{}` is not an object, so it has no field `{key}`",
                file.display(),
                path[..depth].join(".")
            ),
        }
    }
    match at {
        Value::Object(map) => {
            let keys: Vec<String> = map.keys().cloned().collect();
            bail!(
                "{}: pick a field with --column (a.b for nested ones); the first record has: {}",
                file.display(),
                list_names(&keys)
            )
        }
        Value::Array(_) => Ok(Layout::Rows(None)),
        _ => Ok(Layout::Scalar),
    }
}

struct JsonlUnit {
    file: Arc<PathBuf>,
    path: Arc<Vec<String>>,
    start: u64,
    end: u64,
    /// Whether this unit reads the whole file and may report exact line numbers.
    exact: bool,
}

impl Unit for JsonlUnit {
    fn read(&self, ctx: &ReadCtx, stats: &mut Stats) -> anyhow::Result<UnitEnd> {
        let file = std::fs::File::open(&*self.file)?;
        let (mut rows, mut lines) = (0u64, 0u64);
        for_each_line::<anyhow::Error>(
            &file,
            self.start,
            self.end,
            |bytes| {
                ctx.bytes_read(bytes.len());
                Ok(())
            },
            |line| {
                lines += 1;
                if line.trim_ascii().is_empty() {
                    return Ok(());
                }
                let value: Value = match serde_json::from_slice(line) {
                    Ok(v) => v,
                    Err(_) if !self.exact => return Err(NeedsSequential.into()),
                    Err(e) => bail!("{}:{lines}: not valid JSON: {e}", self.file.display()),
                };
                let at = Pos { row: rows, line: Some(lines), pos: None };
                match lookup(&value, &self.path) {
                    Some(v) => push(stats, ctx.bounds, v, at),
                    None => stats.null(at),
                }
                rows += 1;
                Ok(())
            },
        )
        .map_err(naming_file(&self.file))?;
        Ok(UnitEnd { rows, lines })
    }
}

fn lookup<'a>(value: &'a Value, path: &[String]) -> Option<&'a Value> {
    path.iter().try_fold(value, |v, key| v.as_object()?.get(key))
}

fn push(stats: &mut Stats, bounds: &Bounds, value: &Value, at: Pos) {
    match value {
        Value::Array(items) => {
            stats.row_length(items.len() as u64, bounds, at);
            let mut numbers = Vec::with_capacity(items.len());
            for (i, item) in items.iter().enumerate() {
                let at = Pos { pos: Some(i as u64), ..at };
                scalar(stats, bounds, item, at);
                numbers.push(item.as_f64().unwrap_or(f64::NAN));
            }
            if bounds.row_patterns && items.len() > 1 {
                stats.row_pattern(&numbers, at);
            }
        }
        other => scalar(stats, bounds, other, at),
    }
}

fn scalar(stats: &mut Stats, bounds: &Bounds, value: &Value, at: Pos) {
    match value {
        Value::Number(n) => {
            if let Some(i) = n.as_i64() {
                stats.int(i, bounds, || at);
            } else if let Some(u) = n.as_u64() {
                stats.int(i64::try_from(u).unwrap_or(i64::MAX), bounds, || at);
            } else {
                stats.float(n.as_f64().unwrap_or(f64::NAN), bounds, || at);
            }
        }
        Value::Null => stats.null(at),
        Value::Bool(b) => stats.int(*b as i64, bounds, || at),
        Value::String(s) => stats.text(s.as_bytes(), at),
        Value::Array(_) | Value::Object(_) => stats.text(value.to_string().as_bytes(), at),
    }
}
