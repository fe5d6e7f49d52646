//! `assertscope doctor`: the environment a device-side assert happens in: Python,
//! PyTorch and its CUDA build, the driver and GPUs, the debug variables, and whether the
//! guard can be injected.

use crate::pyembed::Materialized;
use crate::render::style::{ColorChoice, Palette};
use anyhow::Context;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::io::Write;
use std::path::PathBuf;
use std::process::Command;

#[derive(Debug, clap::Args)]
pub struct DoctorArgs {
    /// The Python to inspect (default: python3, then python, on PATH)
    #[arg(long, value_name = "PATH")]
    pub python: Option<PathBuf>,
    /// Print one JSON object
    #[arg(long)]
    pub json: bool,
    /// When to use colours
    #[arg(long, value_enum, default_value_t)]
    pub color: ColorChoice,
}

/// What `doctor --json` prints.
#[derive(Debug, Serialize)]
struct DoctorReport {
    assertscope: &'static str,
    os: String,
    probe: Probe,
    nvidia_smi: NvidiaSmi,
}

/// What `python -m assertscope._probe` prints (`python/assertscope/_probe.py`), or why
/// there is nothing.
#[derive(Debug, Default, Serialize, Deserialize)]
struct Probe {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    error: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    python: Option<PythonInfo>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    torch: Option<TorchInfo>,
    /// The debug variables, set or not.
    #[serde(default)]
    env: BTreeMap<String, Option<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    guard: Option<GuardInfo>,
    /// What the probe printed on stderr (warnings at import).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    stderr: Option<String>,
}

impl Probe {
    fn failed(error: String) -> Probe {
        Probe { error: Some(error), ..Probe::default() }
    }
}

#[derive(Debug, Serialize, Deserialize)]
struct PythonInfo {
    executable: String,
    version: String,
    implementation: String,
    platform: String,
}

#[derive(Debug, Default, Serialize, Deserialize)]
struct TorchInfo {
    installed: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    error: Option<String>,
    #[serde(default)]
    version: Option<String>,
    #[serde(default)]
    file: Option<String>,
    #[serde(default)]
    cuda_build: Option<String>,
    #[serde(default)]
    hip_build: Option<String>,
    #[serde(default)]
    debug_build: bool,
    #[serde(default)]
    cudnn: Option<u64>,
    #[serde(default)]
    cuda_available: bool,
    #[serde(default)]
    devices: Vec<Device>,
    #[serde(default)]
    arch_list: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    cuda_error: Option<String>,
}

#[derive(Debug, Serialize, Deserialize)]
struct Device {
    index: u32,
    name: String,
    /// `major.minor`, e.g. `9.0`.
    capability: String,
    memory_gib: f64,
}

#[derive(Debug, Serialize, Deserialize)]
struct GuardInfo {
    /// Whether `assertscope run`'s start-up hook ran in the probed process.
    hook_ran: bool,
    #[serde(default)]
    package: Option<String>,
    #[serde(default)]
    version: Option<String>,
    /// Whether the guard switched on; none when torch was not imported.
    #[serde(default)]
    guarded: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    error: Option<String>,
}

#[derive(Debug, Serialize)]
struct NvidiaSmi {
    found: bool,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    gpus: Vec<SmiGpu>,
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<String>,
}

#[derive(Debug, Serialize)]
struct SmiGpu {
    index: String,
    name: String,
    driver: String,
    memory_total: String,
    memory_used: String,
}

pub fn execute(args: DoctorArgs) -> anyhow::Result<u8> {
    let python = match &args.python {
        Some(p) => Some(p.clone()),
        None => ["python3", "python"].iter().find_map(|n| crate::run::resolve_program(n.as_ref()).ok()),
    };
    let probe = match &python {
        Some(py) => probe(py)?,
        None => Probe::failed("no python3 or python on PATH".to_string()),
    };
    let report = DoctorReport {
        assertscope: env!("CARGO_PKG_VERSION"),
        os: format!("{} {}", std::env::consts::OS, std::env::consts::ARCH),
        probe,
        nvidia_smi: nvidia_smi(),
    };
    if args.json {
        writeln!(std::io::stdout().lock(), "{}", serde_json::to_string_pretty(&report)?)?;
    } else {
        write!(std::io::stdout().lock(), "{}", render(&report, &Palette::new(args.color.for_stdout())))?;
    }
    let torch_ok = report.probe.torch.as_ref().is_some_and(|t| t.installed);
    Ok(if torch_ok { crate::exit::OK } else { crate::exit::PROBLEMS_FOUND })
}

