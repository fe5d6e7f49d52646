//! Embeds the Python package (the guard, CPU remapping, DataLoader scanning and the
//! knowledge base) so that `assertscope run` and `scan` work from the binary alone.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

fn main() {
    let root = Path::new("python/assertscope");
    println!("cargo:rerun-if-changed=python/assertscope");
    let mut files = Vec::new();
    collect(root, &mut files);
    files.sort();
    let mut code = String::from("pub const FILES: &[(&str, &str)] = &[\n");
    for path in &files {
        println!("cargo:rerun-if-changed={}", path.display());
        let rel = path.strip_prefix("python").unwrap().to_string_lossy().replace('\\', "/");
        let abs = std::fs::canonicalize(path).unwrap();
        writeln!(code, "    ({rel:?}, include_str!({:?})),", abs.to_string_lossy()).unwrap();
    }
    code.push_str("];\n");
    let out = PathBuf::from(std::env::var_os("OUT_DIR").unwrap()).join("python_files.rs");
    std::fs::write(out, code).unwrap();
}

fn collect(dir: &Path, files: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for entry in entries.flatten() {
        let path = entry.path();
        let name = entry.file_name();
        let name = name.to_string_lossy();
        if path.is_dir() {
            if name != "__pycache__" {
                collect(&path, files);
            }
        } else if name.ends_with(".py") || name.ends_with(".toml") || name.ends_with(".json") {
            files.push(path);
        }
    }
}
