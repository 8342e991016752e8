//! `lshdb dedup`: no record vanishes (every input record is kept, dropped
//! or rejected, empty texts are kept), mistakes fail (wrong field names,
//! rejected records without `--rejected`, outputs that are one file), and
//! outputs are compressed by their names.

mod cli_support;

use cli_support::records::{dedup_ids, dedup_text, lines_of, rec, text, SIDE_OUTPUTS};
use cli_support::Cli;
use std::collections::BTreeSet;

/// An input with empty, blank and null texts, malformed lines, a missing
/// and a non-string text, a repeated id and near-duplicates.
fn mixed_input() -> (String, usize) {
    let mut near = text(1);
    near.replace_range(0..3, "zzz");
    let lines = [
        rec("a", text(1).into()),
        rec("empty", "".into()),
        "not json at all\n".to_owned(),
        rec("blank", "   \t ".into()),
        rec("b", text(2).into()),
        "\n".to_owned(),
        rec("null", serde_json::Value::Null),
        rec("a-near", near.into()),
        format!("{}\n", serde_json::json!({"id": "no-text", "body": "x"})),
        rec("number", 5.into()),
        rec("b", text(3).into()),
        rec("empty-2", "".into()),
        rec("a-copy", text(1).into()),
        "[1, 2]\n".to_owned(),
    ];
    let records = lines.iter().filter(|l| !l.trim().is_empty()).count();
    (lines.concat(), records)
}

#[test]
fn every_record_is_kept_dropped_or_rejected_and_empty_texts_are_kept() {
    let cli = Cli::new();
    let (input, records) = mixed_input();
    cli.write("in.jsonl", &input);
    for keep in ["first", "longest"] {
        let run = dedup_ids(
            &cli,
            "in.jsonl",
            &[&["--keep", keep, "--out", "k.jsonl"][..], &SIDE_OUTPUTS].concat(),
        )
        .ok();
        let summary = run.json();
        let (kept, dropped, rejected) = (
            lines_of(&cli, "k.jsonl"),
            lines_of(&cli, "d.jsonl"),
            lines_of(&cli, "r.jsonl"),
        );
        assert_eq!(
            kept.len() + dropped.len() + rejected.len(),
            records,
            "{keep}: kept {kept:?}\ndropped {dropped:?}\nrejected {rejected:?}"
        );
        assert_eq!(summary["read"], records);
        assert_eq!(summary["kept"], kept.len());
        assert_eq!(summary["rejected"], rejected.len());
        let kept_ids: BTreeSet<String> = kept
            .iter()
            .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap()["id"].to_string())
            .collect();
        for id in ["empty", "blank", "null", "empty-2", "a", "b"] {
            assert!(kept_ids.contains(&format!("\"{id}\"")), "{keep}: {id} kept");
        }
        // Rejected records come back unchanged, with the reason and place.
        let reasons: Vec<(String, u64, String)> = rejected
            .iter()
            .map(|l| {
                let v: serde_json::Value = serde_json::from_str(l).unwrap();
                assert_eq!(v["source"], "in.jsonl");
                let line = v["line"].as_u64().unwrap();
                let original = input.lines().nth(line as usize - 1).unwrap();
                assert_eq!(v["record"], original, "{keep}");
                (
                    v["record"].as_str().unwrap().to_owned(),
                    line,
                    v["reason"].as_str().unwrap().to_owned(),
                )
            })
            .collect();
        assert_eq!(reasons.len(), 5, "{keep}: {reasons:?}");
        assert!(reasons.iter().any(|r| r.2.starts_with("repeated id")));
        assert!(reasons.iter().any(|r| r.2.starts_with("malformed JSON")));
        assert!(reasons.iter().any(|r| r.2 == "missing field `text`"));
    }
}

