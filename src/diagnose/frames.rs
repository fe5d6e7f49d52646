//! Which traceback frame is the user's: the deepest one outside the Python standard
//! library, installed packages (site-packages, dist-packages, torch) and generated code.

use crate::log::traceback::{Frame, Traceback};

/// Where a frame's code comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Origin {
    User,
    /// torch itself (installed, or a source checkout).
    Torch,
    /// Another installed package, the standard library, or an entry-point script.
    Library,
    /// Code generated at run time (torch.compile, `exec`, fx): never the user's line.
    Generated,
}

pub fn origin(path: &str) -> Origin {
    let p = path.replace('\\', "/");
    let lower = p.to_ascii_lowercase();
    if lower.starts_with('<') && !lower.starts_with("<ipython-input-") {
        return Origin::Generated;
    }
    if lower.contains("/torchinductor_")
        || lower.contains("/torch_compile_debug/")
        || lower.contains("/__compiled_fn")
    {
        return Origin::Generated;
    }
    if lower.contains("/torch/") && !lower.contains("/site-packages/") && !lower.contains("/dist-packages/") {
        // A source checkout of PyTorch, or an install outside site-packages.
        if is_torch_tree(&lower) {
            return Origin::Torch;
        }
    }
    if lower.contains("/site-packages/") || lower.contains("/dist-packages/") {
        return if lower.contains("-packages/torch/") { Origin::Torch } else { Origin::Library };
    }
    if is_stdlib(&lower) || is_entry_point(&p) || is_assertscope(&lower) {
        return Origin::Library;
    }
    Origin::User
}

/// assertscope's own Python package: installed, in a source tree, or the copy `run`
/// injects (`…/assertscope-<pid>-<hex>-<n>/assertscope/_guard/_engine.py`). A host error
/// PyTorch raises inside a guard wrapper passes through these frames; they are never the
/// user's line.
fn is_assertscope(lower: &str) -> bool {
    const OWN: &[&str] =
        &["/assertscope/_guard/", "/assertscope/_inject/", "/assertscope/_cpu/", "/assertscope/_scan/"];
    const MODULES: &[&str] =
        &["cpu.py", "scan.py", "errors.py", "_frames.py", "_summary.py", "_report.py", "_probe.py", "kb.py"];
    if OWN.iter().any(|d| lower.contains(d)) {
        return true;
    }
    if let Some((dir, file)) = lower.rsplit_once('/') {
        if dir.ends_with("/assertscope") && MODULES.contains(&file) {
            return true;
        }
    }
    lower.split('/').any(|segment| {
        let mut parts = segment.splitn(4, '-');
        parts.next() == Some("assertscope")
            && parts.next().is_some_and(|pid| !pid.is_empty() && pid.bytes().all(|b| b.is_ascii_digit()))
            && parts.next().is_some_and(|t| !t.is_empty() && t.bytes().all(|b| b.is_ascii_hexdigit()))
            && parts.next().is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
    })
}

fn is_torch_tree(lower: &str) -> bool {
    const SUBDIRS: &[&str] = &[
        "/torch/nn/",
        "/torch/autograd/",
        "/torch/utils/",
        "/torch/_tensor.py",
        "/torch/functional.py",
        "/torch/distributed/",
        "/torch/cuda/",
        "/torch/_dynamo/",
        "/torch/_inductor/",
        "/torch/optim/",
        "/torch/amp/",
        "/torch/fx/",
        "/torch/_utils.py",
        "/torch/multiprocessing/",
        "/torch/_ops.py",
        "/torch/overrides.py",
        "/torch/serialization.py",
        "/torch/random.py",
        "/torch/distributions/",
    ];
    SUBDIRS.iter().any(|s| lower.contains(s))
}

