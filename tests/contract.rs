//! The Python package's copy of the contract (`assertscope/_contract.py`) equals the
//! binary's (`src/contract.rs`): the same names and values, and the same answers from the
//! two rules (rank from the environment, host name in a file name). Needs a Python 3.

use assertscope::contract::{self, env};
use serde_json::{json, Value};
use std::path::Path;
use std::process::Command;

fn python() -> std::path::PathBuf {
    std::env::var_os("ASSERTSCOPE_TEST_PYTHON").map_or_else(|| "python3".into(), Into::into)
}

fn python_json(code: &str, envs: &[(&str, &str)]) -> Value {
    let mut cmd = Command::new(python());
    cmd.arg("-c").arg(format!("import json\nfrom assertscope import _contract as c\n{code}"));
    cmd.env("PYTHONPATH", Path::new(env!("CARGO_MANIFEST_DIR")).join("python"));
    for name in contract::RANK_VARIABLES {
        cmd.env_remove(name);
    }
    cmd.envs(envs.iter().copied());
    let out =
        cmd.output().unwrap_or_else(|e| panic!("this test needs a Python 3 ({}): {e}", python().display()));
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn names_and_values_are_the_same() {
    let python = python_json(
        "print(json.dumps([c.REPORT_DIR_ENV, c.GUARD_ENV, c.GUARD_MODE_ENV, c.CPU_ENV, c.TMPDIR_ENV, c.RUN_ID_ENV, c.BIN_ENV, \
         c.RAY_RUNTIME_ENV_ENV, c.RAY_HOOK_ENV, c.RAY_RUNTIME_ENV_HOOK, c.RAY_RUN_ID_SUFFIX, c.GUARD_MODES, c.RANK_VARIABLES, c.LOCAL_RANK_VARIABLES, c.WORLD_SIZE_VARIABLES, c.SCAN_RESULT_VERSION]))",
        &[],
    );
    let rust = json!([
        env::REPORT_DIR,
        env::GUARD,
        env::GUARD_MODE,
        env::CPU,
        env::TMPDIR,
        env::RUN_ID,
        env::BIN,
        env::RAY_RUNTIME_ENV,
        env::RAY_HOOK,
        contract::RAY_RUNTIME_ENV_HOOK,
        contract::RAY_RUN_ID_SUFFIX,
        contract::GUARD_MODES,
        contract::RANK_VARIABLES,
        contract::LOCAL_RANK_VARIABLES,
        contract::WORLD_SIZE_VARIABLES,
        contract::SCAN_RESULT_VERSION,
    ]);
    assert_eq!(python, rust);
}

#[test]
fn host_names_are_cleaned_alike() {
    let names = ["node07", "gpu-a100.cluster.local", "my host", "ñandú-01", "", "a/b\\c:d", "节点3"];
    let python =
        python_json(&format!("print(json.dumps([c.file_name_host(n) for n in {}]))", json!(names)), &[]);
    let rust: Vec<String> = names.iter().map(|n| contract::file_name_host(n)).collect();
    assert_eq!(python, json!(rust));
    assert_eq!(rust[2], "my_host");
    assert_eq!(rust[4], "host");
}

#[test]
fn launcher_numbers_are_read_alike() {
    let values = ["3", " 7 ", "x", "+3", "-1", "", "0", "4294967295", "4294967296", "٣"];
    let python = python_json(&format!("print(json.dumps([c.number(v) for v in {}]))", json!(values)), &[]);
    let rust: Vec<Option<u32>> = values.iter().map(|v| contract::number(v)).collect();
    assert_eq!(python, json!(rust));
    assert_eq!(rust[..5], [Some(3), Some(7), None, None, None]);
}

#[test]
fn the_rank_comes_from_the_first_launcher_variable_set() {
    type Environment<'a> = &'a [(&'a str, &'a str)];
    let cases: [(Environment, Option<u32>); 4] = [
        (&[("RANK", "3"), ("SLURM_PROCID", "9")], Some(3)),
        (&[("SLURM_PROCID", " 7 ")], Some(7)),
        (&[("RANK", "x"), ("OMPI_COMM_WORLD_RANK", "2")], Some(2)),
        (&[], None),
    ];
    for (envs, expected) in cases {
        assert_eq!(python_json("print(json.dumps(c.rank()))", envs), json!(expected), "{envs:?}");
    }
}

#[test]
fn the_guard_error_text_is_written_and_read_alike() {
    use contract::guard_text;
    let python = python_json(
        "print(json.dumps([c.GUARD_ERROR_TYPE, c.FOUND_NOTE, c.REPORTED_BY_RUN, \
         c.headline('target-out-of-range', c.title_with_op('class target out of range', 'cross_entropy'))]))",
        &[],
    );
    let title = guard_text::title_with_op("class target out of range", "cross_entropy");
    let headline = guard_text::headline("target-out-of-range", &title);
    let rust =
        json!([guard_text::GUARD_ERROR_TYPE, guard_text::FOUND_NOTE, guard_text::REPORTED_BY_RUN, headline]);
    assert_eq!(python, rust);
    assert_eq!(guard_text::parse_headline(&headline), Some(("target-out-of-range", title.as_str())));
    let pointed = format!("{headline} {}", guard_text::REPORTED_BY_RUN);
    assert_eq!(guard_text::parse_headline(&pointed), Some(("target-out-of-range", title.as_str())));
    assert_eq!(guard_text::op_of_title(&title, "class target out of range"), Some("cross_entropy"));
    assert_eq!(
        guard_text::parse_location("  --> examples/a b.py:32:13"),
        Some(("examples/a b.py", 32, Some(13)))
    );
    assert_eq!(guard_text::parse_location("--> Cell In[7]:3"), Some(("Cell In[7]", 3, None)));
}

#[test]
fn numbers_are_rounded_alike() {
    let values = [
        0.0,
        -0.0,
        1.0,
        5.0,
        0.5,
        -0.6537530422210693,
        0.2491968870162964,
        12345.678,
        9999.5,
        0.000012345,
        1e-4,
        123456789.0,
        -2.5e-7,
        3.16228,
        1e16,
        0.1 + 0.2,
    ];
    let python =
        python_json(&format!("print(json.dumps([c.readable_number(v) for v in {}]))", json!(values)), &[]);
    let rust: Vec<String> = values.iter().map(|&v| contract::guard_text::readable_number(v)).collect();
    assert_eq!(python, json!(rust));
    assert_eq!(rust[5], "-0.6538");
}

#[test]
fn a_found_note_states_the_values_it_was_written_from() {
    // (bad, total, noun, low, high, sizes, bad values, positions): the guard's own phrasing.
    let cases = json!([
        [9, 64, "targets", 0, 5, [["C", 5], ["ignore_index", -100]], [5, 5, 5], [[2], [17], [19]]],
        [1, 7, "ids", 0, 10, [["num_embeddings", 10]], [10], [[0, 0]]],
        [3, 4096, "targets", -1, 3, [], [255, 7, -2], [[0, 0, 1], [1, 2, 3], [3, 3, 3]]],
        [2, 512, "input values", 0, 1, [], [-0.20682282745838165, 1.5], [[1], [2]]]
    ]);
    let python = python_json(
        &format!(
            "out = []\n\
             for bad, total, noun, low, high, sizes, values, positions in {cases}:\n\
             \x20   sized = f' ({{c.sizes_text(sizes)}})' if sizes else ''\n\
             \x20   out.append(f'{{c.count_phrase(bad, total, noun)}} outside {{c.interval(low, high)}}{{sized}}: '\n\
             \x20              + c.positions_text(values, positions, bad))\n\
             print(json.dumps(out))"
        ),
        &[],
    );
    for (case, text) in cases.as_array().unwrap().iter().zip(python.as_array().unwrap()) {
        let text = text.as_str().unwrap();
        let read = contract::guard_text::parse_found(text);
        assert_eq!(read["bad_count"], case[0], "{text}");
        assert_eq!(read["numel"], case[1], "{text}");
        assert_eq!(read["bound"], case[4], "{text}");
        assert_eq!(read.get("low").cloned().unwrap_or(json!(0)), case[3], "{text}");
        for pair in case[5].as_array().unwrap() {
            let key = if pair[0] == "C" { "classes" } else { pair[0].as_str().unwrap() };
            assert_eq!(read[key], pair[1], "{text}");
        }
        assert_eq!(read["positions"], case[7], "{text}");
        for (got, want) in read["bad_values"].as_array().unwrap().iter().zip(case[6].as_array().unwrap()) {
            let (got, want) = (got.as_f64().unwrap(), want.as_f64().unwrap());
            assert!((got - want).abs() <= want.abs() * 1e-3, "{got} for {want} in {text}");
        }
    }
}

/// The Python copy of the values (`_contract_values.py`) is the one `contract::python_values`
/// writes, byte for byte: a value changed on one side alone fails here.
#[test]
fn the_python_values_are_written_from_the_rust_ones() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("python/assertscope/_contract_values.py");
    let expected = contract::python_values();
    if std::env::var_os("ASSERTSCOPE_BLESS").is_some_and(|v| v == "1") {
        std::fs::write(&path, &expected).unwrap();
    }
    let found = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        found == expected,
        "{} differs from src/contract.rs; write it with `ASSERTSCOPE_BLESS=1 cargo test --test contract`\n--- found\n{found}\n--- expected\n{expected}",
        path.display()
    );
}

