//! `check` on .parquet files: mutated real files (see data_file.rs and fuzz/seeds.py).
#![no_main]

mod data_file;

libfuzzer_sys::fuzz_target!(|data: &[u8]| data_file::check_file("parquet", data));
