//! Corrupt data files, as a careless user or an attacker hands them to `check`: every one
//! ends in one line naming the file and what is wrong, exit status 2, in bounded time and
//! memory, never a panic, a hang or an abort. Real files written by pyarrow, numpy and
//! Pillow are damaged byte by byte; claims no writer makes are built byte by byte; pyarrow's
//! own reader is the reference for what is corrupt.

mod check_support;

use check_support::parquet_bytes::{self as pq, structure, V};
use check_support::*;
use std::path::Path;
use std::time::Duration;

/// Longer than any file here takes to read, on a busy machine (the deadline of a small
/// file is 20 s of the reading thread's CPU time); a run past it is a hang.
const HANG: Duration = Duration::from_secs(600);
/// An address space (`ulimit -v`) in which every file here is read; an allocation of what a
/// corrupt file claims does not fit in it.
const ADDRESS_SPACE: u64 = 2 << 30;

fn check_bounded(dir: &Path, file: &str) -> Run {
    let args = ["check", file, "--column", "label", "--num-classes", "10", "--no-progress"];
    assertscope_bounded(dir, &args, Some(ADDRESS_SPACE), HANG)
        .unwrap_or_else(|| panic!("check {file} still running after {HANG:?}: a hang"))
}

/// Checks every file, a few at a time; returns each run.
fn check_all(dir: &Path, files: &[String]) -> Vec<Run> {
    let chunks: Vec<Vec<(usize, String)>> =
        (0..4).map(|k| files.iter().cloned().enumerate().skip(k).step_by(4).collect()).collect();
    let mut runs: Vec<Option<Run>> = (0..files.len()).map(|_| None).collect();
    std::thread::scope(|s| {
        let handles: Vec<_> = chunks
            .into_iter()
            .map(|chunk| {
                s.spawn(move || {
                    chunk.into_iter().map(|(i, f)| (i, check_bounded(dir, &f))).collect::<Vec<_>>()
                })
            })
            .collect();
        for h in handles {
            for (i, run) in h.join().unwrap() {
                runs[i] = Some(run);
            }
        }
    });
    runs.into_iter().map(Option::unwrap).collect()
}

/// Exit 0 or 1 (read), or a one-line error naming the file.
fn assert_read_or_refused(run: &Run, file: &str) {
    if run.code != 2 {
        assert!(matches!(run.code, 0 | 1), "{file}: exit status {}\n{}", run.code, run.stderr);
        return;
    }
    assert_one_line_error(run, file, file);
}

/// Bytes as random as compressed data (xorshift), the same on every run.
struct Noise(u64);