/// The fields a serde struct reads, as serde hands them to `deserialize_struct`.
fn struct_fields<T: serde::de::DeserializeOwned>() -> &'static [&'static str] {
    use serde::de::Visitor;

    #[derive(Debug)]
    struct Fields(&'static [&'static str]);
    impl std::fmt::Display for Fields {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            write!(f, "{:?}", self.0)
        }
    }
    impl std::error::Error for Fields {}
    impl serde::de::Error for Fields {
        fn custom<T: std::fmt::Display>(_: T) -> Self {
            Fields(&[])
        }
    }
    struct FieldNames;
    impl<'de> serde::Deserializer<'de> for FieldNames {
        type Error = Fields;
        fn deserialize_any<V: Visitor<'de>>(self, _: V) -> Result<V::Value, Fields> {
            Err(Fields(&[]))
        }
        fn deserialize_struct<V: Visitor<'de>>(
            self,
            _: &'static str,
            fields: &'static [&'static str],
            _: V,
        ) -> Result<V::Value, Fields> {
            Err(Fields(fields))
        }
        serde::forward_to_deserialize_any! {
            bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes byte_buf
            option unit unit_struct newtype_struct seq tuple tuple_struct map enum identifier ignored_any
        }
    }
    T::deserialize(FieldNames).err().map_or(&[], |Fields(fields)| fields)
}

/// The binary's reader of the scan's facts reads the fields of the contract, which the Python
/// side writes (tests/python/test_scan.py checks a real scan's document against the same list).
#[test]
fn the_scan_facts_reader_reads_the_fields_of_the_contract() {
    let mut read = struct_fields::<assertscope::check::scan_facts::ScanFacts>().to_vec();
    let mut agreed = contract::SCAN_FACTS_FIELDS.to_vec();
    read.sort_unstable();
    agreed.sort_unstable();
    assert_eq!(read, agreed);
}
