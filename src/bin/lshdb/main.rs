//! The `lshdb` admin CLI: a thin shell over the library.
//!
//! One file per command group; this file only parses arguments, dispatches
//! and turns errors into one sentence on standard error with a documented
//! exit code: 0 ok, 1 error, 2 usage, 3 damage found by `check`.
#![deny(clippy::unwrap_used, clippy::expect_used)]

mod add;
mod admin;
mod args;
mod docs;
mod input;
mod inspect;
mod output;
mod pairs;
mod query;
mod scan;
mod tune;

use clap::{Parser, Subcommand};
use std::process::ExitCode;

/// lshdb: a persistent, embedded near-duplicate (similarity) database.
///
/// Start with `lshdb scan DIR` to find the near-duplicate files in a folder.
#[derive(Parser)]
#[command(
    name = "lshdb",
    version,
    about = "lshdb: a persistent, embedded near-duplicate (similarity) database.\nStart with `lshdb scan DIR` to find the near-duplicate files in a folder."
)]
#[command(
    after_help = "Exit codes: 0 ok, 1 error, 2 usage, 3 damage found by `check`.\n\
                        Example:\n  lshdb scan ~/notes"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    Scan(scan::Args),
    Create(admin::CreateArgs),
    Add(add::Args),
    Query(query::Args),
    Pairs(pairs::PairsArgs),
    Groups(pairs::GroupsArgs),
    Get(docs::GetArgs),
    Remove(docs::RemoveArgs),
    Stats(admin::StatsArgs),
    Check(admin::CheckArgs),
    Compact(admin::CompactArgs),
    Rebuild(admin::RebuildArgs),
    Export(docs::ExportArgs),
    Import(docs::ImportArgs),
    Tune(tune::Args),
    Inspect(inspect::Args),
}

/// What a command ends with: success, or damage found (exit code 3).
pub enum Outcome {
    Ok,
    Damaged,
}

/// A command's result.
pub type CmdResult = Result<Outcome, CliError>;

/// An error to print as one sentence: a library error, or a message of the
/// CLI's own.
#[derive(Debug)]
pub enum CliError {
    Lib(lshdb::Error),
    Message(String),
}

impl From<lshdb::Error> for CliError {
    fn from(err: lshdb::Error) -> Self {
        CliError::Lib(err)
    }
}

impl From<std::io::Error> for CliError {
    fn from(err: std::io::Error) -> Self {
        CliError::Message(format!("I/O error: {err}"))
    }
}

impl std::fmt::Display for CliError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            // The whole chain, as one sentence: library errors keep their
            // causes (the storage engine's, the operating system's) as
            // sources rather than in their own text.
            CliError::Lib(err) => {
                write!(f, "{err}")?;
                let mut source = std::error::Error::source(err);
                while let Some(cause) = source {
                    write!(f, ": {cause}")?;
                    source = cause.source();
                }
                Ok(())
            }
            CliError::Message(msg) => write!(f, "{msg}"),
        }
    }
}

/// Shorthand for a CLI error message.
pub fn fail<T>(msg: impl Into<String>) -> Result<T, CliError> {
    Err(CliError::Message(msg.into()))
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Scan(args) => scan::run(&args),
        Command::Create(args) => admin::create(&args),
        Command::Add(args) => add::run(&args),
        Command::Query(args) => query::run(&args),
        Command::Pairs(args) => pairs::pairs(&args),
        Command::Groups(args) => pairs::groups(&args),
        Command::Get(args) => docs::get(&args),
        Command::Remove(args) => docs::remove(&args),
        Command::Stats(args) => admin::stats(&args),
        Command::Check(args) => admin::check(&args),
        Command::Compact(args) => admin::compact(&args),
        Command::Rebuild(args) => admin::rebuild(&args),
        Command::Export(args) => docs::export(&args),
        Command::Import(args) => docs::import(&args),
        Command::Tune(args) => tune::run(&args)
            .map(|()| Outcome::Ok)
            .map_err(CliError::from),
        Command::Inspect(args) => inspect::run(&args)
            .map(|()| Outcome::Ok)
            .map_err(CliError::from),
    };
    match result {
        Ok(Outcome::Ok) => ExitCode::SUCCESS,
        Ok(Outcome::Damaged) => ExitCode::from(3),
        Err(err) => {
            eprintln!("lshdb: {err}");
            ExitCode::from(1)
        }
    }
}
