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
//! last moments' few) with a scan of their bodies and headers, so a search is complete. While
//! a whole store is being indexed (a store of an older version, after its migration) the scan
//! covers the newest [`TAIL_SCAN_LIMIT`] of them only, and the answer says how many older ones
//! it left out ("still indexing"), so a search never takes seconds. An import indexes what it
//! brings in its own transactions (`store::Writer::import`), so it leaves no such tail. The
//! scan matches words as
//! the index does (the SQL function [`WORDS_MATCH`], registered on every connection that reads:
//! the same terms, phrases and last-word prefix over the same letter-and-digit tokens), except
//! that the index also folds diacritics (`zoe` finds `Zoë` only once indexed).
//!
//! The same thread, in the same transactions and under the same watermark, keeps the counts of
//! the captures per verdict, event type, resource type and subscription that the inspector's
//! filter counts read ([`crate::facet_counts`]).
//!
//! Both indexes are contentless FTS5 tables (`content=''`, so bodies are not stored twice) with
//! `contentless_delete=1`, so a clear or prune deletes its captures' entries in its own
//! transaction (done in the writer, see `store::Writer::clear`). Results are always joined to
//! `captures`, so a capture deleted is never found even if its entry were left.
//!
//! **The words' index is cut by id into shards** of [`TEXT_SHARD_SIZE`] captures, a table
//! each (`search_text_<n>` holds ids `n * size ..`), and a search walks them newest first.
//! Why: the last word is a prefix, and FTS5 answers a prefix query by merging the hits of every
//! word with that prefix into one list before it returns the first, however few rows are
//! asked for (measured at 1,000,000 captures: `partner*` 22 ms, `loan*` 35 ms for a page of 51
//! hits, against 0.1 ms for the exact word; a rowid range does not shorten it). So one table
//! costs a prefix search in proportion to the whole store, while a shard costs it in
//! proportion to 65,536 captures, and a page of a common word is filled from the newest shard
//! alone. A store of version 5 had one table, `search_text`: it is read as one shard until a
//! writer of this version opens the store and has the indexer build the shards.

use crate::capture::Header;
pub(crate) use crate::watermark::{indexed_through, WATERMARK_SQL};
use crate::Result;
use rusqlite::{params, Connection, OptionalExtension, ToSql};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// The search tables: `search_ids` indexes the ids, one column each so a substring never spans
/// two of them; the shards of the words' index (the body and the header values) are made as
/// the indexer reaches their ids ([`text_shard_sql`]).
pub(crate) const SEARCH_SCHEMA: &str = "
CREATE VIRTUAL TABLE IF NOT EXISTS search_ids USING fts5(
    event_id, resource_id, instance_id, subscription_id, resource_ref,
    content='', contentless_delete=1, tokenize='trigram'
);
CREATE TABLE IF NOT EXISTS search_state (
    one INTEGER PRIMARY KEY CHECK (one = 1),
    indexed_through INTEGER NOT NULL
);
INSERT OR IGNORE INTO search_state (one, indexed_through) VALUES (1, 0);
INSERT INTO search_ids (search_ids, rank) VALUES ('hashsize', 16777216); -- FTS_HASH_SIZE
";

/// Bytes of terms FTS5 gathers in memory before it writes them to the index as a segment
/// (its `hashsize` option, 1 MiB unless set): at 1 MiB an import's batch of 2,000 captures of
/// ~2 KiB was written as several segments, each to be merged with the others again. FTS5 writes
/// what it holds at every commit whatever the size, so this bounds the memory of one
/// transaction's indexing only.
const FTS_HASH_SIZE: i64 = 16 << 20;

/// Captures per shard of the words' index (see the module notes).
pub(crate) const TEXT_SHARD_SIZE: i64 = 1 << 16;
/// The words' index of schema version 5, one table for every id.
const LEGACY_TEXT_TABLE: &str = "search_text";

