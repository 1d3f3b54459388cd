//! A listing as a file, and search within it: the one rule for both, used by the desktop app's
//! export and search and by the `partner` command's `--output csv`.
//!
//! Why it is shaped so:
//! - Rows are the API's own JSON objects, so a CSV holds what the JSON export holds: one column
//!   per top-level field, in the order the fields are first met (the order of a
//!   `serde_json::Value` object: by name, as `preserve_order` is not enabled in this workspace;
//!   a field first met on a later row comes after the others); a value that is itself an object
//!   or an array is one cell of compact JSON, a null or missing field an empty cell. A CSV read
//!   back is never short of a field the JSON had.
//! - The columns are known only once every row is seen (an optional field may first appear on
//!   the last page), so a CSV is written from the whole listing, not streamed row by row.
//! - Search is plain text, case-insensitive, anywhere in an item: in any string or number of
//!   the object, however deeply nested, never in field names.

use serde_json::Value;
use std::io::Write;

/// Case-insensitive text searched for in listing items.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TextSearch {
    needle: String,
}

impl TextSearch {
    pub fn new(text: &str) -> Self {
        Self {
            needle: text.to_lowercase(),
        }
    }

    /// Whether the text is in any string or number of `value`, at any depth.
    pub fn matches(&self, value: &Value) -> bool {
        match value {
            Value::String(s) => s.to_lowercase().contains(&self.needle),
            Value::Array(items) => items.iter().any(|v| self.matches(v)),
            Value::Object(map) => map.values().any(|v| self.matches(v)),
            Value::Number(n) => n.to_string().contains(&self.needle),
            Value::Bool(_) | Value::Null => false,
        }
    }
}

/// The CSV columns of `rows`: every top-level field of the objects, in the order first met.
pub fn csv_columns(rows: &[Value]) -> Vec<String> {
    let mut columns: Vec<String> = Vec::new();
    for row in rows {
        if let Value::Object(map) = row {
            for key in map.keys() {
                if !columns.contains(key) {
                    columns.push(key.clone());
                }
            }
        }
    }
    columns
}

/// One cell: a string as it is, nothing for null or missing, anything else as compact JSON.
pub fn csv_cell(value: Option<&Value>) -> String {
    match value {
        None | Some(Value::Null) => String::new(),
        Some(Value::String(s)) => s.clone(),
        Some(other) => other.to_string(),
    }
}

/// Writes `rows` as CSV to `out` (a header of [`csv_columns`], then one record per row) and
/// hands `out` back.
pub fn write_csv<W: Write>(out: W, rows: &[Value]) -> std::io::Result<W> {
    let columns = csv_columns(rows);
    let mut writer = csv::Writer::from_writer(out);
    writer.write_record(&columns)?;
    for row in rows {
        writer.write_record(columns.iter().map(|c| csv_cell(row.get(c))))?;
    }
    writer.into_inner().map_err(|e| e.into_error())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn search_finds_text_at_any_depth_in_values_only() {
        let item = json!({
            "id": "T-1",
            "status": "Completed",
            "request": { "type": "NEW_REQUEST", "amounts": [1250, 3] },
            "locked": true,
            "note": null
        });
        assert!(TextSearch::new("complet").matches(&item));
        assert!(TextSearch::new("new_request").matches(&item));
        assert!(TextSearch::new("125").matches(&item));
        assert!(!TextSearch::new("request").matches(&json!({ "request": "x" })));
        assert!(!TextSearch::new("true").matches(&item));
        assert!(!TextSearch::new("absent").matches(&item));
        assert!(TextSearch::new("").matches(&item));
    }

    #[test]
    fn csv_flattens_top_level_fields_in_first_met_order() {
        let rows = vec![
            json!({ "id": "a", "tags": ["x", "y"], "n": 2, "gone": null }),
            json!({ "id": "b,\"q\"", "extra": { "k": 1 }, "n": 3 }),
            json!("not an object"),
        ];
        // A row's fields by name (a `Value` object's order), a field first met later after them.
        assert_eq!(csv_columns(&rows), ["gone", "id", "n", "tags", "extra"]);
        let text = String::from_utf8(write_csv(Vec::new(), &rows).unwrap()).unwrap();
        assert_eq!(
            text,
            "gone,id,n,tags,extra\n\
             ,a,2,\"[\"\"x\"\",\"\"y\"\"]\",\n\
             ,\"b,\"\"q\"\"\",3,,\"{\"\"k\"\":1}\"\n\
             ,,,,\n"
        );
        let mut reader = csv::Reader::from_reader(text.as_bytes());
        let second = reader.records().nth(1).unwrap().unwrap();
        assert_eq!(&second[1], "b,\"q\"", "quoting reads back");
    }

    #[test]
    fn an_empty_listing_is_one_empty_header_cell() {
        assert_eq!(write_csv(Vec::new(), &[]).unwrap(), b"\"\"\n");
    }
}
