//! The guard's exceptions (Python, `assertscope/_render.py`) and the binary
//! (`render::text`, on annotate-snippets) draw the same diagnostic model alike: each model
//! below is rendered by both and the texts compared. Needs only a Python 3.9+ with its
//! standard library.

mod check_support;
use assertscope::diagnostic::{Diagnostic, Severity, Span};
use assertscope::render::text::render_one;
use check_support::python;
use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};

fn models() -> Vec<Diagnostic> {
    let wide = "    return {\"损失\": F.cross_entropy(logits, column)}";
    let wide_start = wide[..wide.find("column)").unwrap()].chars().count() + 1;
    let long = format!("x = DataLoader({}batch_size=32, {}shuffle=True)", "a, ".repeat(40), "b, ".repeat(30));
    let long_start = long.find("batch_size").unwrap() + 1;
    vec![
        // The guard's own shape: op and title, the user's line, what was found, the fix.
        Diagnostic::new(
            Severity::Error,
            Some("target-out-of-range"),
            "cross_entropy: class target out of range",
        )
        .span(
            Span::at("train.py", Some(32))
                .source(Some("loss = criterion(model(x), y)".into()))
                .label("in `main`"),
        )
        .note("found", "13 of 64 targets outside [0, 5) (C = 5, ignore_index = -100): 5 at [12]")
        .note("target", "tensor[64] i64 cpu min=1 max=5")
        .note("input", "tensor[64, 5] f32 cpu min=-0.7101 max=1.109 nan=0")
        .note("fix", "Make every label lie in 0..C-1 or equal ignore_index.")
        .help("the labels look 1-based (min 1, max 5 == C): subtract 1 (`target - 1`)"),
        // Wide characters before the span, an indented line, a three-digit line number.
        Diagnostic::new(Severity::Error, Some("AS102"), "cross_entropy target `column` has shape [N, 1]")
            .span(
                Span::at("wide.py", Some(105)).source(Some(wide.into())).columns(wide_start, wide_start + 6),
            )
            .help("flatten it: `column.squeeze(1)`"),
        // A tab in the indentation; the whole line underlined; a secondary span (an origin).
        Diagnostic::new(Severity::Warning, Some("cascade"), "the error surfaced later")
            .span(
                Span::at("loop.py", Some(9))
                    .source(Some("\ttotal += loss.item()   ".into()))
                    .label("in `train`: the error surfaced here, not where it happened"),
            )
            .span(
                Span::at("data.py", Some(1204))
                    .source(Some("label = int(row[1])".into()))
                    .columns(1, 6)
                    .label("the bad label was made here")
                    .secondary(),
            )
            .note("assert", "Loss.cu:250: Assertion `t >= 0 && t < n_classes` failed.\nprinted by 8 threads")
            .section("why", "word ".repeat(50))
            .section("fix", "Make every label lie in 0..C-1.\n\nOr set ignore_index."),
        // No source: a header only, its label as a note; notes without a kind.
        Diagnostic::new(Severity::Error, Some("target-out-of-range"), "1 label is >= num_classes 3")
            .span(Span::at("labels.parquet", None).label("row 2: 3"))
            .note("", "labels.parquet: row 7: 4")
            .note("", "… and 12 more"),
        Diagnostic::new(Severity::Note, None, "no error found in the log"),
        Diagnostic::new(Severity::Note, None, "also in the log (consequences, not causes)")
            .note("distributed-peer-failure", "rank 0 only waited for rank 3"),
        Diagnostic::new(Severity::Error, Some("x"), "a file and line without source")
            .span(Span::at("gone.py", Some(7)))
            .help("h"),
        // Spans of one file on different lines: one snippet in line order, a wide gap
        // folded into `...`, a gap of one line kept apart, another file apart.
        Diagnostic::new(Severity::Error, Some("AS101"), "one-hot target")
            .span(
                Span::at("train.py", Some(41))
                    .source(Some("        loss = criterion(out, labels)".into()))
                    .columns(31, 37),
            )
            .span(secondary("train.py", 37, "    for images, labels in loader:", 17, "comes from here"))
            .span(secondary("train.py", 39, "        labels = labels.cuda()", 18, "assigned here"))
            .span(secondary("train.py", 42, "        loss.backward()", 9, "next line"))
            .span(secondary("data.py", 3, "labels = one_hot(y)", 10, "made here"))
            .help("pass class indices"),
        // Deep indentation in both lines of a merged snippet: drawn as `...`.
        Diagnostic::new(Severity::Warning, Some("x"), "deep")
            .span(Span::at("deep.py", Some(9)).source(Some(format!("{}y = f(x)", " ".repeat(32)))))
            .span(secondary("deep.py", 12, &format!("{}z = g(y)", " ".repeat(36)), 37, "here")),
        // Lines too long for a terminal: cut around the span, on either side or both.
        Diagnostic::new(Severity::Error, Some("AS107"), "long lines")
            .span(
                Span::at("long.py", Some(46))
                    .source(Some(long.clone()))
                    .columns(long_start, long_start + 10)
                    .label("this"),
            )
            .span(Span::at("long.py", Some(47)).source(Some(long.clone())).columns(5, 9).secondary())
            .span(Span::at("long.py", Some(1048)).source(Some(long.clone())).label("the whole line"))
            .span(Span::at("wide.py", Some(2)).source(Some("变量 = ".repeat(40) + "f(x)")).columns(161, 165)),
    ]
}

