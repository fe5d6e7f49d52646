//! What the binary and the Python package it injects must agree on, defined once:
//! environment variable names, guard modes, the launcher variables a process's rank is
//! read from, how a host name becomes part of a file name, and the version of the file
//! `python -m assertscope.scan` writes. `python/assertscope/_contract.py` is the Python
//! copy; `tests/contract.rs` checks the two are equal, value by value and rule by rule.

/// Environment variables the binary sets for the processes it starts.
pub mod env {
    /// Directory the guard writes its reports to (one JSON file per failure).
    pub const REPORT_DIR: &str = "ASSERTSCOPE_REPORT_DIR";
    /// `1`: arm the guard as Python starts.
    pub const GUARD: &str = "ASSERTSCOPE_GUARD";
    /// One of [`super::GUARD_MODES`].
    pub const GUARD_MODE: &str = "ASSERTSCOPE_GUARD_MODE";
    /// `1`: run CUDA code on the CPU.
    pub const CPU: &str = "ASSERTSCOPE_CPU";
    /// Where `run` and `scan` put the injected package (read by the binary only).
    pub const TMPDIR: &str = "ASSERTSCOPE_TMPDIR";
    /// The run a guard report belongs to: `run` ignores reports of other runs in a reused
    /// report directory.
    pub const RUN_ID: &str = "ASSERTSCOPE_RUN_ID";
    /// This binary's path: where the guard finds `assertscope origin` when it traces its
    /// own report (without `run`, it looks on PATH and beside `sys.executable`).
    pub const BIN: &str = "ASSERTSCOPE_BIN";
    /// Ray's variable naming a function that edits a job's runtime_env in `ray.init`: `run`
    /// points it at [`RAY_RUNTIME_ENV_HOOK`], so the workers of a Ray cluster get the guard.
    pub const RAY_RUNTIME_ENV: &str = "RAY_RUNTIME_ENV_HOOK";
    /// The user's own RAY_RUNTIME_ENV_HOOK, kept by `run`; the guard's hook runs it first.
    pub const RAY_HOOK: &str = "ASSERTSCOPE_RAY_HOOK";
}

/// Added to the run id of the reports of Ray workers: Ray ends or retries a job whose worker
/// failed, so `run` reads their reports but never stops the job for them.
pub const RAY_RUN_ID_SUFFIX: &str = ".ray";

/// The function Ray's RAY_RUNTIME_ENV_HOOK names, in the injected package.
pub const RAY_RUNTIME_ENV_HOOK: &str = "assertscope.ray.runtime_env_hook";

/// The guard's modes; the first is the default.
pub const GUARD_MODES: [&str; 3] = ["auto", "sync", "async"];

/// Variables launchers set to a process's global rank, local rank and world size, in order
/// of preference: torchrun / accelerate, Slurm, Open MPI, MPICH / Intel MPI.
pub const RANK_VARIABLES: [&str; 4] = ["RANK", "SLURM_PROCID", "OMPI_COMM_WORLD_RANK", "PMI_RANK"];
pub const LOCAL_RANK_VARIABLES: [&str; 4] =
    ["LOCAL_RANK", "SLURM_LOCALID", "OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID"];
pub const WORLD_SIZE_VARIABLES: [&str; 4] =
    ["WORLD_SIZE", "SLURM_NTASKS", "OMPI_COMM_WORLD_SIZE", "PMI_SIZE"];

/// The `version` of the facts document `python -m assertscope.scan` writes (3: with the
/// items of the first batch; 2: facts per field, judged by the binary; 1 held findings
/// decided in Python).
pub const SCAN_RESULT_VERSION: u64 = 3;

/// The `schema` of a report the guard writes into [`env::REPORT_DIR`].
pub use crate::guard_report::SCHEMA as GUARD_REPORT_SCHEMA;
/// The `schema` of a diagnosis (`explain --json`, `check --json`, the guard's `diagnosis`).
pub use crate::report::SCHEMA as DIAGNOSIS_SCHEMA;

