//! The `lshdb` admin CLI: a thin shell over the library.
//!
//! One file per command group; this file only parses arguments, dispatches
//! and turns errors into one sentence on standard error with a documented
//! exit code: 0 ok, 1 error, 2 usage, 3 damage found by `check`, 130
//! interrupted (Ctrl-C).
#![deny(clippy::unwrap_used, clippy::expect_used)]

mod add;
mod admin;
mod args;
mod containment;
mod dedup;
mod docs;
mod expire;
mod input;
mod inspect;
mod interrupt;
mod output;
mod pairs;
mod query;
mod records;
mod render;
mod scan;
mod support;
mod tune;
mod walk;

use clap::{Parser, Subcommand};
use std::path::Path;
use std::process::ExitCode;
use support::context::Context;

/// The binary's allocator: its loads make and free millions of small
/// buffers, many on another thread than the one that made them, where
/// glibc's malloc is slow and keeps freed memory. A unit struct: no state
/// of lshdb's own.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

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
    after_help = "Exit codes: 0 ok, 1 error, 2 usage, 3 damage found by `check`, 130 interrupted (Ctrl-C).\n\
                        Example:\n  lshdb scan ~/notes"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    Scan(scan::Args),
    Dedup(dedup::Args),
    Create(admin::CreateArgs),
    Add(add::Args),
    Query(query::Args),
    Pairs(pairs::PairsArgs),
    Groups(pairs::GroupsArgs),
    Clusters(pairs::ClustersArgs),
    Similarity(pairs::SimilarityArgs),
    Get(docs::GetArgs),
    Remove(docs::RemoveArgs),
    Expire(expire::Args),
    Stats(admin::StatsArgs),
    Check(admin::CheckArgs),
    Compact(admin::CompactArgs),
    Rebuild(admin::RebuildArgs),
    Export(docs::ExportArgs),
    Import(docs::ImportArgs),
    Tune(tune::Args),
    Inspect(inspect::Args),
}

/// What a command ends with: success, damage found (exit code 3), or
/// nothing found (`query`, exit code 1 without an error line, as grep).
pub enum Outcome {
    Ok,
    Damaged,
    Empty,
}

/// A command's result.
pub type CmdResult = Result<Outcome, CliError>;

/// An error to print as one sentence: a library error, or a message of the
/// CLI's own.
#[derive(Debug)]
pub enum CliError {
    Lib(lshdb::Error),
    Message(String),
    /// Ctrl-C stopped the command (exit code 130); the message says what
    /// is committed.
    Interrupted(String),
    /// `check` found the file too damaged to open or walk (exit code 3).
    Damaged(lshdb::Error),
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
        self.render(None, f)
    }
}

/// A [`CliError`] with the hints only the run's [`Context`] knows (the
/// database file to check).
pub struct InContext<'a>(pub &'a CliError, pub &'a Context);

impl std::fmt::Display for InContext<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.render(self.1.opened_file(), f)
    }
}

impl CliError {
    /// The sentence; `opened` is the database file the command opened.
    fn render(&self, opened: Option<&Path>, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CliError::Lib(err) => lib_error(err, opened, f),
            // `check` itself: no hint to run it.
            CliError::Damaged(lshdb::Error::Corrupted(what)) => write!(
                f,
                "the database is damaged: {what}; restore it from a backup or export"
            ),
            CliError::Damaged(err) => lib_error(err, opened, f),
            CliError::Message(msg) | CliError::Interrupted(msg) => write!(f, "{msg}"),
        }
    }
}

