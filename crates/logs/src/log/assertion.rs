//! Device-side assertion lines, in every form PyTorch builds print them:
//!
//! ```text
//! ../aten/src/ATen/native/cuda/Loss.cu:250: nll_loss_forward_reduce_cuda_kernel_2d: block: [0,0,0], thread: [3,0,0] Assertion `t >= 0 && t < n_classes` failed.
//! C:\cb\pytorch_1000000000000\work\aten\src\ATen\native\cuda\Loss.cu:250: block: [0,0,0], thread: [5,0,0] Assertion `t >= 0 && t < n_classes` failed.
//! /pytorch/aten/src/THCUNN/ClassNLLCriterion.cu:106: void cunn_ClassNLLCriterion_updateOutput_kernel(Dtype *, ...) [with Dtype = float]: block: [0,0,0], thread: [1,0,0] Assertion `t >= 0 && t < n_classes` failed.
//! [CUDA_KERNEL_ASSERT] .../Repeat.cu:36: compute_cuda_kernel: block: [0,0,0], thread: [0,0,0]: Assertion failed: `result_size == cumsum_ptr[size - 1]`: Invalid input! ...
//! ```
//!
//! and the device-side assertion (DSA) report of builds with `TORCH_USE_CUDA_DSA`.

/// One parsed assertion line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AssertionLine {
    /// The source path as printed (may be a build-machine path).
    pub file: String,
    pub line: Option<u64>,
    /// The function as printed: a name, `operator()`, a templated signature, or empty.
    pub kernel: String,
    pub condition: String,
    /// `[x,y,z]` of the failing block and thread, as printed.
    pub block: Option<String>,
    pub thread: Option<String>,
    /// The explanatory message of the printf form, which often carries the values.
    pub message: Option<String>,
}

/// Parses a line holding a device-side assertion; the assertion may follow other text on
/// the same line (a progress bar it was printed over).
pub fn parse(text: &str) -> Option<AssertionLine> {
    if let Some(i) = text.find("Assertion failed: `") {
        return parse_printf(text, i);
    }
    let Some(start) = text.find("Assertion `") else {
        return parse_transcribed(text);
    };
    let rest = &text[start + "Assertion `".len()..];
    // Conditions can hold backticks themselves (the multinomial message does).
    let end = rest.rfind("` failed").or_else(|| rest.rfind('`'))?;
    let condition = rest[..end].trim().to_string();
    let location = text[..start].trim_end();
    let (place, block, thread) = split_block_thread(location);
    let (file, line, kernel) = split_place(place);
    // A terminal that wrapped the line leaves the condition without its location; the
    // condition alone still names the check.
    if file.is_empty() && (condition.is_empty() || !rest[end..].starts_with("` failed")) {
        return None;
    }
    Some(AssertionLine { file, line, kernel, condition, block, thread, message: None })
}

/// An assertion line typed from a screenshot or re-quoted by a forum: `assertion 't >= 0'
/// failed`, curly or straight quotes, any case. Read as the printed form.
fn parse_transcribed(text: &str) -> Option<AssertionLine> {
    let lower = text.to_ascii_lowercase();
    let at = lower.find("assertion ")?;
    // Only a kernel's line: its place (a CUDA source file, a block) comes first. Prose that
    // mentions an assertion is not one.
    let place = &lower[..at];
    if !(place.contains(".cu") || place.contains("block")) {
        return None;
    }
    let after = &text[at + "assertion ".len()..];
    let open = after.chars().next().filter(|c| QUOTES.contains(c))?;
    let body = &after[open.len_utf8()..];
    let lower_body = body.to_ascii_lowercase();
    let close = lower_body.rfind(" failed").filter(|&i| i > 0)?;
    let condition = body[..close].trim_end();
    let last = condition.chars().last().filter(|c| QUOTES.contains(c))?;
    let condition = &condition[..condition.len() - last.len_utf8()];
    let printed = format!("{}Assertion `{condition}` failed.", &text[..at]);
    parse(&printed).filter(|a| !a.condition.is_empty())
}