/// The command line of `python -m assertscope.scan`, which `assertscope scan` runs.
pub mod scan_flag {
    /// Where the facts go (a file: stdout belongs to the user's code).
    pub const OUT: &str = "--out";
    /// The bounds of each role, as JSON (`check::scan_facts::ScanPlan`).
    pub const PLAN: &str = "--plan";
    pub const LABEL_KEY: &str = "--label-key";
    pub const INPUT_KEY: &str = "--input-key";
    pub const BATCH_SIZE: &str = "--batch-size";
    pub const NUM_WORKERS: &str = "--num-workers";
    pub const MAX_BATCHES: &str = "--max-batches";
    pub const MODEL: &str = "--model";
    pub const NO_PROGRESS: &str = "--no-progress";
}

/// Each flag of [`scan_flag`] under the name the Python side reads its value by.
pub const SCAN_FLAGS: [(&str, &str); 9] = [
    ("out", scan_flag::OUT),
    ("plan", scan_flag::PLAN),
    ("label_key", scan_flag::LABEL_KEY),
    ("input_key", scan_flag::INPUT_KEY),
    ("batch_size", scan_flag::BATCH_SIZE),
    ("num_workers", scan_flag::NUM_WORKERS),
    ("max_batches", scan_flag::MAX_BATCHES),
    ("model", scan_flag::MODEL),
    ("no_progress", scan_flag::NO_PROGRESS),
];

/// The fields of the facts document `python -m assertscope.scan` writes
/// (`check::scan_facts::ScanFacts`; `tests/contract.rs` checks that struct against it).
pub const SCAN_FACTS_FIELDS: [&str; 10] = [
    "version",
    "target",
    "kind",
    "batch_size",
    "num_workers",
    "indices",
    "batches",
    "fields",
    "structure",
    "error",
];

/// `python/assertscope/_contract_values.py`: the values above as the Python package reads
/// them. `tests/contract.rs` checks the file byte for byte; `ASSERTSCOPE_BLESS=1 cargo test
/// --test contract` writes it.
pub fn python_values() -> String {
    fn text(value: &str) -> String {
        serde_json::to_string(value).expect("a string serialises")
    }
    fn tuple(values: &[&str]) -> String {
        let items: Vec<String> = values.iter().map(|v| text(v)).collect();
        // A tuple of one needs its comma.
        let comma = if items.len() == 1 { "," } else { "" };
        format!("({}{comma})", items.join(", "))
    }
    let flags: Vec<String> =
        SCAN_FLAGS.iter().map(|(name, flag)| format!("    {}: {},\n", text(name), text(flag))).collect();
    let lines = [
        ("REPORT_DIR_ENV", text(env::REPORT_DIR)),
        ("GUARD_ENV", text(env::GUARD)),
        ("GUARD_MODE_ENV", text(env::GUARD_MODE)),
        ("CPU_ENV", text(env::CPU)),
        ("TMPDIR_ENV", text(env::TMPDIR)),
        ("RUN_ID_ENV", text(env::RUN_ID)),
        ("BIN_ENV", text(env::BIN)),
        ("RAY_RUNTIME_ENV_ENV", text(env::RAY_RUNTIME_ENV)),
        ("RAY_HOOK_ENV", text(env::RAY_HOOK)),
        ("RAY_RUN_ID_SUFFIX", text(RAY_RUN_ID_SUFFIX)),
        ("RAY_RUNTIME_ENV_HOOK", text(RAY_RUNTIME_ENV_HOOK)),
        ("GUARD_MODES", tuple(&GUARD_MODES)),
        ("RANK_VARIABLES", tuple(&RANK_VARIABLES)),
        ("LOCAL_RANK_VARIABLES", tuple(&LOCAL_RANK_VARIABLES)),
        ("WORLD_SIZE_VARIABLES", tuple(&WORLD_SIZE_VARIABLES)),
        ("DIAGNOSIS_SCHEMA", text(DIAGNOSIS_SCHEMA)),
        ("GUARD_REPORT_SCHEMA", text(GUARD_REPORT_SCHEMA)),
        ("GUARD_ERROR_TYPE", text(guard_text::GUARD_ERROR_TYPE)),
        ("FOUND_NOTE", text(guard_text::FOUND_NOTE)),
        ("REPORTED_BY_RUN", text(guard_text::REPORTED_BY_RUN)),
        ("SCAN_RESULT_VERSION", SCAN_RESULT_VERSION.to_string()),
        ("SCAN_FACTS_FIELDS", tuple(&SCAN_FACTS_FIELDS)),
        ("SCAN_FLAGS", format!("{{\n{}}}", flags.concat())),
    ];
    let mut out = String::from(
        "\"\"\"What the package and the assertscope binary must agree on, written from src/contract.rs by\n\
         `ASSERTSCOPE_BLESS=1 cargo test --test contract` (which fails while this file differs):\n\
         do not edit it by hand. _contract.py gives these to the package.\"\"\"\n\n",
    );
    for (name, value) in lines {
        out.push_str(&format!("{name} = {value}\n"));
    }
    out
}

