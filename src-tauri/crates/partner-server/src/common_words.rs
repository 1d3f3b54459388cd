//! A lower bound for the count of a question of several words, from the whole words
//! PostgreSQL's statistics list as common.
//!
//! Why (BENCHMARKS.md, "A prefix's common words", measured with `EXPLAIN ANALYZE` at
//! 1,000,000 transactions): the desk matches each word as a prefix, and the words' GIN index
//! matches a prefix (`'sab':*`) by gathering every row of every word that begins with it into
//! one bitmap before the words are intersected: for "Cleo Sab", 125,000 and 200,000 rows, 130
//! to 270 ms, the bitmap lossy at the default `work_mem`. Whole words are intersected in the
//! index's own posting lists instead ('cleo' & 'sable': 17 ms). Every row that holds a whole
//! word beginning with a prefix matches that prefix, so the count of the whole words is a lower
//! bound of the question's: when it passes the cap, the capped count is known ("10,000+") and
//! the prefixes are never counted; when it does not, they are, as before.
//!
//! The whole words tried are those `ANALYZE` (or autovacuum) keeps in
//! `pg_stats.most_common_elems`: common words are the ones whose prefixes are slow, and a stale
//! or missing list only makes the bound lower (or absent), never wrong, as each word is checked
//! to begin with the prefix here. Only a word that is one lexeme (`to_tsvector` makes one of it)
//! is replaced: a word the parser splits ("LN-000123") stays a prefix.
//!
//! Tried for two words or more only: one word is counted by walking the newest rows (a word in
//! every transaction: 9 ms), which whole words do not make quicker.

use crate::support_filter::{prefix_query, quoted, TextMatch};
use sqlx::PgPool;

/// The most common whole words tried for one prefix (the commonest first): more makes a bigger
/// union to intersect for a bound that is already past the cap when the first few are.
const MOST_PER_WORD: usize = 8;

/// For each of `words`, the whole words the statistics list as common that begin with it
/// (commonest first, at most [`MOST_PER_WORD`]; none for a word the parser splits, or when the
/// table has no statistics yet).
pub(crate) async fn common_words(pool: &PgPool, words: &[&str]) -> sqlx::Result<Vec<Vec<String>>> {
    let rows: Vec<(i64, String)> = sqlx::query_as(
        "SELECT w.ord, m.elem \
         FROM unnest($1::text[]) WITH ORDINALITY AS w(word, ord) \
         CROSS JOIN LATERAL (SELECT tsvector_to_array(to_tsvector('simple', w.word)) AS lexemes) \
           AS l \
         JOIN pg_stats AS s ON s.schemaname = current_schema() \
           AND s.tablename = 'index_transactions' AND s.attname = 'words' \
         CROSS JOIN LATERAL unnest(s.most_common_elems::text::text[], s.most_common_elem_freqs) \
           AS m(elem, freq) \
         WHERE cardinality(l.lexemes) = 1 AND starts_with(m.elem, l.lexemes[1]) \
         ORDER BY w.ord, m.freq DESC, m.elem",
    )
    .bind(words)
    .fetch_all(pool)
    .await?;
    let mut common = vec![Vec::new(); words.len()];
    for (ord, elem) in rows {
        let list = usize::try_from(ord - 1)
            .ok()
            .and_then(|at| common.get_mut(at));
        if let Some(list) = list.filter(|list| list.len() < MOST_PER_WORD) {
            list.push(elem);
        }
    }
    Ok(common)
}

/// The lower bound's matching of `words`: each word with common whole words as any one of
/// them, the others still as prefixes. `None` when no word has any (the bound would be the
/// question itself).
pub(crate) fn bound(words: &[&str], common: &[Vec<String>]) -> Option<TextMatch> {
    let mut prefixes = Vec::new();
    let mut whole = Vec::new();
    for (at, word) in words.iter().enumerate() {
        match common.get(at).filter(|list| !list.is_empty()) {
            Some(list) => whole.push(format!(
                "({})",
                list.iter()
                    .map(|elem| quoted(elem))
                    .collect::<Vec<_>>()
                    .join(" | ")
            )),
            None => prefixes.push(*word),
        }
    }
    (!whole.is_empty()).then(|| TextMatch {
        prefixes: (!prefixes.is_empty()).then(|| prefix_query(&prefixes)),
        whole: Some(whole.join(" & ")),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_with_common_whole_words_are_replaced_by_any_of_them() {
        let common = vec![
            vec!["cleo".to_string()],
            vec![],
            vec!["sable".to_string(), "o'sab\\le".to_string()],
        ];
        assert_eq!(
            bound(&["Cleo", "LN-1", "Sab"], &common),
            Some(TextMatch {
                prefixes: Some("'LN-1':*".to_string()),
                whole: Some("('cleo') & ('sable' | 'o''sab\\\\le')".to_string()),
            })
        );
        assert_eq!(
            bound(&["Cleo", "Sab"], &common[..2]).map(|text| text.prefixes),
            Some(Some("'Sab':*".to_string()))
        );
        assert_eq!(bound(&["LN-1", "x"], &[vec![], vec![]]), None);
        assert_eq!(bound(&["x"], &[]), None, "no list: no bound");
    }
}