/// The table of shard `n` of the words' index.
fn text_shard_table(n: i64) -> String {
    format!("{LEGACY_TEXT_TABLE}_{n}")
}

/// The shard capture `id` is indexed in.
fn text_shard_of(id: i64) -> i64 {
    id.max(0) / TEXT_SHARD_SIZE
}

/// Makes shard `n` of the words' index if it is not there.
fn text_shard_sql(n: i64) -> String {
    let table = text_shard_table(n);
    format!(
        "CREATE VIRTUAL TABLE IF NOT EXISTS {table} USING fts5(body, header_values, content='', \
         contentless_delete=1, tokenize='unicode61 remove_diacritics 2'); \
         INSERT INTO {table} ({table}, rank) VALUES ('hashsize', {FTS_HASH_SIZE});"
    )
}

/// One table of the words' index and the ids it can hold.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct TextShard {
    pub table: String,
    pub lowest: i64,
    pub highest: i64,
}

/// What of the search index a statement reads, as one snapshot of the store has it.
#[derive(Debug, Clone, Default)]
pub(crate) struct SearchTables {
    /// The store has the search tables (a store of an older version, read beside its older
    /// listener, has none: everything is the tail then).
    pub indexed: bool,
    /// The words' index, newest shard first.
    pub text: Vec<TextShard>,
    /// Where the scan of the tail starts, for a read that bounds it ([`SearchTables::bounded`]):
    /// the captures above this id and the watermark are scanned, those between the watermark
    /// and it are not (`unsearched`). `None`: every capture above the watermark is scanned (a
    /// delete by filter, which must find them all).
    pub tail_scan_above: Option<i64>,
    /// Captures above the watermark the tail's scan leaves out: not searched yet.
    pub unsearched: u64,
}

/// Most captures not indexed yet that a search scans: the newest of them. Above it (after an
/// import of a store of an older version, or a migration, while the indexer catches up) a
/// search answers from the index and the newest of the tail, and says how many it left out,
/// rather than scan them all (4.8 s for a million not indexed, `benches/query.rs`). The scan
/// reads about 5 µs a capture, so this is about 120 ms; it is above the indexer's
/// [`DEFER_LIMIT`], so under a load the indexer keeps up with (it indexes beside a busy writer
/// at about a thousand captures a second, FTS5's pace here being a few thousand at most) a
/// search still covers every capture; under a flood beyond that it answers from the index and
/// the newest 25,000, says how many it left out, and covers them again once the flood ends.
pub(crate) const TAIL_SCAN_LIMIT: i64 = 25_000;

impl SearchTables {
    /// The tables as `conn`'s snapshot has them (read in the transaction of the statements
    /// that use them: a shard the indexer makes meanwhile is then in neither the list nor
    /// below the watermark).
    pub fn read(conn: &Connection, indexed: bool) -> Result<Self> {
        if !indexed {
            return Ok(Self::default());
        }
        let mut text = Vec::new();
        let mut names = conn.prepare_cached(
            "SELECT name FROM sqlite_schema WHERE type = 'table' AND name GLOB 'search_text*' \
             AND sql LIKE 'CREATE VIRTUAL TABLE%'",
        )?;
        let names = names
            .query_map([], |row| row.get::<_, String>(0))?
            .collect::<rusqlite::Result<Vec<_>>>()?;
        for table in names {
            if table == LEGACY_TEXT_TABLE {
                text.push(TextShard {
                    table,
                    lowest: 0,
                    highest: i64::MAX,
                });
            } else if let Some(n) = table
                .strip_prefix(LEGACY_TEXT_TABLE)
                .and_then(|rest| rest.strip_prefix('_'))
                .and_then(|n| n.parse::<i64>().ok())
            {
                text.push(TextShard {
                    table,
                    lowest: n * TEXT_SHARD_SIZE,
                    highest: (n + 1) * TEXT_SHARD_SIZE - 1,
                });
            }
        }
        text.sort_by_key(|shard| std::cmp::Reverse(shard.lowest));
        Ok(Self {
            indexed,
            text,
            ..Self::default()
        })
    }