/// A library error in the CLI's words: keys shortened, and hints as
/// commands with the file name, ready to paste.
fn lib_error(
    err: &lshdb::Error,
    opened: Option<&Path>,
    f: &mut std::fmt::Formatter<'_>,
) -> std::fmt::Result {
    use crate::output::{shell_arg, short};
    match err {
        lshdb::Error::NotFound(key) => write!(f, "no document with key `{}`", short(key)),
        lshdb::Error::EmptyDocument { key } => write!(
            f,
            "document `{}` is empty after normalisation; there is nothing to index",
            short(key)
        ),
        lshdb::Error::DocumentTooLarge { key, len, max } => write!(
            f,
            "document `{}` has {len} bytes, above the limit of {max}; split it or index a part of it",
            short(key)
        ),
        lshdb::Error::Corrupted(what) => match opened {
            Some(path) => write!(
                f,
                "the database is damaged: {what}; run `lshdb check {}` and restore from a backup or export",
                shell_arg(&path.to_string_lossy())
            ),
            None => write!(f, "{err}"),
        },
        lshdb::Error::NoTimeIndex => {
            let file = opened.map_or("FILE".into(), |p| shell_arg(&p.to_string_lossy()));
            write!(
                f,
                "this database keeps no time index, which expiry walks; add it with `lshdb \
                 rebuild {file} --timestamps` (the documents stored so far are stamped with \
                 the time of the rebuild)"
            )
        }
        // The whole chain, as one sentence: library errors keep their
        // causes (the storage engine's, the operating system's) as sources
        // rather than in their own text.
        other => {
            write!(f, "{other}")?;
            let mut source = std::error::Error::source(other);
            while let Some(cause) = source {
                write!(f, ": {cause}")?;
                source = cause.source();
            }
            Ok(())
        }
    }
}

/// Names the operation and the path in an I/O error, for `map_err`:
/// `cannot open input x.jsonl: No such file or directory (os error 2)`.
pub fn io_context(op: &str, path: &Path) -> impl FnOnce(std::io::Error) -> CliError {
    let what = format!("{op} {}", path.display());
    move |err| CliError::Message(format!("{what}: {err}"))
}

/// Shorthand for a CLI error message.
pub fn fail<T>(msg: impl Into<String>) -> Result<T, CliError> {
    Err(CliError::Message(msg.into()))
}

fn main() -> ExitCode {
    let ctx = Context::default();
    ctx.interrupt().install(ctx.opened_shared());
    // No panic text on standard error: the library turns a panic of the
    // storage engine on a damaged page into an error (its message carries
    // the panic's), and a panic of lshdb's own code becomes one line below.
    std::panic::set_hook(Box::new(|_| {}));
    let cli = Cli::parse();
    // The context is only read after a panic, for the error's hint.
    let run = std::panic::AssertUnwindSafe(|| run(cli.command, &ctx));
    let result = std::panic::catch_unwind(run).unwrap_or_else(|payload| {
        let message = payload
            .downcast_ref::<&str>()
            .map(|s| (*s).to_owned())
            .or_else(|| payload.downcast_ref::<String>().cloned())
            .unwrap_or_default();
        fail(format!(
            "internal error ({message}); committed data is safe; please report this"
        ))
    });
    match result {
        Ok(Outcome::Ok) => ExitCode::SUCCESS,
        Ok(Outcome::Damaged) => ExitCode::from(3),
        Ok(Outcome::Empty) => ExitCode::from(1),
        Err(err) => {
            eprintln!("lshdb: {}", InContext(&err, &ctx));
            match err {
                CliError::Interrupted(_) => ExitCode::from(interrupt::EXIT_CODE),
                CliError::Damaged(_) => ExitCode::from(3),
                _ => ExitCode::from(1),
            }
        }
    }
}

fn run(command: Command, ctx: &Context) -> CmdResult {
    match command {
        Command::Scan(args) => scan::run(&args, ctx),
        Command::Dedup(args) => dedup::run(&args, ctx),
        Command::Create(args) => admin::create(&args, ctx),
        Command::Add(args) => add::run(&args, ctx),
        Command::Query(args) => query::run(&args, ctx),
        Command::Pairs(args) => pairs::pairs(&args, ctx),
        Command::Groups(args) => pairs::groups(&args, ctx),
        Command::Clusters(args) => pairs::clusters(&args, ctx),
        Command::Similarity(args) => pairs::similarity_of(&args, ctx),
        Command::Get(args) => docs::get(&args, ctx),
        Command::Remove(args) => docs::remove(&args, ctx),
        Command::Expire(args) => expire::run(&args, ctx),
        Command::Stats(args) => admin::stats(&args, ctx),
        Command::Check(args) => admin::check(&args, ctx),
        Command::Compact(args) => admin::compact(&args, ctx),
        Command::Rebuild(args) => admin::rebuild(&args, ctx),
        Command::Export(args) => docs::export(&args, ctx),
        Command::Import(args) => docs::import(&args, ctx),
        Command::Tune(args) => tune::run(&args)
            .map(|()| Outcome::Ok)
            .map_err(CliError::from),
        Command::Inspect(args) => inspect::run(&args)
            .map(|()| Outcome::Ok)
            .map_err(CliError::from),
    }
}
