//! Paste damage and hand edits, applied to every labelled log (the development set and both
//! sets of logs from public threads): the answer (root cause and user frame) must survive
//! the ways real users mangle a log when they copy it out of a terminal, a notebook or a
//! forum, retype it from a screenshot, quote it, or cut it short. Prints, per mutation and
//! set, how many logs keep their labelled cause and frame
//! (`cargo test --test explain_mutations -- --nocapture`).

use assertscope::diagnose;
use assertscope::log;

#[path = "explain_support/labelled.rs"]
mod labelled;
#[path = "explain_support/mutations.rs"]
mod mutations;

use labelled::{Labelled, Score};
use mutations::{Mutation, HAND_EDITS, MUTATIONS};

/// The root cause and user frame (`file:line`, `-` for none) that explain gives.
fn answer(text: &[u8]) -> (String, String) {
    let scan = log::scan(text, "pasted.log", None).unwrap();
    let report = diagnose::diagnose(&[scan]);
    let Some(root) = report.diagnoses.first() else { return ("none".into(), "-".into()) };
    let frame = match &root.location {
        None => "-".to_string(),
        Some(l) => format!("{}:{}", l.file, l.line.map_or("null".to_string(), |n| n.to_string())),
    };
    (root.cause.clone(), frame)
}

/// `mutate` scored on `logs`; a log the mutation leaves unchanged does not count (the
/// mutation does not apply to it: no traceback to cut, no message to quote).
fn score(logs: &[Labelled], mutate: Mutation) -> Score {
    Score::of(logs, |log| {
        let mutated = mutate(&log.text);
        (mutated != log.text).then(|| answer(mutated.as_bytes()))
    })
}

const SETS: [&str; 3] = ["devset", "public", "public2"];

#[test]
fn paste_damage_keeps_cause_and_frame() {
    let logs = labelled::set("devset");
    let (mut pairs, mut causes, mut frames) = (0, 0, 0);
    let mut misses = Vec::new();
    println!("{:<26} {:>8} {:>8}", "mutation", "cause", "frame");
    for (name, mutate) in MUTATIONS {
        let s = score(&logs, *mutate);
        println!("{name:<26} {:>5}/{} {:>5}/{}", s.causes(), s.total(), s.frames(), s.total());
        misses.extend(s.misses().map(|m| format!("{name} / {}", m.miss_line())));
        pairs += s.total();
        causes += s.causes();
        frames += s.frames();
    }
    let cause_rate = causes as f64 / pairs as f64;
    let frame_rate = frames as f64 / pairs as f64;
    println!("{:<26} {:>7.1}% {:>7.1}%", "all", cause_rate * 100.0, frame_rate * 100.0);
    for m in &misses {
        println!("miss: {m}");
    }
    assert!(pairs >= MUTATIONS.len() * 55, "only {pairs} (log, mutation) pairs changed the text");
    assert!(cause_rate >= 0.97, "cause kept in {:.1}% of (log, mutation) pairs", cause_rate * 100.0);
    assert!(frame_rate >= 0.95, "frame kept in {:.1}% of (log, mutation) pairs", frame_rate * 100.0);
}

/// (mutation, set, logs that keep their cause, logs that keep their frame): the first
/// measured score of each mutation on each set (bench/explain/public2-before.md), so that no
/// change makes one worse. `none` is the logs as stored.
#[rustfmt::skip]
const FLOORS: &[(&str, &str, usize, usize)] = &[
    ("none", "devset", 60, 60),
    ("none", "public", 58, 58),
    ("none", "public2", 80, 80),
    ("strip indentation", "devset", 55, 55),
    ("strip indentation", "public", 31, 31),
    ("strip indentation", "public2", 28, 26),
    ("wrap at 80 columns", "devset", 56, 58),
    ("wrap at 80 columns", "public", 49, 55),
    ("wrap at 80 columns", "public2", 52, 75),
    ("wrap at 120 columns", "devset", 43, 44),
    ("wrap at 120 columns", "public", 40, 41),
    ("wrap at 120 columns", "public2", 44, 56),
    ("cut last line mid-word", "devset", 60, 60),
    ("cut last line mid-word", "public", 48, 58),
    ("cut last line mid-word", "public2", 58, 76),
    ("progress bar glued", "devset", 58, 58),
    ("progress bar glued", "public", 54, 54),
    ("progress bar glued", "public2", 60, 67),
    ("notebook links", "devset", 55, 54),
    ("notebook links", "public", 18, 17),
    ("notebook links", "public2", 25, 22),
    ("rank prefixes", "devset", 60, 59),
    ("rank prefixes", "public", 58, 58),
    ("rank prefixes", "public2", 64, 76),
    ("CRLF line ends", "devset", 60, 60),
    ("CRLF line ends", "public", 58, 58),
    ("CRLF line ends", "public2", 64, 76),
    ("curly quotes", "devset", 58, 58),
    ("curly quotes", "public", 27, 27),
    ("curly quotes", "public2", 36, 41),
    ("no Traceback header", "devset", 58, 56),
    ("no Traceback header", "public", 15, 15),
    ("no Traceback header", "public2", 18, 16),
    ("HTML-escaped", "devset", 59, 59),
    ("HTML-escaped", "public", 48, 48),
    ("HTML-escaped", "public2", 50, 57),
    ("messages in lower case", "devset", 24, 55),
    ("messages in lower case", "public", 28, 55),
    ("messages in lower case", "public2", 30, 75),
    ("messages in Title Case", "devset", 5, 54),
    ("messages in Title Case", "public", 4, 57),
    ("messages in Title Case", "public2", 7, 76),
    ("runs of spaces collapsed", "devset", 34, 34),
    ("runs of spaces collapsed", "public", 19, 19),
    ("runs of spaces collapsed", "public2", 15, 16),
    ("no spaces around operators", "devset", 3, 27),
    ("no spaces around operators", "public", 8, 29),
    ("no spaces around operators", "public2", 5, 27),
    ("spaces doubled", "devset", 31, 54),
    ("spaces doubled", "public", 18, 51),
    ("spaces doubled", "public2", 24, 75),
    ("no space after , and :", "devset", 54, 55),
    ("no space after , and :", "public", 54, 57),
    ("no space after , and :", "public2", 58, 74),
    ("line break inside message", "devset", 55, 55),
    ("line break inside message", "public", 43, 55),
    ("line break inside message", "public2", 50, 67),
    ("message in backticks", "devset", 55, 55),
    ("message in backticks", "public", 54, 54),
    ("message in backticks", "public2", 60, 67),
    ("backticks, then pdb", "devset", 55, 55),
    ("backticks, then pdb", "public", 54, 55),
    ("backticks, then pdb", "public2", 60, 67),
    ("'> ' quote prefixes", "devset", 58, 56),
    ("'> ' quote prefixes", "public", 58, 57),
    ("'> ' quote prefixes", "public2", 64, 76),
    ("message in a sentence", "devset", 54, 54),
    ("message in a sentence", "public", 53, 54),
    ("message in a sentence", "public2", 59, 67),
    ("cut before the message", "devset", 26, 27),
    ("cut before the message", "public", 4, 9),
    ("cut before the message", "public2", 7, 11),
];

