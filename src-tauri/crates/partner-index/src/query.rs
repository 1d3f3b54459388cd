//! Questions answered from the index, never by a page walk: filters, text search, counts,
//! paging newest first, and export of the filtered set.
//!
//! Why shaped so:
//! - Every filter is one SQL condition with bound values, so user input never becomes SQL.
//!   The columns filtered on are indexed (with `created`, for "newest first" within them).
//! - Text search is FTS5 over the strings and numbers of each transaction's request, its
//!   response and every other field the service sent (fields the console does not know too). The user's words are each quoted as an FTS5 phrase and matched as a prefix, all
//!   of them required: FTS syntax characters in the input (`"`, `*`, `(`, `:`, `-`, `NEAR`, …)
//!   are plain text and never an error; a word of punctuation only is dropped.
//! - Loan fields are the JSON of `request.loan`; `loanNumber` has a column of its own (the
//!   field asked for most), any other field is read with `json_extract` and compared as text.
//! - The CSV export is the listing export's ([`partner_client::listing_export::write_csv`]) over
//!   the same JSON objects the service sent, so a file from the index reads like one from a
//!   listing; the JSON export is the array of those objects.

use crate::error::{Error, Result};
use crate::store::{decode_transaction, from_micros, meta_keys, micros, Index};
use chrono::{DateTime, Utc};
use partner_api::read::{self, Document};
use rusqlite::types::Value as Sql;
use serde::Serialize;
use serde_json::Value;
use std::io::Write;

/// The key and label under which counts gather transactions without the value counted.
pub const NO_VALUE: &str = "(none)";

/// The most items [`Index::find`] returns at once.
pub const MAX_FIND_LIMIT: u64 = 1_000;

/// `request.loan.<field>` equal to `value` (as text, case-insensitive).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct LoanField {
    pub field: String,
    pub value: String,
}

/// Which transactions a question is about; every condition set must hold. As JSON (a team
/// workspace's calls), its fields in camelCase, each optional.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct Filter {
    /// The transaction's `status` exactly as the service sends it (a value the console does
    /// not know is filtered like any other).
    pub status: Option<String>,
    /// A product's id, or its name (case-insensitive).
    pub product: Option<String>,
    pub request_type: Option<String>,
    /// The response's `status` exactly as the service sends it.
    pub response_status: Option<String>,
    pub created_since: Option<DateTime<Utc>>,
    pub created_before: Option<DateTime<Utc>>,
    pub updated_since: Option<DateTime<Utc>>,
    pub updated_before: Option<DateTime<Utc>>,
    /// The response's `partnerStatus`, case-insensitive.
    pub partner_status: Option<String>,
    /// The response's `referenceNumber`, case-insensitive.
    pub reference_number: Option<String>,
    /// Part of the requesting party's name, case-insensitive.
    pub requesting_party: Option<String>,
    pub loan: Vec<LoanField>,
    /// Words that must all appear (as word prefixes) in the request or the response.
    pub text: Option<String>,
}

/// One page of answers, newest first.
#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Found {
    /// Transactions matching the filter, all pages.
    pub total: u64,
    /// `total` is a floor: counting stopped there (a team workspace's index counts up to a cap,
    /// as its capture pages do; this machine's index always counts them all).
    #[serde(default)]
    pub total_capped: bool,
    pub offset: u64,
    /// Each as the service sent it, with its view.
    pub items: Vec<Document<read::TransactionView>>,
    /// When the index was last brought up to date.
    pub as_of: Option<DateTime<Utc>>,
}

/// How many transactions match, per status and per product.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Counts {
    pub total: u64,
    /// `(status, count)`, by status, as the service sends them (values the console does not
    /// know included); transactions without a status under [`NO_VALUE`].
    pub by_status: Vec<(String, u64)>,
    /// `(product id, product name, count)`, by name; transactions that name no product under
    /// [`NO_VALUE`].
    pub by_product: Vec<(String, String, u64)>,
    pub as_of: Option<DateTime<Utc>>,
}

