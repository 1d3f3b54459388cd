//! The live feed of new captures, and a coalescer for views that cannot take one event each.
//!
//! A `tokio::sync::broadcast` channel: a slow subscriber never slows the listener, it only lags
//! and is told how many events it missed. The coalescer turns the feed into batches (everything
//! that arrived within a window after the first event, up to a size cap), so a thousand
//! notifications a second become ten UI updates a second.

use crate::capture::{Capture, OutboundRecord};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::broadcast::{self, error::RecvError};

/// Capacity of the live channel; a subscriber further behind than this is told it lagged.
pub const LIVE_CAPACITY: usize = 4096;

#[derive(Debug, Clone)]
pub enum LiveEvent {
    /// A capture was committed to the store.
    Captured(Arc<Capture>),
    /// A forward or replay of a capture finished.
    Outbound(Arc<OutboundRecord>),
}

/// Events that arrived close together, and how many were missed since the last batch.
#[derive(Debug, Clone, Default)]
pub struct LiveBatch {
    pub events: Vec<LiveEvent>,
    /// Events dropped because this subscriber fell behind; a view should re-query the store.
    pub missed: u64,
}

#[derive(Debug)]
pub struct Coalescer {
    rx: broadcast::Receiver<LiveEvent>,
    window: Duration,
    max_batch: usize,
}

impl Coalescer {
    pub fn new(rx: broadcast::Receiver<LiveEvent>, window: Duration, max_batch: usize) -> Self {
        Self {
            rx,
            window,
            max_batch: max_batch.max(1),
        }
    }

    /// The next batch; `None` once the listener is gone and everything was delivered.
    pub async fn next_batch(&mut self) -> Option<LiveBatch> {
        let mut batch = LiveBatch::default();
        match self.rx.recv().await {
            Ok(event) => batch.events.push(event),
            Err(RecvError::Lagged(n)) => batch.missed += n,
            Err(RecvError::Closed) => return None,
        }
        let deadline = tokio::time::Instant::now() + self.window;
        while batch.events.len() < self.max_batch {
            match tokio::time::timeout_at(deadline, self.rx.recv()).await {
                Ok(Ok(event)) => batch.events.push(event),
                Ok(Err(RecvError::Lagged(n))) => batch.missed += n,
                Ok(Err(RecvError::Closed)) | Err(_) => break,
            }
        }
        Some(batch)
    }
}
