//! Directories of PNG segmentation masks: 8- and 16-bit greyscale, palette images (the
//! palette index is the class, so the palette is not applied) and low bit depths. Every
//! file is one unit; positions are pixel rows (`y`) and columns (`x`).

use super::{ColumnInfo, FilePlan, Layout, ReadCtx, Unit, UnitEnd};
use crate::input::InputFile;
use crate::stats::{Pos, Stats};
use png::{BitDepth, ColorType, Transformations};
use std::path::PathBuf;

pub fn plan(file: &InputFile) -> anyhow::Result<FilePlan> {
    let column = ColumnInfo::new(None, "mask", Layout::Image);
    Ok(FilePlan::single(column, Box::new(MaskUnit { path: file.path.clone() })))
}

struct MaskUnit {
    path: PathBuf,
}

impl Unit for MaskUnit {
    fn read(&self, ctx: &ReadCtx, stats: &mut Stats) -> anyhow::Result<UnitEnd> {
        let shown = self.path.display();
        let f = std::fs::File::open(&self.path).map_err(|e| anyhow::anyhow!("{shown}: cannot open: {e}"))?;
        let mut decoder = png::Decoder::new(std::io::BufReader::new(f));
        // Palette indices are the classes: keep them, do not expand to colours.
        decoder.set_transformations(Transformations::IDENTITY);
        let mut reader =
            decoder.read_info().map_err(|e| anyhow::anyhow!("{shown}: not a readable PNG: {e}"))?;
        let size =
            reader.output_buffer_size().ok_or_else(|| anyhow::anyhow!("{shown}: the image is too large"))?;
        let mut buf = vec![0u8; size];
        let frame =
            reader.next_frame(&mut buf).map_err(|e| anyhow::anyhow!("{shown}: cannot decode: {e}"))?;
        let (width, height) = (frame.width as usize, frame.height as usize);
        let channels = match frame.color_type {
            ColorType::Grayscale | ColorType::Indexed => 1,
            ColorType::GrayscaleAlpha => 2,
            ColorType::Rgb => return colour(stats, "RGB"),
            ColorType::Rgba => return colour(stats, "RGBA"),
        };
        let bounds = ctx.bounds;
        let mut row_values: Vec<u16> = Vec::with_capacity(width);
        for y in 0..height {
            let line = &buf[y * frame.line_size..(y + 1) * frame.line_size];
            row_values.clear();
            match frame.bit_depth {
                BitDepth::Sixteen => row_values.extend(
                    line.chunks_exact(2 * channels).take(width).map(|p| u16::from_be_bytes([p[0], p[1]])),
                ),
                BitDepth::Eight => {
                    row_values.extend(line.iter().step_by(channels).take(width).map(|&v| v as u16))
                }
                depth => {
                    let bits = depth as usize;
                    let mask = (1u16 << bits) - 1;
                    row_values.extend((0..width).map(|x| {
                        let bit = x * bits * channels;
                        let byte = line[bit / 8] as u16;
                        (byte >> (8 - bits - bit % 8)) & mask
                    }));
                }
            }
            stats.ints(&row_values, bounds, &|x| Pos::at(y as u64, x as u64));
        }
        Ok(UnitEnd { rows: 1, lines: 0 })
    }
}

fn colour(stats: &mut Stats, kind: &str) -> anyhow::Result<UnitEnd> {
    stats.colour_image(kind);
    Ok(UnitEnd { rows: 1, lines: 0 })
}