/// The file format of an export.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Export {
    Csv,
    Json,
}

impl Filter {
    /// The `WHERE` clause and its values.
    fn sql(&self) -> Result<(String, Vec<Sql>)> {
        let mut conditions: Vec<&'static str> = Vec::new();
        let mut values: Vec<Sql> = Vec::new();
        let mut add = |condition: &'static str, bound: Vec<Sql>| {
            conditions.push(condition);
            values.extend(bound);
        };
        if let Some(status) = non_empty(&self.status) {
            add("status = ?", vec![Sql::Text(status)]);
        }
        if let Some(product) = non_empty(&self.product) {
            add(
                "(product_id = ? OR product_name = ? COLLATE NOCASE)",
                vec![Sql::Text(product.clone()), Sql::Text(product)],
            );
        }
        if let Some(request_type) = non_empty(&self.request_type) {
            add("request_type = ?", vec![Sql::Text(request_type)]);
        }
        if let Some(status) = non_empty(&self.response_status) {
            add("response_status = ?", vec![Sql::Text(status)]);
        }
        for (condition, at) in [
            ("created >= ?", self.created_since),
            ("created < ?", self.created_before),
            ("updated >= ?", self.updated_since),
            ("updated < ?", self.updated_before),
        ] {
            if let Some(at) = at {
                add(condition, vec![Sql::Integer(micros(at))]);
            }
        }
        if let Some(partner_status) = non_empty(&self.partner_status) {
            add(
                "partner_status = ? COLLATE NOCASE",
                vec![Sql::Text(partner_status)],
            );
        }
        if let Some(reference) = non_empty(&self.reference_number) {
            add(
                "reference_number = ? COLLATE NOCASE",
                vec![Sql::Text(reference)],
            );
        }
        if let Some(party) = non_empty(&self.requesting_party) {
            add(
                "requesting_party LIKE ? ESCAPE '\\'",
                vec![Sql::Text(format!("%{}%", like_escaped(&party)))],
            );
        }
        for (field, value) in self.loan_fields()? {
            if field == "loanNumber" {
                add(
                    "loan_number = ? COLLATE NOCASE",
                    vec![Sql::Text(value.to_string())],
                );
            } else {
                add(
                    "CAST(json_extract(loan, ?) AS TEXT) = ? COLLATE NOCASE",
                    vec![
                        Sql::Text(format!("$.\"{field}\"")),
                        Sql::Text(value.to_string()),
                    ],
                );
            }
        }
        if let Some(query) = self.text.as_deref().and_then(fts_query) {
            add(
                "rowid IN (SELECT rowid FROM transactions_text WHERE transactions_text MATCH ?)",
                vec![Sql::Text(query)],
            );
        }
        let clause = if conditions.is_empty() {
            String::new()
        } else {
            format!("WHERE {}", conditions.join(" AND "))
        };
        Ok((clause, values))
    }
}

impl Filter {
    /// The loan fields asked for, `(field, value)`, each field's name checked: letters, digits
    /// and `_` only (it becomes a JSON path in the store's SQL).
    pub fn loan_fields(&self) -> Result<Vec<(&str, &str)>> {
        self.loan
            .iter()
            .map(|LoanField { field, value }| {
                let field = field.trim();
                if field.is_empty() || !field.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
                {
                    return Err(Error::Invalid(
                        "a loan field is a name of letters, digits and `_`, such as loanNumber"
                            .into(),
                    ));
                }
                Ok((field, value.as_str()))
            })
            .collect()
    }
}

/// A filter's value trimmed, or `None` when nothing is left (an empty filter asks nothing).
pub fn non_empty(value: &Option<String>) -> Option<String> {
    value
        .as_deref()
        .map(str::trim)
        .filter(|v| !v.is_empty())
        .map(str::to_string)
}

