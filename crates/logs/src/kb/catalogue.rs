//! What the generated catalogue of value checks (value-checks.toml) adds to matching: a
//! host message for every check whose text no hand-written message covers, and the kernel
//! files that name an op and a cause however a log writes their path.

use super::{AssertSite, Message, ValueCheck};
use std::collections::HashMap;

/// A message piece shorter than this matches too much text to stand for a check.
const SHORTEST_LITERAL: usize = 12;

/// `messages` followed by one message per value check that none of them already covers.
/// Hand-written entries come first: they carry named values, titles and hints.
pub fn with_value_checks(mut messages: Vec<Message>, checks: &[ValueCheck]) -> Vec<Message> {
    for check in checks {
        if matches!(check.macro_name.as_str(), "CUDA_KERNEL_ASSERT" | "assert") {
            continue; // a condition, printed in an assertion line, not a host message
        }
        let pieces: Vec<&str> = check.template.split("{}").collect();
        let Some(literal) = pieces.iter().map(|p| p.trim()).max_by_key(|p| p.len()) else { continue };
        if literal.len() < SHORTEST_LITERAL {
            continue;
        }
        let example = format!("{}: {}", exception_type(&check.macro_name), check.template.replace("{}", "1"));
        if messages.iter().any(|m| example.contains(m.literal.as_str())) {
            continue;
        }
        let pattern = pieces.iter().map(|p| regex::escape(p)).collect::<Vec<_>>().join("(.+?)");
        messages.push(Message {
            id: format!("value-check:{}", check.id),
            literal: literal.to_string(),
            pattern,
            cause: check.cause.clone(),
            op: Some(check.op.clone()),
            title: None,
            hint: None,
            example,
        });
    }
    messages
}

/// The Python exception a check macro raises.
fn exception_type(macro_name: &str) -> &'static str {
    match macro_name {
        "TORCH_CHECK_INDEX" => "IndexError",
        "TORCH_CHECK_VALUE" => "ValueError",
        _ => "RuntimeError",
    }
}

/// What a kernel source file stands for: the ops whose checks it holds and their causes.
#[derive(Debug, Default, Clone)]
pub struct KernelFile {
    pub ops: Vec<String>,
    pub causes: Vec<String>,
}

impl KernelFile {
    /// The op, when the file holds the checks of one op only.
    pub fn only_op(&self) -> Option<&str> {
        (self.ops.len() == 1).then(|| self.ops[0].as_str())
    }

    /// The cause, when every check of the file means the same.
    pub fn only_cause(&self) -> Option<&str> {
        (self.causes.len() == 1).then(|| self.causes[0].as_str())
    }
}

/// File stem (lowercase, without directories and extension) -> what it stands for. THC's
/// `generic/THCTensorRandom.cu` and `THCTensorRandom.cuh` are one kernel family, as are the
/// forward and back slashes and build prefixes of a printed path.
pub fn kernel_files(asserts: &[AssertSite], checks: &[ValueCheck]) -> HashMap<String, KernelFile> {
    let mut files: HashMap<String, KernelFile> = HashMap::new();
    let mut add = |path: &str, op: &str, cause: &str| {
        let Some(stem) = file_stem(path) else { return };
        let entry = files.entry(stem).or_default();
        if !entry.ops.iter().any(|o| o == op) {
            entry.ops.push(op.to_string());
        }
        if !entry.causes.iter().any(|c| c == cause) {
            entry.causes.push(cause.to_string());
        }
    };
    for site in asserts.iter().filter(|s| !s.internal && !s.file.is_empty()) {
        add(&site.file, &site.op, &site.cause);
    }
    for check in checks.iter().filter(|c| c.device.contains("cuda")) {
        for kernel in check.kernels.iter().filter(|k| k.ends_with(".cu") || k.ends_with(".cuh")) {
            add(kernel, &check.op, &check.cause);
        }
    }
    files
}

/// The lowercase stem of a source path written with any separators.
pub fn file_stem(path: &str) -> Option<String> {
    let name = path.rsplit(['/', '\\']).next()?.trim();
    let (stem, ext) = name.rsplit_once('.')?;
    let source = matches!(ext.to_ascii_lowercase().as_str(), "cu" | "cuh" | "cpp" | "cc" | "c" | "h" | "hpp");
    (source && !stem.is_empty()).then(|| stem.to_ascii_lowercase())
}

/// The source files a text names (`at /pytorch/aten/src/THCUNN/generic/X.cu:87`,
/// `file=C:\w\1\s\windows\pytorch\aten\src\THC\generic\Y.cu line=26`), as lowercase stems,
/// in the order they appear.
pub fn named_files(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let bytes = text.as_bytes();
    let mut at = 0;
    while let Some(dot) = text[at..].find('.').map(|i| at + i) {
        at = dot + 1;
        let ext_end = bytes[dot + 1..]
            .iter()
            .position(|b| !b.is_ascii_alphabetic())
            .map_or(bytes.len(), |p| dot + 1 + p);
        let ext = &text[dot + 1..ext_end];
        if !matches!(ext.to_ascii_lowercase().as_str(), "cu" | "cuh" | "cpp" | "cc" | "c" | "h" | "hpp") {
            continue;
        }
        // A file name ends at a line suffix, a blank, a quote or the end of the text.
        if bytes.get(ext_end).is_some_and(|b| b.is_ascii_alphanumeric() || *b == b'_') {
            continue;
        }
        let start = text[..dot]
            .char_indices()
            .rev()
            .find(|(_, c)| !(c.is_alphanumeric() || *c == '_' || *c == '-'))
            .map_or(0, |(i, c)| i + c.len_utf8());
        if start < dot {
            out.push(text[start..dot].to_ascii_lowercase());
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stems_of_paths_in_every_form() {
        for path in [
            "/pytorch/aten/src/ATen/native/cuda/Loss.cu",
            r"C:\w\1\s\windows\pytorch\aten\src\ATen\native\cuda\Loss.cu",
            r"C:\w\1\s\windows\pytorch\aten\src\THCUNN/generic\loss.CU",
            "../aten/src/ATen/native/cuda/Loss.cu",
        ] {
            assert_eq!(file_stem(path).as_deref(), Some("loss"), "{path}");
        }
        assert_eq!(file_stem("train.py"), None);
    }

    #[test]
    fn files_named_in_a_message() {
        assert_eq!(
            named_files("RuntimeError: cuda runtime error (59) : device-side assert triggered at /opt/conda/conda-bld/pytorch_1524586445097/work/aten/src/THCUNN/generic/ClassNLLCriterion.cu:87"),
            vec!["classnllcriterion"]
        );
        assert_eq!(
            named_files(
                r"THCudaCheck FAIL file=C:\w\1\s\windows\pytorch\aten\src\THC\generic/THCTensorMath.cu line=26 error=59 : device-side assert triggered"
            ),
            vec!["thctensormath"]
        );
        assert_eq!(named_files("loss went to 1.5 at step 3. see train.cfg"), Vec::<String>::new());
        // A character of several bytes just before the name (found by fuzzing).
        assert_eq!(named_files("at \u{fffd}Loss.cu:250"), vec!["loss"]);
        assert_eq!(named_files("\u{fffd}.cu"), Vec::<String>::new());
    }
}
