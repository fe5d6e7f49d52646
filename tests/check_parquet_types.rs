//! Parquet columns of every type `check` reads, written by pyarrow, must give exactly what
//! the same table written as an Arrow IPC file gives. The two readers share nothing below
//! the stats: Parquet is decoded by parquet's own column reader from values and levels,
//! Arrow IPC by arrow's IPC reader into Arrow arrays. Each table is also written with
//! several row groups, in pages of a few values without dictionary encoding, with pages
//! of version 2, and without the embedded Arrow schema, so that nulls, list rows and
//! pages meet at every boundary.

mod check_support;

use check_support::*;

/// The tables: `name = pyarrow array`, each written as `{name}.arrow` and as Parquet
/// files `{name}.parquet` (default writer settings), `{name}-pages.parquet` (plain
/// encoding, pages of a few values, so that list rows span pages), `{name}-v2.parquet`
/// (data pages of version 2) and `{name}-bare.parquet` (no `ARROW:schema`). (Pages of
/// version 2 are not made tiny: pyarrow 26 then writes `list<bool>` columns that it
/// cannot read back itself.) Row 5 and row 31 hold bad values where the type allows.
const TABLES: &str = r#"
import numpy as np, pyarrow as pa, pyarrow.parquet as pq
n = 40
def ints(bad=12):
    v = [i % 7 for i in range(n)]
    v[5] = bad; v[31] = -1
    return v
def with_nulls(v, rows=(2, 17)):
    return [None if i in rows else x for i, x in enumerate(v)]
def rows_of(width=None):
    out = []
    for i in range(n):
        row = [(i + k) % 9 for k in range(width or (i % 6))]
        if i == 5: row = (row + [150])[: width or None] if width else row + [150]
        out.append(row)
    return out
one_hot = [[1.0 if k == i % 3 else 0.0 for k in range(3)] for i in range(n)]
one_hot[5] = [1.0, 1.0, 0.5]
one_hot[9] = None
lists = rows_of()
lists[3] = None
lists[11] = []
lists[12] = [1, None, 3]
# A null struct is a null field in Parquet; in Arrow IPC its fields keep their own
# validity, so they are null here too, to read alike.
struct = pa.StructArray.from_arrays(
    [pa.array(with_nulls(ints(), (4,)), pa.int64()),
     pa.array([None if i == 4 else r for i, r in enumerate(rows_of())], pa.list_(pa.int32()))],
    fields=[pa.field('a', pa.int64()), pa.field('b', pa.list_(pa.int32()))],
    mask=pa.array([i == 4 for i in range(n)]))
