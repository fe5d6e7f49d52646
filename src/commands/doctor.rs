//! `assertscope doctor`: the environment a device-side assert happens in: Python,
//! PyTorch and its CUDA build, the driver and GPUs, the debug variables, and whether the
//! guard can be injected.

use crate::pyembed::Materialized;
use crate::render::style::{ColorChoice, Palette};
use anyhow::Context;
use serde_json::{json, Value};
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

pub fn execute(args: DoctorArgs) -> anyhow::Result<u8> {
    let python = match &args.python {
        Some(p) => Some(p.clone()),
        None => ["python3", "python"].iter().find_map(|n| crate::run::resolve_program(n.as_ref()).ok()),
    };
    let probe = match &python {
        Some(py) => probe(py)?,
        None => json!({"error": "no python3 or python on PATH"}),
    };
    let report = json!({
        "assertscope": env!("CARGO_PKG_VERSION"),
        "os": format!("{} {}", std::env::consts::OS, std::env::consts::ARCH),
        "probe": probe,
        "nvidia_smi": nvidia_smi(),
    });
    if args.json {
        writeln!(std::io::stdout().lock(), "{}", serde_json::to_string_pretty(&report)?)?;
    } else {
        write!(std::io::stdout().lock(), "{}", render(&report, &Palette::new(args.color.for_stdout())))?;
    }
    let torch_ok = report["probe"]["torch"]["installed"].as_bool() == Some(true);
    Ok(if torch_ok { crate::exit::OK } else { crate::exit::PROBLEMS_FOUND })
}

/// Runs the probe in the user's Python the way `assertscope run` would start it, so the
/// answer to "can the guard be injected" is a real injection.
fn probe(python: &PathBuf) -> anyhow::Result<Value> {
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
        return Ok(json!({"error": format!("{} failed: {}", python.display(), err.trim())}));
    }
    let mut value: Value = serde_json::from_slice(&out.stdout).with_context(|| {
        format!("{} printed no probe result: {}", python.display(), String::from_utf8_lossy(&out.stderr))
    })?;
    let warnings = String::from_utf8_lossy(&out.stderr).trim().to_string();
    if !warnings.is_empty() {
        value["stderr"] = Value::from(warnings);
    }
    Ok(value)
}

fn nvidia_smi() -> Value {
    let Ok(smi) = crate::run::resolve_program("nvidia-smi".as_ref()) else {
        return json!({"found": false});
    };
    let out = Command::new(smi)
        .args(["--query-gpu=index,name,driver_version,memory.total,memory.used", "--format=csv,noheader"])
        .output();
    match out {
        Ok(o) if o.status.success() => {
            let gpus: Vec<Value> = String::from_utf8_lossy(&o.stdout)
                .lines()
                .map(|l| {
                    let f: Vec<&str> = l.split(',').map(str::trim).collect();
                    json!({"index": f.first(), "name": f.get(1), "driver": f.get(2), "memory_total": f.get(3), "memory_used": f.get(4)})
                })
                .collect();
            json!({"found": true, "gpus": gpus})
        }
        Ok(o) => json!({"found": true, "error": String::from_utf8_lossy(&o.stderr).trim()}),
        Err(e) => json!({"found": true, "error": e.to_string()}),
    }
}

