//! What a search string means, and the SQL that finds the captures it matches: the condition on
//! a capture ([`SearchText::condition`]), the streams a page of results is read from
//! ([`SearchText::chains`], walked newest first by [`merge_newest_first`]) and the scan of the
//! captures not indexed yet ([`WORDS_MATCH`]). Apart from the [indexer](super::indexer): what a
//! query means is read and changed without the keeping of the index, and the other way round.
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
//!   of ids is made of trigrams), or it is the capture's id as a number. The index of ids keeps
//!   no positions (see [`crate::search`]), so it answers which captures hold every trigram of
//!   the string ([`id_trigrams`]), and a longer string is then checked against the capture's
//!   ids themselves ([`IDS_CONTAIN`], the same check the scan of the tail makes).

use super::{header_values, SearchTables};
use crate::watermark::WATERMARK_SQL;
use crate::Result;
use rusqlite::{Connection, ToSql};

/// Shortest id substring the trigram index answers.
const MIN_ID_SUBSTRING: usize = 3;

/// A search string, read as the module notes say.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct SearchText {
    /// The FTS5 query over `search_text`, `None` when the string has no word.
    pub fts: Option<String>,
    /// The string as typed (trimmed), for the scan of the unindexed tail, which reads it
    /// with [`words_match`].
    pub words: Option<String>,
    /// The FTS5 query over `search_ids` (the string's trigrams, [`id_trigrams`]), when long
    /// enough.
    pub ids_fts: Option<String>,
    /// The lower-cased whole string, for the check of a capture's ids ([`IDS_CONTAIN`]).
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
            words: (!words.is_empty()).then(|| trimmed.to_string()),
            ids_fts: long_enough.then(|| id_trigrams(trimmed)),
            id_substring: long_enough.then_some(lower),
            capture_id: trimmed.parse::<i64>().ok(),
        })
    }

    /// The condition on a `captures` row (named `alias`) and its arguments, numbered from
    /// `first_arg`, over the search tables as `tables` has them.
    pub fn condition(
        &self,
        alias: &str,
        tables: &SearchTables,
        args: &mut Vec<Box<dyn ToSql>>,
    ) -> String {
        let indexed = tables.indexed;
        let mut push = |value: Box<dyn ToSql>| {
            args.push(value);
            format!("?{}", args.len())
        };
        let mut any: Vec<String> = Vec::new();
        if indexed {
            if let (Some(fts), false) = (&self.fts, tables.text.is_empty()) {
                let p = push(Box::new(fts.clone()));
                // Uncorrelated: SQLite runs the MATCH once and looks each row up in its
                // result, instead of one MATCH per row (minutes for a word in every body).
                let shards: Vec<String> = tables
                    .text
                    .iter()
                    .map(|shard| {
                        let table = &shard.table;
                        format!("SELECT rowid FROM {table} WHERE {table} MATCH {p}")
                    })
                    .collect();
                any.push(format!("{alias}.id IN ({})", shards.join(" UNION ALL ")));
            }
            if let Some(ids) = &self.ids_fts {
                let p = push(Box::new(ids.clone()));
                let indexed = format!(
                    "{alias}.id IN (SELECT rowid FROM search_ids WHERE search_ids MATCH {p})"
                );
                match self.ids_check() {
                    Some(needle) => {
                        let check = ids_contain_sql(alias, &push(Box::new(needle.to_string())));
                        any.push(format!("({indexed} AND {check})"));
                    }
                    None => any.push(indexed),
                }
            }
        }
        if let Some(id) = self.capture_id {
            let p = push(Box::new(id));
            any.push(format!("{alias}.id = {p}"));
        }
        if let Some(tail) = self.tail_condition(alias, tables, args) {
            any.push(tail);
        }
        if any.is_empty() {
            return "0".into();
        }
        format!("({})", any.join(" OR "))
    }

    /// The string a hit of the index of ids must still hold ([`IDS_CONTAIN`]): all of it when
    /// it is longer than one trigram (a capture may hold its trigrams apart), `None` when it is
    /// one trigram, which the index answers exactly.
    fn ids_check(&self) -> Option<&str> {
        self.id_substring
            .as_deref()
            .filter(|sub| sub.chars().count() > MIN_ID_SUBSTRING)
    }

    /// The substring scan of the captures above the indexed id (every capture when the store
    /// has no index), `None` when the string gives it nothing to look for.
    fn tail_condition(
        &self,
        alias: &str,
        tables: &SearchTables,
        args: &mut Vec<Box<dyn ToSql>>,
    ) -> Option<String> {
        let mut push = |value: Box<dyn ToSql>| {
            args.push(value);
            format!("?{}", args.len())
        };
        let mut tail: Vec<String> = Vec::new();
        if let Some(words) = &self.words {
            let p = push(Box::new(words.clone()));
            tail.push(format!("{WORDS_MATCH}({alias}.body, {alias}.headers, {p})"));
        }
        if let Some(sub) = &self.id_substring {
            tail.push(ids_contain_sql(alias, &push(Box::new(sub.clone()))));
        }
        if tail.is_empty() {
            return None;
        }
        let start = match (tables.indexed, tables.tail_scan_above) {
            (true, Some(above)) => format!("{alias}.id > {above} AND "),
            (true, None) => format!("{alias}.id > {WATERMARK_SQL} AND "),
            (false, _) => String::new(),
        };
        Some(format!("({start}({}))", tail.join(" OR ")))
    }

    /// The streams that list the captures matching this search and a filter, as chains for
    /// [`merge_newest_first`]: each stream a query with its own arguments giving
    /// `id, notification_id, verdict` newest first without a sort. One chain is the unindexed
    /// tail by the table's order, then the full-text hits shard by shard, newest shard first,
    /// each in its rowid order (every shard's ids are below the tail's and the shard before);
    /// the id hits are a chain of their own (the trigram index is one table), and so is the
    /// capture id itself. So a page of a search that matches every capture reads one page of
    /// hits from the newest shard.
    ///
    /// `filter` writes the filter's condition on `captures` named `c`, appending its arguments.
    /// Why not one `UNION ... ORDER BY` in SQL: SQLite then sorts each arm in a temporary
    /// B-tree before merging (the virtual table's order is not used there), which read all
    /// million hits of a common word (about 0.9 s at 1,000,000 captures, `benches/query.rs`).
    pub fn chains(
        &self,
        tables: &SearchTables,
        filter: &dyn Fn(&mut SqlArgs) -> String,
    ) -> Vec<Vec<Stream>> {
        let stream = |make: &dyn Fn(&str, &mut SqlArgs) -> Option<String>| {
            let mut args = Vec::new();
            let condition = filter(&mut args);
            make(&condition, &mut args).map(|sql| (sql, args))
        };
        let matches = |table: &str, query: &str| {
            stream(&|condition, args| {
                args.push(Box::new(query.to_string()));
                Some(format!(
                    "SELECT {table}.rowid AS id, c.notification_id, c.verdict \
                     FROM {table} CROSS JOIN captures c INDEXED BY captures_list \
                     ON c.id = {table}.rowid \
                     WHERE {table} MATCH ?{} AND {condition} ORDER BY {table}.rowid DESC",
                    args.len()
                ))
            })
        };
        let indexed = tables.indexed;
        // Above the watermark (every capture when the store has no index): the tail's scan.
        let mut words: Vec<Stream> = stream(&|condition, args| {
            let tail = self.tail_condition("c", tables, args)?;
            Some(format!(
                "SELECT c.id, c.notification_id, c.verdict FROM captures c \
                 WHERE {tail} AND {condition} ORDER BY c.id DESC"
            ))
        })
        .into_iter()
        .collect();
        let mut chains = Vec::new();
        if indexed {
            if let Some(query) = &self.fts {
                for shard in &tables.text {
                    words.extend(matches(&shard.table, query));
                }
            }
            if let Some(query) = &self.ids_fts {
                let ids = match self.ids_check() {
                    // The check reads the capture's ids, so the row itself, not the covering
                    // index the other streams read.
                    Some(needle) => stream(&|condition, args| {
                        args.push(Box::new(query.clone()));
                        let q = args.len();
                        args.push(Box::new(needle.to_string()));
                        let check = ids_contain_sql("c", &format!("?{}", args.len()));
                        Some(format!(
                            "SELECT search_ids.rowid AS id, c.notification_id, c.verdict \
                             FROM search_ids CROSS JOIN captures c ON c.id = search_ids.rowid \
                             WHERE search_ids MATCH ?{q} AND {check} AND {condition} \
                             ORDER BY search_ids.rowid DESC"
                        ))
                    }),
                    None => matches("search_ids", query),
                };
                chains.extend(ids.map(|ids| vec![ids]));
            }
        }
        chains.push(words);
        if let Some(id) = self.capture_id {
            chains.extend(
                stream(&|condition, args| {
                    args.push(Box::new(id));
                    Some(format!(
                        "SELECT c.id, c.notification_id, c.verdict FROM captures c \
                         WHERE c.id = ?{} AND {condition}",
                        args.len()
                    ))
                })
                .map(|by_id| vec![by_id]),
            );
        }
        chains.retain(|chain| !chain.is_empty());
        chains
    }
}

