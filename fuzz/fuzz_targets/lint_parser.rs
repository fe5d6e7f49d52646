//! The lint front end on arbitrary input: parsing (with error recovery), the module model,
//! value tracing, every rule, and the text renderer must never panic, overflow the stack or
//! hang, whatever the bytes.
#![no_main]

use assertscope::lint::walk::LintRun;
use assertscope::lint::{lint_source, output, Selection};
use assertscope::lint_render;
use assertscope::render::style::Palette;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let findings = lint_source("fuzz.py", text, &Selection::all());
    for finding in &findings {
        assert!(finding.line >= 1 && finding.column >= 1, "{finding:?}");
    }
    let outcome = LintRun { findings, files: 1, lines: text.lines().count(), ..LintRun::default() };
    let mut rendered = Vec::new();
    lint_render::write_text(&mut rendered, &outcome, &Palette::new(false), false).unwrap();
    output::write_sarif(&mut Vec::new(), &outcome).unwrap();
});
