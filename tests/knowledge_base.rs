//! The knowledge base against the reference catalog of PyTorch's CUDA kernel asserts and
//! follow-on errors (tests/fixtures/assert-catalog.toml, cascade-errors.toml): every
//! assertion site must be recognised, every example must match its own entry, and every
//! message must be found by the log scanner's fast path.

use assertscope::kb::{collapse_whitespace, KnowledgeBase, Role};
use assertscope::log::{self, TRIGGERS};

#[derive(serde::Deserialize)]
struct Catalog {
    #[serde(rename = "assert")]
    asserts: Vec<CatalogAssert>,
}

#[derive(serde::Deserialize)]
struct CatalogAssert {
    id: String,
    file: String,
    kernel: String,
    condition: String,
}

#[derive(serde::Deserialize)]
struct Cascades {
    error: Vec<CascadeError>,
}

#[derive(serde::Deserialize)]
struct CascadeError {
    id: String,
    message: String,
}

fn catalog() -> Catalog {
    toml::from_str(include_str!("fixtures/assert-catalog.toml")).unwrap()
}

/// The line a failing GPU thread prints for an assert of the catalog.
fn assertion_line(a: &CatalogAssert) -> String {
    let file = if a.file.is_empty() { "/tmp/torchinductor_u/ab/cabc.py" } else { a.file.as_str() };
    let condition = if a.id == "inductor-index-out-of-bounds" {
        "index out of bounds: 0 <= tmp3 < 50257".to_string()
    } else {
        a.condition.clone()
    };
    if a.id == "narrowing-conversion-overflow" {
        // Its condition is a bare `false`: only the printf message tells what failed.
        format!("[CUDA_KERNEL_ASSERT] {file}:77: convert: block: [0,0,0], thread: [1,0,0]: Assertion failed: `{condition}`: value cannot be safely converted without overflow: numel")
    } else if a.kernel.is_empty() {
        format!("{file}:77: block: [0,0,0], thread: [1,0,0] Assertion `{condition}` failed.")
    } else {
        format!("{file}:77: {}: block: [0,0,0], thread: [1,0,0] Assertion `{condition}` failed.", a.kernel)
    }
}

#[test]
fn every_catalog_assert_is_matched_by_its_own_entry() {
    let kb = KnowledgeBase::get();
    let mut unmatched = Vec::new();
    for a in catalog().asserts {
        let line = assertion_line(&a);
        let parsed =
            log::assertion::parse(&line).unwrap_or_else(|| panic!("{}: line does not parse: {line}", a.id));
        match kb.match_assert(&parsed.file, &parsed.kernel, &parsed.condition, parsed.message.as_deref()) {
            Some(m) if m.site.id == a.id => {}
            Some(m) => unmatched.push(format!("{} matched {} instead", a.id, m.site.id)),
            None => unmatched.push(format!("{} is not matched", a.id)),
        }
    }
    assert!(unmatched.is_empty(), "{unmatched:#?}");
}

#[test]
fn every_catalog_assert_is_diagnosed_from_a_log() {
    let kb = KnowledgeBase::get();
    for a in catalog().asserts {
        let log_text = format!(
            "epoch 1\n{line}\n{line}\nTraceback (most recent call last):\n  File \"train.py\", line 9, in <module>\n    loss.item()\nRuntimeError: CUDA error: device-side assert triggered\nCUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace below might be incorrect.\n",
            line = assertion_line(&a)
        );
        let scan = log::scan(log_text.as_bytes(), "test.log", None).unwrap();
        let report = assertscope::diagnose::diagnose(&[scan]);
        let d = report.root().unwrap_or_else(|| panic!("{}: no diagnosis", a.id));
        let site = kb.asserts.iter().find(|s| s.id == a.id).unwrap();
        assert_eq!(d.cause, site.cause, "{}", a.id);
        assert_eq!(d.values["failing_threads"], 2, "{}", a.id);
        assert_eq!(d.location.as_ref().unwrap().line, Some(9), "{}", a.id);
    }
}

#[test]
fn sites_keep_the_catalog_conditions() {
    let kb = KnowledgeBase::get();
    for a in catalog().asserts {
        let site = kb.asserts.iter().find(|s| s.id == a.id).unwrap_or_else(|| panic!("{} missing", a.id));
        assert_eq!(collapse_whitespace(&site.condition), collapse_whitespace(&a.condition), "{}", a.id);
        assert_eq!(site.kernel, a.kernel, "{}", a.id);
    }
}