/// The arguments of a statement, numbered `?1`, `?2`... in order.
pub(crate) type SqlArgs = Vec<Box<dyn ToSql>>;
/// A statement listing captures newest first, with its arguments.
pub(crate) type Stream = (String, SqlArgs);

/// A hit of a search stream: a capture's id, its notification and its verdict.
pub(crate) type Hit = (i64, Option<i64>, String);

/// Walks `chains` as one list, newest first, each capture once, calling `visit` until it
/// returns `false`. A chain is statements each listing captures newest first, every hit of one
/// newer than every hit of the next ([`SearchText::chains`]); a statement runs only once the
/// walk reaches it, so the older shards of the words' index are not searched while the newer
/// ones fill the page.
pub(crate) fn merge_newest_first(
    conn: &Connection,
    chains: &[Vec<Stream>],
    visit: &mut dyn FnMut(&Hit) -> bool,
) -> Result<()> {
    let mut statements = chains
        .iter()
        .map(|chain| {
            chain
                .iter()
                .map(|(sql, args)| Ok((conn.prepare(sql)?, args)))
                .collect::<rusqlite::Result<Vec<_>>>()
        })
        .collect::<rusqlite::Result<Vec<_>>>()?;
    let mut cursors: Vec<ChainCursor<'_, '_>> = statements
        .iter_mut()
        .map(|chain| ChainCursor {
            rest: chain.iter_mut(),
            rows: None,
        })
        .collect();
    let mut heads: Vec<Option<Hit>> = Vec::with_capacity(cursors.len());
    for cursor in &mut cursors {
        heads.push(cursor.next_hit()?);
    }
    loop {
        let newest = heads
            .iter()
            .filter_map(|head| head.as_ref().map(|hit| hit.0))
            .max();
        let Some(newest) = newest else {
            return Ok(());
        };
        let mut taken = None;
        for (head, cursor) in heads.iter_mut().zip(cursors.iter_mut()) {
            if head.as_ref().is_some_and(|hit| hit.0 == newest) {
                taken = head.take();
                *head = cursor.next_hit()?;
            }
        }
        if let Some(hit) = taken {
            if !visit(&hit) {
                return Ok(());
            }
        }
    }
}