/// Runs the probe in the user's Python the way `assertscope run` would start it, so the
/// answer to "can the guard be injected" is a real injection.
fn probe(python: &PathBuf) -> anyhow::Result<Probe> {
    let package = Materialized::create()?;
    let reports = package.path().join("reports");
    std::fs::create_dir(&reports)?;
    package.install_start_up_hook()?;
    let out = Command::new(python)
        .args(["-m", "assertscope._probe"])
        .env("PYTHONPATH", package.pythonpath())
        .env(crate::contract::env::GUARD, "1")
        .env(crate::contract::env::REPORT_DIR, &reports)
        .output()
        .with_context(|| format!("running {}", python.display()))?;
    if !out.status.success() {
        let err = String::from_utf8_lossy(&out.stderr);
        return Ok(Probe::failed(format!("{} failed: {}", python.display(), err.trim())));
    }
    let mut probe: Probe = serde_json::from_slice(&out.stdout).with_context(|| {
        format!(
            "{} printed no probe result of the expected form: {}",
            python.display(),
            String::from_utf8_lossy(&out.stderr)
        )
    })?;
    // The start-up hook's own word that torch is missing repeats the torch line: left out.
    let torch_missing = probe.torch.as_ref().is_some_and(|t| t.error.is_some());
    let warnings: Vec<&str> = std::str::from_utf8(&out.stderr)
        .unwrap_or("")
        .lines()
        .filter(|l| !l.trim().is_empty())
        .filter(|l| !(torch_missing && l.contains("torch is not installed for this Python")))
        .collect();
    if !warnings.is_empty() {
        probe.stderr = Some(warnings.join("\n"));
    }
    Ok(probe)
}

fn nvidia_smi() -> NvidiaSmi {
    let found = |gpus, error| NvidiaSmi { found: true, gpus, error };
    let Ok(smi) = crate::run::resolve_program("nvidia-smi".as_ref()) else {
        return NvidiaSmi { found: false, gpus: Vec::new(), error: None };
    };
    let out = Command::new(smi)
        .args(["--query-gpu=index,name,driver_version,memory.total,memory.used", "--format=csv,noheader"])
        .output();
    match out {
        Ok(o) if o.status.success() => {
            let gpus = String::from_utf8_lossy(&o.stdout)
                .lines()
                .map(|l| {
                    let mut f = l.split(',').map(|s| s.trim().to_string());
                    let mut next = || f.next().unwrap_or_else(|| "?".to_string());
                    SmiGpu {
                        index: next(),
                        name: next(),
                        driver: next(),
                        memory_total: next(),
                        memory_used: next(),
                    }
                })
                .collect();
            found(gpus, None)
        }
        Ok(o) => found(Vec::new(), Some(String::from_utf8_lossy(&o.stderr).trim().to_string())),
        Err(e) => found(Vec::new(), Some(e.to_string())),
    }
}

fn render(r: &DoctorReport, p: &Palette) -> String {
    let mut out = String::new();
    line(&mut out, p, "assertscope", format!("{} ({})", r.assertscope, r.os));
    let probe = &r.probe;
    if let Some(e) = &probe.error {
        line(&mut out, p, "python", bad(p, e));
        return out;
    }
    if let Some(py) = &probe.python {
        line(&mut out, p, "python", format!("{} {}", py.version, py.executable));
    }
    let unknown = TorchInfo::default();
    render_torch(&mut out, probe.torch.as_ref().unwrap_or(&unknown), p);
    render_nvidia_smi(&mut out, &r.nvidia_smi, p);
    let set: Vec<String> =
        probe.env.iter().filter_map(|(k, v)| v.as_ref().map(|v| format!("{k}={v}"))).collect();
    line(&mut out, p, "debug variables", if set.is_empty() { "none set".to_string() } else { set.join(" ") });
    let guard = match &probe.guard {
        Some(g) if g.hook_ran => match g.guarded {
            Some(true) => ok(p, "can be injected (checked: it switched on in this Python)"),
            Some(false) => warn(p, "the start-up hook ran, but the guard did not switch on"),
            None => ok(p, "the start-up hook runs in this Python (the guard starts when torch is imported)"),
        },
        _ => bad(p, "cannot be injected: this Python did not run assertscope's sitecustomize (python -I/-S, or PYTHONPATH ignored)"),
    };
    line(&mut out, p, "guard", guard);
    if let Some(s) = &probe.stderr {
        line(&mut out, p, "python stderr", warn(p, s));
    }
    out
}

