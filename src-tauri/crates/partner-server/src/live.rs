//! What every server hears from the others through PostgreSQL: a commit of captures
//! (`partner_captures`, with the newest id) and a signing key set (`partner_keys`).
//!
//! Why LISTEN/NOTIFY: the servers share nothing but the database, and a notification is
//! delivered at the commit that sends it, so a live feed on server B is told of a capture
//! server A committed as soon as it is readable.
//!
//! Why one reader per server: each server has one listening connection, and on each commit it
//! hears of, one task reads the new rows once and hands them to every feed in process
//! ([`Live::subscribe`]). Twenty consoles watching cost one query per commit, not twenty. A feed
//! that falls behind the in-process buffer ([`BUFFER`]) catches up from the database by id and
//! goes on; so does the reader after a dropped connection (sqlx's listener reconnects), and a
//! timer reads anything newer every second besides, so a lost notification delays a capture,
//! never loses it.

use crate::capture_writer::CAPTURES_CHANNEL;
use crate::captures;
use crate::error::Result;
use crate::signing_keys::{WorkspaceKeys, KEYS_CHANNEL};
use partner_listener::Capture;
use sqlx::postgres::PgListener;
use sqlx::PgPool;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::broadcast;

/// Captures held for feeds in process; a feed further behind reads from the database.
pub const BUFFER: usize = 8192;
/// The most rows one read takes.
const READ: i64 = 1000;

/// The captures every server of the workspace commits, as this server hears of them.
#[derive(Debug, Clone)]
pub struct Live {
    captures: broadcast::Sender<Arc<Capture>>,
}

impl Live {
    /// Starts listening; keys are reloaded whenever a server sets one.
    pub async fn start(pool: &PgPool, keys: WorkspaceKeys) -> Result<Self> {
        let mut last = captures::newest_id(pool).await?;
        let (sender, _) = broadcast::channel(BUFFER);
        let mut listener = PgListener::connect_with(pool).await?;
        listener
            .listen_all([CAPTURES_CHANNEL, KEYS_CHANNEL])
            .await?;
        let pool = pool.clone();
        let live = Self {
            captures: sender.clone(),
        };
        tokio::spawn(async move {
            let mut second = tokio::time::interval(Duration::from_secs(1));
            let mut minute = tokio::time::interval(Duration::from_secs(60));
            loop {
                tokio::select! {
                    heard = listener.recv() => match heard {
                        Ok(notification) if notification.channel() == CAPTURES_CHANNEL => {
                            let newest = notification.payload().parse::<i64>().unwrap_or(i64::MAX);
                            if newest > last {
                                last = pass_on(&pool, &sender, last).await;
                            }
                        }
                        Ok(_) => reload(&keys).await,
                        Err(error) => {
                            tracing::warn!(%error, "listening to the workspace's database");
                            tokio::time::sleep(Duration::from_secs(1)).await;
                            reload(&keys).await;
                        }
                    },
                    _ = second.tick() => last = pass_on(&pool, &sender, last).await,
                    _ = minute.tick() => reload(&keys).await,
                }
            }
        });
        Ok(live)
    }

    /// Every capture committed from now on, in id order (a receiver that lags is told so, and
    /// catches up from the database: see [`captures::after`]).
    pub fn subscribe(&self) -> broadcast::Receiver<Arc<Capture>> {
        self.captures.subscribe()
    }
}

/// Reads the captures after `last` and hands them to the feeds; the new last id.
async fn pass_on(pool: &PgPool, sender: &broadcast::Sender<Arc<Capture>>, mut last: i64) -> i64 {
    loop {
        match captures::after(pool, last, READ).await {
            Ok(found) => {
                let full = found.len() as i64 == READ;
                for capture in found {
                    last = capture.id;
                    // No feed listening is fine: nothing is lost, the rows are in the database.
                    let _ = sender.send(Arc::new(capture));
                }
                if !full {
                    return last;
                }
            }
            Err(error) => {
                tracing::warn!(%error, "reading new captures for the live feeds");
                return last;
            }
        }
    }
}

async fn reload(keys: &WorkspaceKeys) {
    if let Err(error) = keys.reload().await {
        tracing::warn!(%error, "reloading the signing keys");
    }
}
