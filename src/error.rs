//! The crate's one error type.
//!
//! Every fallible public function returns [`Result`]. Messages are written for
//! the person who has to act on them: they say what was wrong and what to do.

/// Everything that can go wrong in lshdb.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A parameter is outside its valid range (a threshold outside (0, 1),
    /// bands × rows larger than the number of permutations, k = 0, ...).
    #[error("invalid parameter `{name}`: {reason}")]
    InvalidParameter {
        /// The parameter's name as the API or CLI spells it.
        name: &'static str,
        /// What is wrong and which values are accepted.
        reason: String,
    },
}

/// `Result` with lshdb's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    /// Shorthand for [`Error::InvalidParameter`].
    pub(crate) fn invalid(name: &'static str, reason: impl Into<String>) -> Self {
        Error::InvalidParameter {
            name,
            reason: reason.into(),
        }
    }
}