    /// [`SearchTables::read`] for a search a person waits on: the tail's scan covers at most
    /// the newest `scan_limit` captures above the watermark ([`TAIL_SCAN_LIMIT`]), and the
    /// tables say how many it leaves out. `list_index`: the store has `captures_list` (ids in a
    /// narrow index, so the walk past the newest does not read their rows); an older store
    /// read beside its older listener may not.
    pub fn bounded(conn: &Connection, scan_limit: i64, list_index: bool) -> Result<Self> {
        let mut tables = Self::read(conn, true)?;
        let watermark = indexed_through(conn)?;
        // Ids are unique: a tail no longer in ids than the limit holds no more captures.
        let newest: i64 = conn
            .prepare_cached("SELECT COALESCE(MAX(id), 0) FROM captures")?
            .query_row([], |row| row.get(0))?;
        if newest - watermark <= scan_limit {
            return Ok(tables);
        }
        let index = if list_index {
            "INDEXED BY captures_list"
        } else {
            ""
        };
        let cut: Option<i64> = conn
            .prepare_cached(&format!(
                "SELECT id FROM captures {index} WHERE id > ?1 ORDER BY id DESC LIMIT 1 OFFSET ?2"
            ))?
            .query_row(params![watermark, scan_limit], |row| row.get(0))
            .optional()?;
        if let Some(cut) = cut {
            let unsearched: i64 = conn
                .prepare_cached(&format!(
                    "SELECT COUNT(*) FROM captures {index} WHERE id > ?1 AND id <= ?2"
                ))?
                .query_row(params![watermark, cut], |row| row.get(0))?;
            tables.tail_scan_above = Some(cut);
            tables.unsearched = unsearched.max(0) as u64;
        }
        Ok(tables)
    }

    /// The tables for a filter without a search: none are read.
    pub fn unread(indexed: bool) -> Self {
        Self {
            indexed,
            ..Self::default()
        }
    }
}

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
    /// The string as typed (trimmed), for the scan of the unindexed tail, which reads it
    /// with [`words_match`].
    pub words: Option<String>,
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
            words: (!words.is_empty()).then(|| trimmed.to_string()),
            ids_fts: long_enough.then(|| format!("\"{}\"", trimmed.replace('"', "\"\""))),
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
                any.push(format!(
                    "{alias}.id IN (SELECT rowid FROM search_ids WHERE search_ids MATCH {p})"
                ));
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
                chains.extend(matches("search_ids", query).map(|ids| vec![ids]));
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
/// the index would answer (see the module notes).
pub(crate) const WORDS_MATCH: &str = "partner_words_match";

