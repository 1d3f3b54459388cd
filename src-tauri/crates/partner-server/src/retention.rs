//! How much of the team's captures the workspace keeps: the local listener's retention, on
//! PostgreSQL.
//!
//! The limits are the listener's [`Retention`] (a count, a byte budget, an age) and the order is
//! its retention classes' ([`RetentionClass`], one home for which verdict is which class): past
//! its age a capture goes whatever its class; junk (other paths, failed or absent signatures)
//! holds at most its share of either limit ([`RetentionClass::junk_share`]); then, while the
//! workspace is past a limit, the oldest junk goes first, then notifications of subscriptions
//! without a key here, validly signed ones last. So a public URL's scanners never evict the
//! service's notifications.
//!
//! Why a tally: the prune runs every few seconds on a table of millions of rows, so what each
//! class holds is read from `capture_tally`, which a statement trigger keeps from the rows every
//! insert and delete touched (migration 0004), and each cut is found by walking one class's
//! oldest rows on its `(verdict, id)` index. A capture's size is its record as stored. One server
//! prunes at a time (a try-lock: the others skip that round); the size of a capture that arrives
//! meanwhile is met by the next round, so the workspace may pass a limit by what arrives within a
//! round, never for long.

use crate::error::Result;
use partner_listener::{Retention, RetentionClass, Verdict};
use sqlx::{PgConnection, PgPool};
use std::time::Duration;
use tokio_util::sync::CancellationToken;

/// How often a server looks at the limits.
pub const EVERY: Duration = Duration::from_secs(5);

/// The advisory lock a prune holds ("PARTNRET").
const PRUNE_LOCK: i64 = 0x5041_5254_4e52_4554;

/// Captures and bytes per retention class, in [`RetentionClass::ALL`]'s order.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Held {
    pub captures: [i64; 3],
    pub bytes: [i64; 3],
}

impl Held {
    fn total_captures(&self) -> i64 {
        self.captures.iter().sum()
    }

    fn total_bytes(&self) -> i64 {
        self.bytes.iter().sum()
    }
}

/// What the workspace holds now, per class (from the tally).
pub async fn held(connection: &mut PgConnection) -> Result<Held> {
    let rows: Vec<(String, i64, i64)> =
        sqlx::query_as("SELECT verdict, captures, bytes FROM capture_tally")
            .fetch_all(&mut *connection)
            .await?;
    let mut held = Held::default();
    for (verdict, captures, bytes) in rows {
        // A verdict this version does not know is kept with the junk's limits off it: pruned
        // with the signed ones, never before them.
        let class = Verdict::parse(&verdict).map_or(RetentionClass::Signed, RetentionClass::of);
        held.captures[class.index()] += captures;
        held.bytes[class.index()] += bytes;
    }
    Ok(held)
}

/// Applies `retention` once, if no other server is at it; says how many captures went.
pub async fn prune(pool: &PgPool, retention: Retention) -> Result<u64> {
    let mut connection = pool.acquire().await?;
    let locked: bool = sqlx::query_scalar("SELECT pg_try_advisory_lock($1)")
        .bind(PRUNE_LOCK)
        .fetch_one(&mut *connection)
        .await?;
    if !locked {
        return Ok(0);
    }
    let pruned = prune_locked(&mut connection, retention).await;
    sqlx::query("SELECT pg_advisory_unlock($1)")
        .bind(PRUNE_LOCK)
        .execute(&mut *connection)
        .await?;
    pruned
}

async fn prune_locked(connection: &mut PgConnection, retention: Retention) -> Result<u64> {
    let mut pruned = 0;
    if let Some(max_age) = retention.max_age {
        let cutoff = chrono::Utc::now()
            .checked_sub_signed(max_age)
            .unwrap_or(chrono::DateTime::<chrono::Utc>::MIN_UTC);
        pruned += sqlx::query("DELETE FROM captures WHERE received_at < $1")
            .bind(cutoff)
            .execute(&mut *connection)
            .await?
            .rows_affected();
    }
    let limit = |value: Option<u64>, share: fn(u64) -> u64| {
        value.map_or(i64::MAX, |value| {
            i64::try_from(share(value)).unwrap_or(i64::MAX)
        })
    };
    let whole = |value: u64| value;
    // Junk past its share, then every class in order while the whole is past a limit.
    let junk = RetentionClass::Junk;
    let now = held(connection).await?;
    pruned += cut(
        connection,
        junk,
        now.captures[junk.index()] - limit(retention.max_count, RetentionClass::junk_share),
        now.bytes[junk.index()] - limit(retention.max_bytes, RetentionClass::junk_share),
    )
    .await?;
    for class in RetentionClass::ALL {
        let now = held(connection).await?;
        let over_count = now.total_captures() - limit(retention.max_count, whole);
        let over_bytes = now.total_bytes() - limit(retention.max_bytes, whole);
        if over_count <= 0 && over_bytes <= 0 {
            break;
        }
        pruned += cut(connection, class, over_count, over_bytes).await?;
    }
    if pruned > 0 {
        tracing::info!(pruned, "the workspace's retention let captures go");
    }
    Ok(pruned)
}

/// Deletes the oldest captures of `class` until at least `captures` of them and `bytes` of
/// their size are gone (either may be ≤ 0: nothing is owed on it).
async fn cut(
    connection: &mut PgConnection,
    class: RetentionClass,
    captures: i64,
    bytes: i64,
) -> Result<u64> {
    if captures <= 0 && bytes <= 0 {
        return Ok(0);
    }
    let condition = class.sql_condition();
    // The first capture, oldest first, at which both are met: a walk of the class's index
    // from its oldest end, as far as what is owed.
    let through: Option<i64> = sqlx::query_scalar(&format!(
        "SELECT id FROM (SELECT id, count(*) OVER w AS n, sum(size) OVER w AS b \
         FROM captures WHERE {condition} \
         WINDOW w AS (ORDER BY id ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW)) AS walk \
         WHERE n >= $1 AND b >= $2 ORDER BY id LIMIT 1"
    ))
    .bind(captures.max(0))
    .bind(bytes.max(0))
    .fetch_optional(&mut *connection)
    .await?;
    // Not met by the whole class: all of it goes.
    let through = through.unwrap_or(i64::MAX);
    Ok(sqlx::query(&format!(
        "DELETE FROM captures WHERE {condition} AND id <= $1"
    ))
    .bind(through)
    .execute(&mut *connection)
    .await?
    .rows_affected())
}

/// Prunes every [`EVERY`] until `stop`; `retention` without a limit: never.
pub fn schedule(pool: PgPool, retention: Retention, stop: CancellationToken) {
    if retention.max_count.is_none() && retention.max_bytes.is_none() && retention.max_age.is_none()
    {
        return;
    }
    tokio::spawn(async move {
        let mut tick = tokio::time::interval(EVERY);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tokio::select! {
                () = stop.cancelled() => return,
                _ = tick.tick() => {}
            }
            if let Err(error) = prune(&pool, retention).await {
                tracing::warn!(%error, "the workspace's retention");
            }
        }
    });
}
