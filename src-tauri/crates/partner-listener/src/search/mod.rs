//! Text search over the capture store: what a search string means ([`query`]), the full-text
//! index that answers it, and the thread that keeps that index behind the writer
//! ([`indexer`]). This file holds what both sides share: the index's tables and their shards,
//! what of them a statement reads ([`SearchTables`]) and the text of a capture the index
//! holds; the store reaches the rest through the names it re-exports.
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
//! scan matches words as the index does (the SQL function [`query::WORDS_MATCH`], registered on
//! every connection that reads: the same terms, phrases and last-word prefix over the same
//! letter-and-digit tokens), except that the index also folds diacritics (`zoe` finds `Zoë` only
//! once indexed).
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

mod indexer;
mod query;

/// For the store's tests, which index by hand.
#[cfg(test)]
pub(crate) use indexer::index_next_batch;
pub(crate) use indexer::{
    drop_shards_below, index_rows, index_tail_in, indexer_loop, rebuild_old_index, tail_is_short,
    unindex, unindex_all, unindex_ids, WriterActivity,
};
pub(crate) use query::{merge_newest_first, register_functions, SearchText, Stream};

use crate::capture::Header;
use crate::watermark::indexed_through;
use crate::Result;
use rusqlite::{params, Connection, OptionalExtension};

/// The search tables: `search_ids` indexes the ids, one column each so a substring never spans
/// two of them; the shards of the words' index (the body and the header values) are made as
/// the indexer reaches their ids ([`text_shard_sql`]).
///
/// `search_ids` keeps no positions (`detail=none`, [`IDS_DETAIL`]): the trigrams of five ids
/// (a UUID is 34 of them, a resourceRef about 80) were 70 % of what the index wrote, with
/// positions, so of the pages SQLCipher's cipher runs on when FTS5 writes and merges segments.
/// Without them that index is a fifth of its size (BENCHMARKS.md, listener, first section).
/// What positions gave, that a string's trigrams stand together and in order, the search now
/// checks on the few captures that hold them all ([`query`]).
pub(crate) const SEARCH_SCHEMA: &str = "
CREATE VIRTUAL TABLE IF NOT EXISTS search_ids USING fts5(
    event_id, resource_id, instance_id, subscription_id, resource_ref,
    content='', contentless_delete=1, tokenize='trigram', detail=none
);
CREATE TABLE IF NOT EXISTS search_state (
    one INTEGER PRIMARY KEY CHECK (one = 1),
    indexed_through INTEGER NOT NULL
);
INSERT OR IGNORE INTO search_state (one, indexed_through) VALUES (1, 0);
INSERT INTO search_ids (search_ids, rank) VALUES ('hashsize', 16777216); -- FTS_HASH_SIZE
INSERT INTO search_ids (search_ids, rank) VALUES ('automerge', 8); -- FTS_AUTOMERGE
";

/// Bytes of terms FTS5 gathers in memory before it writes them to the index as a segment
/// (its `hashsize` option, 1 MiB unless set): at 1 MiB an import's batch of 2,000 captures of
/// ~2 KiB was written as several segments, each to be merged with the others again. FTS5 writes
/// what it holds at every commit whatever the size, so this bounds the memory of one
/// transaction's indexing only.
pub(crate) const FTS_HASH_SIZE: i64 = 16 << 20;

/// How many segments of one level FTS5 lets gather before it merges them into one of the next
/// level (its `automerge` option, 4 unless set). Each merge pass rewrites the segments' pages,
/// and on an encrypted store every page rewritten goes through SQLCipher's page cipher: with
/// 8, a flood's index cost the indexer 15–25 % less CPU than with 4. Searches read up to
/// twice the segments of a level: on the index a flood left, a frequent word's first page took
/// 6 ms against 1.2, the other searches as long or less (BENCHMARKS.md, listener, first
/// section).
pub(crate) const FTS_AUTOMERGE: i64 = 8;

/// How `search_ids` is declared since schema version 7, found in its SQL: a store whose index
/// of ids has positions has it rebuilt when a writer opens it ([`rebuild_old_index`]).
pub(crate) const IDS_DETAIL: &str = "detail=none";

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
         INSERT INTO {table} ({table}, rank) VALUES ('hashsize', {FTS_HASH_SIZE}); \
         INSERT INTO {table} ({table}, rank) VALUES ('automerge', {FTS_AUTOMERGE});"
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
/// [`indexer::DEFER_LIMIT`], so under a load the indexer keeps up with (it indexes beside a
/// busy writer at about a thousand captures a second, FTS5's pace here being a few thousand at
/// most) a search still covers every capture; under a flood beyond that it answers from the
/// index and the newest 25,000, says how many it left out, and covers them again once the flood
/// ends.
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