tables = {
    'int8': pa.array(with_nulls(ints()), pa.int8()),
    'int16': pa.array(with_nulls(ints()), pa.int16()),
    'int32': pa.array(with_nulls(ints()), pa.int32()),
    'int64': pa.array(with_nulls(ints()), pa.int64()),
    'int64_required': pa.array(ints(), pa.int64()),
    'uint8': pa.array(with_nulls(ints(200)[:31] + [3] * 9), pa.uint8()),
    'uint16': pa.array(ints(60000)[:31] + [3] * 9, pa.uint16()),
    'uint32': pa.array(with_nulls(ints(4_000_000_000)[:31] + [3] * 9), pa.uint32()),
    'uint64': pa.array(ints(2**64 - 5)[:31] + [3] * 9, pa.uint64()),
    'float16': pa.array(np.array(with_nulls([0.5 if i == 5 else float(i % 7) for i in range(n)]), dtype=object)
                        .astype(float).astype(np.float16)),
    'float32': pa.array(with_nulls([float('nan') if i == 5 else float(i % 7) for i in range(n)]), pa.float32()),
    'float64': pa.array(with_nulls([2.5 if i == 5 else float(i % 7) for i in range(n)]), pa.float64()),
    'bool': pa.array(with_nulls([i % 3 == 0 for i in range(n)]), pa.bool_()),
    'text': pa.array(with_nulls([str(i % 7) if i != 5 else 'cat' for i in range(n)]), pa.string()),
    'large_text': pa.array(with_nulls([str(i % 7) for i in range(n)]), pa.large_string()),
    'dict_text': pa.array(with_nulls([['dog', 'cat', 'bird'][i % 3] for i in range(n)])).dictionary_encode(),
    'dict_int': pa.array(with_nulls(ints())).dictionary_encode(),
    'nulls': pa.nulls(n),
    'list_int64': pa.array(lists, pa.list_(pa.int64())),
    'large_list_int32': pa.array(rows_of(), pa.large_list(pa.int32())),
    'list_uint16': pa.array(rows_of(), pa.list_(pa.uint16())),
    'list_float16': pa.array([np.array(r, dtype=np.float16) for r in rows_of()], pa.list_(pa.float16())),
    'list_bool': pa.array([[k % 2 == 0 for k in r] for r in rows_of()], pa.list_(pa.bool_())),
    'one_hot': pa.array(one_hot, pa.list_(pa.float32(), 3)),
    'multi_hot_int': pa.array([[1 if k == i % 4 else 0 for k in range(4)] for i in range(n)], pa.list_(pa.int8(), 4)),
    'struct': struct,
    'list_text': pa.array([['a', 'b']] * n, pa.list_(pa.string())),
    'list_list': pa.array([[[1], [2, 3]]] * n, pa.list_(pa.list_(pa.int64()))),
    'date': pa.array([0] * n, pa.date32()),
    'timestamp': pa.array([0] * n, pa.timestamp('ms')),
    'duration': pa.array([0] * n, pa.duration('s')),
    'binary': pa.array([b'x'] * n, pa.binary()),
    'decimal': pa.array([1] * n, pa.decimal128(5, 2)),
}
for name, column in tables.items():
    table = pa.table({'x': column})
    with pa.OSFile(f'{name}.arrow', 'wb') as sink:
        with pa.ipc.new_file(sink, table.schema) as w:
            w.write_table(table, max_chunksize=9)
    pq.write_table(table, f'{name}.parquet', row_group_size=16)
    pq.write_table(table, f'{name}-pages.parquet', row_group_size=9, use_dictionary=False,
                   data_page_size=64, write_batch_size=2)
    pq.write_table(table, f'{name}-v2.parquet', row_group_size=7, data_page_version='2.0')
    pq.write_table(table, f'{name}-bare.parquet', store_schema=False, row_group_size=13)
"#;

/// `check` on one file, its output with the file's name taken out.
fn run(dir: &std::path::Path, file: &str, args: &[&str]) -> (i32, String, String) {
    let mut all = vec!["check", file, "--json"];
    if !args.contains(&"--column") {
        all.extend(["--column", "x"]);
    }
    all.extend_from_slice(args);
    let r = assertscope(dir, &all);
    (r.code, r.stdout.replace(file, "FILE"), r.stderr.replace(file, "FILE"))
}

/// Asserts every Parquet variant of `name` reads as its Arrow IPC file does (the bare
/// variant only when `bare_too`: without the Arrow schema, some types read as their
/// storage), and returns that result for further checks.
fn same_as_ipc(dir: &std::path::Path, name: &str, args: &[&str], bare_too: bool) -> (i32, String, String) {
    let ipc = run(dir, &format!("{name}.arrow"), args);
    let mut variants =
        vec![format!("{name}.parquet"), format!("{name}-pages.parquet"), format!("{name}-v2.parquet")];
    if bare_too {
        variants.push(format!("{name}-bare.parquet"));
    }
    for file in variants {
        let parquet = run(dir, &file, args);
        assert_eq!(parquet, ipc, "{file} read differently from {name}.arrow with {args:?}");
    }
    ipc
}

fn causes(stdout: &str) -> Vec<String> {
    let v: serde_json::Value = serde_json::from_str(stdout).unwrap_or_else(|e| panic!("{e}: {stdout}"));
    v["diagnoses"].as_array().unwrap().iter().map(|d| d["cause"].as_str().unwrap().to_string()).collect()
}

