//! Directories of PNG segmentation masks: 8- and 16-bit greyscale, palette images (the
//! palette index is the class, so the palette is not applied) and low bit depths. Every
//! file is one unit; positions are pixel rows (`y`) and columns (`x`).

use super::units::{ColumnInfo, FilePlan, Layout, ReadCtx, Unit, UnitEnd};
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

/// An interlaced image is decoded whole (its rows arrive pass by pass); one whose pixels
/// take more than this is refused rather than allocated.
const MAX_INTERLACED_BYTES: usize = 1 << 30;

impl Unit for MaskUnit {
    fn read(&self, ctx: &ReadCtx, stats: &mut Stats) -> anyhow::Result<UnitEnd> {
        let shown = self.path.display();
        let f = std::fs::File::open(&self.path).map_err(|e| anyhow::anyhow!("{shown}: cannot open: {e}"))?;
        let mut decoder = png::Decoder::new(std::io::BufReader::new(f));
        // Palette indices are the classes: keep them, do not expand to colours.
        decoder.set_transformations(Transformations::IDENTITY);
        let mut reader =
            decoder.read_info().map_err(|e| anyhow::anyhow!("{shown}: not a readable PNG: {e}"))?;
        let info = reader.info();
        let (width, height, interlaced) = (info.width as usize, info.height as usize, info.interlaced);
        let (color, depth) = reader.output_color_type();
        let channels = match color {
            ColorType::Grayscale | ColorType::Indexed => 1,
            ColorType::GrayscaleAlpha => 2,
            ColorType::Rgb => return colour(stats, "RGB"),
            ColorType::Rgba => return colour(stats, "RGBA"),
        };
        let pixels = Pixels { width, channels, depth, values: Default::default() };
        let decode_error = |e: png::DecodingError| anyhow::anyhow!("{shown}: cannot decode: {e}");
        if interlaced {
            let size =
                reader.output_buffer_size().filter(|&s| s <= MAX_INTERLACED_BYTES).ok_or_else(|| {
                    anyhow::anyhow!("{shown}: an interlaced image too large to decode ({width}x{height})")
                })?;
            let mut buf = vec![0u8; size];
            let frame = reader.next_frame(&mut buf).map_err(decode_error)?;
            for (y, line) in buf.chunks_exact(frame.line_size).take(height).enumerate() {
                pixels.feed(stats, ctx, line, y)?;
            }
        } else {
            let mut y = 0;
            while let Some(row) = reader.next_row().map_err(decode_error)? {
                pixels.feed(stats, ctx, row.data(), y)?;
                y += 1;
            }
        }
        Ok(UnitEnd { rows: 1, lines: 0 })
    }
}

/// How one row of pixels is laid out.
struct Pixels {
    width: usize,
    channels: usize,
    depth: BitDepth,
    /// One row's values, reused from row to row.
    values: std::cell::RefCell<Vec<u16>>,
}

impl Pixels {
    /// Feeds row `y`'s class indices (the first channel of each pixel).
    fn feed(&self, stats: &mut Stats, ctx: &ReadCtx, line: &[u8], y: usize) -> anyhow::Result<()> {
        crate::read::guard::on_time()?;
        let (width, channels) = (self.width, self.channels);
        let mut values = self.values.borrow_mut();
        values.clear();
        match self.depth {
            BitDepth::Sixteen => values.extend(
                line.chunks_exact(2 * channels).take(width).map(|p| u16::from_be_bytes([p[0], p[1]])),
            ),
            BitDepth::Eight => values.extend(line.iter().step_by(channels).take(width).map(|&v| v as u16)),
            depth => {
                let bits = depth as usize;
                let mask = (1u16 << bits) - 1;
                values.extend((0..width).map_while(|x| {
                    let bit = x * bits * channels;
                    let byte = *line.get(bit / 8)? as u16;
                    Some((byte >> (8 - bits - bit % 8)) & mask)
                }));
            }
        }
        stats.ints(&values, ctx.bounds, &|x| Pos::at(y as u64, x as u64));
        Ok(())
    }
}

fn colour(stats: &mut Stats, kind: &str) -> anyhow::Result<UnitEnd> {
    stats.colour_image(kind);
    Ok(UnitEnd { rows: 1, lines: 0 })
}