fn is_stdlib(lower: &str) -> bool {
    if let Some(i) = lower.find("/lib/python") {
        // /usr/lib/python3.10/threading.py, /opt/conda/lib/python3.11/runpy.py
        let rest = &lower[i + "/lib/python".len()..];
        return rest.starts_with(|c: char| c.is_ascii_digit()) || rest.starts_with('/');
    }
    if lower.contains("/lib64/python") {
        return true;
    }
    // Windows: C:\Python310\lib\threading.py, ...\anaconda3\lib\runpy.py, ...\envs\x\lib\...
    if let Some(i) = lower.find("/lib/") {
        let prefix = &lower[..i];
        let last = prefix.rsplit('/').next().unwrap_or("");
        return last.starts_with("python")
            || last.starts_with("anaconda")
            || last.starts_with("miniconda")
            || last.starts_with("miniforge")
            || last.starts_with("mambaforge")
            || prefix.contains("/envs/");
    }
    false
}

/// Console scripts installed by pip (`venv/bin/torchrun`, `Scripts\accelerate-script.py`).
fn is_entry_point(path: &str) -> bool {
    let (dir, file) = path.rsplit_once('/').unwrap_or(("", path));
    let dir_name = dir.rsplit('/').next().unwrap_or(dir);
    (dir_name == "bin" && !file.contains('.'))
        || (dir_name.eq_ignore_ascii_case("scripts") && file.ends_with("-script.py"))
}

/// The deepest user frame of a traceback, looking first into the original traceback a
/// re-raise carries (DataLoader workers, DataParallel replicas).
pub fn user_frame(tb: &Traceback) -> Option<&Frame> {
    if let Some(original) = &tb.original {
        if let Some(f) = user_frame(original) {
            return Some(f);
        }
    }
    tb.frames.iter().rev().find(|f| origin(&f.file) == Origin::User)
}

/// Frames from the innermost outwards, the original traceback's first.
pub fn innermost_first(tb: &Traceback) -> Vec<&Frame> {
    let mut frames = Vec::new();
    let mut chain = vec![tb];
    while let Some(o) = &chain.last().unwrap().original {
        chain.push(o);
    }
    for t in chain.iter().rev() {
        frames.extend(t.frames.iter().rev());
    }
    frames
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn origins() {
        for (path, want) in [
            ("/tmp/asc/digits-mlp/train.py", Origin::User),
            ("train.py", Origin::User),
            ("Cell In[7]", Origin::User),
            ("<ipython-input-3-404b011a3eca>", Origin::User),
            ("/tmp/ipykernel_1234/3019.py", Origin::User),
            ("/tmp/tv/lib/python3.11/site-packages/torch/nn/functional.py", Origin::Torch),
            ("~/miniconda3/envs/dl/lib/python3.11/site-packages/torch/nn/modules/module.py", Origin::Torch),
            ("/usr/local/lib/python3.10/dist-packages/transformers/trainer.py", Origin::Library),
            ("/usr/lib/python3.10/threading.py", Origin::Library),
            ("/opt/conda/lib/python3.11/runpy.py", Origin::Library),
            (r"C:\Users\marco\anaconda3\lib\site-packages\torch\optim\adam.py", Origin::Torch),
            (r"C:\Users\marco\anaconda3\lib\threading.py", Origin::Library),
            (r"C:\Users\marco\Documents\tesi\train.py", Origin::User),
            ("/tmp/tv/bin/torchrun", Origin::Library),
            ("/tmp/torchinductor_jz/kx/ckxwq.py", Origin::Generated),
            ("<string>", Origin::Generated),
            ("<frozen runpy>", Origin::Generated),
            ("/home/dev/src/pytorch/torch/nn/functional.py", Origin::Torch),
            ("/home/me/lib/utils.py", Origin::User),
            ("/dev/shm/assertscope-4242-18c3f0a9e1-0/assertscope/_guard/_engine.py", Origin::Library),
            ("/tmp/assertscope-7-ff-1/sitecustomize.py", Origin::Library),
            ("/home/me/src/assertscope/python/assertscope/_guard/origin/rnn.py", Origin::Library),
            ("/home/me/src/assertscope/python/assertscope/cpu.py", Origin::Library),
            ("/home/me/assertscope-notes/train.py", Origin::User),
            ("/home/me/assertscope/train.py", Origin::User),
        ] {
            assert_eq!(origin(path), want, "{path}");
        }
    }
}
