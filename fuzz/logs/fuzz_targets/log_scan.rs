//! The log parser over arbitrary bytes (fuzz_targets/log_parser.rs of the full package without
//! the diagnosis step): never a panic, bounded results whatever the input, the mapped reader
//! giving the streaming reader's scan whatever the chunk size, and with a small reach the
//! scan of the prefilter's plain definition.
#![no_main]

use assertscope_logs::log;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let scan = log::scan(data, "fuzz.log", None).expect("reading from memory cannot fail");
    assert!(scan.tracebacks.len() <= 256 && scan.assertions.len() <= 256);
    // Chunk sizes from the input itself, so the fuzzer moves the boundaries around.
    let chunk = 1 + data.first().map_or(0, |&b| b as usize % 64);
    let batch = chunk * (1 + data.last().map_or(0, |&b| b as usize % 8));
    if let Some(mapped) = log::scan_in_chunks(data, "fuzz.log", chunk, batch) {
        let mapped = mapped.expect("reading from memory cannot fail");
        assert_eq!(format!("{mapped:?}"), format!("{scan:?}"), "chunks of {chunk} in batches of {batch}");
    }
    // A reach from the input too, small enough to cut through its lines.
    let near = data.get(1).map_or(0, |&b| b as usize);
    let tail = data.get(2).map_or(0, |&b| b as usize * 2);
    let reach = log::prefilter::Reach { near, tail };
    if let Some(windowed) = log::scan_windowed(data, "fuzz.log", chunk, batch, reach) {
        let windowed = windowed.expect("reading from memory cannot fail");
        let reference =
            log::scan_reference(data, "fuzz.log", reach).expect("reading from memory cannot fail");
        assert_eq!(
            format!("{windowed:?}"),
            format!("{reference:?}"),
            "{reach:?}, chunks of {chunk} in batches of {batch}"
        );
    }
});