#[test]
fn a_rejected_record_without_rejected_fails_and_writes_nothing() {
    let cli = Cli::new();
    let (input, _) = mixed_input();
    cli.write("in.jsonl", &input);
    let run = dedup_ids(&cli, "in.jsonl", &["--out", "k.jsonl"]).expect(1);
    let last = run.stderr.lines().last().unwrap();
    assert!(
        last.starts_with("lshdb: 5 record(s) were rejected") && last.contains("--rejected"),
        "{}",
        run.stderr
    );
    assert!(!cli.path("k.jsonl").exists());
    // To standard output as well: exit 1, saying what went there.
    let run = dedup_ids(&cli, "in.jsonl", &[]).expect(1);
    let went = run.stdout.lines().count();
    assert!(went > 0);
    assert!(
        run.stderr.contains(&format!(
            "would be lost: {went} kept record(s) went to standard output before the stop (an incomplete output)"
        )),
        "{}",
        run.stderr
    );
}

#[test]
fn a_text_or_id_field_no_record_has_is_an_error_naming_the_fields_seen() {
    let cli = Cli::new();
    let input: String = (0..5)
        .map(|i| {
            format!(
                "{}\n",
                serde_json::json!({"url": format!("u{i}"), "body": text(i)})
            )
        })
        .collect();
    cli.write("in.jsonl", &input);
    let err = dedup_text(&cli, "in.jsonl", "summary", &["--out", "k.jsonl"]).error_line();
    assert!(
        err.starts_with("lshdb: none of the first 5 record(s) of in.jsonl has the field `summary`")
            && err.contains("`body`, `url`"),
        "{err}"
    );
    assert!(!cli.path("k.jsonl").exists());
    let err = dedup_ids(&cli, "in.jsonl", &["--text-field", "body"]).error_line();
    assert!(err.contains("`id` (--id-field)"), "{err}");
    // Several inputs: the second's first chunk is checked too.
    cli.write("two.jsonl", rec("x", text(9).into()));
    let err = dedup_ids(&cli, "two.jsonl", &["in.jsonl"]).error_line();
    assert!(err.contains("in.jsonl"), "{err}");
    // The right fields work.
    dedup_text(
        &cli,
        "in.jsonl",
        "body",
        &["--id-field", "url", "--out", "k.jsonl"],
    )
    .ok();
    assert_eq!(lines_of(&cli, "k.jsonl").len(), 5);
    // CSV and Parquet name their columns.
    cli.write("in.csv", "url,body\nu1,some text\n");
    let err = dedup_text(&cli, "in.csv", "summary", &[]).error_line();
    assert!(err.contains("its columns: `url`, `body`"), "{err}");
    let err = dedup_ids(&cli, "in.csv", &["--text-field", "body"]).error_line();
    assert!(err.contains("`id` (--id-field)"), "{err}");
}

#[test]
fn outputs_named_gz_or_zst_are_compressed() {
    let cli = Cli::new();
    let (input, _) = mixed_input();
    cli.write("in.jsonl", &input);
    let plain = |name: &str| lines_of(&cli, name);
    dedup_ids(
        &cli,
        "in.jsonl",
        &[
            "--out",
            "k.jsonl",
            "--dropped",
            "d.jsonl",
            "--rejected",
            "r.jsonl",
        ],
    )
    .ok();
    for ext in ["gz", "zst"] {
        let (k, d, r) = (
            format!("k.jsonl.{ext}"),
            format!("d.jsonl.{ext}"),
            format!("r.jsonl.{ext}"),
        );
        cli.run(&[
            "dedup",
            "in.jsonl",
            "--id-field",
            "id",
            "--out",
            &k,
            "--dropped",
            &d,
            "--rejected",
            &r,
        ])
        .ok();
        for (compressed, reference) in [(&k, "k.jsonl"), (&d, "d.jsonl"), (&r, "r.jsonl")] {
            let raw = std::fs::read(cli.path(compressed)).unwrap();
            let magic: &[u8] = if ext == "gz" {
                &[0x1f, 0x8b]
            } else {
                &[0x28, 0xb5, 0x2f, 0xfd]
            };
            assert!(raw.starts_with(magic), "{compressed} is compressed");
            assert_eq!(plain(compressed), plain(reference), "{compressed}");
        }
    }
}

