//! Text search over the capture store: what a search string means, the full-text index that
//! answers it, and the thread that keeps that index behind the writer.
//!
//! What a search string means (`CaptureFilter::text`), case-insensitively:
//! - **words**: the string is cut at white space into terms; a capture matches when every term
//!   is in its body or in one of its header values (header names are not searched). A term is
//!   matched as the tokens SQLite's `unicode61` tokenizer makes of it (letters and digits, with
//!   diacritics folded), so `order-42` is the phrase `order 42`; the **last** term also
//!   matches as a prefix (`transac` finds `transaction`), so results follow typing. A term in
//!   double quotes (`"tx created"`) is a phrase and never a prefix. Anything else the user
//!   types (`*`, `-`, `:`, parentheses, `AND`, unbalanced quotes) is literal text, never FTS
//!   syntax: every term reaches FTS5 as a quoted string, so no input is an error.
//! - **ids**: or the whole string (trimmed) is a substring of the capture's eventId,
//!   resourceId, instanceId, subscription id or resourceRef (at least 3 characters: the index
//!   of ids is made of trigrams), or it is the capture's id as a number.
//!
//! Why an index kept behind the writer instead of in its transaction: the writer is the one
//! thread every acknowledgement waits on (see [`crate::store`]), and tokenizing a 2 KiB body
//! costs about as much as storing it. So the writer stores captures only; the indexer thread
//! (its own connection) indexes committed captures in short transactions after them and keeps
//! the highest id it indexed in `search_state`. A query covers the captures above that id (the
//! last moments' few, or a whole store being indexed after an import or a migration) with a
//! substring scan of their bodies and headers, so a search is always complete; a capture in that
//! tail may match a little more loosely (every term a substring) until it is indexed.
//!
//! Both indexes are contentless FTS5 tables (`content=''`, so bodies are not stored twice) with
//! `contentless_delete=1`, so a clear or prune deletes its captures' entries in its own
//! transaction (done in the writer, see `store::Writer::clear`). Results are always joined to
//! `captures`, so a capture deleted is never found even if its entry were left.

use crate::capture::Header;
use crate::Result;
use rusqlite::{params, Connection, OptionalExtension, ToSql};
use std::sync::mpsc;
use std::time::Duration;

/// The search tables of schema version 4. `search_text` indexes the body and the header values;
/// `search_ids` the ids, one column each so a substring never spans two of them.
pub(crate) const SEARCH_SCHEMA: &str = "
CREATE VIRTUAL TABLE IF NOT EXISTS search_text USING fts5(
    body, header_values, content='', contentless_delete=1,
    tokenize='unicode61 remove_diacritics 2'
);
CREATE VIRTUAL TABLE IF NOT EXISTS search_ids USING fts5(
    event_id, resource_id, instance_id, subscription_id, resource_ref,
    content='', contentless_delete=1, tokenize='trigram'
);
CREATE TABLE IF NOT EXISTS search_state (
    one INTEGER PRIMARY KEY CHECK (one = 1),
    indexed_through INTEGER NOT NULL
);
INSERT OR IGNORE INTO search_state (one, indexed_through) VALUES (1, 0);
";

/// Shortest id substring the trigram index answers.
const MIN_ID_SUBSTRING: usize = 3;
/// Captures indexed in one transaction of the indexer: short, so the writer (which waits for
/// the same write lock) is held up for a few milliseconds at most.
const INDEX_BATCH: i64 = 200;
/// How often an idle indexer looks for new captures.
const INDEX_POLL: Duration = Duration::from_millis(100);

/// A search string, read as the module notes say.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct SearchText {
    /// The FTS5 query over `search_text`, `None` when the string has no word.
    pub fts: Option<String>,
    /// Lower-cased terms for the substring scan of the unindexed tail.
    pub tail_terms: Vec<String>,
    /// The FTS5 query over `search_ids` (a quoted trigram phrase), when long enough.
    pub ids_fts: Option<String>,
    /// The lower-cased whole string, for the tail's id substring scan.
    pub id_substring: Option<String>,
    /// The string as a capture id.
    pub capture_id: Option<i64>,
}

