//! Colours: on for terminals, off for pipes and files, and `NO_COLOR` / `CLICOLOR_FORCE`
//! respected, as users of command-line tools expect.

use std::io::IsTerminal;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum ColorChoice {
    #[default]
    Auto,
    Always,
    Never,
}

impl ColorChoice {
    /// Whether to colour output written to stdout.
    pub fn for_stdout(self) -> bool {
        self.resolve(std::io::stdout().is_terminal())
    }

    /// Whether to colour output written to stderr.
    pub fn for_stderr(self) -> bool {
        self.resolve(std::io::stderr().is_terminal())
    }

    fn resolve(self, is_terminal: bool) -> bool {
        match self {
            ColorChoice::Always => true,
            ColorChoice::Never => false,
            ColorChoice::Auto => {
                if std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty()) {
                    false
                } else if std::env::var_os("CLICOLOR_FORCE").is_some_and(|v| !v.is_empty() && v != "0") {
                    true
                } else {
                    is_terminal && std::env::var_os("TERM").is_none_or(|t| t != "dumb")
                }
            }
        }
    }
}

/// ANSI styles used by the renderers; all empty when colour is off.
#[derive(Debug, Clone, Copy)]
pub struct Palette {
    pub error: &'static str,
    pub warning: &'static str,
    pub note: &'static str,
    pub help: &'static str,
    pub bold: &'static str,
    pub dim: &'static str,
    pub gutter: &'static str,
    pub reset: &'static str,
}

impl Palette {
    pub fn new(color: bool) -> Palette {
        if color {
            Palette {
                error: "\x1b[1;31m",
                warning: "\x1b[1;33m",
                note: "\x1b[1;36m",
                help: "\x1b[1;32m",
                bold: "\x1b[1m",
                dim: "\x1b[2m",
                gutter: "\x1b[1;34m",
                reset: "\x1b[0m",
            }
        } else {
            Palette { error: "", warning: "", note: "", help: "", bold: "", dim: "", gutter: "", reset: "" }
        }
    }

    /// Whether this palette colours anything.
    pub fn enabled(&self) -> bool {
        !self.reset.is_empty()
    }
}

/// Prints a fatal error as one line (plus its causes) on stderr.
pub fn print_error(err: &anyhow::Error) {
    let p = Palette::new(ColorChoice::Auto.for_stderr());
    // One line, whatever a dependency's message holds.
    let text = format!("{err:#}");
    let text = if text.contains('\n') { text.split_whitespace().collect::<Vec<_>>().join(" ") } else { text };
    eprintln!("{}error{}: {text}", p.error, p.reset);
}
