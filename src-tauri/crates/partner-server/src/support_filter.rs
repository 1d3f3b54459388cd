//! A support desk question ([`partner_index::Filter`]) as PostgreSQL conditions of bound values,
//! and its count up to the cap, planned for a million transactions.
//!
//! Why the count has two shapes (BENCHMARKS.md, the team workspace, measured with `EXPLAIN
//! ANALYZE` at 1,000,000 transactions): the page itself is quick either way (a walk of the
//! "newest" index, or the few matches sorted); the count is what took the time.
//! - **Two or more equality filters** (status, product, request type, response status): each
//!   has an index ordered by (created, seq) within its value, so the transactions are joined to
//!   themselves on (created, seq), one table per filter, and PostgreSQL merges the index-only
//!   scans: 37 ms for status, product and response status together, where the plain `AND`
//!   built a bitmap of every entry of the three and read the table for each match (340 ms). The
//!   join drops transactions without a `created`, so those are counted apart; a product is
//!   its id or its name, counted as two disjoint parts (the name's index carries the id, so
//!   the second part does not read the table either). Parallel plans are off for the table
//!   (migration 0008): on two cores the planner's parallel hash join took 82 ms.
//! - **A part of a requesting party's name** has no index (`ILIKE '%…%'`); the distinct
//!   parties do, in `index_parties`, which statement triggers keep (as `index_counts` is
//!   kept): the names that contain the text are found there, and the transactions by the
//!   b-tree on the party (3 ms where reading the rows took 160–210 ms).

use partner_index::query::{like_escaped, non_empty};
use partner_index::{search_words, Filter};
use sqlx::{Postgres, QueryBuilder};

type IndexResult<T> = partner_index::Result<T>;

/// The equality filters that have an index ordered by (created, seq) within their value,
/// beside the product's (which is an id or a name): (column, value).
fn equalities(filter: &Filter) -> Vec<(&'static str, String)> {
    [
        ("status", &filter.status),
        ("request_type", &filter.request_type),
        ("response_status", &filter.response_status),
    ]
    .into_iter()
    .filter_map(|(column, value)| non_empty(value).map(|value| (column, value)))
    .collect()
}

/// Which of the filter's conditions a table of a query writes: all of them, or all but the
/// equality filters and the product (the joined count writes those on tables of their own).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Part {
    All,
    AllButEqualities,
}

/// How a question's text is matched against a transaction's words: as the user's words, each a
/// prefix (the question itself), or, for a count's lower bound, some of them as whole words
/// they begin (see [`crate::common_words`]).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct TextMatch {
    /// `to_tsquery('simple', …)`'s input: words matched as prefixes, all required.
    pub prefixes: Option<String>,
    /// A tsquery as written (lexemes as stored, not normalised again), required beside them.
    pub whole: Option<String>,
}

impl TextMatch {
    /// The question's own reading of `filter`'s text: every word a prefix, all required.
    pub(crate) fn of(filter: &Filter) -> Self {
        let words = filter.text.as_deref().map(search_words).unwrap_or_default();
        Self {
            prefixes: (!words.is_empty()).then(|| prefix_query(&words)),
            whole: None,
        }
    }
}

/// ` WHERE …` for `filter` (always a WHERE, so callers may add `AND …`), on the table itself.
pub(crate) fn push_filter(
    query: &mut QueryBuilder<'_, Postgres>,
    filter: &Filter,
) -> IndexResult<()> {
    query.push(" WHERE true");
    push_conditions(query, filter, &TextMatch::of(filter), "", Part::All)
}

/// ` AND …` for each condition of `filter` on the columns of the table `alias` names (`""`
/// for the table itself, else `"a."`), its text matched as `text` says.
fn push_conditions(
    query: &mut QueryBuilder<'_, Postgres>,
    filter: &Filter,
    text: &TextMatch,
    alias: &str,
    part: Part,
) -> IndexResult<()> {
    if part == Part::All {
        for (column, value) in equalities(filter) {
            query
                .push(format!(" AND {alias}{column} = "))
                .push_bind(value);
        }
        if let Some(product) = non_empty(&filter.product) {
            query
                .push(format!(" AND ({alias}product_id = "))
                .push_bind(product.clone())
                .push(format!(" OR lower({alias}product_name) = lower("))
                .push_bind(product)
                .push("))");
        }
    }
    for (condition, at) in [
        ("created >= ", filter.created_since),
        ("created < ", filter.created_before),
        ("updated >= ", filter.updated_since),
        ("updated < ", filter.updated_before),
    ] {
        if let Some(at) = at {
            query.push(format!(" AND {alias}{condition}")).push_bind(at);
        }
    }
    for (column, value) in [
        ("partner_status", &filter.partner_status),
        ("reference_number", &filter.reference_number),
    ] {
        if let Some(value) = non_empty(value) {
            query
                .push(format!(" AND lower({alias}{column}) = lower("))
                .push_bind(value)
                .push(")");
        }
    }
    if let Some(party) = non_empty(&filter.requesting_party) {
        query
            .push(format!(
                " AND {alias}requesting_party = ANY (ARRAY(SELECT party FROM index_parties \
                 WHERE n > 0 AND party ILIKE "
            ))
            .push_bind(format!("%{}%", like_escaped(&party)))
            .push(" ESCAPE '\\'))");
    }
    for (field, value) in filter.loan_fields()? {
        if field == "loanNumber" {
            query
                .push(format!(" AND lower({alias}loan_number) = lower("))
                .push_bind(value.to_string())
                .push(")");
        } else {
            // The field's name is checked (letters, digits, `_`) and bound as a value too.
            query
                .push(format!(" AND lower({alias}loan ->> "))
                .push_bind(field.to_string())
                .push(") = lower(")
                .push_bind(value.to_string())
                .push(")");
        }
    }
    match (&text.prefixes, &text.whole) {
        (Some(prefixes), Some(whole)) => {
            query
                .push(format!(" AND {alias}words @@ (to_tsquery('simple', "))
                .push_bind(prefixes.clone())
                .push(") && ")
                .push_bind(whole.clone())
                .push("::tsquery)");
        }
        (Some(prefixes), None) => {
            query
                .push(format!(" AND {alias}words @@ to_tsquery('simple', "))
                .push_bind(prefixes.clone())
                .push(")");
        }
        (None, Some(whole)) => {
            query
                .push(format!(" AND {alias}words @@ "))
                .push_bind(whole.clone())
                .push("::tsquery");
        }
        (None, None) => {}
    }
    Ok(())
}