/// Registers [`WORDS_MATCH`] on a connection.
pub(crate) fn register_functions(conn: &Connection) -> rusqlite::Result<()> {
    use rusqlite::functions::FunctionFlags;
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
/// tables and counts them in `facet_counts`. The selection must not hold a capture indexed
/// before (the counts are kept under the same watermark, see [`crate::facet_counts`]; every
/// delete of a capture takes its entries out). A plain `INSERT`, not `INSERT OR REPLACE`: on a
/// contentless-delete table a replace first runs FTS5's delete of the rowid, which was 32% of
/// an import's CPU in a profile (perf over `benches/query.rs`) for entries that never exist.
/// Stops after the capture at hand when `give_way` says so (the indexer's, when a writer waits
/// for its turn; the selection is then in id order, so what was indexed is the lowest ids).
/// Returns how many and the highest id.
pub(crate) fn index_rows(
    conn: &Connection,
    selection: &str,
    args: &[&dyn ToSql],
    give_way: &dyn Fn() -> bool,
) -> Result<(u64, Option<i64>)> {
    let mut select = conn.prepare_cached(&format!(
        "SELECT id, body, headers, event_id, resource_id, instance_id, subscription_id, \
         resource_ref, verdict, event_type, resource_type FROM captures WHERE {selection}"
    ))?;
    let mut shards_made = std::collections::HashSet::new();
    let mut ids = conn.prepare_cached(
        "INSERT INTO search_ids (rowid, event_id, resource_id, instance_id, \
         subscription_id, resource_ref) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
    )?;
    let mut rows = select.query(args)?;
    let mut highest = None;
    let mut count = 0;
    let mut tally = crate::facet_counts::Tally::default();
    while let Some(row) = rows.next()? {
        let id: i64 = row.get(0)?;
        let body: Option<Vec<u8>> = row.get(1)?;
        let body = body.map(|b| String::from_utf8_lossy(&b).into_owned());
        let headers: String = row.get(2)?;
        let shard = text_shard_of(id);
        if shards_made.insert(shard) {
            conn.execute_batch(&text_shard_sql(shard))?;
        }
        conn.prepare_cached(&format!(
            "INSERT INTO {} (rowid, body, header_values) VALUES (?1, ?2, ?3)",
            text_shard_table(shard)
        ))?
        .execute(params![id, body, header_values(&headers)])?;
        ids.execute(params![
            id,
            row.get::<_, Option<String>>(3)?,
            row.get::<_, Option<String>>(4)?,
            row.get::<_, Option<String>>(5)?,
            row.get::<_, Option<String>>(6)?,
            row.get::<_, Option<String>>(7)?,
        ])?;
        tally.add_columns(row.get(8)?, row.get(9)?, row.get(10)?, row.get(6)?, 1);
        highest = Some(highest.map_or(id, |h: i64| h.max(id)));
        count += 1;
        if give_way() {
            break;
        }
    }
    drop(rows);
    tally.write(conn)?;
    Ok((count, highest))
}

/// Removes the entries of the captures `where_captures` selects, and takes them off the counts
/// kept with the index (run before deleting them, in the same transaction).
///
/// Entry by entry, by rowid, through statements prepared once: it was one `DELETE ... WHERE
/// rowid IN (SELECT id FROM captures WHERE ...)` per table, prepared afresh at each prune
/// (every 256 captures under a count limit), and under a flood the prunes' search deletes were
/// 44% of their time and grew with the store; this way the tables thread spends 10–16% less
/// and the tail stays put (p99 54 ms against 134 at 600,000 kept; BENCHMARKS.md, listener,
/// first section). Both plans look each rowid up (`EXPLAIN QUERY PLAN`); which part of the old
/// statement cost is not pinned down. Only the captures at or below the watermark have entries
/// (the indexer and an import move it past what they index), so only theirs are deleted.
pub(crate) fn unindex(conn: &Connection, where_captures: &str, args: &[&dyn ToSql]) -> Result<()> {
    crate::facet_counts::uncount(conn, where_captures, args)?;
    let doomed: Vec<i64> = conn
        .prepare(&format!("SELECT id FROM captures WHERE {where_captures}"))?
        .query_map(args, |row| row.get(0))?
        .collect::<rusqlite::Result<_>>()?;
    unindex_ids(conn, &doomed)
}

/// Removes the entries of these captures: those at or below the watermark, the only ones
/// that have any (the one place that rule is applied to deletes).
pub(crate) fn unindex_ids(conn: &Connection, ids: &[i64]) -> Result<()> {
    let tables = SearchTables::read(conn, true)?;
    let through = indexed_through(conn)?;
    for id in ids.iter().filter(|&&id| id <= through) {
        let shard = tables
            .text
            .iter()
            .find(|shard| (shard.lowest..=shard.highest).contains(id));
        for table in shard
            .map(|s| s.table.as_str())
            .into_iter()
            .chain(["search_ids"])
        {
            conn.prepare_cached(&format!("DELETE FROM {table} WHERE rowid = ?1"))?
                .execute([id])?;
        }
    }
    Ok(())
}

/// Empties both indexes and the counts kept with them (a clear of everything): the words'
/// shards are dropped.
pub(crate) fn unindex_all(conn: &Connection) -> Result<()> {
    crate::facet_counts::uncount_all(conn)?;
    for shard in SearchTables::read(conn, true)?.text {
        conn.execute_batch(&format!("DROP TABLE {}", shard.table))?;
    }
    conn.execute(
        "INSERT INTO search_ids (search_ids) VALUES ('delete-all')",
        [],
    )?;
    Ok(())
}

/// Drops the shards of the words' index that hold no capture at or above `oldest_kept` (after
/// a prune deleted the captures below it): dropping a table is quicker than deleting its
/// entries one by one.
pub(crate) fn drop_shards_below(conn: &Connection, oldest_kept: i64) -> Result<()> {
    for shard in SearchTables::read(conn, true)?.text {
        if shard.highest < oldest_kept {
            conn.execute_batch(&format!("DROP TABLE {}", shard.table))?;
        }
    }
    Ok(())
}

/// Makes a store's words' index of version 5 (one table) into shards: the table is dropped and
/// every capture indexed again by the indexer thread, in the background (a search scans what
/// is not indexed yet meanwhile: slower, not less complete). The counts kept under the same
/// watermark start again with it. Run by the writer at open, in one transaction with nothing
/// else (see its caller); says whether it had to.
pub(crate) fn shard_legacy_index(conn: &Connection) -> Result<bool> {
    let legacy: bool = conn.query_row(
        "SELECT EXISTS(SELECT 1 FROM sqlite_schema WHERE name = ?1)",
        [LEGACY_TEXT_TABLE],
        |row| row.get(0),
    )?;
    if !legacy {
        return Ok(false);
    }
    conn.execute_batch(&format!("DROP TABLE {LEGACY_TEXT_TABLE}"))?;
    conn.execute(
        "INSERT INTO search_ids (search_ids) VALUES ('delete-all')",
        [],
    )?;
    crate::facet_counts::uncount_all(conn)?;
    conn.execute(
        "UPDATE search_state SET indexed_through = 0 WHERE one = 1",
        [],
    )?;
    Ok(true)
}

/// One round of the indexer: indexes up to `batch` captures above the indexed id in one
/// transaction, fewer when `give_way` asks it to stop (see [`index_rows`]); returns how many.
pub(crate) fn index_next_batch(
    conn: &mut Connection,
    batch: i64,
    give_way: &dyn Fn() -> bool,
) -> Result<u64> {
    let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
    let from = indexed_through(&tx)?;
    let (count, highest) = index_rows(
        &tx,
        "id > ?1 ORDER BY id LIMIT ?2",
        &[&from, &batch],
        give_way,
    )?;
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

/// Most captures above the indexed id an import indexes in its own transaction besides its
/// batch (live captures the indexer has not reached yet): more means the indexer is far
/// behind (a store of an older version being indexed), and it catches up on its own.
const IMPORT_INDEXES_TAIL_UP_TO: i64 = 5_000;

/// Whether the captures above the indexed id `from` are few enough for an import to index
/// them with its batch ([`IMPORT_INDEXES_TAIL_UP_TO`]); asked before the batch is inserted.
pub(crate) fn tail_is_short(tx: &Connection, from: i64) -> Result<bool> {
    let tail: i64 = tx
        .prepare_cached("SELECT COUNT(*) FROM (SELECT 1 FROM captures WHERE id > ?1 LIMIT ?2)")?
        .query_row(params![from, IMPORT_INDEXES_TAIL_UP_TO + 1], |row| {
            row.get(0)
        })?;
    Ok(tail <= IMPORT_INDEXES_TAIL_UP_TO)
}

/// Indexes every capture above the indexed id `from` in the writer's transaction `tx` and
/// moves the mark past them (an import's, after its batch; see `store::Writer::import`).
pub(crate) fn index_tail_in(tx: &Connection, from: i64) -> Result<u64> {
    let (count, highest) = index_rows(tx, "id > ?1", &[&from], &|| false)?;
    if let Some(highest) = highest {
        tx.execute(
            "UPDATE search_state SET indexed_through = ?1 WHERE one = 1",
            [highest],
        )?;
    }
    Ok(count)
}

/// When the writer last committed captures and last imported, as the indexer reads them to
/// keep out of its way (milliseconds since the store opened; 0: never).
#[derive(Debug)]
pub(crate) struct WriterActivity {
    opened: Instant,
    last_write_ms: AtomicU64,
    last_import_ms: AtomicU64,
    /// Held by whoever writes the store (the tables thread around each commit, the writer around
    /// each job, the indexer around each batch), so they take turns here rather than in
    /// SQLite: a writer that finds SQLite's write lock taken sleeps in its busy handler (steps
    /// of up to 100 ms) and is not woken when the lock comes free, which held acknowledgements
    /// for hundreds of milliseconds behind index batches of a few. Waiting on this mutex, it
    /// runs the moment the holder's batch commits.
    write_turn: std::sync::Mutex<()>,
    /// Writers waiting for the turn: the indexer lets them go first.
    writers_waiting: AtomicU64,
}

impl WriterActivity {
    pub fn new() -> Self {
        Self {
            opened: Instant::now(),
            last_write_ms: AtomicU64::new(0),
            last_import_ms: AtomicU64::new(0),
            write_turn: std::sync::Mutex::new(()),
            writers_waiting: AtomicU64::new(0),
        }
    }

    /// The turn to write the store (see `write_turn`); a holder that panicked left nothing
    /// half-written behind it (SQLite rolled its transaction back), so a poisoned lock is taken.
    pub fn write_turn(&self) -> std::sync::MutexGuard<'_, ()> {
        self.writers_waiting.fetch_add(1, Ordering::SeqCst);
        let turn = self
            .write_turn
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        self.writers_waiting.fetch_sub(1, Ordering::SeqCst);
        turn
    }

    /// Whether a writer waits for the turn: the indexer, holding it, stops its batch after
    /// the capture at hand. Under load the indexer shares two busy cores with the writer and
    /// the request tasks, so a batch of 25 held the turn for 8 ms at p99 and up to 80 ms (the
    /// acknowledgements' tail, BENCHMARKS.md); one capture's indexing is a fraction of a
    /// millisecond.
    pub fn writer_waits(&self) -> bool {
        self.writers_waiting.load(Ordering::SeqCst) > 0
    }

    /// The indexer's turn, only when no writer waits for one: `None` otherwise.
    fn index_turn(&self) -> Option<std::sync::MutexGuard<'_, ()>> {
        if self.writer_waits() {
            return None;
        }
        let turn = self.write_turn.try_lock().ok()?;
        (!self.writer_waits()).then_some(turn)
    }

    fn now_ms(&self) -> u64 {
        // +1 so that a write in the first millisecond is not "never".
        self.opened.elapsed().as_millis() as u64 + 1
    }

    /// Called by the writer after each commit of captures.
    pub fn wrote(&self) {
        self.last_write_ms.store(self.now_ms(), Ordering::Relaxed);
    }

    /// Called by the writer after each import batch.
    pub fn imported(&self) {
        let now = self.now_ms();
        self.last_write_ms.store(now, Ordering::Relaxed);
        self.last_import_ms.store(now, Ordering::Relaxed);
    }

    fn within(&self, at: &AtomicU64, window: Duration) -> bool {
        let at = at.load(Ordering::Relaxed);
        at != 0 && self.now_ms().saturating_sub(at) < window.as_millis() as u64
    }
}

