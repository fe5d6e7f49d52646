//! The log parser and the diagnosis over arbitrary bytes: never a panic, and bounded
//! results whatever the input.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let scan = assertscope::log::scan(data, "fuzz.log", None).expect("reading from memory cannot fail");
    assert!(scan.tracebacks.len() <= 256 && scan.assertions.len() <= 256);
    let report = assertscope::diagnose::diagnose(&[scan]);
    let json = serde_json::to_string(&report).unwrap();
    assert!(json.starts_with("{\"schema\":\"assertscope.diagnosis/1\""));
});
