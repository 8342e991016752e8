//! The public document pipeline (`Sketcher`) gives exactly the values the
//! database stores and searches: shingle sets, SimHash fingerprints, and
//! band keys (seen through which stored documents a query's buckets hold).

use lshdb::{Config, Database, Document, Error, Sketcher};
use std::collections::HashSet;

fn texts() -> Vec<String> {
    let base = "the quick brown fox jumps over the lazy dog near the river bank";
    let mut out = vec![base.to_owned()];
    for i in 0..40 {
        let words: Vec<&str> = base.split(' ').collect();
        let cut = i % words.len();
        out.push(format!(
            "{} {} variant {i}",
            words[..cut].join(" "),
            words[cut..].join(" ")
        ));
        out.push(format!(
            "Pack my box with {i} dozen liquor jugs, said the fox {}",
            i * 7
        ));
    }
    out
}

#[test]
fn the_sketcher_gives_what_the_database_stores() {
    let dir = tempfile::tempdir().unwrap();
    let config = Config::jaccard(0.7).simhash(3);
    let db = Database::create(dir.path().join("s.lshdb"), config).unwrap();
    let texts = texts();
    for (i, text) in texts.iter().enumerate() {
        db.insert(&format!("t{i}"), text.as_str()).unwrap();
    }
    let items: [&[u8]; 3] = [b"milk", b"bread", b"eggs"];
    db.insert_items("items", &items).unwrap();
    let sketcher = db.sketcher().clone();
    assert_eq!(
        Sketcher::new(db.settings()).unwrap().banding(),
        sketcher.banding()
    );

    let mut sketches = std::collections::HashMap::new();
    for (i, text) in texts.iter().enumerate() {
        sketches.insert(
            format!("t{i}"),
            sketcher.sketch(Document::Text(text)).unwrap(),
        );
    }
    sketches.insert(
        "items".to_owned(),
        sketcher.sketch(Document::Items(&items)).unwrap(),
    );
    let mut seen = 0;
    db.for_each(|doc| {
        let sketch = &sketches[&doc.key];
        assert_eq!(doc.shingles, sketch.set, "{}", doc.key);
        seen += 1;
        true
    })
    .unwrap();
    assert_eq!(seen, texts.len() + 1);
    for (key, sketch) in &sketches {
        assert_eq!(
            db.get(key).unwrap().unwrap().simhash,
            Some(sketch.simhash),
            "{key}"
        );
        let mut signer = sketcher.text_signer();
        if let Some(i) = key.strip_prefix('t') {
            let text = &texts[i.parse::<usize>().unwrap()];
            assert_eq!(signer.sign(text), sketch.signature.as_slice());
            assert_eq!(sketcher.shingle_set(Document::Text(text)), sketch.set);
            assert_eq!(sketcher.simhash(Document::Text(text)), sketch.simhash);
        }
    }

    // A query's candidates are the stored documents that share a band key
    // with it: the database's band keys, stored and probed, are the
    // sketcher's.
    let mut nonzero = 0;
    for probe in [
        "the quick brown fox jumps over the lazy dog near a river",
        "Pack my box with 3 dozen liquor jugs, said the fox",
    ] {
        let keys: HashSet<(usize, u64)> = sketcher
            .sketch(Document::Text(probe))
            .unwrap()
            .band_keys
            .into_iter()
            .enumerate()
            .collect();
        let expected = sketches
            .values()
            .filter(|s| {
                s.band_keys
                    .iter()
                    .copied()
                    .enumerate()
                    .any(|k| keys.contains(&k))
            })
            .count();
        let explain = db.query(probe).threshold(0.01).run().unwrap().explain;
        assert_eq!(explain.candidates, expected, "{probe}");
        nonzero += usize::from(expected > 0 && expected < sketches.len());
    }
    assert_eq!(nonzero, 2, "the probes must tell band keys apart");

    let batch = sketcher.sketch_many(&[Document::Text(&texts[0]), Document::Text("  ")]);
    assert_eq!(batch[0].as_ref().unwrap(), &sketches["t0"]);
    assert!(matches!(batch[1], Err(Error::EmptyDocument { .. })));
}
