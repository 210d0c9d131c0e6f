//! The `agentlog` binary: parse the command line, run it, map the outcome to an exit code.

mod cli;

fn main() -> std::process::ExitCode {
    cli::main()
}