/// The first of `names` set to a non-negative integer.
pub fn env_number(names: &[&str]) -> Option<u32> {
    names.iter().find_map(|name| number(&std::env::var(name).ok()?))
}

/// A launcher variable's value as a number: digits only (no sign), blanks around ignored.
pub fn number(value: &str) -> Option<u32> {
    let value = value.trim();
    if value.is_empty() || !value.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    value.parse().ok()
}

/// This process's rank, when a launcher set one.
pub fn rank() -> Option<u32> {
    env_number(&RANK_VARIABLES)
}

/// A host name as a file-name part: ASCII letters, digits, `-`, `_` and `.` kept, anything
/// else `_`; `host` when empty.
pub fn file_name_host(name: &str) -> String {
    let cleaned: String = name
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.') { c } else { '_' })
        .collect();
    if cleaned.is_empty() {
        "host".into()
    } else {
        cleaned
    }
}

/// The text of a `GuardError`, which `explain` reads back from a log (a notebook, a saved
/// run, a rank's file). `_contract.py` holds the formatting side; `tests/contract.rs`
/// checks the two rule by rule, and `tests/python/test_guard_text.py` reads back a real
/// GuardError of every cause the guard raises.
///
/// ```text
/// assertscope.GuardError: error[target-out-of-range]: class target out of range in cross_entropy
///   --> train.py:32:13
///    |
/// 32 |             loss = criterion(model(x), y)
///    |             ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^ in `main`
///    |
///    = found: 9 of 64 targets outside [0, 5) (C = 5, ignore_index = -100): 5 at [11], 5 at
///             [12], ... (7 more)
///    = target: tensor[64] i64 cpu min=1 max=5
/// ```
///
/// The first line is [`guard_text::headline`]; under `assertscope run` it is the whole
/// message, with [`guard_text::REPORTED_BY_RUN`] after it. The `found` note starts with the
/// count phrase, then the interval, then the sizes it was judged by (`name = value`, in
/// brackets), then the first bad values and where they sit.
pub mod guard_text {
    use serde_json::{Map, Value};

    /// The exception's name as a traceback prints it.
    pub const GUARD_ERROR_TYPE: &str = "assertscope.GuardError";
    pub const FOUND_NOTE: &str = "found";
    /// After the headline, when `run` shows the report once the command ended.
    pub const REPORTED_BY_RUN: &str = "(assertscope run reports it when the command ends)";

    pub fn headline(cause: &str, title: &str) -> String {
        format!("error[{cause}]: {title}")
    }

    /// A guard diagnosis' title: the cause's title and the op that refused the value.
    pub fn title_with_op(title: &str, op: &str) -> String {
        format!("{title} in {op}")
    }

    /// `(cause, title)` of a headline; the title without [`REPORTED_BY_RUN`].
    pub fn parse_headline(line: &str) -> Option<(&str, &str)> {
        let rest = line.trim().strip_prefix("error[")?;
        let (cause, title) = rest.split_once("]: ")?;
        let valid = !cause.is_empty() && cause.bytes().all(|b| b.is_ascii_lowercase() || b == b'-');
        let title = title.strip_suffix(REPORTED_BY_RUN).unwrap_or(title).trim_end();
        valid.then_some((cause, title))
    }

