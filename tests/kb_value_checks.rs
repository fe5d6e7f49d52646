//! The catalogue of value checks (`kb/value-checks.toml`) is generated from PyTorch's own
//! source text (tests/fixtures/kb_provenance/value-checks.toml): every check macro of every
//! excerpt becomes a catalogue entry with its message template, kernel file, op and cause.
//! The test fails when the committed catalogue differs from what the excerpts give. To
//! regenerate after adding excerpts:
//!
//!     ASSERTSCOPE_BLESS=1 cargo test --test kb_value_checks
//!
//! It also checks the provenance of every entry: each template is built, piece by piece, by
//! the string literals of a recorded source; each kernel file is the file the text was read
//! from; the strings read from a wheel are C strings of that installed wheel.

mod check_support;
#[path = "kb_support/cpp_checks.rs"]
mod cpp_checks;
use check_support::{python, skip};
use cpp_checks::{checks_in, Check};

use serde::Deserialize;
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Excerpts {
    excerpt: Vec<Excerpt>,
}

#[derive(Deserialize, Clone)]
#[serde(deny_unknown_fields)]
struct Excerpt {
    op: String,
    ops: Vec<String>,
    repo: String,
    path: String,
    commit: String,
    #[serde(default)]
    wheel: String,
    #[serde(default)]
    kernel: String,
    family: String,
    versions: String,
    found: String,
}

const FAMILIES: [&str; 3] = ["th", "aten-1", "aten-2"];
const WHEEL_REPO: &str = "pypi:torch";
const REGENERATE: &str = "ASSERTSCOPE_BLESS=1 cargo test --test kb_value_checks";

fn read(rel: &str) -> String {
    std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join(rel)).unwrap()
}

fn excerpts() -> Vec<Excerpt> {
    let parsed: Excerpts = toml::from_str(&read("tests/fixtures/kb_provenance/value-checks.toml")).unwrap();
    parsed.excerpt
}

impl Excerpt {
    fn read_from_a_wheel(&self) -> bool {
        self.repo == WHEEL_REPO
    }

    /// The kernel file: the file the text was read from, or the one a wheel's strings
    /// belong to.
    fn kernel_path(&self) -> &str {
        if self.read_from_a_wheel() {
            &self.kernel
        } else {
            &self.path
        }
    }

    fn device(&self) -> &'static str {
        let path = self.kernel_path();
        if path.contains("/cuda/") || path.contains("/THC") || path.ends_with(".cu") || path.ends_with(".cuh")
        {
            "cuda"
        } else {
            "cpu"
        }
    }
}

/// The templates a wheel excerpt records (`template = …` lines) and its C strings.
fn wheel_templates(e: &Excerpt) -> (Vec<String>, Vec<&str>) {
    let mut templates = Vec::new();
    let mut strings = Vec::new();
    for line in e.found.strip_prefix('\n').unwrap_or(&e.found).lines() {
        match line.strip_prefix("template = ") {
            Some(t) => templates.push(t.to_string()),
            None => strings.push(line),
        }
    }
    (templates, strings)
}

fn checks_of(e: &Excerpt) -> Vec<Check> {
    if e.read_from_a_wheel() {
        let (templates, _) = wheel_templates(e);
        templates
            .into_iter()
            .map(|template| Check { macro_name: "TORCH_CHECK".into(), condition: String::new(), template })
            .collect()
    } else {
        checks_in(&e.found)
    }
}

/// The cause a check's own words name. The rules are the same for every version: what the
/// message (or the condition, for a check without one) says about the values.
fn cause_of(check: &Check) -> &'static str {
    let text = format!("{} {}", check.template, check.condition).to_lowercase();
    let has = |words: &[&str]| words.iter().any(|w| text.contains(w));
    if has(&["probabilit", "p_in", "0 <= p", "bernoulli"]) {
        "invalid-probabilities"
    } else if has(&["between 0 and 1"])
        || (has(&["input"]) && has(&[">= 0", ">= zero"]) && has(&["<= 1", "<= one"]))
    {
        "bce-input-range"
    } else if has(&["not finite", "isnan", "isinf", "isfinite", "`nan`"]) {
        "nan-inf"
    } else if has(&["non-empty", "no elements", "numel() > 0", "empty input", "dimension of size 0"]) {
        "empty-tensor"
    } else if check.macro_name == "TORCH_CHECK_INDEX" || has(&["out of bounds", "index out of range"]) {
        "index-out-of-bounds"
    } else {
        "value-domain"
    }
}