/// `text` with `LIKE`'s wildcards and its escape character escaped, for `ESCAPE '\'`: a part
/// of a name is matched as written (SQLite here, PostgreSQL's `ILIKE` in a team workspace).
pub fn like_escaped(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if matches!(c, '%' | '_' | '\\') {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// The words of a text search, as the user wrote them: a word with no letter or digit is
/// dropped (nothing to search for). Every store matches each as a prefix, all required.
pub fn search_words(text: &str) -> Vec<&str> {
    text.split_whitespace()
        .filter(|word| word.chars().any(char::is_alphanumeric))
        .collect()
}

/// The user's words as an FTS5 query: each a quoted phrase matched as a prefix, all required.
/// `None` when no word has a letter or digit (nothing to search for).
pub fn fts_query(text: &str) -> Option<String> {
    let terms: Vec<String> = search_words(text)
        .into_iter()
        .map(|word| format!("\"{}\"*", word.replace('"', "\"\"")))
        .collect();
    (!terms.is_empty()).then(|| terms.join(" "))
}

impl Index {
    /// The transactions matching `filter`, newest first (`created`), `limit` (1 to
    /// [`MAX_FIND_LIMIT`]) from `offset`, and how many match in all.
    pub fn find(&self, filter: &Filter, limit: u64, offset: u64) -> Result<Found> {
        if limit == 0 || limit > MAX_FIND_LIMIT {
            return Err(Error::Invalid(format!(
                "the limit must be 1 to {MAX_FIND_LIMIT}, got {limit}"
            )));
        }
        let (clause, values) = filter.sql()?;
        let total = self.count_where(&clause, &values)?;
        let bodies = self.bodies(&clause, values, Some(limit), offset)?;
        let items = bodies
            .iter()
            .map(|b| decode_transaction(b))
            .collect::<Result<Vec<_>>>()?;
        Ok(Found {
            total,
            total_capped: false,
            offset,
            items,
            as_of: self.as_of()?,
        })
    }

    /// How many transactions match `filter`, in all, per status and per product.
    pub fn counts(&self, filter: &Filter) -> Result<Counts> {
        let (clause, values) = filter.sql()?;
        let connection = self.lock();
        let mut by_status = Vec::new();
        {
            let mut statement = connection.prepare(&format!(
                "SELECT status, count(*) FROM transactions {clause} GROUP BY status ORDER BY status"
            ))?;
            let rows = statement.query_map(rusqlite::params_from_iter(values.iter()), |r| {
                Ok((r.get::<_, Option<String>>(0)?, r.get::<_, i64>(1)?))
            })?;
            for row in rows {
                let (status, n) = row?;
                let status = status.unwrap_or_else(|| NO_VALUE.to_owned());
                by_status.push((status, n.max(0) as u64));
            }
        }
        let mut by_product = Vec::new();
        {
            // Counted on the (product_id, created) index; the names looked up per product.
            let mut statement = connection.prepare(&format!(
                "SELECT product_id, count(*) FROM transactions {clause} GROUP BY product_id"
            ))?;
            let rows = statement.query_map(rusqlite::params_from_iter(values.iter()), |r| {
                Ok((r.get::<_, Option<String>>(0)?, r.get::<_, i64>(1)?))
            })?;
            let mut name = connection.prepare_cached(
                "SELECT product_name FROM transactions
                 WHERE product_id = ?1 AND product_name IS NOT NULL LIMIT 1",
            )?;
            for row in rows {
                let (id, n) = row?;
                let Some(id) = id else {
                    by_product.push((NO_VALUE.to_owned(), NO_VALUE.to_owned(), n.max(0) as u64));
                    continue;
                };
                let product_name: Option<String> =
                    rusqlite::OptionalExtension::optional(name.query_row([&id], |r| r.get(0)))?;
                let product_name = product_name.unwrap_or_else(|| id.clone());
                by_product.push((id, product_name, n.max(0) as u64));
            }
            by_product.sort_by(|a, b| (&a.1, &a.0).cmp(&(&b.1, &b.0)));
        }
        drop(connection);
        Ok(Counts {
            total: by_status.iter().map(|(_, n)| n).sum(),
            by_status,
            by_product,
            as_of: self.as_of()?,
        })
    }

    /// Writes the transactions matching `filter` (newest first, from `offset`, at most `limit`
    /// when given) to `out` as CSV (the listing export's shape) or a JSON array, and hands `out`
    /// back with the number written.
    pub fn export<W: Write>(
        &self,
        filter: &Filter,
        limit: Option<u64>,
        offset: u64,
        format: Export,
        out: W,
    ) -> Result<(W, u64)> {
        let (clause, values) = filter.sql()?;
        let bodies = self.bodies(&clause, values, limit, offset)?;
        let io = |source| Error::Io {
            path: "the export".into(),
            source,
        };
        let rows = bodies
            .iter()
            .map(|b| serde_json::from_str::<Value>(b).map_err(Error::json))
            .collect::<Result<Vec<_>>>()?;
        let count = rows.len() as u64;
        Ok((write_export(&rows, format, out).map_err(io)?, count))
    }

    fn as_of(&self) -> Result<Option<DateTime<Utc>>> {
        let connection = self.lock();
        let value: Option<String> = rusqlite::OptionalExtension::optional(connection.query_row(
            "SELECT value FROM meta WHERE key = ?1",
            [meta_keys::AS_OF],
            |r| r.get(0),
        ))?;
        Ok(value
            .and_then(|v| v.parse::<i64>().ok())
            .and_then(from_micros))
    }

    fn count_where(&self, clause: &str, values: &[Sql]) -> Result<u64> {
        let connection = self.lock();
        let n: i64 = connection
            .prepare_cached(&format!("SELECT count(*) FROM transactions {clause}"))?
            .query_row(rusqlite::params_from_iter(values.iter()), |r| r.get(0))?;
        Ok(n.max(0) as u64)
    }

    fn bodies(
        &self,
        clause: &str,
        mut values: Vec<Sql>,
        limit: Option<u64>,
        offset: u64,
    ) -> Result<Vec<String>> {
        values.push(Sql::Integer(
            limit.map_or(-1, |l| l.min(i64::MAX as u64) as i64),
        ));
        values.push(Sql::Integer(offset.min(i64::MAX as u64) as i64));
        let connection = self.lock();
        // The page is chosen on the narrow table; only its rows' JSON is read.
        let mut statement = connection.prepare_cached(&format!(
            "SELECT b.body FROM (SELECT rowid AS r, created AS c FROM transactions {clause}
                ORDER BY created DESC, rowid DESC LIMIT ? OFFSET ?) AS page
             JOIN transaction_bodies b ON b.rowid = page.r ORDER BY page.c DESC, page.r DESC"
        ))?;
        let rows = statement.query_map(rusqlite::params_from_iter(values.iter()), |r| {
            r.get::<_, String>(0)
        })?;
        let mut bodies = Vec::new();
        for row in rows {
            bodies.push(row?);
        }
        Ok(bodies)
    }
}

/// Writes transactions (each the service's object) to `out` as an export of the index writes
/// them: CSV in the listing export's shape, or a JSON array; `out` is handed back. A team
/// workspace's index is exported in the same shape by the consoles that read it.
pub fn write_export<W: Write>(rows: &[Value], format: Export, mut out: W) -> std::io::Result<W> {
    match format {
        Export::Csv => partner_client::listing_export::write_csv(out, rows),
        Export::Json => {
            serde_json::to_writer_pretty(&mut out, rows).map_err(std::io::Error::other)?;
            out.write_all(b"\n")?;
            Ok(out)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn user_text_becomes_quoted_prefix_phrases() {
        assert_eq!(fts_query("  "), None);
        assert_eq!(fts_query("* ( ) :"), None);
        assert_eq!(
            fts_query("Zelda LN-000123"),
            Some("\"Zelda\"* \"LN-000123\"*".into())
        );
        assert_eq!(
            fts_query("say \"hi\" NEAR(x"),
            Some("\"say\"* \"\"\"hi\"\"\"* \"NEAR(x\"*".into())
        );
    }

    #[test]
    fn like_wildcards_are_literal() {
        assert_eq!(like_escaped("50%_a\\b"), "50\\%\\_a\\\\b");
    }
}