/// Notes and help longer than the page: wrapped alike, code spans and bracketed groups whole.
fn long_notes() -> Vec<Diagnostic> {
    let found = "9 of 64 targets outside [0, 5) (C = 5, ignore_index = -100): 5 at [2], 5 at [17], \
                 5 at [19], 5 at [30], 5 at [33], ... (4 more)";
    let help = "The labels look 1-based: a model with 5 outputs takes class ids 0 to 4, so the label 5 \
                is out of range. Subtract 1 from every label (`y - 1`), or give the model 6 outputs if \
                class 0 is a real class; size the output layer with `num_classes = int(y.max()) + 1`.";
    vec![
        Diagnostic::new(
            Severity::Error,
            Some("target-out-of-range"),
            "class target out of range in cross_entropy",
        )
        .span(Span::at("train.py", Some(1032)).source(Some("        loss = criterion(model(x), y)".into())))
        .note("found", found)
        .note("", format!("{found} {found}"))
        .help(help)
        .section("fix", help),
        Diagnostic::new(Severity::Warning, None, "no spans")
            .note("values", "a=[1,2,3], ".repeat(20))
            .help(help),
    ]
}

fn secondary(file: &str, line: u64, source: &str, column: usize, label: &str) -> Span {
    Span::at(file, Some(line))
        .source(Some(source.to_string()))
        .columns(column, column + 4)
        .label(label)
        .secondary()
}