/// A kernel's assertion line whose `Assertion `…` failed` was translated or cut away
/// (a browser's page translation writes `断言失败`, and `block`, `thread` in its own
/// words): its place, block and thread keep their shape, and the file and function still
/// name the check. The condition is empty. On a
/// line that holds several (threads printing over each other), the first with a whole
/// path, else the first.
pub fn parse_place_only(text: &str) -> Option<AssertionLine> {
    static RE: std::sync::OnceLock<regex::Regex> = std::sync::OnceLock::new();
    let re = RE.get_or_init(|| {
        regex::Regex::new(
            r"(?P<file>[^\s:\[\]]+\.cuh?)\s?:(?P<line>\d+):(?:\s*(?P<kernel>[^:\[\]]+?)\s*:)?\s*[^\s:\[\],]+:\s*(?P<block>\[[\d,\s]*\]),\s*[^\s:\[\],]+:\s*(?P<thread>\[[\d,\s]*\])",
        )
        .expect("the place pattern compiles")
    });
    let mut found = re.captures_iter(text);
    let first = found.next()?;
    let best = std::iter::once(first)
        .chain(found)
        .find(|c| c["file"].contains(['/', '\\']))
        .or_else(|| re.captures(text))?;
    Some(AssertionLine {
        file: best["file"].to_string(),
        line: best["line"].parse().ok(),
        kernel: best.name("kernel").map_or(String::new(), |k| k.as_str().trim().to_string()),
        condition: String::new(),
        block: Some(best["block"].to_string()),
        thread: Some(best["thread"].to_string()),
        message: None,
    })
}

/// Quotes a transcription may put around a condition instead of backticks.
const QUOTES: &[char] = &['`', '\'', '"', '\u{2018}', '\u{2019}', '\u{201c}', '\u{201d}'];

fn parse_printf(text: &str, at: usize) -> Option<AssertionLine> {
    let rest = &text[at + "Assertion failed: `".len()..];
    let end = rest.find("`:").or_else(|| rest.rfind('`'))?;
    let condition = rest[..end].trim().to_string();
    let message = rest[end + 1..].trim_start_matches(':').trim();
    let head = text[..at].trim_end().trim_end_matches(':');
    let head = head.split_once("[CUDA_KERNEL_ASSERT]").map_or(head, |(_, h)| h).trim();
    let (place, block, thread) = split_block_thread(head);
    let (file, line, kernel) = split_place(place);
    Some(AssertionLine {
        file,
        line,
        kernel,
        condition,
        block,
        thread,
        message: (!message.is_empty()).then(|| message.to_string()),
    })
}

/// Splits `<place>: block: [..], thread: [..]` into its parts.
fn split_block_thread(location: &str) -> (&str, Option<String>, Option<String>) {
    match location.rfind("block: [") {
        Some(b) => {
            let tail = &location[b..];
            let block = bracket_after(tail, "block: ");
            let thread = bracket_after(tail, "thread: ");
            (location[..b].trim_end().trim_end_matches(':'), block, thread)
        }
        None => (location.trim_end_matches(':'), None, None),
    }
}

fn bracket_after(s: &str, key: &str) -> Option<String> {
    let from = s.find(key)? + key.len();
    let close = s[from..].find(']')?;
    Some(s[from..=from + close].to_string())
}

/// Splits `<path>:<line>: <function>` (the function is absent in Windows builds; the
/// path itself can contain a drive-letter colon or text of a progress bar before it).
fn split_place(place: &str) -> (String, Option<u64>, String) {
    let bytes = place.as_bytes();
    // Find the first `:<digits>` followed by `:` or the end.
    let mut i = 0;
    while let Some(off) = memchr::memchr(b':', &bytes[i..]) {
        let colon = i + off;
        let digits_end = bytes[colon + 1..]
            .iter()
            .position(|b| !b.is_ascii_digit())
            .map_or(bytes.len(), |p| colon + 1 + p);
        if digits_end > colon + 1 && (digits_end == bytes.len() || bytes[digits_end] == b':') {
            let path = clean_path(&place[..colon]);
            let line = place[colon + 1..digits_end].parse().ok();
            let kernel = place.get(digits_end + 1..).unwrap_or("").trim().to_string();
            return (path, line, kernel);
        }
        i = colon + 1;
    }
    (clean_path(place), None, String::new())
}