/// The indexer waits while the writer wrote this recently, so it does not take the write lock
/// while acknowledgements are being committed...
const WRITER_QUIET: Duration = Duration::from_millis(20);
/// ...unless this many captures wait to be indexed: then the tail a search scans would grow
/// without bound under sustained load, so it indexes in small batches beside the writer, one
/// batch each [`WRITER_QUIET`] (about a sixth of a core here: without the pause it took up to
/// half of one from the acknowledgements, whose writer no longer holds the turn while it syncs
/// its journal; BENCHMARKS.md).
const DEFER_LIMIT: i64 = 20_000;
/// How long the indexer waits before asking again when a writer wanted the turn.
const TURN_RETRY: Duration = Duration::from_millis(2);
/// Captures per transaction while the writer is busy: a few milliseconds of holding the lock.
const BUSY_BATCH: i64 = 25;
/// How long after an import batch the indexer keeps waiting: an import is the writer's
/// whole work, and indexing after it is faster than fighting it for the lock batch by batch.
const IMPORT_QUIET: Duration = Duration::from_millis(1000);

/// How many captures above the indexed id, estimated from ids (cheap: two index seeks).
fn backlog_estimate(conn: &Connection) -> Result<i64> {
    Ok(conn
        .prepare_cached(
            "SELECT COALESCE((SELECT MAX(id) FROM captures), 0) - \
             COALESCE((SELECT indexed_through FROM search_state WHERE one = 1), 0)",
        )?
        .query_row([], |row| row.get(0))?)
}