#[test]
fn every_cascade_error_is_known() {
    let kb = KnowledgeBase::get();
    let cascades: Cascades = toml::from_str(include_str!("fixtures/cascade-errors.toml")).unwrap();
    for e in cascades.error {
        // The vLLM engine error is a framework's own exception, outside this knowledge base;
        // the AcceleratorError prefix is an exception type that every CUDA error carries.
        if e.id == "vllm-engine-dead" || e.id == "accelerator-error-prefix" {
            continue;
        }
        // These are parts of assertions, read by the assertion parser.
        if e.id == "dsa-report-message" {
            assert!(log::assertion::DsaReport::default().feed(&format!("  {}t < n", e.message)));
            continue;
        }
        if e.id == "printf-assert-prefix" {
            let line = format!(
                "{}Repeat.cu:36: k: block: [0,0,0], thread: [0,0,0]: Assertion failed: `x == y`: bad",
                e.message
            );
            assert!(log::assertion::parse(&line).is_some());
            continue;
        }
        let known = kb.match_followon(&e.message).is_some() || kb.match_message(&e.message).is_some();
        assert!(known, "{}: {:?} is neither a follow-on nor a message", e.id, e.message);
    }
}

#[test]
fn every_message_example_matches_its_own_entry_first() {
    let kb = KnowledgeBase::get();
    for m in &kb.messages {
        assert!(m.example.contains(&m.literal), "{}: the example lacks the literal {:?}", m.id, m.literal);
        let got = kb.match_message(&m.example).unwrap_or_else(|| panic!("{}: example does not match", m.id));
        assert_eq!(got.message.id, m.id, "{}: example matched another entry first", m.id);
    }
    for f in &kb.followons {
        let got = kb.match_followon(&f.example).unwrap_or_else(|| panic!("{}: example does not match", f.id));
        assert_eq!(got.id, f.id, "{}: example matched another entry first", f.id);
    }
}

#[test]
fn the_fast_path_sees_every_known_error() {
    let kb = KnowledgeBase::get();
    let examples = kb
        .messages
        .iter()
        .map(|m| (&m.id, &m.example))
        // Teardown lines never decide a diagnosis, so they need not reach the parser.
        .chain(kb.followons.iter().filter(|f| f.role != Role::Teardown).map(|f| (&f.id, &f.example)))
        .chain(kb.causes.iter().map(|c| (&c.id, &c.example)));
    for (id, example) in examples {
        for line in example.lines().filter(|l| !l.trim().is_empty()) {
            assert!(TRIGGERS.iter().any(|t| line.contains(t)), "{id}: no trigger literal in {line:?}");
        }
    }
}

/// A large mapped log is searched for the prefilter's seeds only, and for every trigger
/// only near them (see `log::prefilter`): every known error must hold a seed, so that its
/// lines (within a few hundred bytes of each other) fall in its seed's window. Follow-on
/// lines (a hint under a CUDA error, NCCL's note before its watchdog's exception) are
/// printed with the error they follow and are reached through its window
/// (explain_mapped checks that on a large log).
#[test]
fn every_known_error_holds_a_seed() {
    let kb = KnowledgeBase::get();
    let examples =
        kb.messages.iter().map(|m| (&m.id, &m.example)).chain(kb.causes.iter().map(|c| (&c.id, &c.example)));
    let mut missing = Vec::new();
    for (id, example) in examples {
        if !log::prefilter::SEEDS.iter().any(|s| example.contains(s)) {
            missing.push(format!("{id}: {example:?}"));
        }
    }
    assert!(missing.is_empty(), "no seed literal in:\n{}", missing.join("\n"));
}

#[test]
fn the_asynchronous_warning_of_every_version_is_known() {
    let kb = KnowledgeBase::get();
    for line in [
        "CUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace below might be incorrect.",
        "CUDA kernel errors might be asynchronously reported at some other API call,so the stacktrace below might be incorrect.",
    ] {
        assert_eq!(kb.match_followon(line).map(|f| f.id.as_str()), Some("async-hint"), "{line}");
    }
}

#[test]
fn every_pattern_compiles() {
    KnowledgeBase::get().check_patterns().unwrap();
}
