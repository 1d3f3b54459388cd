//! What every server hears from the others through PostgreSQL: a commit of captures
//! (`partner_captures`, with the newest id) and a signing key set (`partner_keys`).
//!
//! Why LISTEN/NOTIFY: the servers share nothing but the database, and a notification is
//! delivered at the commit that sends it, so a live feed on server B is told of a capture
//! server A committed as soon as it is readable. One connection per server listens and
//! re-broadcasts in process ([`Live::newest`]); the feeds then read the new rows themselves. A
//! dropped connection is re-established (sqlx's listener does) and every feed catches up from
//! the last id it sent, so a lost notification delays a capture, never loses it; a timer wakes
//! the feeds every second as well.

use crate::capture_writer::CAPTURES_CHANNEL;
use crate::error::Result;
use crate::signing_keys::{WorkspaceKeys, KEYS_CHANNEL};
use sqlx::postgres::PgListener;
use sqlx::PgPool;
use std::time::Duration;
use tokio::sync::watch;

/// The newest committed capture's id, as heard.
#[derive(Debug, Clone)]
pub struct Live {
    newest: watch::Receiver<i64>,
}

impl Live {
    /// Starts listening; keys are reloaded whenever a server sets one.
    pub async fn start(pool: &PgPool, keys: WorkspaceKeys) -> Result<Self> {
        let newest_now = crate::captures::newest_id(pool).await?;
        let (sender, newest) = watch::channel(newest_now);
        let mut listener = PgListener::connect_with(pool).await?;
        listener
            .listen_all([CAPTURES_CHANNEL, KEYS_CHANNEL])
            .await?;
        let pool = pool.clone();
        tokio::spawn(async move {
            let mut tick = tokio::time::interval(Duration::from_secs(60));
            loop {
                tokio::select! {
                    heard = listener.recv() => match heard {
                        Ok(notification) if notification.channel() == CAPTURES_CHANNEL => {
                            if let Ok(id) = notification.payload().parse::<i64>() {
                                sender.send_if_modified(|newest| {
                                    let newer = id > *newest;
                                    if newer {
                                        *newest = id;
                                    }
                                    newer
                                });
                            }
                        }
                        Ok(_) => reload(&keys).await,
                        Err(error) => {
                            tracing::warn!(%error, "listening to the workspace's database");
                            tokio::time::sleep(Duration::from_secs(1)).await;
                            // What was missed while the connection was down.
                            if let Ok(id) = crate::captures::newest_id(&pool).await {
                                sender.send_if_modified(|newest| {
                                    let newer = id > *newest;
                                    *newest = (*newest).max(id);
                                    newer
                                });
                            }
                            reload(&keys).await;
                        }
                    },
                    _ = tick.tick() => reload(&keys).await,
                }
                if sender.is_closed() {
                    break;
                }
            }
        });
        Ok(Self { newest })
    }

    /// A receiver of the newest id, for one feed.
    pub fn newest(&self) -> watch::Receiver<i64> {
        self.newest.clone()
    }
}

async fn reload(keys: &WorkspaceKeys) {
    if let Err(error) = keys.reload().await {
        tracing::warn!(%error, "reloading the signing keys");
    }
}
