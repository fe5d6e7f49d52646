//! `assertscope explain` on log formats beyond the development set: collector
//! timestamps, Lightning progress bars, Windows and CRLF, a pasted message alone, Open MPI
//! tags, `[CUDA_KERNEL_ASSERT]` values, IPython cells and Python 3.13 colours.

use std::process::Command;

fn explain(name: &str) -> serde_json::Value {
    let path = format!("{}/tests/fixtures/logs/{name}.log", env!("CARGO_MANIFEST_DIR"));
    let out =
        Command::new(env!("CARGO_BIN_EXE_assertscope")).args(["explain", "--json", &path]).output().unwrap();
    serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{name}: {e}: {}", String::from_utf8_lossy(&out.stderr)))
}

struct Want {
    log: &'static str,
    cause: &'static str,
    op: Option<&'static str>,
    file: Option<&'static str>,
    line: Option<u64>,
    rank: Option<u64>,
}

const WANT: &[Want] = &[
    Want {
        log: "cloud-timestamps",
        cause: "embedding-index-out-of-range",
        op: Some("embedding"),
        file: Some("/app/finetune.py"),
        line: Some(160),
        rank: None,
    },
    Want {
        log: "lightning",
        cause: "target-out-of-range",
        op: Some("cross_entropy"),
        file: Some("/home/ana/proj/model.py"),
        line: Some(58),
        rank: None,
    },
    Want {
        log: "windows-embedding",
        cause: "embedding-index-out-of-range",
        op: Some("embedding"),
        file: Some(r"C:\Users\kim\nlp\model.py"),
        line: Some(21),
        rank: None,
    },
    Want { log: "pasted-message", cause: "cascade", op: None, file: None, line: None, rank: None },
    Want {
        log: "mpirun-tagged",
        cause: "index-out-of-bounds",
        op: Some("gather"),
        file: Some("/scratch/u/rl/ppo.py"),
        line: Some(131),
        rank: Some(2),
    },
    Want {
        log: "printf-values",
        cause: "index-out-of-bounds",
        op: Some("repeat_interleave"),
        file: Some("/srv/tts/align.py"),
        line: Some(77),
        rank: None,
    },
    Want {
        log: "notebook-cells",
        cause: "target-out-of-range",
        op: Some("nll_loss"),
        file: Some("Cell In[6]"),
        line: Some(11),
        rank: None,
    },
    Want {
        log: "python313-colour",
        cause: "empty-tensor",
        op: Some("argmax"),
        file: Some("/srv/det/eval.py"),
        line: Some(19),
        rank: None,
    },
];

#[test]
fn each_format_is_diagnosed() {
    for w in WANT {
        let json = explain(w.log);
        let d = &json["diagnoses"][0];
        assert_eq!(d["cause"].as_str(), Some(w.cause), "{}", w.log);
        assert_eq!(d["op"].as_str(), w.op, "{}", w.log);
        assert_eq!(d["location"]["file"].as_str(), w.file, "{}", w.log);
        assert_eq!(d["location"]["line"].as_u64(), w.line, "{}", w.log);
        assert_eq!(d["rank"].as_u64(), w.rank, "{}", w.log);
    }
}

#[test]
fn values_and_hints_from_the_log() {
    let printf = explain("printf-values");
    assert_eq!(printf["diagnoses"][0]["values"]["reported"], serde_json::json!([512, 498]));
    let cloud = explain("cloud-timestamps");
    assert_eq!(cloud["diagnoses"][0]["values"]["failing_threads"], 6);
    assert_eq!(cloud["diagnoses"][0]["values"]["vocab_size"], 50257);
    // -1 is a padding label the loss does not ignore.
    let notebook = explain("notebook-cells");
    assert!(notebook["diagnoses"][0]["fix"].as_str().unwrap().contains("ignore_index=-1"));
    let mpi = explain("mpirun-tagged");
    assert_eq!(mpi["secondary"][0]["cause"], "distributed-peer-failure");
}