/// What the first table of a joined count holds (see [`count_capped`]).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Lead {
    FirstEquality,
    ProductId,
    ProductNameAlone,
}

/// The statement that counts the transactions matching `filter`, its text matched as `text`
/// says, up to `cap + 1` (see the module's notes).
pub(crate) fn count_capped(
    filter: &Filter,
    text: &TextMatch,
    cap: i64,
) -> IndexResult<QueryBuilder<'static, Postgres>> {
    let equal = equalities(filter);
    let product = non_empty(&filter.product);
    let mut count = QueryBuilder::<Postgres>::new("SELECT count(*) FROM (");
    if equal.len() + usize::from(product.is_some()) < 2 {
        count.push("SELECT 1 FROM index_transactions WHERE true");
        push_conditions(&mut count, filter, text, "", Part::All)?;
    } else {
        // Which condition the first table `a` holds: a product's id, or (a part of its own)
        // its name alone; without a product, the first equality filter.
        let leads: &[Lead] = if product.is_some() {
            &[Lead::ProductId, Lead::ProductNameAlone]
        } else {
            &[Lead::FirstEquality]
        };
        let product = product.unwrap_or_default();
        for lead in leads {
            count.push("(SELECT 1 FROM index_transactions a");
            let joined = if *lead == Lead::FirstEquality {
                &equal[1..]
            } else {
                &equal[..]
            };
            for (t, _) in joined.iter().enumerate() {
                count.push(format!(
                    " JOIN index_transactions t{t} ON t{t}.created = a.created AND t{t}.seq = a.seq"
                ));
            }
            count.push(" WHERE true");
            match lead {
                Lead::ProductId => {
                    count
                        .push(" AND a.product_id = ")
                        .push_bind(product.clone());
                }
                Lead::ProductNameAlone => {
                    count
                        .push(" AND lower(a.product_name) = lower(")
                        .push_bind(product.clone())
                        .push(") AND a.product_id IS DISTINCT FROM ")
                        .push_bind(product.clone());
                }
                Lead::FirstEquality => {
                    let (column, value) = &equal[0];
                    count
                        .push(format!(" AND a.{column} = "))
                        .push_bind(value.clone());
                }
            }
            for (t, (column, value)) in joined.iter().enumerate() {
                count
                    .push(format!(" AND t{t}.{column} = "))
                    .push_bind(value.clone());
            }
            push_conditions(&mut count, filter, text, "a.", Part::AllButEqualities)?;
            count
                .push(" LIMIT ")
                .push_bind(cap + 1)
                .push(") UNION ALL ");
        }
        // What the joins on `created` cannot meet: transactions without one.
        count.push("(SELECT 1 FROM index_transactions WHERE true");
        push_conditions(&mut count, filter, text, "", Part::All)?;
        count
            .push(" AND created IS NULL LIMIT ")
            .push_bind(cap + 1)
            .push(")");
    }
    count.push(" LIMIT ").push_bind(cap + 1).push(") AS hits");
    Ok(count)
}

/// Each word quoted as a tsquery lexeme matched as a prefix, all required.
pub(crate) fn prefix_query(words: &[&str]) -> String {
    words
        .iter()
        .map(|word| format!("{}:*", quoted(word)))
        .collect::<Vec<_>>()
        .join(" & ")
}

/// `text` as one quoted tsquery lexeme (quotes doubled, backslashes escaped).
pub(crate) fn quoted(text: &str) -> String {
    format!("'{}'", text.replace('\\', "\\\\").replace('\'', "''"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_become_quoted_prefixes_whatever_they_hold() {
        assert_eq!(
            prefix_query(&["Zelda", "LN-000123"]),
            "'Zelda':* & 'LN-000123':*"
        );
        assert_eq!(prefix_query(&["o'brien\\x"]), "'o''brien\\\\x':*");
    }
}
