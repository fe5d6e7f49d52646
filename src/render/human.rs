//! The human rendering, rustc-style.