/// The path without text a progress bar left before it on the same line.
fn clean_path(raw: &str) -> String {
    let raw = raw.trim();
    let start = raw.rfind([' ', ']', '|', '\t']).map_or(0, |i| i + 1);
    raw[start..].to_string()
}

/// Collects the lines of a DSA report into an assertion.
///
/// ```text
///   GPU assertion failure message = target_k >= 0 && target_k < dim && "target index is out of bounds"
///   File containing assertion = /home/dev/src/pytorch/aten/src/ATen/native/cuda/MultiMarginLoss.cu:70
///   Device function containing assertion = MultiMarginLoss_forward_kernel
///   Thread ID that failed assertion = [0,0,0]
///   Block ID that failed assertion = [37,0,0]
/// ```
#[derive(Debug, Default)]
pub struct DsaReport {
    pub current: Option<AssertionLine>,
}

impl DsaReport {
    /// Feeds a line; returns true if it belonged to a DSA report.
    pub fn feed(&mut self, text: &str) -> bool {
        let t = text.trim();
        if let Some(cond) = t.strip_prefix("GPU assertion failure message = ") {
            self.current = Some(AssertionLine {
                file: String::new(),
                line: None,
                kernel: String::new(),
                condition: cond.trim().to_string(),
                block: None,
                thread: None,
                message: None,
            });
            return true;
        }
        let Some(current) = self.current.as_mut() else { return false };
        if let Some(place) = t.strip_prefix("File containing assertion = ") {
            let (file, line, _) = split_place(place);
            current.file = file;
            current.line = line;
        } else if let Some(f) = t.strip_prefix("Device function containing assertion = ") {
            current.kernel = f.trim().to_string();
        } else if let Some(v) = t.strip_prefix("Thread ID that failed assertion = ") {
            current.thread = Some(v.trim().to_string());
        } else if let Some(v) = t.strip_prefix("Block ID that failed assertion = ") {
            current.block = Some(v.trim().to_string());
        } else {
            return t.starts_with("File containing kernel launch")
                || t.starts_with("Function containing kernel launch")
                || t.starts_with("Name of kernel launched")
                || t.starts_with("Device that launched kernel")
                || t.starts_with("Stream kernel was launched on")
                || t.starts_with("Backtrace of kernel launch site")
                || t.starts_with("Assertion failure ");
        }
        true
    }