    /// The op a title names after the cause's own title (`… in cross_entropy`).
    pub fn op_of_title<'a>(title: &'a str, cause_title: &str) -> Option<&'a str> {
        let op = title.strip_prefix(cause_title)?.strip_prefix(" in ")?;
        let valid = !op.is_empty() && op.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.'));
        valid.then_some(op)
    }

    /// `(file, line, column)` of a `--> file:line:column` line.
    pub fn parse_location(line: &str) -> Option<(&str, u64, Option<u64>)> {
        let rest = line.trim().strip_prefix("--> ")?;
        let (head, last) = rest.rsplit_once(':')?;
        let last: u64 = last.parse().ok()?;
        match head.rsplit_once(':').and_then(|(file, l)| Some((file, l.parse::<u64>().ok()?))) {
            Some((file, line)) => Some((file, line, Some(last))),
            None => Some((head, last, None)),
        }
    }

    /// The values a `found` note states: `bad_count` and `numel` (`3 of 64`), `low` (when
    /// not 0) and `bound` of a half-open interval, each `name = value` size (`C` is
    /// `classes`), `name_shape` of each `name of shape [...]`, and the first `bad_values`
    /// with their `positions`; `numel` 0 and the `shape` of an empty tensor.
    pub fn parse_found(text: &str) -> Map<String, Value> {
        let mut values = Map::new();
        found_count_and_interval(text, &mut values);
        found_sizes(text, &mut values);
        found_shapes(text, &mut values);
        found_examples(text, &mut values);
        values
    }

    /// `3 of 64` and `outside [low, bound)`.
    fn found_count_and_interval(text: &str, values: &mut Map<String, Value>) {
        let mut words = text.split(' ');
        if let (Some(bad), Some("of"), Some(total)) = (words.next(), words.next(), words.next()) {
            if let (Ok(bad), Ok(total)) = (bad.parse::<u64>(), total.parse::<u64>()) {
                values.insert("bad_count".into(), bad.into());
                values.insert("numel".into(), total.into());
            }
        }
        if let Some(rest) = text.split_once(" outside [").map(|(_, r)| r) {
            if let Some((low, rest)) = rest.split_once(", ") {
                let high: String = rest.chars().take_while(|c| c.is_ascii_digit() || *c == '-').collect();
                let half_open = rest[high.len()..].starts_with(')');
                if let (Ok(low), Ok(high), true) = (low.parse::<i64>(), high.parse::<i64>(), half_open) {
                    if low != 0 {
                        values.insert("low".into(), low.into());
                    }
                    values.insert("bound".into(), high.into());
                }
            }
        }
    }

    /// Each `name = value` in parentheses (`C` is `classes`).
    fn found_sizes(text: &str, values: &mut Map<String, Value>) {
        for group in text.split(" (").skip(1).filter_map(|g| g.split_once(')').map(|(g, _)| g)) {
            for pair in group.split(", ") {
                if let Some((name, value)) = pair.split_once(" = ") {
                    if let Ok(value) = value.parse::<i64>() {
                        let key = if name == "C" { "classes" } else { name };
                        values.insert(key.into(), value.into());
                    }
                }
            }
        }
    }

    /// The shapes the note names, and an empty tensor's count and shape.
    fn found_shapes(text: &str, values: &mut Map<String, Value>) {
        // `an input of shape [1, 3]`: the shape of what the word before names.
        for (before, after) in
            text.match_indices(" of shape [").map(|(at, m)| (&text[..at], &text[at + m.len() - 1..]))
        {
            let name = before.rsplit(' ').next().unwrap_or("");
            let dims = after.split_once(']').map(|(d, _)| d.trim_start_matches('['));
            let shape: Option<Vec<Value>> =
                dims.and_then(|d| d.split(", ").map(|n| n.parse::<u64>().ok().map(Value::from)).collect());
            if let (false, Some(shape)) = (name.is_empty(), shape) {
                values.insert(format!("{name}_shape"), Value::Array(shape));
            }
        }
        // `the input has no elements (shape [0])`: an empty tensor's count and shape.
        if let Some((_, rest)) = text.split_once(" has no elements") {
            values.insert("numel".into(), 0.into());
            let dims = rest.strip_prefix(" (shape [").and_then(|r| r.split_once(']')).map(|(d, _)| d);
            let shape: Option<Vec<Value>> = dims.map(|d| {
                d.split(", ")
                    .filter(|n| !n.is_empty())
                    .filter_map(|n| n.parse::<u64>().ok().map(Value::from))
                    .collect()
            });
            if let Some(shape) = shape {
                values.insert("shape".into(), Value::Array(shape));
            }
        }
    }

    /// The first bad values (`7 at [0, 3]`, or a 0-dim tensor's value alone) and their positions.
    fn found_examples(text: &str, values: &mut Map<String, Value>) {
        let (mut bad_values, mut positions) = (Vec::new(), Vec::new());
        if let Some((_, examples)) = text.split_once("): ").or_else(|| text.split_once("]: ")) {
            for example in examples.split("], ") {
                let Some((value, at)) = example.split_once(" at [") else {
                    // A 0-dim tensor's value stands alone.
                    if let Some(value) = number_value(example.trim()).filter(|_| bad_values.is_empty()) {
                        bad_values.push(value);
                        positions.push(Value::Array(Vec::new()));
                    }
                    continue;
                };
                let position: Option<Vec<Value>> = at
                    .trim_end_matches(']')
                    .split(", ")
                    .map(|p| p.parse::<i64>().ok().map(Value::from))
                    .collect();
                let (Some(value), Some(position)) = (number_value(value.trim()), position) else { continue };
                bad_values.push(value);
                positions.push(Value::Array(position));
            }
        }
        if !bad_values.is_empty() {
            values.insert("bad_values".into(), Value::Array(bad_values));
            values.insert("positions".into(), Value::Array(positions));
        }
    }

    fn number_value(text: &str) -> Option<Value> {
        match text.parse::<i64>() {
            Ok(n) => Some(n.into()),
            Err(_) => text.parse::<f64>().ok().filter(|f| f.is_finite()).map(Value::from),
        }
    }

    /// The shape of a tensor line (`tensor[64, 5] f32 cpu …`).
    pub fn parse_shape(summary: &str) -> Option<Vec<u64>> {
        let inside = summary.strip_prefix("tensor[")?.split_once(']')?.0;
        if inside.is_empty() {
            return Some(Vec::new());
        }
        inside.split(", ").map(|n| n.parse().ok()).collect()
    }

    /// A number as a person reads it: an integer exact, any other with 4 significant digits
    /// (as Python's `%.4g`); JSON keeps it whole.
    pub fn readable_number(value: f64) -> String {
        if value.is_nan() {
            return "nan".into();
        }
        if value.is_infinite() {
            return if value > 0.0 { "inf".into() } else { "-inf".into() };
        }
        if value == 0.0 {
            return if value.is_sign_negative() { "-0".into() } else { "0".into() };
        }
        let scientific = format!("{value:.3e}");
        let (mantissa, exponent) = scientific.split_once('e').expect("{:e} has an exponent");
        let exponent: i32 = exponent.parse().expect("{:e} has a numeric exponent");
        if !(-4..4).contains(&exponent) {
            let mantissa = trim_zeros(mantissa);
            let sign = if exponent < 0 { '-' } else { '+' };
            return format!("{mantissa}e{sign}{:02}", exponent.abs());
        }
        let decimals = (3 - exponent).max(0) as usize;
        trim_zeros(&format!("{value:.decimals$}")).to_string()
    }

    fn trim_zeros(text: &str) -> &str {
        if text.contains('.') {
            text.trim_end_matches('0').trim_end_matches('.')
        } else {
            text
        }
    }
}
