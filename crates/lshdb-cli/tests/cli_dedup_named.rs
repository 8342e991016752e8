//! `lshdb dedup --duplicate-of`: which kept record a dropped one names.
//! `best` names the most similar, `first` (the default) a kept one at the
//! threshold or above, at their exact similarity; both keep and drop the
//! same records. The flag means nothing to the other keep policies, and a
//! value that is not a choice is a usage error.

mod cli_support;

use cli_support::records::{dedup_ids, rec, text};
use cli_support::{similarity, Cli};
use std::collections::BTreeMap;

const T: f64 = 0.8;

/// Per query: two kept records, `a` and `b`, that are not near-duplicates
/// of each other, and a query near-duplicate of both, more similar to `b`;
/// then unrelated records between the queries.
fn records() -> Vec<(String, String)> {
    let mut docs = Vec::new();
    for q in 0..40u64 {
        let base = text(q * 3 + 1);
        let (x, y) = (text(1000 + q), text(2000 + q));
        let a = format!("{base} {}", &x[..60]);
        let b = format!("{base} {}", &y[..30]);
        docs.push((format!("a{q}"), a));
        docs.push((format!("b{q}"), b));
        docs.push((format!("other{q}"), text(5000 + q)));
        docs.push((format!("q{q}"), base));
    }
    docs
}

/// The `--dropped` lines of a run: id → (duplicate_of, similarity).
fn dropped(cli: &Cli, name: &str) -> BTreeMap<String, (String, f64)> {
    let mut out = BTreeMap::new();
    for line in cli.read(name).lines() {
        let v: serde_json::Value = serde_json::from_str(line).unwrap();
        let id = v["id"].as_str().unwrap().to_owned();
        let of = v["duplicate_of"].as_str().unwrap().to_owned();
        out.insert(id, (of, v["similarity"].as_f64().unwrap()));
    }
    out
}

#[test]
fn best_names_the_most_similar_and_first_a_verified_one_with_the_same_decisions() {
    let docs = records();
    let texts: BTreeMap<&str, &str> = docs.iter().map(|(k, t)| (k.as_str(), t.as_str())).collect();
    for q in 0..40 {
        let (a, b, query) = (
            texts[&*format!("a{q}")],
            texts[&*format!("b{q}")],
            texts[&*format!("q{q}")],
        );
        assert!(similarity(a, b) < T, "a{q} and b{q} are both kept");
        assert!(similarity(query, a) >= T && similarity(query, b) > similarity(query, a));
    }
    let cli = Cli::new();
    let input: String = docs
        .iter()
        .map(|(k, t)| rec(k, t.as_str().into()))
        .collect();
    cli.write("in.jsonl", input);
    let out = |which: Option<&str>| {
        let name = which.unwrap_or("default");
        let (kept, gone) = (
            format!("{name}.kept.jsonl"),
            format!("{name}.dropped.jsonl"),
        );
        let mut args = vec!["--out", &kept, "--dropped", &gone, "--batch", "7"];
        if let Some(which) = which {
            args.extend(["--duplicate-of", which]);
        }
        dedup_ids(&cli, "in.jsonl", &args).ok();
        (cli.read(&kept), dropped(&cli, &gone))
    };
    let (best_kept, best) = out(Some("best"));
    let (first_kept, first) = out(None);
    assert_eq!(out(Some("first")), (first_kept.clone(), first.clone()));
    assert_eq!(best_kept, first_kept, "the same records kept");
    let ids = |m: &BTreeMap<String, (String, f64)>| m.keys().cloned().collect::<Vec<_>>();
    assert_eq!(ids(&best), ids(&first), "the same records dropped");
    assert_eq!(best.len(), 40, "{best:?}");
    for (id, (of, sim)) in &first {
        let exact = similarity(texts[id.as_str()], texts[of.as_str()]);
        assert!(
            (sim - exact).abs() < 1e-12 && exact >= T,
            "{id} names {of} at {sim}"
        );
        assert!(
            !first.contains_key(of),
            "{id} names {of}, which was dropped"
        );
    }
    for (id, (of, sim)) in &best {
        let q = &id[1..];
        assert_eq!(of, &format!("b{q}"), "{id}: the most similar");
        assert!((sim - similarity(texts[id.as_str()], texts[of.as_str()])).abs() < 1e-12);
    }
}

#[test]
fn duplicate_of_with_another_keep_policy_or_an_unknown_choice_is_refused() {
    let cli = Cli::new();
    cli.write(
        "in.jsonl",
        rec("a", text(1).into()) + &rec("b", text(1).into()),
    );
    let line = cli
        .run(&[
            "dedup",
            "in.jsonl",
            "--keep",
            "longest",
            "--duplicate-of",
            "best",
            "--out",
            "k.jsonl",
        ])
        .error_line();
    assert!(
        line.contains("--duplicate-of works with --keep first only"),
        "{line}"
    );
    assert!(!cli.path("k.jsonl").exists(), "no output on an error");
    let run = cli
        .run(&[
            "dedup",
            "in.jsonl",
            "--duplicate-of",
            "most",
            "--out",
            "k.jsonl",
        ])
        .expect(2);
    assert!(
        run.stderr.contains("`most` is not a choice; use first"),
        "{}",
        run.stderr
    );
    assert!(!cli.path("k.jsonl").exists());
}