/// What torch is, how it was built, and whether it sees a GPU.
fn render_torch(out: &mut String, t: &TorchInfo, p: &Palette) {
    let q = |v: &Option<String>| v.clone().unwrap_or_else(|| "?".to_string());
    if !t.installed {
        line(
            out,
            p,
            "torch",
            bad(
                p,
                &format!(
                    "not importable ({}): install it into this Python (pip install torch) or pass --python",
                    q(&t.error)
                ),
            ),
        );
    } else {
        let build = match (&t.cuda_build, &t.hip_build) {
            (Some(c), _) => format!("CUDA {c} build"),
            (_, Some(h)) => format!("ROCm {h} build"),
            _ => "CPU-only build".to_string(),
        };
        let cudnn = t.cudnn.map_or("none".to_string(), cudnn_version);
        line(out, p, "torch", format!("{} ({build}, cuDNN {cudnn})", q(&t.version)));
        if t.cuda_available {
            line(
                out,
                p,
                "cuda",
                ok(
                    p,
                    &format!(
                        "available, {} device(s), kernels for {}",
                        t.devices.len(),
                        t.arch_list.join(" ")
                    ),
                ),
            );
            for d in &t.devices {
                line(
                    out,
                    p,
                    &format!("  gpu {}", d.index),
                    format!("{} (sm_{}, {} GiB)", d.name, d.capability.replace('.', ""), d.memory_gib),
                );
            }
        } else {
            let why = t.cuda_error.as_ref().map_or(String::new(), |e| format!(": {e}"));
            line(out, p, "cuda", warn(p, &format!("not available to torch{why}")));
        }
    }
}

/// What the NVIDIA driver says of each GPU.
fn render_nvidia_smi(out: &mut String, smi: &NvidiaSmi, p: &Palette) {
    if smi.found {
        for g in &smi.gpus {
            line(
                out,
                p,
                "nvidia-smi",
                format!(
                    "gpu {}: {}, driver {}, {} used of {}",
                    g.index, g.name, g.driver, g.memory_used, g.memory_total
                ),
            );
        }
        if let Some(e) = &smi.error {
            line(out, p, "nvidia-smi", bad(p, e));
        }
    } else {
        line(out, p, "nvidia-smi", "not found (no NVIDIA driver on this machine)".to_string());
    }
}

/// One `key  value` line of the report.
fn line(out: &mut String, p: &Palette, k: &str, v: String) {
    out.push_str(&format!("{}{k:<22}{} {v}\n", p.bold, p.reset));
}

fn ok(p: &Palette, s: &str) -> String {
    format!("{}{s}{}", p.help, p.reset)
}

fn bad(p: &Palette, s: &str) -> String {
    format!("{}{s}{}", p.error, p.reset)
}

fn warn(p: &Palette, s: &str) -> String {
    format!("{}{s}{}", p.warning, p.reset)
}

/// cuDNN's version number as people write it: `torch.backends.cudnn.version()` is
/// major*10000 + minor*100 + patch from cuDNN 9 on (92600 is 9.26.0), and
/// major*1000 + minor*100 + patch before (8902 is 8.9.2).
fn cudnn_version(number: u64) -> String {
    let (major, rest) =
        if number >= 90000 { (number / 10000, number % 10000) } else { (number / 1000, number % 1000) };
    format!("{major}.{}.{}", rest / 100, rest % 100)
}

#[cfg(test)]
mod tests {
    #[test]
    fn cudnn_versions_read_as_people_write_them() {
        assert_eq!(super::cudnn_version(92600), "9.26.0");
        assert_eq!(super::cudnn_version(90100), "9.1.0");
        assert_eq!(super::cudnn_version(8902), "8.9.2");
        assert_eq!(super::cudnn_version(7605), "7.6.5");
    }

    use super::*;

    /// The typed probe reads what the real `_probe.py` prints, field by field.
    #[test]
    fn the_probe_output_of_this_python_reads_into_the_typed_probe() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
        let Ok(out) = Command::new("python3")
            .args(["-m", "assertscope._probe"])
            .env("PYTHONPATH", root.join("python"))
            .env("CUDA_LAUNCH_BLOCKING", "1")
            .output()
        else {
            eprintln!("skipped: no python3 on PATH");
            return;
        };
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        let probe: Probe = serde_json::from_slice(&out.stdout).expect("the probe's JSON reads as Probe");
        assert!(probe.error.is_none());
        assert!(probe.python.as_ref().is_some_and(|p| !p.version.is_empty()));
        assert_eq!(probe.env.get("CUDA_LAUNCH_BLOCKING"), Some(&Some("1".to_string())));
        assert!(probe.torch.is_some() && probe.guard.is_some_and(|g| !g.hook_ran));
    }
}