#[test]
fn every_column_type_reads_as_arrow_ipc_does() {
    if !has_modules(DATA_LIBRARIES) {
        return;
    }
    let dir = tempdir();
    let d = dir.path();
    py(d, TABLES);

    for name in ["int8", "int16", "int32", "int64", "int64_required", "uint8", "uint32", "dict_int"] {
        let (code, out, _) = same_as_ipc(d, name, &["--num-classes", "7"], true);
        assert_eq!(code, 1, "{name}: {out}");
        assert!(causes(&out).contains(&"target-out-of-range".to_string()), "{name}: {out}");
        assert!(out.contains("row 5: "), "{name}: row 5 is out of range: {out}");
    }
    // The largest unsigned values stay unsigned (a signed reading would make them -5).
    let (_, out, _) = same_as_ipc(d, "uint64", &["--num-classes", "7"], true);
    assert!(
        out.contains("row 5: 18446744073709551611") || out.contains("row 5: 9223372036854775807"),
        "{out}"
    );
    let (_, out, _) = same_as_ipc(d, "uint16", &["--num-classes", "7"], true);
    assert!(out.contains("row 5: 60000"), "{out}");

    for name in ["float16", "float32", "float64"] {
        let (code, out, _) = same_as_ipc(d, name, &["--num-classes", "7"], true);
        assert_eq!(code, 1, "{name}: {out}");
    }
    for (name, bare_too) in
        [("bool", true), ("text", true), ("large_text", false), ("dict_text", true), ("nulls", true)]
    {
        same_as_ipc(d, name, &["--num-classes", "7"], bare_too);
    }
    let (_, out, _) = same_as_ipc(d, "text", &["--num-classes", "7"], true);
    assert!(out.contains("cat"), "{out}");

    for name in ["list_int64", "large_list_int32", "list_uint16", "list_float16", "list_bool"] {
        let (code, out, _) = same_as_ipc(
            d,
            name,
            &["--vocab-size", "100", "--max-positions", "4"],
            name != "large_list_int32",
        );
        assert_eq!(code, 1, "{name}: {out}");
    }
    let (_, out, _) = same_as_ipc(d, "list_int64", &["--vocab-size", "100"], true);
    assert!(out.contains("row 5, position"), "token 150 of row 5 is named with its position: {out}");

    // Fixed-size lists keep their width only through the embedded Arrow schema.
    for name in ["one_hot", "multi_hot_int"] {
        let (code, out, _) = same_as_ipc(d, name, &["--task", "multilabel", "--num-classes", "3"], false);
        assert_ne!(code, 2, "{name}: {out}");
    }

    let (code, out, _) = same_as_ipc(d, "struct", &["--column", "x.a", "--num-classes", "7"], true);
    assert_eq!(code, 1, "{out}");
    same_as_ipc(d, "struct", &["--column", "x.b", "--vocab-size", "8"], true);
    let (code, _, err) = same_as_ipc(d, "struct", &["--column", "x.c"], true);
    assert_eq!(code, 2);
    assert!(err.contains("no struct field `c`; the struct has: a, b"), "{err}");
    let (code, _, err) = same_as_ipc(d, "int64", &["--column", "x.a"], true);
    assert_eq!(code, 2);
    assert!(err.contains("not a struct"), "{err}");

    // Types check does not read are refused alike, with the type named.
    for (name, shown, bare_too) in [
        ("list_text", "unsupported list element type text", true),
        ("list_list", "unsupported list element type list<int64>", true),
        ("date", "unsupported column type Date32", true),
        ("timestamp", "unsupported column type Timestamp", false),
        ("duration", "unsupported column type Duration", false),
        ("binary", "unsupported column type Binary", true),
        ("decimal", "unsupported column type Decimal128(5, 2)", true),
        ("struct", "unsupported column type struct<a: int64, b: list<int32>>", true),
    ] {
        let (code, _, err) = same_as_ipc(d, name, &["--num-classes", "7"], bare_too);
        assert_eq!(code, 2, "{name}: {err}");
        assert!(err.contains(shown), "{name}: {shown:?} missing from {err}");
    }
}