impl Noise {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

#[test]
fn one_byte_changes_to_a_parquet_file_are_refused_wherever_pyarrow_refuses_them() {
    // Before: 25 of these files panicked (exit 101, `rle.rs: index out of bounds` and
    // others) and one spun forever at 100% CPU where pyarrow said "Malformed levels".
    if !has_modules(DATA_LIBRARIES) {
        return;
    }
    let dir = tempdir();
    py(
        dir.path(),
        r#"
import pyarrow as pa, pyarrow.parquet as pq
pq.write_table(pa.table({"label": pa.array([None if i % 5 == 0 else i % 7 for i in range(50)], type=pa.int64())}), "base.parquet")
data = open("base.parquet", "rb").read()
refused = []
for off in range(len(data)):
    b = bytearray(data); b[off] = 0xff
    open(f"m{off}.parquet", "wb").write(b)
    try:
        pq.read_table(f"m{off}.parquet")
    except Exception:
        refused.append(str(off))
open("pyarrow-refuses.txt", "w").write(" ".join(refused))
"#,
    );
    let len = std::fs::metadata(dir.path().join("base.parquet")).unwrap().len();
    let files: Vec<String> = (0..len).map(|off| format!("m{off}.parquet")).collect();
    let refused_by_pyarrow: Vec<usize> = std::fs::read_to_string(dir.path().join("pyarrow-refuses.txt"))
        .unwrap()
        .split_whitespace()
        .map(|s| s.parse().unwrap())
        .collect();
    assert!(refused_by_pyarrow.len() > len as usize / 2, "most single-byte changes break a small file");
    let runs = check_all(dir.path(), &files);
    for (file, run) in files.iter().zip(&runs) {
        assert_read_or_refused(run, file);
    }
    for off in refused_by_pyarrow {
        assert_one_line_error(&runs[off], &files[off], "pyarrow refuses this file, so must check");
    }
}

#[test]
fn random_changes_to_arrow_files_and_streams_never_crash() {
    // Before: 2 of 150 mutated streams panicked (`Type NONE not supported`, an out-of-range
    // slice in arrow-buffer).
    if !has_modules(DATA_LIBRARIES) {
        return;
    }
    let dir = tempdir();
    py(
        dir.path(),
        r#"
import pyarrow as pa
batch = pa.record_batch({"label": pa.array([i % 7 for i in range(40)]), "tokens": pa.array([list(range(i % 5)) for i in range(40)]),
                         "name": pa.array(["cat", "dog", None, "7"] * 10).dictionary_encode()})
with pa.ipc.new_stream("base.arrows", batch.schema) as w:
    w.write_batch(batch); w.write_batch(batch.slice(3, 20))
with pa.ipc.new_file("base.arrow", batch.schema) as w:
    w.write_batch(batch); w.write_batch(batch.slice(3, 20))
"#,
    );
    let mut noise = Noise(0x9e37_79b9_7f4a_7c15);
    let mut files = Vec::new();
    for base in ["base.arrows", "base.arrow"] {
        let data = std::fs::read(dir.path().join(base)).unwrap();
        for k in 0..150 {
            let mut bytes = data.clone();
            for _ in 0..20 {
                let at = (noise.next() % bytes.len() as u64) as usize;
                bytes[at] = noise.next() as u8;
            }
            let name = format!("m{k}-{base}");
            std::fs::write(dir.path().join(&name), bytes).unwrap();
            files.push(name);
        }
    }
    for (file, run) in files.iter().zip(check_all(dir.path(), &files)) {
        assert_read_or_refused(&run, file);
    }
}

#[test]
fn the_parquet_builder_writes_a_file_pyarrow_reads() {
    // The claims below are only meaningful if the bytes around them are right.
    if !has_modules(DATA_LIBRARIES) {
        return;
    }
    let dir = tempdir();
    let honest = pq::file(
        pq::label_schema(pq::REQUIRED),
        4,
        Some(pq::dictionary_page(&[3, 11, 5], 3)),
        pq::dictionary_data_page(4, 1),
    );
    std::fs::write(dir.path().join("honest.parquet"), honest).unwrap();
    py(
        dir.path(),
        "import pyarrow.parquet as pq\nassert pq.read_table('honest.parquet').column('label').to_pylist() == [11] * 4",
    );
    let run = check_bounded(dir.path(), "honest.parquet");
    assert_eq!(run.code, 1, "11 is past 10 classes: {}", run.stderr);
    let nulls = pq::file(pq::label_schema(pq::OPTIONAL), 1000, None, pq::null_page(1000));
    std::fs::write(dir.path().join("nulls.parquet"), nulls).unwrap();
    py(dir.path(), "import pyarrow.parquet as pq\nassert pq.read_table('nulls.parquet').column('label').null_count == 1000");
}

#[test]
fn a_dictionary_page_claiming_two_billion_values_in_24_bytes_is_refused_before_allocating() {
    // Before: parquet reserved 2^31 int64 values (16 GiB) for the dictionary, and the
    // allocation failed under `ulimit -v`: an abort.
    let dir = tempdir();
    let bomb = pq::file(
        pq::label_schema(pq::REQUIRED),
        4,
        Some(pq::dictionary_page(&[3, 11, 5], i32::MAX)),
        pq::dictionary_data_page(4, 1),
    );
    std::fs::write(dir.path().join("bomb.parquet"), bomb).unwrap();
    let run = check_bounded(dir.path(), "bomb.parquet");
    assert_one_line_error(&run, "bomb.parquet", "a dictionary bomb");
    assert!(run.stderr.contains("2147483647 values") && run.stderr.contains("24 bytes"), "{}", run.stderr);
}

#[test]
fn a_schema_nested_a_million_levels_deep_is_refused_without_recursing() {
    // Before: parquet built the schema by recursing once per level: a stack overflow.
    let dir = tempdir();
    let mut schema = vec![structure(vec![(4, V::Bin(b"schema".to_vec())), (5, V::I32(1))])];
    schema.extend(std::iter::repeat_n(
        structure(vec![(3, V::I32(pq::OPTIONAL)), (4, V::Bin(b"a".to_vec())), (5, V::I32(1))]),
        1_000_000,
    ));
    schema.push(structure(vec![
        (1, V::I32(pq::INT64)),
        (3, V::I32(pq::OPTIONAL)),
        (4, V::Bin(b"label".to_vec())),
    ]));
    std::fs::write(dir.path().join("deep.parquet"), pq::file(schema, 1, None, pq::null_page(1))).unwrap();
    let run = check_bounded(dir.path(), "deep.parquet");
    assert_one_line_error(&run, "deep.parquet", "a schema a million levels deep");
    assert!(run.stderr.contains("levels deep"), "{}", run.stderr);
}

#[test]
fn hundreds_of_billions_of_nulls_in_a_few_kilobytes_stop_at_the_deadline() {
    // 200 pages of 2^31 - 1 nulls each, 14 bytes a page. Before: every null counted one by
    // one, for hours.
    let dir = tempdir();
    let pages: Vec<u8> = (0..200).flat_map(|_| pq::null_page(i32::MAX)).collect();
    let rows = 200 * i64::from(i32::MAX);
    std::fs::write(
        dir.path().join("nulls.parquet"),
        pq::file(pq::label_schema(pq::OPTIONAL), rows, None, pages),
    )
    .unwrap();
    let run = check_bounded(dir.path(), "nulls.parquet");
    assert_one_line_error(&run, "nulls.parquet", "billions of nulls");
    assert!(run.stderr.contains("still decoding after"), "{}", run.stderr);
}

#[test]
fn arrow_claims_past_the_file_are_refused() {
    // A file whose footer says a record batch is a terabyte long (before: the reader
    // allocated it), and a stream whose null column claims 2^40 rows (before: a loop over
    // every one of them).
    if !has_modules(DATA_LIBRARIES) {
        return;
    }
    let dir = tempdir();
    py(
        dir.path(),
        r#"
import pyarrow as pa, struct
batch = pa.record_batch({"label": pa.array(list(range(7)) * 3)})
with pa.ipc.new_file("big-block.arrow", batch.schema) as w:
    w.write_batch(batch)
data = bytearray(open("big-block.arrow", "rb").read())
footer_len = struct.unpack("<i", data[-10:-6])[0]
footer = len(data) - 10 - footer_len
# The record batch follows the schema message: continuation marker, length, flatbuffer.
schema_len = struct.unpack("<i", data[12:16])[0]
batch_at = 16 + schema_len
# Its Block in the footer: offset (i64), metaDataLength (i32), padding, bodyLength (i64).
at = data.index(struct.pack("<q", batch_at), footer)
data[at + 16:at + 24] = struct.pack("<q", 1 << 40)
open("big-block.arrow", "wb").write(data)

nulls = pa.record_batch({"label": pa.nulls(7777777)})
sink = pa.BufferOutputStream()
with pa.ipc.new_stream(sink, nulls.schema) as w:
    w.write_batch(nulls)
data = sink.getvalue().to_pybytes().replace(struct.pack("<q", 7777777), struct.pack("<q", 1 << 40))
open("trillion-nulls.arrow", "wb").write(data)
"#,
    );
    let run = check_bounded(dir.path(), "big-block.arrow");
    assert_one_line_error(&run, "big-block.arrow", "a block past the end of the file");
    let run = check_bounded(dir.path(), "trillion-nulls.arrow");
    assert_read_or_refused(&run, "trillion-nulls.arrow");
}

#[test]
fn a_png_claiming_four_billion_pixels_is_read_row_by_row() {
    // A 65535x65535 16-bit header with a few rows of data. Before: an 8 GiB buffer for the
    // whole image, which `ulimit -v` refuses: an abort.
    let dir = tempdir();
    std::fs::write(dir.path().join("huge.png"), png_claiming(65535, 65535, 3)).unwrap();
    let run = check_bounded(dir.path(), "huge.png");
    assert_one_line_error(&run, "huge.png", "a PNG larger than its data");
}

/// A greyscale 16-bit PNG of `width` x `height` whose image data holds `rows` rows of zeros.
fn png_claiming(width: u32, height: u32, rows: usize) -> Vec<u8> {
    let chunk = |kind: &[u8], data: &[u8]| {
        let mut c = (data.len() as u32).to_be_bytes().to_vec();
        c.extend(kind);
        c.extend(data);
        c.extend(crc32(&c[4..]).to_be_bytes());
        c
    };
    let mut ihdr = width.to_be_bytes().to_vec();
    ihdr.extend(height.to_be_bytes());
    ihdr.extend([16, 0, 0, 0, 0]);
    let raw = vec![0u8; rows * (1 + 2 * width as usize)];
    let mut png = b"\x89PNG\r\n\x1a\n".to_vec();
    png.extend(chunk(b"IHDR", &ihdr));
    png.extend(chunk(b"IDAT", &zlib_stored(&raw)));
    png.extend(chunk(b"IEND", &[]));
    png
}

/// zlib data in stored (uncompressed) blocks.
fn zlib_stored(data: &[u8]) -> Vec<u8> {
    let mut out = vec![0x78, 0x01];
    let blocks: Vec<&[u8]> = data.chunks(65535).collect();
    for (i, block) in blocks.iter().enumerate() {
        out.push(u8::from(i + 1 == blocks.len()));
        out.extend((block.len() as u16).to_le_bytes());
        out.extend((!(block.len() as u16)).to_le_bytes());
        out.extend(*block);
    }
    let (mut a, mut b) = (1u32, 0u32);
    for &byte in data {
        a = (a + u32::from(byte)) % 65521;
        b = (b + a) % 65521;
    }
    out.extend(((b << 16) | a).to_be_bytes());
    out
}

fn crc32(bytes: &[u8]) -> u32 {
    let mut crc = !0u32;
    for &byte in bytes {
        crc ^= u32::from(byte);
        for _ in 0..8 {
            crc = if crc & 1 != 0 { (crc >> 1) ^ 0xedb8_8320 } else { crc >> 1 };
        }
    }
    !crc
}

#[test]
fn every_format_empty_or_cut_short_is_refused_in_one_line() {
    if !has_modules(DATA_LIBRARIES) {
        return;
    }
    let dir = tempdir();
    py(
        dir.path(),
        r#"
import numpy as np, pyarrow as pa, pyarrow.parquet as pq
from PIL import Image
from safetensors.numpy import save_file
y = np.arange(300) % 7
pq.write_table(pa.table({"label": y}), "a.parquet")
with pa.ipc.new_file("a.arrow", pa.schema([("label", pa.int64())])) as w:
    w.write_batch(pa.record_batch({"label": y}))
np.save("a.npy", y)
np.savez_compressed("a.npz", label=y)
save_file({"label": y}, "a.safetensors")
Image.fromarray((np.arange(400).reshape(20, 20) % 5).astype(np.uint8)).save("a.png")
"#,
    );
    let mut files = Vec::new();
    for ext in ["parquet", "arrow", "npy", "npz", "safetensors", "png"] {
        let data = std::fs::read(dir.path().join(format!("a.{ext}"))).unwrap();
        // Pillow reads a PNG whose last byte (of the end chunk's checksum) is missing, and
        // so does check: that cut is left out.
        let last = if ext == "png" { data.len() - 9 } else { data.len() - 1 };
        for cut in [0, 1, 7, 8, 11, data.len() / 3, data.len() / 2, data.len() - 9, last] {
            let name = format!("cut{cut}.{ext}");
            std::fs::write(dir.path().join(&name), &data[..cut]).unwrap();
            files.push(name);
        }
    }
    for (file, run) in files.iter().zip(check_all(dir.path(), &files)) {
        assert_one_line_error(&run, file, &format!("{file}, cut short"));
    }
}

#[test]
fn a_compressed_npz_member_is_streamed_in_bounded_memory() {
    // 200 million labels deflated to a few hundred kilobytes: read as a stream, within the
    // address space, whatever the member's size.
    if !has_modules(&["numpy"]) {
        return;
    }
    let dir = tempdir();
    py(
        dir.path(),
        r#"
import zipfile, numpy as np
n = 200_000_000
header = np.lib.format.header_data_from_array_1_0(np.zeros(1, np.uint8)); header["shape"] = (n,)
with zipfile.ZipFile("zeros.npz", "w", zipfile.ZIP_DEFLATED, allowZip64=True) as z:
    with z.open("label.npy", "w", force_zip64=True) as f:
        np.lib.format.write_array_header_1_0(f, header)
        block = bytes(1 << 24)
        for _ in range(n // len(block)):
            f.write(block)
        f.write(bytes(n % len(block)))
"#,
    );
    let run = check_bounded(dir.path(), "zeros.npz");
    assert_eq!(run.code, 0, "{}", run.stderr);
}