/// Where the walk of one chain is: the statement running, and those after it.
struct ChainCursor<'s, 'c> {
    rest: std::slice::IterMut<'s, (rusqlite::Statement<'c>, &'s SqlArgs)>,
    rows: Option<rusqlite::Rows<'s>>,
}

impl ChainCursor<'_, '_> {
    fn next_hit(&mut self) -> Result<Option<Hit>> {
        loop {
            if let Some(rows) = &mut self.rows {
                if let Some(row) = rows.next()? {
                    return Ok(Some((row.get(0)?, row.get(1)?, row.get(2)?)));
                }
            }
            let Some((statement, args)) = self.rest.next() else {
                return Ok(None);
            };
            self.rows = Some(statement.query(rusqlite::params_from_iter(args.iter()))?);
        }
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

/// The lower-cased runs of letters and digits of `text`: about the tokens `unicode61` makes
/// (it also folds diacritics, which the tail's substring scan does not).
fn tokens(text: &str) -> Vec<String> {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|token| !token.is_empty())
        .map(str::to_lowercase)
        .collect()
}

/// The SQL function the scan of the unindexed tail uses: `partner_words_match(body, headers
/// JSON, search)` is 1 when every word of `search` is in the body or in a header value, as
/// the index would answer (see the notes of [`crate::search`]).
pub(crate) const WORDS_MATCH: &str = "partner_words_match";

/// The SQL function that checks a capture's ids for an id substring: `partner_ids_contain(
/// needle, event_id, resource_id, instance_id, subscription_id, resource_ref)` is 1 when one of
/// them holds `needle` (lower-cased) whatever its case ([`ids_contain`]). The scan of the tail
/// and the check of the index's hits use it alike.
pub(crate) const IDS_CONTAIN: &str = "partner_ids_contain";

/// The condition that one of the ids of the capture `alias` holds the argument `needle` (its
/// placeholder, e.g. `?3`).
fn ids_contain_sql(alias: &str, needle: &str) -> String {
    format!(
        "{IDS_CONTAIN}({needle}, {alias}.event_id, {alias}.resource_id, {alias}.instance_id, \
         {alias}.subscription_id, {alias}.resource_ref)"
    )
}

/// The FTS5 query over the trigram index of ids for `text` (3 characters or more): each of its
/// trigrams once, quoted (so no input is FTS syntax), joined by `AND`. Not their phrase: the
/// index keeps no positions, so FTS5 refuses one. All of them, not only those that cover the
/// string: a capture may hold every trigram of a string and not the string (every capture's
/// resourceRef holds those of `v2/partner/`, none holds it), and each such candidate costs a
/// read of its row to check ([`SearchText::ids_check`]); the trigrams that span the joins
/// (`2/p`) rule nearly all of them out in the index.
fn id_trigrams(text: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    let mut trigrams: Vec<String> = Vec::new();
    for window in chars.windows(MIN_ID_SUBSTRING) {
        let trigram: String = window.iter().collect();
        let quoted = format!("\"{}\"", trigram.replace('"', "\"\""));
        if !trigrams.contains(&quoted) {
            trigrams.push(quoted);
        }
    }
    trigrams.join(" AND ")
}

/// Whether one of `ids` holds `needle`, which is lower-case, whatever the id's case. Without an
/// allocation for ASCII ids (nearly all of them): the check runs on every hit of a long id
/// substring and on every row of the tail's scan.
pub(crate) fn ids_contain(needle: &str, ids: &[Option<&str>]) -> bool {
    ids.iter().flatten().any(|id| {
        if id.is_ascii() && needle.is_ascii() {
            id.as_bytes()
                .windows(needle.len().max(1))
                .any(|window| window.eq_ignore_ascii_case(needle.as_bytes()))
        } else {
            id.to_lowercase().contains(needle)
        }
    })
}

/// Registers [`WORDS_MATCH`] and [`IDS_CONTAIN`] on a connection.
pub(crate) fn register_functions(conn: &Connection) -> rusqlite::Result<()> {
    use rusqlite::functions::FunctionFlags;
    conn.create_scalar_function(
        IDS_CONTAIN,
        6,
        FunctionFlags::SQLITE_UTF8 | FunctionFlags::SQLITE_DETERMINISTIC,
        |ctx| {
            let needle = ctx.get_raw(0).as_str().unwrap_or_default();
            let mut ids = [None; 5];
            for (at, id) in ids.iter_mut().enumerate() {
                *id = ctx.get_raw(at + 1).as_str().ok();
            }
            Ok(!needle.is_empty() && ids_contain(needle, &ids))
        },
    )?;
    conn.create_scalar_function(
        WORDS_MATCH,
        3,
        FunctionFlags::SQLITE_UTF8 | FunctionFlags::SQLITE_DETERMINISTIC,
        |ctx| {
            let body: Option<Vec<u8>> = ctx.get(0)?;
            let headers: String = ctx.get::<Option<String>>(1)?.unwrap_or_default();
            let search: String = ctx.get::<Option<String>>(2)?.unwrap_or_default();
            let body = body.map(|b| String::from_utf8_lossy(&b).into_owned());
            Ok(words_match(
                &[body.unwrap_or_default(), header_values(&headers)],
                &search,
            ))
        },
    )
}

/// Whether every word of `search` is in one of `fields`: a term's tokens consecutive, the last
/// term's last token as a prefix unless quoted.
pub(crate) fn words_match(fields: &[String], search: &str) -> bool {
    let terms: Vec<Term> = terms(search)
        .into_iter()
        .filter(|t| has_token(&t.text))
        .collect();
    if terms.is_empty() {
        return false;
    }
    let fields: Vec<Vec<String>> = fields.iter().map(|f| tokens(f)).collect();
    terms.iter().enumerate().all(|(index, term)| {
        let wanted = tokens(&term.text);
        let prefix = index + 1 == terms.len() && !term.phrase;
        fields.iter().any(|field| {
            field.windows(wanted.len()).any(|window| {
                window
                    .iter()
                    .zip(&wanted)
                    .enumerate()
                    .all(|(at, (have, want))| {
                        if prefix && at + 1 == wanted.len() {
                            have.starts_with(want.as_str())
                        } else {
                            have == want
                        }
                    })
            })
        })
    })
}

/// Whether `unicode61` makes at least one token of `text` (a term of only punctuation makes
/// none, and an empty FTS5 phrase would match nothing).
fn has_token(text: &str) -> bool {
    text.chars().any(char::is_alphanumeric)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_are_quoted_and_the_last_is_a_prefix() {
        let s = SearchText::parse("  Order created ").unwrap();
        assert_eq!(s.fts.as_deref(), Some("\"Order\" AND \"created\" *"));
        assert_eq!(s.words.as_deref(), Some("Order created"));
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
    fn the_tail_matches_words_as_the_index_does() {
        let fields = [
            "Approved loan (refinance) for Branch-Office 7".to_string(),
            String::new(),
        ];
        assert!(words_match(&fields, "approved LOAN"));
        assert!(words_match(&fields, "loan refin"));
        assert!(
            !words_match(&fields, "refin loan"),
            "only the last word is a prefix"
        );
        assert!(words_match(&fields, "\"branch office\""));
        assert!(!words_match(&fields, "\"office branch\""));
        assert!(!words_match(&fields, "\"appro\""));
        assert!(words_match(&fields, "(loan) -refinance"));
        assert!(!words_match(&fields, "pro"), "words, not substrings");
        assert!(!words_match(&fields, "*** --"));
    }

    #[test]
    fn an_id_substring_is_searched_by_each_of_its_trigrams() {
        assert_eq!(id_trigrams("abc"), "\"abc\"");
        assert_eq!(id_trigrams("abcd"), "\"abc\" AND \"bcd\"");
        assert_eq!(
            id_trigrams("abcdef"),
            "\"abc\" AND \"bcd\" AND \"cde\" AND \"def\""
        );
        // A quote is doubled inside its quotes; a trigram twice is asked for once.
        assert_eq!(id_trigrams("a\"bc"), "\"a\"\"b\" AND \"\"\"bc\"");
        assert_eq!(id_trigrams("aaaaaa"), "\"aaa\"");
        // Characters, not bytes.
        assert_eq!(id_trigrams("zoëé"), "\"zoë\" AND \"oëé\"");
        let s = SearchText::parse("EV-12").unwrap();
        assert_eq!(s.id_substring.as_deref(), Some("ev-12"));
        assert_eq!(
            s.ids_check(),
            Some("ev-12"),
            "longer than a trigram: checked"
        );
        assert_eq!(SearchText::parse("ev1").unwrap().ids_check(), None);
    }

    #[test]
    fn ids_contain_the_needle_whatever_their_case() {
        let ids = [Some("Ev-42-ABC"), None, Some("Zoë-Straße")];
        assert!(ids_contain("42-abc", &ids));
        assert!(ids_contain("ev-4", &ids));
        assert!(ids_contain("zoë-str", &ids));
        assert!(!ids_contain("abc-z", &ids), "not across two ids");
        assert!(!ids_contain("ev-43", &ids));
        assert!(!ids_contain("x", &[None, None]));
    }

    #[test]
    fn numbers_are_capture_ids_too() {
        let s = SearchText::parse("42").unwrap();
        assert_eq!(s.capture_id, Some(42));
        assert_eq!(s.ids_fts, None, "two characters are too short for trigrams");
    }
}
