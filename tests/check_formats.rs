//! `assertscope check` on every supported format, written by the real libraries: the
//! same labels (with the same planted problems) must give the same findings whatever
//! the format.

mod check_support;

use check_support::*;
use serde_json::json;

/// 1,000 labels in 0..9 with label 10 at rows 17 and 204.
const LABELS: &str = "
import numpy as np
rng = np.random.default_rng(0)
y = rng.integers(0, 10, 1000)
y[17] = 10
y[204] = 10
";

fn out_of_range_rows(run: &Run) -> serde_json::Value {
    let d = run.diagnosis("target-out-of-range");
    assert_eq!(d["values"]["bad_count"], 2, "{d}");
    assert_eq!(d["values"]["max"], 10);
    assert_eq!(d["values"]["bound"], 10);
    d["values"]["first_rows"].clone()
}

#[test]
fn csv_with_header_by_name_and_by_index() {
    if !has_modules(DATA_LIBRARIES) {
        return;
    }
    let dir = tempdir();
    py(dir.path(), &format!("{LABELS}\nimport csv\nf = open('labels.csv', 'w', newline='')\nw = csv.writer(f)\nw.writerow(['id', 'label'])\nw.writerows(enumerate(y))\nf.close()"));
    let run = check_json(dir.path(), &["labels.csv", "--column", "label", "--num-classes", "10"], 1);
    assert_eq!(out_of_range_rows(&run), json!([17, 204]));
    // Line numbers count the header: row 17 is line 19.
    assert_eq!(run.diagnosis("target-out-of-range")["location"]["line"], 19);
    let run = check_json(dir.path(), &["labels.csv", "--column", "1", "--num-classes", "10"], 1);
    assert_eq!(out_of_range_rows(&run), json!([17, 204]));
    check_json(dir.path(), &["labels.csv", "--column", "label", "--num-classes", "11"], 0);
}

#[test]
fn csv_with_quoted_fields_spanning_lines() {
    if !has_modules(DATA_LIBRARIES) {
        return;
    }
    let dir = tempdir();
    py(
        dir.path(),
        &(LABELS.to_string()
            + "import csv\nf = open('q.csv', 'w', newline='')\nw = csv.writer(f)\nw.writerow(['text', 'label'])\nw.writerows(('line one\\nline, two' if i % 7 == 0 else f't{i}', v) for i, v in enumerate(y))\nf.close()"),
    );
    let run = check_json(dir.path(), &["q.csv", "--column", "label", "--num-classes", "10"], 1);
    assert_eq!(out_of_range_rows(&run), json!([17, 204]));
    assert_eq!(run.diagnosis("target-out-of-range")["values"]["rows"], 1000);
}

#[test]
fn tsv_text_and_headerless_csv() {
    if !has_modules(DATA_LIBRARIES) {
        return;
    }
    let dir = tempdir();
    py(
        dir.path(),
        &format!(
            "{LABELS}\nopen('a.tsv', 'w').write('path\\tlabel\\n' + ''.join(f'img{{i}}.jpg\\t{{v}}\\n' for i, v in enumerate(y)))\nopen('a.txt', 'w').write(''.join(f'{{v}}\\n' for v in y))\nopen('b.csv', 'w').write(''.join(f'{{i}},{{v}}\\r\\n' for i, v in enumerate(y)))"
        ),
    );
    for args in [
        &["a.tsv", "--column", "label", "--num-classes", "10"][..],
        &["a.txt", "--num-classes", "10"],
        &["b.csv", "--column", "1", "--num-classes", "10"],
    ] {
        let run = check_json(dir.path(), args, 1);
        assert_eq!(out_of_range_rows(&run), json!([17, 204]), "{args:?}");
    }
}

#[test]
fn jsonl_nested_field_and_token_lists() {
    if !has_modules(DATA_LIBRARIES) {
        return;
    }
    let dir = tempdir();
    py(
        dir.path(),
        &format!(
            "{LABELS}\nimport json\nwith open('a.jsonl', 'w') as f:\n    for i, v in enumerate(y):\n        f.write(json.dumps({{'meta': {{'label': int(v)}}, 'ids': [1, 2, 3] if i != 5 else [1, 60000]}}) + '\\n')"
        ),
    );
    let run = check_json(dir.path(), &["a.jsonl", "--column", "meta.label", "--num-classes", "10"], 1);
    assert_eq!(out_of_range_rows(&run), json!([17, 204]));
    assert_eq!(run.diagnosis("target-out-of-range")["location"]["line"], 18);
    let run = check_json(dir.path(), &["a.jsonl", "--column", "ids", "--vocab-size", "50257"], 1);
    let d = run.diagnosis("embedding-index-out-of-range");
    assert_eq!(d["values"]["first_rows"], json!([5]));
    assert_eq!(d["values"]["max"], 60000);
}

