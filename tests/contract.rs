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
        "print(json.dumps([c.REPORT_DIR_ENV, c.GUARD_ENV, c.GUARD_MODE_ENV, c.CPU_ENV, c.TMPDIR_ENV, c.RUN_ID_ENV, \
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
