//! The indexer's watermark, `search_state.indexed_through`: the captures at or below it are in
//! the search index ([`crate::search`]) and counted in `facet_counts` ([`crate::facet_counts`]);
//! those above it are the tail both scan.
//!
//! Its own module because both read it and neither should need the other for it: the search
//! indexer keeps the counts (search uses facet_counts), so facet_counts reading the mark from
//! search made the two need each other. `search_state` itself is made and moved by the indexer.

use crate::Result;
use rusqlite::{Connection, OptionalExtension};

/// The highest id indexed, as a statement reads it (in its own snapshot): the captures above it
/// are the tail, for the search and for the counts kept under the same mark
/// ([`crate::facet_counts`]).
pub(crate) const WATERMARK_SQL: &str = "(SELECT indexed_through FROM search_state WHERE one = 1)";

/// The highest capture id the indexes cover (captures above it are the tail).
pub(crate) fn indexed_through(conn: &Connection) -> Result<i64> {
    Ok(conn
        .prepare_cached("SELECT indexed_through FROM search_state WHERE one = 1")?
        .query_row([], |row| row.get(0))
        .optional()?
        .unwrap_or(0))
}
