//! Tests of the record encodings and the checksummed frame.

use super::*;
use crate::hash::SplitMix64;

fn sig(bytes: &[u8]) -> Result<SignatureRecord> {
    let mut out = SignatureRecord::default();
    decode_signature(bytes, &mut out).map(|()| out)
}

fn doc(key: &str, text: Option<&str>) -> DocRecord {
    DocRecord {
        key: key.into(),
        text: text.map(Into::into),
    }
}

/// Every decoder, run on `bytes`; true when all of them fail.
fn all_fail(bytes: &[u8]) -> bool {
    decode_set(bytes).is_err()
        && sig(bytes).is_err()
        && peek_set_len(bytes).is_err()
        && decode_doc(bytes).is_err()
}

#[test]
fn sets_round_trip() {
    let mut rng = SplitMix64::new(7);
    let mut big: Vec<u32> = (0..10_500).map(|_| rng.next_u64() as u32).collect();
    big.sort_unstable();
    big.dedup();
    big.truncate(10_000);
    assert_eq!(big.len(), 10_000);
    for set in [vec![], vec![42], vec![0, u32::MAX], vec![u32::MAX], big] {
        assert_eq!(decode_set(&encode_set(&set)).unwrap(), set);
    }
    let mut reused = vec![9, 9, 9];
    decode_set_into(&encode_set(&[3, 4]), &mut reused).unwrap();
    assert_eq!(reused, [3, 4]);
}

#[test]
fn signatures_round_trip() {
    let mut out = SignatureRecord {
        values: vec![1; 500],
        ..Default::default()
    };
    for n in [0u32, 1, 128] {
        for simhash in [None, Some(0), Some(u64::MAX)] {
            let values: Vec<u32> = (0..n).map(|i| i.wrapping_mul(0x9e37_79b9)).collect();
            let bytes = encode_signature(n + 3, simhash, &values);
            decode_signature(&bytes, &mut out).unwrap();
            assert_eq!((out.set_len, out.simhash), (n + 3, simhash));
            assert_eq!(out.values, values);
            assert_eq!(peek_set_len(&bytes).unwrap(), n + 3);
        }
    }
}

#[test]
fn docs_round_trip() {
    let long = "x".repeat(300);
    for d in [
        doc("k", None),
        doc("k", Some("")),
        doc("ключ 🔑", Some("текст ✓")),
        doc(&long, Some(&long)),
    ] {
        assert_eq!(decode_doc(&encode_doc(&d)).unwrap(), d);
    }
}

/// The file-format contract: these bytes never change under these tags.
#[test]
fn golden_bytes() {
    let set: &[u8] = &[0x03, 0xc0, 0x91, 0x6e, 0x73, 0x03, 0x01, 0x01, 0xaa, 0x02];
    assert_eq!(encode_set(&[1, 2, 300]), set);
    let sig = encode_signature(5, Some(0x0102_0304_0506_0708), &[7, 8]);
    assert_eq!(
        sig,
        [
            0x04, 0xc8, 0xf8, 0x5d, 0xb3, 5, 0, 0, 0, 1, 8, 7, 6, 5, 4, 3, 2, 1, 2, 0, 0, 0, 7, 0,
            0, 0, 8, 0, 0, 0
        ]
    );
    let want: &[u8] = &[0x02, 0x7c, 0xe2, 0x95, 0xf9, 0x01, b'a', 0x01, 0x01, b'b'];
    assert_eq!(encode_doc(&doc("a", Some("b"))), want);
}

#[test]
fn every_bit_flip_truncation_and_extension_is_caught() {
    let mut rng = SplitMix64::new(1);
    let mut set: Vec<u32> = (0..40).map(|_| rng.next_u64() as u32 >> 8).collect();
    set.sort_unstable();
    set.dedup();
    let values: Vec<u32> = (0..128).map(|_| rng.next_u64() as u32).collect();
    let records = [
        encode_set(&set),
        encode_signature(40, Some(rng.next_u64()), &values),
        encode_signature(40, None, &values[..3]),
        encode_doc(&doc("κλειδί", Some("some text"))),
        encode_doc(&doc("k", None)),
    ];
    for record in &records {
        assert!(!all_fail(record));
        let mut damaged = record.clone();
        for i in 0..record.len() {
            for bit in 0..8 {
                damaged[i] ^= 1 << bit;
                assert!(all_fail(&damaged), "bit {bit} of byte {i}");
                damaged[i] ^= 1 << bit;
            }
        }
        for len in 0..record.len() {
            assert!(all_fail(&record[..len]), "truncation to {len} not caught");
        }
        damaged.push(0);
        assert!(all_fail(&damaged));
    }
}

