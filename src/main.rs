use clap::Parser;
use std::process::ExitCode;

fn main() -> ExitCode {
    let cli = assertscope::cli::Cli::parse();
    match cli.command.execute() {
        Ok(code) => ExitCode::from(code),
        Err(err) => {
            assertscope::render::style::print_error(&err);
            ExitCode::from(assertscope::exit::USAGE)
        }
    }
}