/// One catalogue entry: a check of one op with one message text, and where it was read.
struct Entry {
    op: String,
    ops: Vec<String>,
    cause: &'static str,
    macro_name: String,
    device: String,
    template: String,
    condition: String,
    kernels: Vec<String>,
    families: Vec<String>,
}

fn slug(op: &str, template: &str) -> String {
    let words: Vec<String> = template
        .split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|w| !w.is_empty() && w.chars().any(|c| c.is_ascii_alphabetic()))
        .map(str::to_ascii_lowercase)
        .filter(|w| w != op && w != "torch")
        .take(6)
        .collect();
    format!("{op}-{}", words.join("-"))
}

fn catalogue(excerpts: &[Excerpt]) -> Vec<(String, Entry)> {
    let mut entries: Vec<Entry> = Vec::new();
    for e in excerpts {
        for check in checks_of(e) {
            let existing = entries.iter_mut().find(|x| x.op == e.op && x.template == check.template);
            let entry = match existing {
                Some(entry) => entry,
                None => {
                    entries.push(Entry {
                        op: e.op.clone(),
                        ops: Vec::new(),
                        cause: cause_of(&check),
                        macro_name: check.macro_name.clone(),
                        device: String::new(),
                        template: check.template.clone(),
                        condition: String::new(),
                        kernels: Vec::new(),
                        families: Vec::new(),
                    });
                    entries.last_mut().unwrap()
                }
            };
            if entry.condition.is_empty() && !check.condition.is_empty() {
                entry.condition = check.condition.clone();
                entry.macro_name = check.macro_name.clone();
            }
            for op in &e.ops {
                if !entry.ops.contains(op) {
                    entry.ops.push(op.clone());
                }
            }
            let kernel = e.kernel_path().to_string();
            if !entry.kernels.contains(&kernel) {
                entry.kernels.push(kernel);
            }
            if !entry.families.contains(&e.family) {
                entry.families.push(e.family.clone());
            }
            let device = e.device();
            if !entry.device.split('+').any(|d| d == device) {
                entry.device = if entry.device.is_empty() {
                    device.into()
                } else {
                    format!("{}+{device}", entry.device)
                };
            }
        }
    }
    entries.sort_by(|a, b| (&a.op, &a.template).cmp(&(&b.op, &b.template)));
    let mut seen: BTreeMap<String, usize> = BTreeMap::new();
    entries
        .into_iter()
        .map(|entry| {
            let base = slug(&entry.op, &entry.template);
            let n = seen.entry(base.clone()).or_default();
            *n += 1;
            let id = if *n == 1 { base } else { format!("{base}-{n}") };
            (id, entry)
        })
        .collect()
}

/// A TOML basic string (serde_json's escaping is valid TOML for these texts).
fn toml_string(s: &str) -> String {
    serde_json::to_string(s).unwrap()
}

fn toml_list(items: &[String]) -> String {
    format!("[{}]", items.iter().map(|s| toml_string(s)).collect::<Vec<_>>().join(", "))
}

fn catalogue_text(excerpts: &[Excerpt]) -> String {
    let mut out = String::from(
        "# assertscope knowledge base: the checks PyTorch's kernels make on tensor values.\n\
         # GENERATED by tests/kb_value_checks.rs from tests/fixtures/kb_provenance/value-checks.toml\n\
         # (PyTorch source text, one excerpt per version read); do not edit by hand. Regenerate:\n\
         #     ASSERTSCOPE_BLESS=1 cargo test --test kb_value_checks\n\
         #\n\
         #   id         stable id (the op and the first words of the message)\n\
         #   op, ops    the op named in diagnoses, and the user-level APIs that reach the check\n\
         #   cause      taxonomy id (causes.toml), from the check's own words\n\
         #   macro      the check macro (TORCH_CHECK, CUDA_KERNEL_ASSERT, AT_ERROR, ...)\n\
         #   device     cpu, cuda or cpu+cuda: the kernels that make the check\n\
         #   template   the message, `{}` for each value the check inserts\n\
         #   condition  the condition the check tests (\"\" when read from a compiled wheel)\n\
         #   kernels    the kernel files it was read in\n\
         #   families   th, aten-1, aten-2: where in PyTorch's history the text was read\n",
    );
    for (id, e) in catalogue(excerpts) {
        let _ = write!(
            out,
            "\n[[check]]\nid = {}\nop = {}\nops = {}\ncause = {}\nmacro = {}\ndevice = {}\ntemplate = {}\ncondition = {}\nkernels = {}\nfamilies = {}\n",
            toml_string(&id),
            toml_string(&e.op),
            toml_list(&e.ops),
            toml_string(e.cause),
            toml_string(&e.macro_name),
            toml_string(&e.device),
            toml_string(&e.template),
            toml_string(&e.condition),
            toml_list(&e.kernels),
            toml_list(&e.families),
        );
    }
    out
}