fn render(r: &Value, p: &Palette) -> String {
    let mut out = String::new();
    let ok = |s: &str| format!("{}{s}{}", p.help, p.reset);
    let bad = |s: &str| format!("{}{s}{}", p.error, p.reset);
    let warn = |s: &str| format!("{}{s}{}", p.warning, p.reset);
    let line =
        |out: &mut String, k: &str, v: String| out.push_str(&format!("{}{k:<22}{} {v}\n", p.bold, p.reset));
    line(
        &mut out,
        "assertscope",
        format!("{} ({})", r["assertscope"].as_str().unwrap_or("?"), r["os"].as_str().unwrap_or("?")),
    );
    let probe = &r["probe"];
    if let Some(e) = probe["error"].as_str() {
        line(&mut out, "python", bad(e));
        return out;
    }
    let py = &probe["python"];
    line(
        &mut out,
        "python",
        format!("{} {}", py["version"].as_str().unwrap_or("?"), py["executable"].as_str().unwrap_or("?")),
    );
    let t = &probe["torch"];
    if t["installed"].as_bool() != Some(true) {
        line(
            &mut out,
            "torch",
            bad(&format!(
                "not importable ({}): install it into this Python (pip install torch) or pass --python",
                t["error"].as_str().unwrap_or("?")
            )),
        );
    } else {
        let build = match (t["cuda_build"].as_str(), t["hip_build"].as_str()) {
            (Some(c), _) => format!("CUDA {c} build"),
            (_, Some(h)) => format!("ROCm {h} build"),
            _ => "CPU-only build".to_string(),
        };
        line(
            &mut out,
            "torch",
            format!("{} ({build}, cuDNN {})", t["version"].as_str().unwrap_or("?"), t["cudnn"]),
        );
        let available = t["cuda_available"].as_bool() == Some(true);
        let devices = t["devices"].as_array().cloned().unwrap_or_default();
        if available {
            line(
                &mut out,
                "cuda",
                ok(&format!("available, {} device(s), kernels for {}", devices.len(), t["arch_list"])),
            );
            for d in devices {
                line(
                    &mut out,
                    &format!("  gpu {}", d["index"]),
                    format!(
                        "{} (sm_{}, {} GiB)",
                        d["name"].as_str().unwrap_or("?"),
                        d["capability"].as_str().unwrap_or("?").replace('.', ""),
                        d["memory_gib"]
                    ),
                );
            }
        } else {
            let why = t["cuda_error"].as_str().map_or(String::new(), |e| format!(": {e}"));
            line(&mut out, "cuda", warn(&format!("not available to torch{why}")));
        }
    }
    let smi = &r["nvidia_smi"];
    if smi["found"].as_bool() == Some(true) {
        for g in smi["gpus"].as_array().cloned().unwrap_or_default() {
            line(
                &mut out,
                "nvidia-smi",
                format!(
                    "gpu {}: {}, driver {}, {} used of {}",
                    g["index"].as_str().unwrap_or("?"),
                    g["name"].as_str().unwrap_or("?"),
                    g["driver"].as_str().unwrap_or("?"),
                    g["memory_used"].as_str().unwrap_or("?"),
                    g["memory_total"].as_str().unwrap_or("?")
                ),
            );
        }
        if let Some(e) = smi["error"].as_str() {
            line(&mut out, "nvidia-smi", bad(e));
        }
    } else {
        line(&mut out, "nvidia-smi", "not found (no NVIDIA driver on this machine)".to_string());
    }
    let env = &probe["env"];
    let set: Vec<String> = env
        .as_object()
        .map(|m| m.iter().filter_map(|(k, v)| v.as_str().map(|v| format!("{k}={v}"))).collect())
        .unwrap_or_default();
    line(&mut out, "debug variables", if set.is_empty() { "none set".to_string() } else { set.join(" ") });
    let g = &probe["guard"];
    let guard = if g["hook_ran"].as_bool() == Some(true) {
        match g["guarded"].as_bool() {
            Some(true) => ok("can be injected (checked: it switched on in this Python)"),
            Some(false) => warn("the start-up hook ran, but the guard did not switch on"),
            None => ok("the start-up hook runs in this Python (the guard starts when torch is imported)"),
        }
    } else {
        bad("cannot be injected: this Python did not run assertscope's sitecustomize (python -I/-S, or PYTHONPATH ignored)")
    };
    line(&mut out, "guard", guard);
    if let Some(s) = probe["stderr"].as_str() {
        line(&mut out, "python stderr", warn(s));
    }
    out
}
