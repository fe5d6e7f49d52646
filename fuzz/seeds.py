"""Writes the seed files of the data-file fuzz targets: small valid files of every format
`check` reads, written by the libraries that write them in practice (pyarrow, numpy,
safetensors, Pillow), each holding a column, tensor or member named `label`.

    python fuzz/seeds.py fuzz/seeds

libFuzzer then mutates them (bytes changed, inserted, erased, runs copied between files),
so that the readers meet corrupt files that are mostly valid: past the magic, the footer
and the header, where a decoder trusts what it has already checked.
"""

import io
import json
import sys
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
from PIL import Image
from safetensors.numpy import save as save_safetensors

ROWS = 24


def labels(n=ROWS, mod=7):
    return np.arange(n, dtype=np.int64) % mod


def parquet(out: Path):
    ints = pa.array([None if i % 5 == 0 else i % 7 for i in range(ROWS)], type=pa.int64())
    lists = pa.array([None if i % 6 == 0 else list(range(i % 4)) for i in range(ROWS)], type=pa.list_(pa.int32()))
    tables = {
        "int64_nullable": pa.table({"label": ints}),
        "int32_required": pa.table(
            pa.RecordBatch.from_arrays([pa.array(labels(), type=pa.int32())], schema=pa.schema([pa.field("label", pa.int32(), nullable=False)]))
        ),
        "uint8": pa.table({"label": pa.array(labels(), type=pa.uint8())}),
        "bool": pa.table({"label": pa.array([i % 2 == 0 for i in range(ROWS)])}),
        "float64_nan": pa.table({"label": pa.array([float(i % 3) if i % 7 else float("nan") for i in range(ROWS)])}),
        "float16": pa.table({"label": pa.array(np.arange(ROWS, dtype=np.float16) % 5)}),
        "text_dictionary": pa.table({"label": pa.array(["cat", "dog", "7", None] * (ROWS // 4)).dictionary_encode()}),
        "list_int32": pa.table({"label": lists}),
        "fixed_size_list": pa.table({"label": pa.FixedSizeListArray.from_arrays(pa.array(labels(ROWS * 3) % 2), 3)}),
        "two_columns": pa.table({"text": pa.array(["a"] * ROWS), "label": pa.array(labels())}),
    }
    for name, table in tables.items():
        pq.write_table(table, out / f"{name}.parquet")
    table = tables["int64_nullable"]
    for codec in ["snappy", "zstd", "gzip", "lz4", "none"]:
        pq.write_table(table, out / f"codec_{codec}.parquet", compression=codec)
    pq.write_table(table, out / "page_v2.parquet", data_page_version="2.0")
    pq.write_table(table, out / "row_groups.parquet", row_group_size=5)
    pq.write_table(table, out / "no_dictionary.parquet", use_dictionary=False)
    pq.write_table(tables["list_int32"], out / "list_page_v2.parquet", data_page_version="2.0", compression="none")


def arrow(out: Path):
    batches = {
        "int64": pa.record_batch({"label": pa.array(labels())}),
        "dictionary": pa.record_batch({"label": pa.array(["cat", "dog", None] * (ROWS // 3)).dictionary_encode()}),
        "list": pa.record_batch({"label": pa.array([list(range(i % 5)) for i in range(ROWS)], type=pa.list_(pa.int32()))}),
        "large_list": pa.record_batch({"label": pa.array([[i % 3] * (i % 3) for i in range(ROWS)], type=pa.large_list(pa.int64()))}),
        "float16": pa.record_batch({"label": pa.array(np.arange(ROWS, dtype=np.float16))}),
        "bool_nulls": pa.record_batch({"label": pa.array([None if i % 4 == 0 else i % 2 == 1 for i in range(ROWS)])}),
        "null": pa.record_batch({"label": pa.nulls(ROWS)}),
        "text": pa.record_batch({"label": pa.array([str(i % 9) for i in range(ROWS)])}),
        "struct": pa.record_batch({"label": pa.StructArray.from_arrays([pa.array(labels())], names=["id"])}),
    }
    for name, batch in batches.items():
        with pa.ipc.new_file(out / f"{name}.arrow", batch.schema) as writer:
            writer.write_batch(batch)
            writer.write_batch(batch.slice(3, 7))
        with pa.ipc.new_stream(out / f"{name}_stream.arrow", batch.schema) as writer:
            writer.write_batch(batch)
            writer.write_batch(batch.slice(5))


def npy(out: Path):
    arrays = {
        "int64": labels(),
        "int32_2d": labels(ROWS).astype(np.int32).reshape(6, 4),
        "uint8": labels().astype(np.uint8),
        "bool": labels() % 2 == 0,
        "float32": labels().astype(np.float32) / 2,
        "float16": labels().astype(np.float16),
        "big_endian": labels().astype(">i4"),
        "fortran": np.asfortranarray(labels().reshape(4, 6)),
        "scalar": np.array(3),
        "empty": np.zeros((0, 3), dtype=np.int64),
    }
    for name, array in arrays.items():
        np.save(out / f"{name}.npy", array)
    buf = io.BytesIO()
    np.lib.format.write_array(buf, labels(), version=(2, 0))
    (out / "version2.npy").write_bytes(buf.getvalue())


def npz(out: Path):
    np.savez(out / "stored.npz", label=labels(), features=np.ones((ROWS, 2), dtype=np.float32))
    np.savez_compressed(out / "compressed.npz", label=labels(), features=np.ones((ROWS, 2), dtype=np.float32))
    np.savez_compressed(out / "compressed_2d.npz", label=labels(ROWS * 2).reshape(ROWS, 2).astype(np.uint8))


def safetensors(out: Path):
    tensors = {
        "int64": {"label": labels()},
        "int32_2d": {"label": labels(ROWS).astype(np.int32).reshape(6, 4), "other": np.ones(3, dtype=np.float32)},
        "uint8": {"label": labels().astype(np.uint8)},
        "float16": {"label": labels().astype(np.float16)},
        "bool": {"label": labels() % 2 == 0},
    }
    for name, tensor in tensors.items():
        (out / f"{name}.safetensors").write_bytes(save_safetensors(tensor, metadata={"format": "np"}))


def png(out: Path):
    mask = (np.arange(12 * 10).reshape(12, 10) % 5).astype(np.uint8)
    Image.fromarray(mask).save(out / "grey8.png")
    Image.fromarray(mask.astype(np.uint16) * 300).save(out / "grey16.png")
    palette = Image.fromarray(mask).convert("P")
    palette.save(out / "palette.png")
    palette.save(out / "palette4.png", bits=4)
    Image.fromarray(mask % 2 == 1).save(out / "bits1.png")
    Image.fromarray(np.stack([mask, mask], axis=-1), "LA").save(out / "grey_alpha.png")
    Image.fromarray(np.stack([mask] * 3, axis=-1)).save(out / "rgb.png")


def text(out: Path):
    (out / "csv").mkdir(exist_ok=True)
    (out / "jsonl").mkdir(exist_ok=True)
    (out / "txt").mkdir(exist_ok=True)
    rows = [(i, i % 7) for i in range(ROWS)]
    (out / "csv" / "header.csv").write_text("id,label\n" + "".join(f"{i},{y}\n" for i, y in rows))
    (out / "csv" / "quoted.csv").write_text('id,label,text\n' + "".join(f'{i},{y},"a, ""b""\nc"\n' for i, y in rows[:6]))
    (out / "csv" / "crlf.csv").write_bytes(("label\r\n" + "".join(f"{y}\r\n" for _, y in rows)).encode())
    (out / "csv" / "nulls.csv").write_text("label,x\n1,a\n,b\nNA,c\n3.0,d\n-100,e\n12,f\n")
    (out / "jsonl" / "objects.jsonl").write_text("".join(json.dumps({"id": i, "label": y}) + "\n" for i, y in rows))
    (out / "jsonl" / "lists.jsonl").write_text("".join(json.dumps({"label": list(range(i % 5))}) + "\n" for i in range(ROWS)))
    (out / "jsonl" / "nested.jsonl").write_text("".join(json.dumps({"label": {"id": y}}) + "\n" for _, y in rows))
    (out / "txt" / "lines.txt").write_text("label\n" + "".join(f"{y}\n" for _, y in rows))


def main():
    root = Path(sys.argv[1] if len(sys.argv) > 1 else "fuzz/seeds")
    for name, write in [("parquet", parquet), ("arrow", arrow), ("npy", npy), ("npz", npz),
                        ("safetensors", safetensors), ("png", png)]:
        out = root / f"check_{name}"
        out.mkdir(parents=True, exist_ok=True)
        write(out)
    scratch = root / "text"
    scratch.mkdir(parents=True, exist_ok=True)
    text(scratch)
    for name in ["csv", "jsonl", "txt"]:
        target = root / f"check_{name}"
        target.mkdir(exist_ok=True)
        for f in (scratch / name).iterdir():
            f.rename(target / f.name)
        (scratch / name).rmdir()
    scratch.rmdir()


if __name__ == "__main__":
    main()