#[test]
fn the_catalogue_is_generated_from_the_sources() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("python/assertscope/kb/value-checks.toml");
    let expected = catalogue_text(&excerpts());
    if std::env::var_os("ASSERTSCOPE_BLESS").is_some_and(|v| v == "1") {
        std::fs::write(&path, &expected).unwrap();
        return;
    }
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        committed == expected,
        "kb/value-checks.toml is out of date with its sources; regenerate it with `{REGENERATE}`"
    );
}

#[test]
fn every_excerpt_records_where_it_was_read() {
    for e in excerpts() {
        let full_hash = e.commit.len() == 40 && e.commit.chars().all(|c| c.is_ascii_hexdigit());
        assert!(full_hash, "{}: commit {:?} is not a full hash", e.path, e.commit);
        assert!(FAMILIES.contains(&e.family.as_str()), "{}: family {:?}", e.path, e.family);
        assert!(!e.versions.trim().is_empty(), "{}: no versions", e.path);
        if e.read_from_a_wheel() {
            assert!(
                !e.wheel.is_empty() && e.kernel.starts_with("aten/"),
                "{}: wheel {:?}, kernel {:?}",
                e.op,
                e.wheel,
                e.kernel
            );
        } else {
            assert_eq!(e.repo, "pytorch/pytorch", "{}", e.path);
            assert!(e.kernel.is_empty(), "{}: a source file is its own kernel file", e.path);
        }
        assert!(!checks_of(&e).is_empty(), "{} ({}): no check read", e.path, e.op);
    }
}

