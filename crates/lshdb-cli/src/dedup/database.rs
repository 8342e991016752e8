//! The database a `dedup` run decides with: `--db` (opened, or created
//! when missing, with what the run's flags ask of a new file), or a
//! temporary one sized by `--memory`, which keeps clusters for the keep
//! policies that choose by a score (`clustered.rs`).

use super::*;

/// Opens `--db` (created when missing) or creates a temporary database,
/// with the folder that holds it.
pub(super) fn open_db(
    args: &Args,
    ctx: &Context,
) -> Result<(Database, Option<tempfile::TempDir>), CliError> {
    let config = || {
        let config = Config::jaccard(args.threshold.unwrap_or(0.8));
        match (args.bands, args.rows) {
            (Some(b), Some(r)) => config.bands(b, r),
            _ => config,
        }
    };
    match &args.db {
        Some(path) if path.exists() => {
            let db = open_waiting(path, &args.wait, ctx)?;
            args.carry.check(&db, path)?;
            if args.window.is_some() && !db.has_time_index() {
                return fail(format!(
                    "{} keeps no time index, which --window needs; add it with `lshdb rebuild \
                     {} --timestamps` (the documents stored so far are stamped with the time \
                     of the rebuild)",
                    path.display(),
                    crate::output::shell_arg(&path.to_string_lossy())
                ));
            }
            let s = db.settings();
            if let (Some(b), Some(r)) = (args.bands, args.rows) {
                if (b, r) != (s.bands, s.rows) {
                    return fail(format!(
                        "{} has {} bands × {} rows; --bands and --rows only apply to a database this run creates (to change them: lshdb rebuild {} --threshold {} --bands {b} --rows {r})",
                        path.display(),
                        s.bands,
                        s.rows,
                        path.display(),
                        s.threshold
                    ));
                }
            }
            Ok((db, None))
        }
        Some(path) => {
            let mut config = config().store_text(args.store_text);
            if args.carry.priority_field.is_some() {
                config = config.cluster_representative(lshdb::Representative::Priority);
            }
            let times = args.window.is_some() || args.carry.time_field.is_some();
            let db = Database::create(path, config.timestamps(times))?;
            ctx.opened(path);
            ctx.interrupt().writing();
            Ok((db, None))
        }
        None => {
            let dir = tempfile::tempdir().map_err(|e| {
                CliError::Message(format!("cannot create a temporary database: {e}"))
            })?;
            // Its caches are part of --memory too: an eighth for decoded
            // records, which the look-ups verify again and again (family
            // members are candidates of each other), and a hundred-and-
            // twenty-eighth for redb's pages, which at 10 M records are
            // mostly read once (docs/benchmarks-history.md: with a 32nd each, a
            // 10 M dedup took 16 % longer at a 20 MB higher peak). A load
            // that keeps clusters (clustered.rs) reads its pages again:
            // a 16th (1 M heavy records: 81 s against 106 s with a 128th).
            let db = Database::builder()
                .cache_bytes(match args.keep {
                    Keep::First => args.memory / 128,
                    _ => args.memory / 16,
                })
                .record_cache_bytes(args.memory / 8)
                // The whole run filters of the load with clusters: an
                // eighth (about 6 M records' worth with 1G; past it, runs
                // are probed row by row).
                .kept_filter_bytes(args.memory / 8)
                .create(
                    dir.path().join("dedup.lshdb"),
                    temporary_config(args, config()),
                )?;
            ctx.interrupt().writing();
            Ok((db, Some(dir)))
        }
    }
}

/// The temporary database's settings: `config`, and for the keep
/// policies that choose by a score, clusters represented by the member of
/// highest priority (the score: `clustered.rs`).
fn temporary_config(args: &Args, config: Config) -> Config {
    match args.keep {
        Keep::First => config,
        _ => config.cluster_representative(lshdb::Representative::Priority),
    }
}