/// The texts Python's `expression` (of `d`, each JSON object given) gives.
fn python_texts(expression: &str, inputs: &serde_json::Value) -> Vec<String> {
    let script = format!(
        "import json, sys\nfrom assertscope import _human, _render\n\
         print(json.dumps([{expression} for d in json.load(sys.stdin)]))"
    );
    let mut child = Command::new(python())
        .arg("-c")
        .arg(script)
        .env("PYTHONPATH", Path::new(env!("CARGO_MANIFEST_DIR")).join("python"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("this test needs a Python 3 ({}): {e}", python().display()));
    child.stdin.take().unwrap().write_all(inputs.to_string().as_bytes()).unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn python_and_rust_draw_every_model_alike() {
    let models: Vec<Diagnostic> = models().into_iter().chain(long_notes()).collect();
    let from_python = python_texts("_render.render(d)", &serde_json::to_value(&models).unwrap());
    for (model, python_text) in models.iter().zip(&from_python) {
        let rust_text = render_one(model, false);
        assert_eq!(python_text, &rust_text, "\n--- python\n{python_text}\n--- rust\n{rust_text}");
    }
}

#[test]
fn long_notes_wrap_to_the_page_and_keep_code_spans_whole() {
    for model in long_notes() {
        let text = render_one(&model, false);
        for line in text.lines() {
            assert!(line.chars().count() <= assertscope::render::text::WIDTH, "{line:?} in\n{text}");
            assert_eq!(line.matches('`').count() % 2, 0, "a code span split at {line:?} in\n{text}");
        }
    }
}

/// Diagnoses as the guard, `explain` and `run` make them: Python's `_human.model` and the
/// binary's `human::diagnostic` build the same model, so a GuardError reads as `run`'s
/// report of it and as `explain`'s.
fn diagnoses(dir: &Path) -> Vec<serde_json::Value> {
    let train = dir.join("train.py");
    std::fs::write(&train, "def main():\n    for x, y in loader:\n        x, y = x.to(device), y.to(device)\n        loss = criterion(model(x), y)\n").unwrap();
    let file = train.to_str().unwrap();
    let location = serde_json::json!({"file": file, "line": 4, "function": "main", "code": "loss = criterion(model(x), y)"});
    serde_json::json!([
        {
            "cause": "target-out-of-range", "title": "class target out of range in cross_entropy", "confidence": "high",
            "op": "cross_entropy", "location": location, "rank": 1,
            "evidence": [
                {"kind": "guard", "text": "cross_entropy: 9 of 64 targets outside [0, 5) (C = 5, ignore_index = -100): 5 at [2], 5 at [17], 5 at [19], 5 at [30], 5 at [33], ... (4 more)", "source_line": null},
                {"kind": "tensor", "text": "target: tensor[64] i64 cpu min=1 max=5", "source_line": null},
                {"kind": "note", "text": "found at the next check point", "source_line": null}
            ],
            "values": {"bad_values": [5, 5], "max": 5, "min": 1, "bound": 5},
            "explanation": "A label is out of range; `IndexError: Target 5 is out of bounds.`",
            "fix": "Subtract 1 from every label (`y - 1`).", "checklist_step": 2,
            "origin": [{"file": file, "line": 3, "function": "main", "code": "x, y = x.to(device), y.to(device)", "role": "data", "note": "the offending values were made here"},
                       {"file": "gone.py", "line": 7, "function": null, "code": "y = y + 1", "role": "data", "note": null}]
        },
        {
            "cause": "bce-input-range", "title": "binary cross entropy input or target outside [0, 1]", "confidence": "high",
            "op": "binary_cross_entropy", "location": {"file": "missing.py", "line": 12, "function": null, "code": "loss = bce(p, y)"},
            "rank": null,
            "evidence": [{"kind": "exception", "text": "RuntimeError: all elements of input should be between 0 and 1", "source_line": 40}],
            "values": {"min": -0.6537530422210693, "max": 12345.678, "tiny": 0.000012345, "reported": [5, -3], "name": "x", "whole": 5.0},
            "explanation": "Probabilities only.\n\nSecond paragraph.", "fix": "Use BCEWithLogitsLoss.", "checklist_step": null,
            "origin": []
        },
        {
            "cause": "cascade", "title": "a follow-on error", "confidence": "medium", "op": null, "location": location, "rank": null,
            "evidence": [{"kind": "surfaced", "text": "train.py:4", "source_line": 3}, {"kind": "follow-on", "text": "CUBLAS_STATUS_EXECUTION_FAILED", "source_line": 9}],
            "values": {}, "explanation": "e", "fix": "f", "checklist_step": 5, "origin": []
        }
    ])
    .as_array()
    .unwrap()
    .clone()
}

#[test]
fn python_and_rust_build_the_same_model_of_a_diagnosis() {
    let dir = tempfile::tempdir().unwrap();
    let diagnoses = diagnoses(dir.path());
    let from_python =
        python_texts("_render.render(_human.model(d))", &serde_json::Value::Array(diagnoses.clone()));
    for (diagnosis, python_text) in diagnoses.iter().zip(&from_python) {
        let diagnosis: assertscope::report::Diagnosis = serde_json::from_value(diagnosis.clone()).unwrap();
        let rust_text = render_one(&assertscope::render::human::diagnostic(&diagnosis), false);
        assert_eq!(python_text, &rust_text, "\n--- python\n{python_text}\n--- rust\n{rust_text}");
    }
    // What each reads: one line:column convention (the span's start), values rounded, the
    // op once, and no values line beside a guard's finding.
    let guard = &from_python[0];
    assert!(guard.contains("--> ") && guard.contains("train.py:4:9\n"), "{guard}");
    assert!(!guard.contains("= values:") && !guard.contains("= op:"), "{guard}");
    let explained = &from_python[1];
    assert!(
        explained.contains("max=1.235e+04, min=-0.6538, name=x, reported=[5,-3], tiny=1.234e-05, whole=5"),
        "{explained}"
    );
    assert!(explained.contains("= op: binary_cross_entropy"), "{explained}");
}