impl SearchText {
    /// `None` when the string is empty (no text filter).
    pub fn parse(text: &str) -> Option<Self> {
        let trimmed = text.trim();
        if trimmed.is_empty() {
            return None;
        }
        let terms = terms(trimmed);
        let words: Vec<&Term> = terms.iter().filter(|t| has_token(&t.text)).collect();
        let fts = (!words.is_empty()).then(|| {
            words
                .iter()
                .enumerate()
                .map(|(index, term)| {
                    let quoted = format!("\"{}\"", term.text.replace('"', "\"\""));
                    if index + 1 == words.len() && !term.phrase {
                        format!("{quoted} *")
                    } else {
                        quoted
                    }
                })
                .collect::<Vec<_>>()
                .join(" AND ")
        });
        let lower = trimmed.to_lowercase();
        let long_enough = trimmed.chars().count() >= MIN_ID_SUBSTRING;
        Some(Self {
            fts,
            tail_terms: words.iter().map(|t| t.text.to_lowercase()).collect(),
            ids_fts: long_enough.then(|| format!("\"{}\"", trimmed.replace('"', "\"\""))),
            id_substring: long_enough.then_some(lower),
            capture_id: trimmed.parse::<i64>().ok(),
        })
    }

    /// The condition on a `captures` row (named `alias`) and its arguments, numbered from
    /// `first_arg`. `indexed` says the store has the search tables (a store made by an older
    /// version, read beside its older listener, has none: everything is the tail then).
    pub fn condition(&self, alias: &str, indexed: bool, args: &mut Vec<Box<dyn ToSql>>) -> String {
        let mut push = |value: Box<dyn ToSql>| {
            args.push(value);
            format!("?{}", args.len())
        };
        let mut any: Vec<String> = Vec::new();
        if indexed {
            if let Some(fts) = &self.fts {
                let p = push(Box::new(fts.clone()));
                any.push(format!(
                    "EXISTS (SELECT 1 FROM search_text WHERE search_text MATCH {p} \
                     AND search_text.rowid = {alias}.id)"
                ));
            }
            if let Some(ids) = &self.ids_fts {
                let p = push(Box::new(ids.clone()));
                any.push(format!(
                    "EXISTS (SELECT 1 FROM search_ids WHERE search_ids MATCH {p} \
                     AND search_ids.rowid = {alias}.id)"
                ));
            }
        }
        if let Some(id) = self.capture_id {
            let p = push(Box::new(id));
            any.push(format!("{alias}.id = {p}"));
        }
        if let Some(tail) = self.tail_condition(alias, indexed, args) {
            any.push(tail);
        }
        if any.is_empty() {
            return "0".into();
        }
        format!("({})", any.join(" OR "))
    }

    /// The substring scan of the captures above the indexed id (every capture when the store
    /// has no index), `None` when the string gives it nothing to look for.
    fn tail_condition(
        &self,
        alias: &str,
        indexed: bool,
        args: &mut Vec<Box<dyn ToSql>>,
    ) -> Option<String> {
        let mut push = |value: Box<dyn ToSql>| {
            args.push(value);
            format!("?{}", args.len())
        };
        let mut tail: Vec<String> = Vec::new();
        if !self.tail_terms.is_empty() {
            let all: Vec<String> = self
                .tail_terms
                .iter()
                .map(|term| {
                    let p = push(Box::new(term.clone()));
                    format!(
                        "instr(lower(COALESCE(CAST({alias}.body AS TEXT), '') || ' ' || \
                         {alias}.headers), {p}) > 0"
                    )
                })
                .collect();
            tail.push(format!("({})", all.join(" AND ")));
        }
        if let Some(sub) = &self.id_substring {
            let p = push(Box::new(sub.clone()));
            tail.push(format!(
                "instr(lower(COALESCE({alias}.event_id, '') || char(10) || \
                 COALESCE({alias}.resource_id, '') || char(10) || \
                 COALESCE({alias}.instance_id, '') || char(10) || \
                 COALESCE({alias}.subscription_id, '') || char(10) || \
                 COALESCE({alias}.resource_ref, '')), {p}) > 0"
            ));
        }
        if tail.is_empty() {
            return None;
        }
        let start = if indexed {
            format!("{alias}.id > (SELECT indexed_through FROM search_state WHERE one = 1) AND ")
        } else {
            String::new()
        };
        Some(format!("({start}({}))", tail.join(" OR ")))
    }