/// The indexer thread: indexes what the writer committed, keeping out of the writer's way
/// (see [`WRITER_QUIET`], [`DEFER_LIMIT`], [`IMPORT_QUIET`]); looks for new captures every
/// [`INDEX_POLL`] when there is nothing to do; stops when `stop` is dropped or sent to.
pub(crate) fn indexer_loop(
    conn: &mut Connection,
    activity: &WriterActivity,
    stop: &mpsc::Receiver<()>,
) {
    let wait = |pause: Duration| {
        matches!(
            stop.recv_timeout(pause),
            Err(mpsc::RecvTimeoutError::Timeout)
        )
    };
    // Not at once: a store just opened has its writer's first jobs (the run's start, the first
    // captures) to do, and an index batch would hold the write lock while they wait.
    if !wait(INDEX_POLL) {
        return;
    }
    loop {
        let batch = if activity.within(&activity.last_import_ms, IMPORT_QUIET) {
            None
        } else if activity.within(&activity.last_write_ms, WRITER_QUIET) {
            match backlog_estimate(conn) {
                Ok(backlog) if backlog >= DEFER_LIMIT => Some(BUSY_BATCH),
                _ => None,
            }
        } else {
            Some(INDEX_BATCH)
        };
        let Some(batch) = batch else {
            if !wait(WRITER_QUIET) {
                return;
            }
            continue;
        };
        let Some(turn) = activity.index_turn() else {
            // The writer is committing or about to: after it.
            if !wait(TURN_RETRY) {
                return;
            }
            continue;
        };
        let indexed = index_next_batch(conn, batch, &|| activity.writer_waits());
        drop(turn);
        match indexed {
            Ok(0) => {
                if !wait(INDEX_POLL) {
                    return;
                }
            }
            // Beside a busy writer: a pause after each small batch, so indexing takes a share
            // of the cores and leaves the rest to the acknowledgements.
            Ok(_) if batch == BUSY_BATCH => {
                if !wait(WRITER_QUIET) {
                    return;
                }
            }
            Ok(_) => {
                if !matches!(stop.try_recv(), Err(mpsc::TryRecvError::Empty)) {
                    return;
                }
            }
            Err(error) => {
                tracing::warn!(%error, "indexing captures for search failed; trying again");
                if !wait(INDEX_POLL * 10) {
                    return;
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
    fn numbers_are_capture_ids_too() {
        let s = SearchText::parse("42").unwrap();
        assert_eq!(s.capture_id, Some(42));
        assert_eq!(s.ids_fts, None, "two characters are too short for trigrams");
    }
}
