//! The `agentlog` binary: parse the command line, run it, map the outcome to an exit code.

/// mimalloc: the conversion allocates and frees many small strings per line, which glibc's
/// allocator serves at about half the speed.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> std::process::ExitCode {
    agentlog::cli::main()
}
