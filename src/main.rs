use clap::Parser;
use std::process::ExitCode;

fn main() -> ExitCode {
    let cli = assertscope::cli::Cli::parse();
    match cli.command.execute() {
        Ok(code) => ExitCode::from(code),
        // The reader of our output went away (`| head`): stop quietly, as a Unix tool
        // does, whichever command was writing and wherever the error surfaced.
        Err(err) if is_broken_pipe(&err) => ExitCode::from(assertscope::exit::DIAGNOSED),
        Err(err) => {
            assertscope::render::style::print_error(&err);
            ExitCode::from(assertscope::exit::USAGE)
        }
    }
}

fn is_broken_pipe(err: &anyhow::Error) -> bool {
    err.chain()
        .filter_map(|cause| cause.downcast_ref::<std::io::Error>())
        .any(|e| e.kind() == std::io::ErrorKind::BrokenPipe)
}