    /// The arms of a compound SELECT that lists the captures matching this search and
    /// `filter` (a condition on `captures` named `c`), each arm giving `id, notification_id,
    /// verdict` and able to deliver them newest first without a sort: the full-text hits in
    /// the index's rowid order, the id hits likewise, the unindexed tail by the table's order,
    /// the capture id itself. `UNION ... ORDER BY 1 DESC` then merges them, so a page of a
    /// search that matches every capture reads one page of hits, and one that matches three
    /// reads three (see `store::StoreReader::page`).
    pub fn arms(&self, indexed: bool, filter: &str, args: &mut Vec<Box<dyn ToSql>>) -> Vec<String> {
        let mut arms = Vec::new();
        if indexed {
            if let Some(fts) = &self.fts {
                args.push(Box::new(fts.clone()));
                arms.push(format!(
                    "SELECT search_text.rowid AS id, c.notification_id, c.verdict \
                     FROM search_text CROSS JOIN captures c INDEXED BY captures_list ON c.id = search_text.rowid \
                     WHERE search_text MATCH ?{} AND {filter}",
                    args.len()
                ));
            }
            if let Some(ids) = &self.ids_fts {
                args.push(Box::new(ids.clone()));
                arms.push(format!(
                    "SELECT search_ids.rowid AS id, c.notification_id, c.verdict \
                     FROM search_ids CROSS JOIN captures c INDEXED BY captures_list ON c.id = search_ids.rowid \
                     WHERE search_ids MATCH ?{} AND {filter}",
                    args.len()
                ));
            }
        }
        let tail = self.tail_condition("c", indexed, args);
        if let Some(tail) = tail {
            arms.push(format!(
                "SELECT c.id, c.notification_id, c.verdict FROM captures c \
                 WHERE {tail} AND {filter}"
            ));
        }
        if let Some(id) = self.capture_id {
            args.push(Box::new(id));
            arms.push(format!(
                "SELECT c.id, c.notification_id, c.verdict FROM captures c \
                 WHERE c.id = ?{} AND {filter}",
                args.len()
            ));
        }
        arms
    }
}

struct Term {
    text: String,
    /// Written in double quotes.
    phrase: bool,
}

/// Cuts a search string into terms: runs of non-space characters, or what stands between
/// double quotes (an unclosed quote runs to the end).
fn terms(text: &str) -> Vec<Term> {
    let mut terms = Vec::new();
    let mut chars = text.chars().peekable();
    while let Some(&c) = chars.peek() {
        if c.is_whitespace() {
            chars.next();
        } else if c == '"' {
            chars.next();
            let phrase: String = chars.by_ref().take_while(|&c| c != '"').collect();
            terms.push(Term {
                text: phrase,
                phrase: true,
            });
        } else {
            let mut word = String::new();
            while let Some(&c) = chars.peek() {
                if c.is_whitespace() || c == '"' {
                    break;
                }
                word.push(c);
                chars.next();
            }
            terms.push(Term {
                text: word,
                phrase: false,
            });
        }
    }
    terms
}

/// Whether `unicode61` makes at least one token of `text` (a term of only punctuation makes
/// none, and an empty FTS5 phrase would match nothing).
fn has_token(text: &str) -> bool {
    text.chars().any(char::is_alphanumeric)
}

/// The text of a capture the indexes hold.
fn header_values(headers_json: &str) -> String {
    serde_json::from_str::<Vec<Header>>(headers_json)
        .map(|headers| {
            headers
                .into_iter()
                .map(|h| h.value)
                .collect::<Vec<_>>()
                .join("\n")
        })
        .unwrap_or_default()
}

/// Indexes the captures `SELECT ... FROM captures WHERE <selection>` returns into both search
/// tables, replacing any entry they had. Returns how many and the highest id indexed.
pub(crate) fn index_rows(
    conn: &Connection,
    selection: &str,
    args: &[&dyn ToSql],
) -> Result<(u64, Option<i64>)> {
    let mut select = conn.prepare_cached(&format!(
        "SELECT id, body, headers, event_id, resource_id, instance_id, subscription_id, \
         resource_ref FROM captures WHERE {selection}"
    ))?;
    let mut text = conn.prepare_cached(
        "INSERT OR REPLACE INTO search_text (rowid, body, header_values) VALUES (?1, ?2, ?3)",
    )?;
    let mut ids = conn.prepare_cached(
        "INSERT OR REPLACE INTO search_ids (rowid, event_id, resource_id, instance_id, \
         subscription_id, resource_ref) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
    )?;
    let mut rows = select.query(args)?;
    let mut highest = None;
    let mut count = 0;
    while let Some(row) = rows.next()? {
        let id: i64 = row.get(0)?;
        let body: Option<Vec<u8>> = row.get(1)?;
        let body = body.map(|b| String::from_utf8_lossy(&b).into_owned());
        let headers: String = row.get(2)?;
        text.execute(params![id, body, header_values(&headers)])?;
        ids.execute(params![
            id,
            row.get::<_, Option<String>>(3)?,
            row.get::<_, Option<String>>(4)?,
            row.get::<_, Option<String>>(5)?,
            row.get::<_, Option<String>>(6)?,
            row.get::<_, Option<String>>(7)?,
        ])?;
        highest = Some(highest.map_or(id, |h: i64| h.max(id)));
        count += 1;
    }
    Ok((count, highest))
}

