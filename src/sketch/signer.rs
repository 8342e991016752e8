//! Text → signature in one pass, for when only the signature is needed.
//!
//! A MinHash signature does not depend on the order of the shingle hashes or
//! on repeats (each position is a minimum), so the hashes can go straight
//! from the shingler into the hasher: no sorted set is built, and the
//! buffers are reused from one text to the next. The result is exactly
//! `hasher.signature(shingler.set(text))`.

use crate::shingle::{normalize, Shingler};
use crate::sketch::minhash::MinHasher;

/// Signs texts with reusable buffers.
///
/// ```
/// use lshdb::shingle::{ShingleConfig, Shingler};
/// use lshdb::sketch::minhash::{MinHashConfig, MinHasher};
/// use lshdb::sketch::signer::TextSigner;
/// let shingler = Shingler::new(ShingleConfig::default())?;
/// let hasher = MinHasher::new(MinHashConfig::default())?;
/// let mut signer = TextSigner::new(&shingler, &hasher);
/// let text = "An embedded key-value store written in Rust";
/// let expected = hasher.signature(shingler.set(text).as_slice());
/// assert_eq!(signer.sign(text), expected.as_slice());
/// # Ok::<(), lshdb::Error>(())
/// ```
#[derive(Debug)]
pub struct TextSigner<'a> {
    shingler: &'a Shingler,
    hasher: &'a MinHasher,
    normalized: String,
    hashes: Vec<u32>,
    signature: Vec<u32>,
}

impl<'a> TextSigner<'a> {
    /// A signer for one shingling and one signature configuration.
    pub fn new(shingler: &'a Shingler, hasher: &'a MinHasher) -> Self {
        Self {
            shingler,
            hasher,
            normalized: String::new(),
            hashes: Vec::new(),
            signature: Vec::new(),
        }
    }

    /// The signature of `text` (all [`EMPTY`](crate::sketch::minhash::EMPTY)
    /// for a text with no shingles).
    pub fn sign(&mut self, text: &str) -> &[u32] {
        normalize(
            text,
            self.shingler.config().whitespace,
            &mut self.normalized,
        );
        self.hashes.clear();
        self.shingler
            .hash_shingles(&self.normalized, &mut self.hashes);
        self.hasher
            .signature_into(&self.hashes, &mut self.signature);
        &self.signature
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::shingle::{ShingleConfig, ShingleKind};
    use crate::sketch::minhash::{MinHashConfig, Scheme};

    #[test]
    fn equals_the_signature_of_the_sorted_set() {
        let texts = [
            "",
            "a",
            "Vim",
            "abcabcabc abcabc",
            "The quick brown fox jumps over the lazy dog",
        ];
        for kind in [ShingleKind::Chars(3), ShingleKind::Words(2)] {
            for scheme in [Scheme::Permutations, Scheme::OnePermutation] {
                let shingler = Shingler::new(ShingleConfig {
                    kind,
                    ..Default::default()
                })
                .unwrap();
                let hasher = MinHasher::new(MinHashConfig {
                    scheme,
                    ..Default::default()
                })
                .unwrap();
                let mut signer = TextSigner::new(&shingler, &hasher);
                for text in texts {
                    let expected = hasher.signature(shingler.set(text).as_slice());
                    assert_eq!(
                        signer.sign(text),
                        expected.as_slice(),
                        "{kind:?} {scheme:?} {text:?}"
                    );
                }
            }
        }
    }
}