    /// The assertion collected so far, once its condition and file are known.
    pub fn take(&mut self) -> Option<AssertionLine> {
        self.current.take()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn aten_line() {
        let a = parse("../aten/src/ATen/native/cuda/Loss.cu:250: nll_loss_forward_reduce_cuda_kernel_2d: block: [0,0,0], thread: [3,0,0] Assertion `t >= 0 && t < n_classes` failed.").unwrap();
        assert_eq!(a.file, "../aten/src/ATen/native/cuda/Loss.cu");
        assert_eq!(a.line, Some(250));
        assert_eq!(a.kernel, "nll_loss_forward_reduce_cuda_kernel_2d");
        assert_eq!(a.condition, "t >= 0 && t < n_classes");
        assert_eq!(a.thread.as_deref(), Some("[3,0,0]"));
    }

    #[test]
    fn windows_line_without_function() {
        let a = parse(r"C:\cb\pytorch_1000000000000\work\aten\src\ATen\native\cuda\Loss.cu:250: block: [0,0,0], thread: [5,0,0] Assertion `t >= 0 && t < n_classes` failed.").unwrap();
        assert_eq!(a.file, r"C:\cb\pytorch_1000000000000\work\aten\src\ATen\native\cuda\Loss.cu");
        assert_eq!(a.line, Some(250));
        assert_eq!(a.kernel, "");
    }

    #[test]
    fn templated_signature_and_nested_backticks() {
        let a = parse("/pytorch/aten/src/THCUNN/ClassNLLCriterion.cu:106: void cunn_ClassNLLCriterion_updateOutput_kernel(Dtype *, Dtype *, Dtype *, long *, Dtype *, int, int, int, int, long) [with Dtype = float, Acctype = float]: block: [0,0,0], thread: [1,0,0] Assertion `t >= 0 && t < n_classes` failed.").unwrap();
        assert!(a.kernel.starts_with("void cunn_ClassNLLCriterion_updateOutput_kernel("));
        let m = parse("/pytorch/aten/src/ATen/native/cuda/TensorCompare.cu:112: _assert_async_cuda_kernel: block: [0,0,0], thread: [0,0,0] Assertion `probability tensor contains either `inf`, `nan` or element < 0` failed.").unwrap();
        assert_eq!(m.condition, "probability tensor contains either `inf`, `nan` or element < 0");
    }

    #[test]
    fn glued_to_a_progress_bar() {
        let a = parse("Epoch 3:  45%|####5     | 45/100 [00:10<00:12]../aten/src/ATen/native/cuda/NLLLoss2d.cu:104: nll_loss2d_forward_kernel: block: [1,0,0], thread: [7,0,0] Assertion `t >= 0 && t < n_classes` failed.").unwrap();
        assert_eq!(a.file, "../aten/src/ATen/native/cuda/NLLLoss2d.cu");
        assert_eq!(a.kernel, "nll_loss2d_forward_kernel");
    }

    #[test]
    fn printf_form_keeps_the_message() {
        let a = parse("[CUDA_KERNEL_ASSERT] /pytorch/aten/src/ATen/native/cuda/Repeat.cu:36: compute_cuda_kernel: block: [0,0,0], thread: [0,0,0]: Assertion failed: `result_size == cumsum_ptr[size - 1]`: Invalid input! In `repeat_interleave`, the `output_size` argument (5) must be the same as the sum of the elements in the `repeats` tensor (3).").unwrap();
        assert_eq!(a.condition, "result_size == cumsum_ptr[size - 1]");
        assert_eq!(a.kernel, "compute_cuda_kernel");
        assert!(a.message.unwrap().contains("argument (5)"));
    }

    #[test]
    fn dsa_report() {
        let mut r = DsaReport::default();
        for l in [
            "  GPU assertion failure message = target_k >= 0 && target_k < dim && \"target index is out of bounds\"",
            "  File containing assertion = /home/dev/src/pytorch/aten/src/ATen/native/cuda/MultiMarginLoss.cu:70",
            "  Device function containing assertion = MultiMarginLoss_forward_kernel",
            "  Block ID that failed assertion = [37,0,0]",
        ] {
            assert!(r.feed(l));
        }
        let a = r.take().unwrap();
        assert_eq!(a.line, Some(70));
        assert_eq!(a.kernel, "MultiMarginLoss_forward_kernel");
        assert_eq!(a.block.as_deref(), Some("[37,0,0]"));
    }

    #[test]
    fn wrapped_line_keeps_the_condition() {
        let a = parse("Assertion `srcIndex < srcSelectDimSize` failed.").unwrap();
        assert_eq!((a.file.as_str(), a.condition.as_str()), ("", "srcIndex < srcSelectDimSize"));
    }

    #[test]
    fn transcribed_lines_read_as_printed() {
        let a = parse("/pytorch/aten/src/THCUNN/ClassNLLCriterion.cu:105: block: [0,0,0], thread: [2,0,0] assertion 't >= 0 && t < n_classes' FAILED.").unwrap();
        assert_eq!((a.condition.as_str(), a.line), ("t >= 0 && t < n_classes", Some(105)));
        let a = parse("Loss.cu:250: block: [0,0,0], thread: [0,0,0] Assertion \u{2018}t >= 0 && t < n_classes\u{2019} failed.").unwrap();
        assert_eq!(a.condition, "t >= 0 && t < n_classes");
        assert!(parse("AssertionError: 'x' failed").is_none());
        assert!(parse("Note: the assertion \"x > 0\" failed in my unit test").is_none());
    }

    #[test]
    fn not_an_assertion() {
        assert!(parse("AssertionError: shapes differ").is_none());
    }
}