/// Every message and kernel of the catalogue is in a source: the template's pieces, in
/// order, in the string literals (or C strings) of an excerpt of that kernel file.
#[test]
fn every_message_and_kernel_is_found_in_a_source() {
    let all = excerpts();
    let text: String = read("python/assertscope/kb/value-checks.toml");
    #[derive(Deserialize)]
    struct File {
        check: Vec<Row>,
    }
    #[derive(Deserialize)]
    struct Row {
        id: String,
        template: String,
        kernels: Vec<String>,
    }
    let file: File = toml::from_str(&text).unwrap();
    let mut failures = Vec::new();
    for row in &file.check {
        for kernel in &row.kernels {
            let sources: Vec<&Excerpt> = all.iter().filter(|e| e.kernel_path() == kernel).collect();
            let built = sources.iter().any(|e| pieces_in_order(&row.template, &source_strings(e)));
            if !built {
                failures.push(format!(
                    "{}: {:?} is not built by any source text of {kernel}",
                    row.id, row.template
                ));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// What a source can print: its string literals (or a check's stringified condition), or a
/// wheel's C strings, joined.
fn source_strings(e: &Excerpt) -> String {
    if e.read_from_a_wheel() {
        return wheel_templates(e).1.concat();
    }
    let mut out = String::new();
    for check in checks_in(&e.found) {
        let _ = write!(out, "{}\u{0}{}\u{0}", check.condition, check.template);
    }
    let literal = regex::Regex::new(r#""((?:[^"\\]|\\.)*)""#).unwrap();
    for c in literal.captures_iter(&e.found) {
        out.push_str(&c[1].replace("\\\"", "\""));
    }
    out
}

fn pieces_in_order(template: &str, haystack: &str) -> bool {
    let mut at = 0;
    for piece in template.split("{}").filter(|p| !p.is_empty()) {
        match haystack[at..].find(piece) {
            Some(i) => at += i + piece.len(),
            None => return false,
        }
    }
    true
}

/// The strings read from a wheel are C strings of the installed wheel of that version, and
/// the wheel names the kernel file. Skipped where that wheel is not installed.
#[test]
fn every_wheel_string_is_in_the_installed_wheel() {
    let script = "import importlib.metadata as m, sysconfig\nprint(sysconfig.get_paths()['purelib'])\ntry: print(m.version('torch'))\nexcept m.PackageNotFoundError: print('-')";
    let Ok(out) = std::process::Command::new(python()).arg("-c").arg(script).output() else {
        return skip("no python to find the torch wheel");
    };
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let mut lines = text.lines();
    let (Some(site), Some(version)) = (lines.next(), lines.next()) else {
        return skip("python could not list its packages");
    };
    let all = excerpts();
    let mut wanted: Vec<(String, Vec<u8>)> = Vec::new();
    let mut library = None;
    for e in all.iter().filter(|e| e.read_from_a_wheel()) {
        if version.split('+').next() != Some(e.wheel.as_str()) {
            skip(&format!("{}: torch {} is not installed (found {version})", e.op, e.wheel));
            continue;
        }
        library = Some(Path::new(site).join(&e.path));
        for string in wheel_templates(e).1 {
            wanted.push((
                format!("{}: {string:?} is not a C string of the wheel", e.op),
                [string.as_bytes(), b"\0"].concat(),
            ));
        }
        wanted
            .push((format!("{}: the wheel does not name {}", e.op, e.kernel), e.kernel.as_bytes().to_vec()));
    }
    let Some(path) = library else { return };
    let file = std::fs::File::open(&path).unwrap_or_else(|err| panic!("{}: {err}", path.display()));
    // SAFETY: a read-only map of an installed library that nothing here writes.
    let bytes = unsafe { memmap2::Mmap::map(&file) }.unwrap();
    let failures: Vec<&str> = wanted
        .iter()
        .filter(|(_, string)| memchr::memmem::find(&bytes, string).is_none())
        .map(|(what, _)| what.as_str())
        .collect();
    let checked = wanted.len();
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    eprintln!("{checked} strings checked against {}", path.display());
}

#[test]
fn the_parser_reads_every_form_of_check() {
    let code = r#"
  TORCH_CHECK(self.numel() > 0, "quantile() input tensor must be non-empty");
  if (self.dim() != 1 || *self.min().data_ptr<input_t>() < 0) {
    AT_ERROR("bincount only supports 1-d non-negative integral inputs.");
  }
  TORCH_CHECK_IF_NOT_ON_CUDA(p_in >= 0 && p_in <= 1);
  CUDA_KERNEL_ASSERT(input_val >= zero && input_val <= one);
  THArgCheck(n_sample > 0, 2, "cannot sample n_sample <= 0 samples (%d)", n);
  TORCH_CHECK(a, "range of [", lo, ", ", hi, "] is not finite");
  static_assert(sizeof(T) > 1, "not a check of values");
  assert(*input >= 0. && *input <= 1.);"#;
    let checks = checks_in(code);
    let got: Vec<(&str, &str)> =
        checks.iter().map(|c| (c.macro_name.as_str(), c.template.as_str())).collect();
    assert_eq!(
        got,
        vec![
            ("TORCH_CHECK", "quantile() input tensor must be non-empty"),
            ("AT_ERROR", "bincount only supports 1-d non-negative integral inputs."),
            ("TORCH_CHECK_IF_NOT_ON_CUDA", "Expected p_in >= 0 && p_in <= 1 to be true, but got false."),
            ("CUDA_KERNEL_ASSERT", "input_val >= zero && input_val <= one"),
            ("THArgCheck", "cannot sample n_sample <= 0 samples ({})"),
            ("TORCH_CHECK", "range of [{}, {}] is not finite"),
            ("assert", "*input >= 0. && *input <= 1."),
        ]
    );
    assert_eq!(checks[1].condition, "!(self.dim() != 1 || *self.min().data_ptr<input_t>() < 0)");
    let causes: Vec<&str> = checks.iter().map(cause_of).collect();
    assert_eq!(
        causes,
        vec![
            "empty-tensor",
            "value-domain",
            "invalid-probabilities",
            "bce-input-range",
            "value-domain",
            "nan-inf",
            "bce-input-range"
        ]
    );
}

/// Counts for the record: checks per cause and per version family.
#[test]
fn report_counts() {
    let all = excerpts();
    let entries = catalogue(&all);
    let mut per_cause: BTreeMap<&str, usize> = BTreeMap::new();
    let mut per_family: BTreeMap<String, usize> = BTreeMap::new();
    for (_, e) in &entries {
        *per_cause.entry(e.cause).or_default() += 1;
        for f in &e.families {
            *per_family.entry(f.clone()).or_default() += 1;
        }
    }
    println!("{} value checks from {} excerpts", entries.len(), all.len());
    for (cause, n) in &per_cause {
        println!("cause {cause}: {n}");
    }
    for (family, n) in &per_family {
        println!("family {family}: {n} checks seen");
    }
}