/// Payloads with a valid frame but bad contents.
#[test]
fn bad_payloads_are_rejected() {
    let mut varint_2_40 = Vec::new();
    put_varint(&mut varint_2_40, 1 << 40);
    assert_eq!(varint_2_40, [0x80, 0x80, 0x80, 0x80, 0x80, 0x20]);
    let cases: &[(Tag, &[u8])] = &[
        (Tag::Set, &[0x80, 0x80, 0x80, 0x80, 0x80, 0x20, 1, 1, 1]), // count 2^40
        (Tag::Set, &[2, 5, 0]),                                     // gap 0
        (Tag::Set, &[2, 0xff, 0xff, 0xff, 0xff, 0x0f, 1]),          // u32::MAX + 1
        (Tag::Set, &[1, 0xff, 0xff, 0xff, 0xff, 0x10]),             // first value > u32::MAX
        (Tag::Set, &[0x80, 0x00]),                                  // overlong varint
        (Tag::Set, &[0xff; 11]),                                    // varint > 64 bits
        (Tag::Set, &[1, 5, 6]),                                     // trailing byte
        (Tag::Set, &[]),
        (
            Tag::Signature,
            &[0, 0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0],
        ), // count u32::MAX
        (Tag::Signature, &[0, 0, 0, 0, 2, 0, 0, 0, 0]), // unknown flag
        (Tag::Signature, &[0, 0, 0, 0, 1, 0, 0, 0, 0]), // simhash missing
        (Tag::Signature, &[0, 0, 0, 0, 0, 1, 0, 0, 0, 1, 2, 3]), // short value
        (Tag::Doc, &[0x80, 0x80, 0x80, 0x80, 0x80, 0x20, b'a', 0]), // key length 2^40
        (Tag::Doc, &[1, 0xff, 0]),                      // key not UTF-8
        (Tag::Doc, &[1, b'a', 1, 1, 0xc3]),             // text not UTF-8
        (Tag::Doc, &[1, b'a', 3]),                      // unknown flag
        (Tag::Doc, &[1, b'a', 1]),                      // text missing
    ];
    for (tag, payload) in cases {
        let bytes = frame(*tag, payload);
        assert!(unframe(*tag, &bytes).is_ok());
        let err = match tag {
            Tag::Set => decode_set(&bytes).err(),
            Tag::Signature => sig(&bytes).err(),
            _ => decode_doc(&bytes).err(),
        };
        assert!(
            matches!(err, Some(Error::Corrupted(_))),
            "{payload:?}: {err:?}"
        );
    }
    assert_eq!(decode_set(&frame(Tag::Set, &[1, 5])).unwrap(), [5]);
    let msg = decode_set(&frame(Tag::Doc, &[0])).unwrap_err().to_string();
    assert!(msg.contains("set record: found tag 2 (document record)"));
    let mut bad = encode_set(&[1]);
    bad[1] ^= 1;
    let msg = decode_set(&bad).unwrap_err().to_string();
    assert!(msg.contains("set record: checksum mismatch"), "{msg}");
}

#[test]
fn random_garbage_never_panics() {
    let mut rng = SplitMix64::new(99);
    let tags = [Tag::Config, Tag::Doc, Tag::Set, Tag::Signature];
    for round in 0..4000 {
        let len = (rng.next_u64() % 64) as usize;
        let mut bytes: Vec<u8> = (0..len).map(|_| rng.next_u64() as u8).collect();
        if round % 2 == 0 && len >= HEADER {
            // A valid frame around a random payload, often with a small first byte.
            if let Some(first) = bytes.get_mut(HEADER).filter(|_| round % 4 == 0) {
                *first %= 4;
            }
            bytes = frame(tags[round / 4 % 4], &bytes[HEADER..]);
        }
        let _ = decode_set(&bytes);
        let _ = sig(&bytes);
        let _ = peek_set_len(&bytes);
        let _ = decode_doc(&bytes);
        for tag in tags {
            let _ = unframe(tag, &bytes);
        }
    }
}