#[test]
fn outputs_that_are_one_file_or_the_new_database_are_refused_before_writing() {
    let cli = Cli::new();
    cli.write("in.jsonl", rec("a", text(1).into()));
    // `lshdb dedup in.jsonl ARGS…` is a usage error that `says` so.
    let refused = |args: &[&str], says: &str| {
        let args = [&["dedup", "in.jsonl"], args].concat();
        let run = cli.run(&args).expect(2);
        assert!(
            run.stderr.starts_with("error: ") && run.stderr.contains(says),
            "{args:?}: {}",
            run.stderr
        );
    };
    std::fs::create_dir(cli.path("sub")).unwrap();
    let cases: [(&[&str], &str); 5] = [
        // A database not yet created is still the output's file.
        (
            &["--db", "new.lshdb", "--out", "new.lshdb"],
            "--out new.lshdb is the database file itself (new.lshdb)",
        ),
        (
            &["--db", "new.lshdb", "--dropped", "./new.lshdb"],
            "is the database file itself",
        ),
        (
            &["--out", "x.jsonl", "--dropped", "x.jsonl"],
            "--out x.jsonl and --dropped x.jsonl are one file",
        ),
        (
            &["--clusters", "sub/../c.jsonl", "--rejected", "c.jsonl"],
            "are one file",
        ),
        (
            &["--out", "k.jsonl", "--rejected", "in.jsonl"],
            "--rejected in.jsonl is the input in.jsonl",
        ),
    ];
    for (args, says) in cases {
        refused(args, says);
    }
    assert!(!cli.path("new.lshdb").exists());
    assert!(!cli.path("x.jsonl").exists() && !cli.path("c.jsonl").exists());
    // An existing output is left as it was.
    cli.write("x.jsonl", "old\n");
    refused(
        &["--out", "x.jsonl", "--dropped", "x.jsonl"],
        "are one file",
    );
    assert_eq!(cli.read("x.jsonl"), "old\n");
    // One input twice is allowed.
    cli.run(&[
        "dedup",
        "in.jsonl",
        "./in.jsonl",
        "--out",
        "k.jsonl",
        "--rejected",
        "r.jsonl",
    ])
    .ok();
}

/// With `--memory 64M` the repeated-id check keeps about 490,000 ids in
/// memory and the rest in a temporary file: of 600,000 records (empty
/// texts, so that the index has nothing to do), ids repeated from the
/// start of the input (in the file) and from just before (in memory) are
/// both rejected, and every other record is kept.
#[test]
fn ids_past_the_memory_for_them_are_still_checked_for_repeats() {
    let cli = Cli::new();
    let mut input: String = (0..600_000)
        .map(|i| format!("{{\"id\":\"r{i}\",\"text\":\"\"}}\n"))
        .collect();
    for id in ["r0", "r12345", "r599998"] {
        input.push_str(&format!("{{\"id\":\"{id}\",\"text\":\"again\"}}\n"));
    }
    cli.write("in.jsonl", &input);
    let run = dedup_ids(
        &cli,
        "in.jsonl",
        &[&["--memory", "64M", "--out", "k.jsonl"][..], &SIDE_OUTPUTS].concat(),
    )
    .ok();
    assert_eq!(run.json()["kept"], 600_000);
    let rejected = lines_of(&cli, "r.jsonl");
    let lines: Vec<u64> = rejected
        .iter()
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).unwrap();
            assert!(
                v["reason"].as_str().unwrap().starts_with("repeated id"),
                "{v}"
            );
            v["line"].as_u64().unwrap()
        })
        .collect();
    assert_eq!(lines, [600_001, 600_002, 600_003]);
}
