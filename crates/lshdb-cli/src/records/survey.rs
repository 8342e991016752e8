//! The check of an input's first JSON Lines chunk: a `--text-field` or
//! `--id-field` that none of its objects has is a wrong field name, an
//! error that names the fields seen, not a chunk of bad records.

use super::Fields;
use crate::{fail, CliError};

/// What the first chunk of an input showed of its fields, to tell a wrong
/// field name from a few bad records.
#[derive(Default)]
pub struct Survey {
    /// JSON objects read.
    pub objects: u64,
    /// Objects with the text field, and with the id field.
    pub with_text: u64,
    pub with_id: u64,
    /// The top-level field names seen (at most [`Survey::NAMES`]).
    pub names: std::collections::BTreeSet<String>,
}

impl Survey {
    const NAMES: usize = 50;

    /// Counts one JSON object of the first chunk.
    pub fn object(&mut self, value: &serde_json::Value, fields: &Fields) {
        self.objects += 1;
        let shingles = || fields.shingles && value.get("shingles").is_some();
        if super::text::json_field(value, &fields.text).is_some() || shingles() {
            self.with_text += 1;
        }
        if let Some(id) = &fields.id {
            if super::text::json_field(value, id).is_some() {
                self.with_id += 1;
            }
        }
        if let Some(object) = value.as_object() {
            for name in object.keys() {
                if self.names.len() < Self::NAMES {
                    self.names.insert(name.clone());
                }
            }
        }
    }
}

/// Fails when the JSON objects of an input's first chunk all lack the
/// text field, or all lack the id field: a wrong field name, named with
/// the fields that were seen.
pub fn check_survey(survey: &Survey, fields: &Fields, path: &str) -> Result<(), CliError> {
    let seen = || {
        let names: Vec<String> = survey.names.iter().map(|n| format!("`{n}`")).collect();
        match names.is_empty() {
            true => "no fields".to_owned(),
            false => format!("the fields {}", names.join(", ")),
        }
    };
    let what = match path {
        "-" => "standard input".to_owned(),
        _ => path.to_owned(),
    };
    if survey.with_text == 0 {
        return fail(format!(
            "none of the first {} record(s) of {what} has the field `{}`{}; they have {}",
            survey.objects,
            fields.text,
            fields.text_flag(),
            seen()
        ));
    }
    if let Some(id) = fields.id.as_deref().filter(|_| survey.with_id == 0) {
        return fail(format!(
            "none of the first {} record(s) of {what} has the field `{id}`{}; they have {}",
            survey.objects,
            fields.id_flag(),
            seen()
        ));
    }
    Ok(())
}
