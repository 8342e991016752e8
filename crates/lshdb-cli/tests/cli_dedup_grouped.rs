//! `lshdb dedup --keep longest|max:F|min:F` without `--db` decides on a
//! temporary database that keeps clusters (`dedup/clustered.rs`), in
//! memory that does not grow with the input; with `--db` it groups the
//! loaded records (`dedup/grouped.rs`). Both must make the same decisions:
//! the same kept, dropped, cluster and rejected files, on families with
//! edits at varied rates, copies, ties, missing and negative scores,
//! empty texts, repeated ids and an id too long to store.

mod cli_support;

use cli_support::Cli;
use serde_json::json;

/// A small deterministic generator (an LCG), so that the corpus is the
/// same on every run.
struct Lcg(u64);

impl Lcg {
    fn next(&mut self, below: u64) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (self.0 >> 33) % below
    }
}

/// Families of near-duplicates (sizes 1 to 12, each member a copy of the
/// family's text with 0 to 5 of 30 words replaced), copies of members,
/// and the misuses a record can carry, in a shuffled order.
fn corpus() -> String {
    let mut rng = Lcg(7);
    let word = |rng: &mut Lcg| format!("w{}", rng.next(400));
    let mut records = Vec::new();
    for family in 0..60 {
        let base: Vec<String> = (0..30).map(|_| word(&mut rng)).collect();
        let members = 1 + rng.next(12);
        for member in 0..members {
            let mut words = base.clone();
            for _ in 0..rng.next(6) {
                let at = rng.next(30) as usize;
                words[at] = word(&mut rng);
            }
            let text = words.join(" ");
            let score = match rng.next(6) {
                0 => json!(null),
                1 => json!(-(rng.next(50) as i64)),
                2 => json!(rng.next(50) as f64 + 0.5),
                _ => json!(rng.next(50)),
            };
            records.push(json!({"id": format!("f{family}-m{member}"), "text": text, "n": score}));
            if rng.next(4) == 0 {
                // A copy, with a score of its own.
                let n = rng.next(50);
                records
                    .push(json!({"id": format!("f{family}-m{member}-copy"), "text": text, "n": n}));
            }
        }
    }
    // Shuffle (Fisher–Yates), then the misuses at fixed places.
    for i in (1..records.len()).rev() {
        let j = rng.next(i as u64 + 1) as usize;
        records.swap(i, j);
    }
    let long_id = "k".repeat(lshdb::MAX_KEY_BYTES + 1);
    records.insert(3, json!({"id": "empty", "text": "", "n": 1}));
    records.insert(
        10,
        json!({"id": "punctuation", "text": "!!! ... ???", "n": 1}),
    );
    records.insert(20, json!({"id": "f0-m0", "text": "a repeated id", "n": 99}));
    records.insert(
        30,
        json!({"id": long_id, "text": "an id too long to store", "n": 2}),
    );
    records.insert(40, json!({"id": "no-text", "n": 2}));
    records.iter().map(|r| format!("{r}\n")).collect::<String>()
}

#[test]
fn without_db_the_grouped_policies_decide_as_with_one() {
    let cli = Cli::new();
    cli.write("in.jsonl", corpus());
    for keep in ["longest", "max:n", "min:n"] {
        let mut outputs = Vec::new();
        for (tag, db) in [
            ("temporary", None),
            ("db", Some(format!("{}.lshdb", &keep[..3]))),
        ] {
            let names = ["k", "d", "c", "r"].map(|f| format!("{f}-{tag}.jsonl"));
            let mut args = vec![
                "dedup",
                "in.jsonl",
                "--id-field",
                "id",
                "--threshold",
                "0.7",
                "--keep",
                keep,
                "--out",
                &names[0],
                "--dropped",
                &names[1],
                "--clusters",
                &names[2],
                "--rejected",
                &names[3],
                "--json",
            ];
            if let Some(db) = &db {
                args.extend(["--db", db.as_str()]);
            }
            let summary = cli.run(&args).expect(0).json();
            let files: Vec<String> = names.iter().map(|n| cli.read(n)).collect();
            outputs.push((summary, files));
        }
        let (temporary, db) = (&outputs[0], &outputs[1]);
        for field in ["read", "kept", "dropped", "rejected"] {
            assert_eq!(temporary.0[field], db.0[field], "{keep} {field}");
        }
        for (i, name) in ["kept", "dropped", "clusters", "rejected"]
            .iter()
            .enumerate()
        {
            assert_eq!(temporary.1[i], db.1[i], "{keep}: the {name} files differ");
        }
        // Something to decide: drops, clusters and the three rejections.
        let summary = &temporary.0;
        assert!(summary["dropped"].as_u64().unwrap() > 50, "{summary}");
        assert_eq!(summary["rejected"], 3, "{summary}");
        let rejected = &temporary.1[3];
        assert!(rejected.contains("repeated id: `f0-m0`"), "{rejected}");
        assert!(
            rejected.contains("key of 4097 bytes is not accepted"),
            "{rejected}"
        );
        // Empty and punctuation-only texts are kept.
        let kept = &temporary.1[0];
        assert!(kept.contains("\"empty\"") && kept.contains("\"punctuation\""));
    }
}

/// Without `--db`, the grouped policies store each id after its place in
/// the input: an id of 4,080 bytes is kept or dropped as any other, one
/// of 4,081 bytes is rejected, whole in `--rejected`, with a reason that
/// names its own length and the way out (before, the reason gave the
/// stored key's length, 4,097), and pass 1 holds no list of them.
#[test]
fn without_db_an_id_too_long_to_store_with_its_place_is_rejected_with_its_reason() {
    let cli = Cli::new();
    let text = "the quick brown fox jumps over the lazy dog once again today";
    let fits = "f".repeat(lshdb::MAX_KEY_BYTES - 16);
    let over = "o".repeat(lshdb::MAX_KEY_BYTES - 15);
    let input = [
        json!({"id": fits, "text": format!("{text} and more")}),
        json!({"id": over, "text": text}),
        json!({"id": "short", "text": text}),
    ]
    .iter()
    .map(|r| format!("{r}\n"))
    .collect::<String>();
    cli.write("in.jsonl", &input);
    let args: Vec<&str> = "dedup in.jsonl --id-field id --keep longest --out k.jsonl \
                            --dropped d.jsonl --rejected r.jsonl --json"
        .split_whitespace()
        .collect();
    let summary = cli.run(&args).expect(0).json();
    assert_eq!(
        (&summary["kept"], &summary["dropped"], &summary["rejected"]),
        (&json!(1), &json!(1), &json!(1)),
        "{summary}"
    );
    let kept: serde_json::Value = serde_json::from_str(cli.read("k.jsonl").trim()).unwrap();
    assert_eq!(kept["id"], fits.as_str());
    let dropped: serde_json::Value = serde_json::from_str(cli.read("d.jsonl").trim()).unwrap();
    assert_eq!(dropped["duplicate_of"], fits.as_str(), "{dropped}");
    let rejected: serde_json::Value = serde_json::from_str(cli.read("r.jsonl").trim()).unwrap();
    let reason = rejected["reason"].as_str().unwrap();
    assert!(reason.starts_with("id of 4081 bytes"), "{reason}");
    assert!(reason.contains("--db"), "{reason}");
    let record: serde_json::Value =
        serde_json::from_str(rejected["record"].as_str().unwrap()).unwrap();
    assert_eq!(record["id"], over.as_str());
}
