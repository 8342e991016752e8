//! The `lshdb` admin CLI: a thin shell over the library.
//!
//! One file per command group; this file only parses arguments, dispatches
//! and turns errors into one line on standard error with a documented exit
//! code (0 ok, 1 error, 2 usage).

#![deny(clippy::unwrap_used, clippy::expect_used)]

mod args;
mod inspect;
mod tune;

use clap::{Parser, Subcommand};
use std::process::ExitCode;

/// lshdb: a persistent, embedded near-duplicate (similarity) database.
#[derive(Parser)]
#[command(name = "lshdb", version, about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    Tune(tune::Args),
    Inspect(inspect::Args),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Tune(args) => tune::run(&args),
        Command::Inspect(args) => inspect::run(&args),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("lshdb: {err}");
            ExitCode::from(1)
        }
    }
}
