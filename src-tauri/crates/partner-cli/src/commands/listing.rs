//! `--start --limit --sort --all` for the list subcommands, checked by the spec's rules before
//! any request: a malformed sort or a limit over 50 is refused in words, offline. Which keys a
//! service sorts by is the service's to say (the spec does not): any well-formed key is sent,
//! and a refusal is printed in the service's words.

use super::render::{ListWriter, OutputFormat, Row};
use crate::error::{CliError, Result};
use clap::Args as ClapArgs;
use futures::StreamExt;
use partner_api::list::MAX_LIMIT;
use partner_api::read::Document;
use partner_api::ListRuleError;
use partner_api::ServiceSorts;
use partner_client::{ClientError, Listed, PageRequest, PagerOptions, PartnerClient};
use serde::Serialize;

/// Items shown by a list command without `--all` or `--limit`.
const ONE_PAGE: u64 = 25;

#[derive(Debug, Clone, ClapArgs)]
pub struct ListArgs {
    /// Index of the first item.
    #[arg(long, default_value_t = 0)]
    pub start: u64,
    /// Items per page (at most 50; 25 for one page, 50 for each request of --all).
    #[arg(long)]
    pub limit: Option<u64>,
    /// Sort keys, `-` for descending, e.g. `status,-created`. A value that starts with `-`
    /// (`--sort -created`, as the spec writes a descending key) is taken as the value.
    #[arg(long, default_value = "", allow_hyphen_values = true)]
    pub sort: String,
    /// Every item, all pages (several requests at once, in order).
    #[arg(long)]
    pub all: bool,
    #[arg(long, value_enum, default_value_t = OutputFormat::Table)]
    pub output: OutputFormat,
}

pub async fn run_list<T: Listed + Row + Serialize>(
    client: &PartnerClient,
    args: &ListArgs,
) -> Result<()> {
    // Which keys a service sorts by is not in the spec: any well-formed key is sent and the
    // service's refusal is printed in its words (`ServiceSorts`, the one home of the choice).
    let sort = ServiceSorts::Unknown.parse::<T>(&args.sort).map_err(rule)?;
    if args.all {
        let page_size = all_page_size(args)?;
        let mut items = client.pager::<T>(
            sort,
            PagerOptions {
                page_size,
                ..PagerOptions::default()
            },
        )?;
        let told = tell_waits(client);
        let mut writer = ListWriter::<Document<T>>::new(args.output)?;
        while let Some(item) = items.next().await {
            writer.item(&item?)?;
        }
        told.abort();
        let count = writer.finish()?;
        eprintln!("{count} items");
        return Ok(());
    }
    let request = PageRequest::new(args.start, args.limit.unwrap_or(ONE_PAGE))
        .map_err(rule)?
        .sorted(sort);
    let page = client.list::<T>(&request).await?;
    let mut writer = ListWriter::<Document<T>>::new(args.output)?;
    for item in &page.items {
        writer.item(item)?;
    }
    writer.finish()?;
    if page.items.is_empty() {
        eprintln!("no items at {} of {}", page.start, page.total);
    } else {
        eprintln!(
            "items {}-{} of {}",
            page.start,
            page.start + page.items.len() as u64 - 1,
            page.total
        );
    }
    Ok(())
}

/// Says on stderr each wait the service asks of `client`'s calls (429/503 with
/// `Retry-After`: "waiting 2 s: rate limited") until the task is aborted: every walk of the
/// CLI (`--all`, `transactions sync`, `listen missed`) runs with one.
pub fn tell_waits(client: &PartnerClient) -> tokio::task::JoinHandle<()> {
    let mut waiting = client.waiting();
    tokio::spawn(async move {
        while waiting.changed().await.is_ok() {
            if let Some(wait) = waiting.borrow_and_update().clone() {
                eprintln!("{wait}");
            }
        }
    })
}

/// The page size of each request of `--all`: full pages unless `--limit` says otherwise. Each
/// page is a round trip; with the one-page default of 25 a walk made twice the requests (over a
/// 20 ms network `--all` was 2x a sequential loop of full pages instead of nearly 4x).
fn all_page_size(args: &ListArgs) -> Result<u32> {
    Ok(
        PageRequest::new(0, args.limit.unwrap_or(u64::from(MAX_LIMIT)))
            .map_err(rule)?
            .page
            .limit
            .max(1),
    )
}

fn rule(error: ListRuleError) -> CliError {
    CliError::Client(ClientError::Rule(error.into()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(limit: Option<u64>) -> ListArgs {
        ListArgs {
            start: 0,
            limit,
            sort: String::new(),
            all: true,
            output: OutputFormat::Json,
        }
    }

    #[test]
    fn all_walks_full_pages_unless_told_otherwise() {
        assert_eq!(all_page_size(&args(None)).unwrap(), MAX_LIMIT);
        assert_eq!(all_page_size(&args(Some(10))).unwrap(), 10);
        assert_eq!(all_page_size(&args(Some(51))).unwrap_err().exit_status(), 2);
    }
}