#[test]
fn parquet_scalar_and_list_columns_across_shards() {
    if !has_modules(DATA_LIBRARIES) {
        return;
    }
    let dir = tempdir();
    py(
        dir.path(),
        &format!(
            "{LABELS}\nimport os, pyarrow as pa, pyarrow.parquet as pq\nos.mkdir('shards')\nfor k in range(4):\n    part = y[k * 250:(k + 1) * 250]\n    ids = [[1, 2, 3]] * len(part)\n    if k == 2: ids[7] = list(range(2000))\n    pq.write_table(pa.table({{'label': part, 'input_ids': ids}}), f'shards/part-{{k}}.parquet', row_group_size=100)"
        ),
    );
    let run = check_json(dir.path(), &["shards/*.parquet", "--column", "label", "--num-classes", "10"], 1);
    let d = run.diagnosis("target-out-of-range");
    assert_eq!(d["values"]["bad_count"], 2);
    assert_eq!(d["values"]["files"], 4);
    // Row 17 of the first shard and row 204 of the first shard.
    assert_eq!(d["values"]["first_rows"], json!([17, 204]));
    assert!(d["location"]["file"].as_str().unwrap().ends_with("part-0.parquet"));
    let run = check_json(
        dir.path(),
        &["shards", "--column", "input_ids", "--vocab-size", "50257", "--max-positions", "1024"],
        1,
    );
    let d = run.diagnosis("index-out-of-bounds");
    assert_eq!(d["values"]["bad_count"], 1);
    assert_eq!(d["values"]["first_rows"], json!([7]));
    assert!(d["location"]["file"].as_str().unwrap().ends_with("part-2.parquet"));
    check_json(dir.path(), &["shards", "--column", "input_ids", "--vocab-size", "50257"], 0);
}

#[test]
fn arrow_stream_with_a_class_label_feature() {
    if !has_modules(DATA_LIBRARIES) {
        return;
    }
    let dir = tempdir();
    py(
        dir.path(),
        &format!(
            "{LABELS}\nimport json, pyarrow as pa\nfeatures = {{'label': {{'names': [str(i) for i in range(10)], '_type': 'ClassLabel'}}}}\nschema = pa.schema([('label', pa.int64())], metadata={{'huggingface': json.dumps({{'info': {{'features': features}}}})}})\nwith pa.OSFile('data-00000-of-00001.arrow', 'wb') as sink:\n    with pa.ipc.new_stream(sink, schema) as w:\n        w.write_table(pa.table({{'label': y}}, schema=schema), max_chunksize=300)\nwith pa.OSFile('file.arrow', 'wb') as sink:\n    with pa.ipc.new_file(sink, schema) as w:\n        w.write_table(pa.table({{'label': y}}, schema=schema))"
        ),
    );
    // No --num-classes: the ClassLabel feature declares 10 classes.
    let run = check_json(dir.path(), &["data-00000-of-00001.arrow"], 1);
    assert_eq!(out_of_range_rows(&run), json!([17, 204]));
    let run = check_json(dir.path(), &["file.arrow", "--column", "label", "--num-classes", "10"], 1);
    assert_eq!(out_of_range_rows(&run), json!([17, 204]));
}

#[test]
fn feather_files_as_pandas_and_pyarrow_write_them_compressed() {
    if !has_modules(DATA_LIBRARIES) {
        return;
    }
    let dir = tempdir();
    // write_feather compresses with LZ4 unless told otherwise; zstd is its other codec.
    py(
        dir.path(),
        &format!(
            "{LABELS}\nimport pyarrow as pa, pyarrow.feather as feather\ntable = pa.table({{'label': y}})\nfeather.write_feather(table, 'default.feather', chunksize=300)\nfeather.write_feather(table, 'zstd.feather', compression='zstd')"
        ),
    );
    for file in ["default.feather", "zstd.feather"] {
        let run = check_json(dir.path(), &[file, "--column", "label", "--num-classes", "10"], 1);
        assert_eq!(out_of_range_rows(&run), json!([17, 204]), "{file}");
    }
}

#[test]
fn npy_dtypes_orders_and_endianness() {
    if !has_modules(DATA_LIBRARIES) {
        return;
    }
    let dir = tempdir();
    py(
        dir.path(),
        &format!(
            "{LABELS}\nfor t in ['<i8', '<i4', '>i2', '|u1', '<u2', '<f4', '<f8', '<f2', '>f8']:\n    np.save('y_' + t.replace('<', 'le').replace('>', 'be').replace('|', '') + '.npy', y.astype(t))\nnp.save('col.npy', np.asfortranarray(y.reshape(-1, 1)))"
        ),
    );
    for name in ["y_lei8", "y_lei4", "y_bei2", "y_u1", "y_leu2", "y_lef4", "y_lef8", "y_lef2", "y_bef8"] {
        let file = format!("{name}.npy");
        let run = check_json(dir.path(), &[&file, "--num-classes", "10"], 1);
        assert_eq!(out_of_range_rows(&run), json!([17, 204]), "{name}");
        if name.contains('f') {
            assert!(run.causes().contains(&"target-dtype".to_string()), "{name}: float labels");
        }
    }
    let run = check_json(dir.path(), &["col.npy", "--num-classes", "10"], 1);
    assert!(run.causes().contains(&"target-shape".to_string()), "[N, 1]: {}", run.stdout);
    assert_eq!(out_of_range_rows(&run), json!([17, 204]));
}