#[test]
fn every_mutation_keeps_its_floor_on_every_set() {
    let sets: Vec<Vec<Labelled>> = SETS.iter().map(|s| labelled::set(s)).collect();
    let as_stored: (&str, Mutation) = ("none", |text| text.to_string());
    let (mut table, mut below, mut unfloored) = (Vec::new(), Vec::new(), Vec::new());
    table.push(format!(
        "{:<28}{}",
        "mutation",
        SETS.map(|set| format!(" {:>19}", format!("{set} cause frame"))).concat()
    ));
    for &(name, mutate) in std::iter::once(&as_stored).chain(MUTATIONS).chain(HAND_EDITS) {
        let mut row = format!("{name:<28}");
        for (set, logs) in SETS.iter().zip(&sets) {
            // As stored, every log counts; a mutation counts only the logs it changes.
            let s = if name == "none" {
                Score::of(logs, |log| Some(answer(log.text.as_bytes())))
            } else {
                score(logs, mutate)
            };
            row.push_str(&format!(
                " {:>19}",
                format!("{}/{} {}/{}", s.causes(), s.total(), s.frames(), s.total())
            ));
            match FLOORS.iter().find(|f| f.0 == name && f.1 == *set) {
                Some(&(_, _, cause_floor, frame_floor)) => {
                    if s.causes() < cause_floor || s.frames() < frame_floor {
                        below.push(format!(
                            "{name} on {set}: cause {} (floor {cause_floor}), frame {} (floor {frame_floor}) of {}",
                            s.causes(),
                            s.frames(),
                            s.total()
                        ));
                        below.extend(s.misses().map(|m| format!("  {}", m.miss_line())));
                    }
                }
                None => unfloored.push(format!("    ({name:?}, {set:?}, {}, {}),", s.causes(), s.frames())),
            }
        }
        table.push(row);
    }
    println!("{}", table.join("\n"));
    assert!(unfloored.is_empty(), "no floor for these; today's scores:\n{}", unfloored.join("\n"));
    assert!(below.is_empty(), "below the floor:\n{}", below.join("\n"));
}

#[test]
fn mutations_change_the_text() {
    // A mutation that leaves a log unchanged would inflate the suite's score.
    let sample = "Traceback (most recent call last):\n  File \"/home/u/train.py\", line 12, in main\n    loss = criterion(out, y) & 'x' <tag> and a long line that goes on past eighty columns and then past one hundred and twenty columns of text, to be wrapped twice over\nRuntimeError: CUDA error: device-side assert triggered, see  the  assertion: `t >= 0 && t < n_classes`\n";
    for (name, mutate) in MUTATIONS.iter().chain(HAND_EDITS) {
        assert_ne!(mutate(sample), sample, "{name}");
    }
}

#[test]
fn hand_edits_change_only_what_they_say() {
    let log = "Epoch 1\nTraceback (most recent call last):\n  File \"/home/U/Train.py\", line 12, in main\n    loss = criterion(out, y)\nRuntimeError: CUDA error: device-side assert triggered\n";
    // Frame headers keep their case and spaces: the user frame must stay what it was.
    assert!(mutations::lower_case_messages(log).contains("File \"/home/U/Train.py\", line 12"));
    assert!(mutations::lower_case_messages(log).contains("runtimeerror: cuda error"));
    assert_eq!(
        mutations::cut_before_message(log),
        "Epoch 1\nTraceback (most recent call last):\n  File \"/home/U/Train.py\", line 12, in main\n    loss = criterion(out, y)\n"
    );
    assert!(mutations::break_message_line(log)
        .contains("RuntimeError: CUDA error: \ndevice-side assert triggered"));
    assert!(mutations::message_in_backticks(log)
        .contains("\n`RuntimeError: CUDA error: device-side assert triggered`\n"));
    let bare = "RuntimeError: CUDA error: device-side assert triggered\n";
    assert_eq!(mutations::cut_before_message(bare), bare, "no traceback: nothing to cut");
    let rank = "[rank0]: RuntimeError: boom\n";
    assert_eq!(mutations::message_in_backticks(rank), "[rank0]: `RuntimeError: boom`\n");
}
