//! Walks every item of a listing as a `Stream`, for export and for search across all results.
//!
//! The first page says the total; the remaining pages are fetched with at most `concurrency`
//! requests in flight and yielded in the server's order (`buffered`, not `buffer_unordered`), so
//! memory stays at a few pages however long the listing is. Each page is fetched and parsed in a
//! task of its own, so pages are parsed in parallel on a multi-threaded runtime rather than one
//! after another in the task that polls the stream. The walk stops at the total the first page
//! reported, ends after the first error (yielding it), and is cancelled by dropping the stream:
//! the tasks of pages in flight are aborted with it.

use crate::client::PartnerClient;
use crate::error::{ClientError, Result, RuleError};
use crate::page::{Listed, PageRequest};
use futures::stream::{self, BoxStream, StreamExt};
use partner_api::list::MAX_LIMIT;
use partner_api::read::Document;
use partner_api::SortSpec;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PagerOptions {
    /// Items per request, 1 to 50.
    pub page_size: u32,
    /// Requests in flight at most.
    pub concurrency: usize,
}

impl Default for PagerOptions {
    fn default() -> Self {
        Self {
            page_size: MAX_LIMIT,
            concurrency: 4,
        }
    }
}

impl PartnerClient {
    /// Every item of the listing of `T`, in `sort` order. The sort's syntax is checked now
    /// (which keys the service takes is its own to say; see `partner_api::ServiceSorts`).
    pub fn pager<T: Listed>(
        &self,
        sort: SortSpec,
        options: PagerOptions,
    ) -> Result<BoxStream<'static, Result<Document<T>>>> {
        self.pager_from(0, sort, options)
    }

    /// The items of the listing of `T` from position `start` on, in `sort` order: a walk that
    /// resumes where an earlier one stopped (meaningful under an order where earlier items
    /// keep their position, such as `created` ascending). A `start` at the total yields
    /// nothing; past it, the service refuses the first page.
    pub fn pager_from<T: Listed>(
        &self,
        start: u64,
        sort: SortSpec,
        options: PagerOptions,
    ) -> Result<BoxStream<'static, Result<Document<T>>>> {
        partner_api::ServiceSorts::Unknown
            .check::<T>(&sort)
            .map_err(RuleError::from)?;
        if options.page_size == 0 || options.page_size > MAX_LIMIT {
            return Err(ClientError::input(format!(
                "the page size must be 1 to {MAX_LIMIT}, got {}",
                options.page_size
            )));
        }
        let page_size = u64::from(options.page_size);
        let concurrency = options.concurrency.max(1);
        let client = self.clone();
        let first = {
            let client = client.clone();
            let sort = sort.clone();
            async move {
                client
                    .list::<T>(&page_request(start, page_size, &sort))
                    .await
            }
        };
        let walk = stream::once(first).flat_map(move |first| match first {
            Err(error) => stream::iter([Err(error)]).boxed(),
            Ok(page) => {
                let total = page.total;
                let client = client.clone();
                let sort = sort.clone();
                let rest = stream::iter((start + page_size..total).step_by(page_size as usize))
                    .map(move |start| {
                        let client = client.clone();
                        let request = page_request(start, page_size, &sort).with_known_total(total);
                        AbortOnDrop(tokio::spawn(
                            async move { client.list::<T>(&request).await },
                        ))
                    })
                    .buffered(concurrency)
                    .flat_map(|page| match page {
                        Ok(page) => {
                            stream::iter(page.items.into_iter().map(Ok).collect::<Vec<_>>()).boxed()
                        }
                        Err(error) => stream::iter([Err(error)]).boxed(),
                    });
                stream::iter(page.items.into_iter().map(Ok).collect::<Vec<_>>())
                    .chain(rest)
                    .take(usize::try_from(total.saturating_sub(start)).unwrap_or(usize::MAX))
                    .boxed()
            }
        });
        Ok(stop_after_error(walk))
    }
}

fn page_request(start: u64, limit: u64, sort: &SortSpec) -> PageRequest {
    PageRequest {
        page: partner_api::PageParams {
            start,
            limit: limit as u32,
        },
        sort: sort.clone(),
        known_total: None,
    }
}

/// Yields the first error and then ends, dropping any pages still in flight.
fn stop_after_error<T: Send + 'static>(
    inner: impl futures::Stream<Item = Result<T>> + Send + 'static,
) -> BoxStream<'static, Result<T>> {
    inner
        .scan(false, |failed, item| {
            if *failed {
                return futures::future::ready(None);
            }
            *failed = item.is_err();
            futures::future::ready(Some(item))
        })
        .boxed()
}

/// A spawned page fetch that is aborted when the stream drops it (a plain `JoinHandle` would
/// let the request run on, detached).
struct AbortOnDrop<T>(tokio::task::JoinHandle<Result<T>>);

impl<T> Drop for AbortOnDrop<T> {
    fn drop(&mut self) {
        self.0.abort();
    }
}

impl<T> std::future::Future for AbortOnDrop<T> {
    type Output = Result<T>;

    fn poll(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Self::Output> {
        std::pin::Pin::new(&mut self.0).poll(cx).map(|joined| {
            joined.unwrap_or_else(|error| {
                Err(ClientError::Server {
                    status: 0,
                    message: format!("a page fetch ended unexpectedly ({error})"),
                    raw_body: None,
                })
            })
        })
    }
}