/// The highest capture id the indexes cover (captures above it are the tail).
pub(crate) fn indexed_through(conn: &Connection) -> Result<i64> {
    Ok(conn
        .prepare_cached("SELECT indexed_through FROM search_state WHERE one = 1")?
        .query_row([], |row| row.get(0))
        .optional()?
        .unwrap_or(0))
}

/// Removes the entries of the captures `where_captures` selects (run before deleting them, in
/// the same transaction).
pub(crate) fn unindex(conn: &Connection, where_captures: &str, args: &[&dyn ToSql]) -> Result<()> {
    for table in ["search_text", "search_ids"] {
        conn.execute(
            &format!("DELETE FROM {table} WHERE rowid IN (SELECT id FROM captures WHERE {where_captures})"),
            args,
        )?;
    }
    Ok(())
}

/// Empties both indexes (a clear of everything).
pub(crate) fn unindex_all(conn: &Connection) -> Result<()> {
    for table in ["search_text", "search_ids"] {
        conn.execute(
            &format!("INSERT INTO {table} ({table}) VALUES ('delete-all')"),
            [],
        )?;
    }
    Ok(())
}

/// One round of the indexer: indexes up to [`INDEX_BATCH`] captures above the indexed id in
/// one transaction; returns how many.
pub(crate) fn index_next_batch(conn: &mut Connection) -> Result<u64> {
    let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
    let from = indexed_through(&tx)?;
    let (count, highest) = index_rows(&tx, "id > ?1 ORDER BY id LIMIT ?2", &[&from, &INDEX_BATCH])?;
    let Some(highest) = highest else {
        return Ok(0);
    };
    tx.execute(
        "UPDATE search_state SET indexed_through = ?1 WHERE one = 1",
        [highest],
    )?;
    tx.commit()?;
    Ok(count)
}

/// The indexer thread: indexes what the writer committed, batch after batch while there is a
/// backlog, then looks again every [`INDEX_POLL`]; stops when `stop` is dropped or sent to.
pub(crate) fn indexer_loop(conn: &mut Connection, stop: &mpsc::Receiver<()>) {
    loop {
        match index_next_batch(conn) {
            Ok(0) => match stop.recv_timeout(INDEX_POLL) {
                Err(mpsc::RecvTimeoutError::Timeout) => {}
                _ => return,
            },
            Ok(_) => match stop.try_recv() {
                Err(mpsc::TryRecvError::Empty) => {}
                _ => return,
            },
            Err(error) => {
                tracing::warn!(%error, "indexing captures for search failed; trying again");
                match stop.recv_timeout(INDEX_POLL * 10) {
                    Err(mpsc::RecvTimeoutError::Timeout) => {}
                    _ => return,
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_are_quoted_and_the_last_is_a_prefix() {
        let s = SearchText::parse("  Order created ").unwrap();
        assert_eq!(s.fts.as_deref(), Some("\"Order\" AND \"created\" *"));
        assert_eq!(s.tail_terms, vec!["order", "created"]);
    }

    #[test]
    fn fts_syntax_is_literal() {
        let s = SearchText::parse("a\"b OR (c:*) -d NEAR").unwrap();
        let fts = s.fts.unwrap();
        assert!(fts.starts_with("\"a\" AND \"b OR (c:*) -d NEAR\""), "{fts}");
        let s = SearchText::parse("*** -- ()").unwrap();
        assert_eq!(s.fts, None);
        assert!(s.ids_fts.is_some());
        assert_eq!(SearchText::parse("   "), None);
    }

    #[test]
    fn numbers_are_capture_ids_too() {
        let s = SearchText::parse("42").unwrap();
        assert_eq!(s.capture_id, Some(42));
        assert_eq!(s.ids_fts, None, "two characters are too short for trigrams");
    }
}