#[test]
fn npz_stored_and_compressed_members() {
    if !has_modules(DATA_LIBRARIES) {
        return;
    }
    let dir = tempdir();
    py(dir.path(), &format!("{LABELS}\nnp.savez('a.npz', x=np.zeros((1000, 3)), y=y)\nnp.savez_compressed('b.npz', x=np.zeros((1000, 3)), y=y)"));
    for file in ["a.npz", "b.npz"] {
        let run = check_json(dir.path(), &[file, "--column", "y", "--num-classes", "10"], 1);
        assert_eq!(out_of_range_rows(&run), json!([17, 204]), "{file}");
    }
    check_fails(dir.path(), &["a.npz", "--num-classes", "10"], &["a.npz", "--column", "x, y"]);
}

#[test]
fn safetensors_tensor_by_name() {
    if !has_modules(DATA_LIBRARIES) {
        return;
    }
    let dir = tempdir();
    if !has_modules(&["safetensors"]) {
        return;
    }
    py(
        dir.path(),
        &format!("{LABELS}\nfrom safetensors.numpy import save_file\nsave_file({{'labels': y.astype(np.int64), 'x': np.ones((1000, 2), dtype=np.float16)}}, 'd.safetensors')"),
    );
    let run = check_json(dir.path(), &["d.safetensors", "--column", "labels", "--num-classes", "10"], 1);
    assert_eq!(out_of_range_rows(&run), json!([17, 204]));
}

#[test]
fn png_masks_8_bit_16_bit_palette_and_rgb() {
    if !has_modules(DATA_LIBRARIES) {
        return;
    }
    let dir = tempdir();
    py(
        dir.path(),
        "
import os, numpy as np
from PIL import Image
os.mkdir('masks')
m = np.zeros((8, 12), dtype=np.uint8)
m[2:4, 3:5] = 5
m[0, 0] = 255
Image.fromarray(m, mode='L').save('masks/a.png')
bad = m.copy(); bad[6, 7] = 21
p = Image.fromarray(bad, mode='P'); p.putpalette([i % 256 for i in range(768)]); p.save('masks/b.png')
deep = m.astype(np.uint16); deep[1, 2] = 300
Image.fromarray(deep).save('masks/c.png')
os.mkdir('rgb')
Image.fromarray(np.zeros((4, 4, 3), dtype=np.uint8), mode='RGB').save('rgb/x.png')
",
    );
    let run = check_json(dir.path(), &["masks", "--num-classes", "21", "--ignore-index", "255"], 1);
    let d = run.diagnosis("target-out-of-range");
    assert_eq!(d["values"]["bad_count"], 2, "{d}");
    let evidence: Vec<&str> =
        d["evidence"].as_array().unwrap().iter().map(|e| e["text"].as_str().unwrap()).collect();
    assert!(
        evidence.iter().any(|e| e.contains("b.png") && e.contains("pixel (x 7, y 6): 21")),
        "{evidence:?}"
    );
    assert!(
        evidence.iter().any(|e| e.contains("c.png") && e.contains("pixel (x 2, y 1): 300")),
        "{evidence:?}"
    );
    // Without the ignore index, 255 is out of range and the finding says what it usually is.
    let run = check_json(dir.path(), &["masks/a.png", "--num-classes", "21"], 1);
    let fix = run.diagnosis("target-out-of-range")["fix"].as_str().unwrap().to_string();
    assert!(fix.contains("--ignore-index 255") && fix.contains("ignore_index=255"), "{fix}");
    let run = check_json(dir.path(), &["rgb", "--num-classes", "21"], 1);
    assert_eq!(run.causes(), vec!["target-shape"]);
}

#[test]
fn big_files_split_across_threads_keep_absolute_rows() {
    if !has_modules(DATA_LIBRARIES) {
        return;
    }
    let dir = tempdir();
    // ~30 MB of CSV and NPY, so that each file is read as several ranges.
    let rows = 3_000_000usize;
    let bad = [5usize, 1_234_567, 2_999_999];
    let mut csv = String::with_capacity(rows * 10);
    csv.push_str("id,label\n");
    for i in 0..rows {
        let v = if bad.contains(&i) { 10 } else { i % 10 };
        csv.push_str(&format!("{i},{v}\n"));
    }
    std::fs::write(dir.path().join("big.csv"), csv).unwrap();
    py(
        dir.path(),
        &format!("import numpy as np\ny = np.arange({rows}) % 10\ny[{bad:?}] = 10\nnp.save('big.npy', y)"),
    );
    for file in ["big.csv", "big.npy"] {
        let mut args = vec![file, "--num-classes", "10", "--threads", "4"];
        if file.ends_with(".csv") {
            args.extend(["--column", "label"]);
        }
        let run = check_json(dir.path(), &args, 1);
        let d = run.diagnosis("target-out-of-range");
        assert_eq!(d["values"]["first_rows"], json!(bad), "{file}");
        assert_eq!(d["values"]["rows"], rows, "{file}");
        if file.ends_with(".csv") {
            assert_eq!(d["evidence"][3]["source_line"], 3_000_001);
        }
    }
}
