//! Reading and writing the `meta` table: format version, settings, id
//! counter.

use crate::config::Settings;
use crate::store::codec::{frame, unframe, Tag};
use crate::store::schema::{meta_keys, FORMAT_MAGIC, FORMAT_VERSION};
use crate::store::settings_record;
use crate::{Error, Result};
use redb::{ReadableTable, Table};

/// The format record this build writes.
pub fn format_record() -> Vec<u8> {
    let mut out = FORMAT_MAGIC.to_vec();
    out.extend_from_slice(&FORMAT_VERSION.to_le_bytes());
    out
}

/// The format version in a `meta["format"]` value, or `None` when the value
/// is not an lshdb format record.
pub fn parse_format(value: &[u8]) -> Option<u32> {
    let version = value.strip_prefix(FORMAT_MAGIC.as_slice())?;
    Some(u32::from_le_bytes(version.try_into().ok()?))
}

/// The settings record: its payload ([`settings_record`], encoded field by
/// field apart from the public config types) in a `Tag::Config` frame. The
/// containment index's shape is appended only when that index is on, so a
/// file without it has exactly the record of earlier builds; a build that
/// does not know the index refuses a file with it (trailing bytes), instead
/// of writing to it without maintaining the index.
///
/// # Errors
/// None today; kept fallible for layouts that may refuse settings.
pub fn encode_settings(settings: &Settings) -> Result<Vec<u8>> {
    Ok(frame(Tag::Config, &settings_record::encode(settings)))
}

/// Decodes a settings record.
///
/// # Errors
/// [`Error::Corrupted`] for a damaged frame or payload.
pub fn decode_settings(bytes: &[u8]) -> Result<Settings> {
    settings_record::decode(unframe(Tag::Config, bytes)?)
}

/// Reads a u64 counter from meta (0 when absent).
pub fn read_u64<T: ReadableTable<&'static str, &'static [u8]>>(meta: &T, key: &str) -> Result<u64> {
    match meta.get(key)? {
        None => Ok(0),
        Some(value) => {
            let bytes: [u8; 8] = value
                .value()
                .try_into()
                .map_err(|_| Error::corrupted(format!("meta `{key}` is not 8 bytes")))?;
            Ok(u64::from_le_bytes(bytes))
        }
    }
}

/// Writes a u64 counter into meta.
pub fn write_u64(
    meta: &mut Table<&'static str, &'static [u8]>,
    key: &str,
    value: u64,
) -> Result<()> {
    meta.insert(key, value.to_le_bytes().as_slice())?;
    Ok(())
}

/// Writes format and settings (at creation and after re-banding).
pub fn write_header(
    meta: &mut Table<&'static str, &'static [u8]>,
    settings: &Settings,
) -> Result<()> {
    meta.insert(meta_keys::FORMAT, format_record().as_slice())?;
    meta.insert(meta_keys::SETTINGS, encode_settings(settings)?.as_slice())?;
    Ok(())
}
