//! `--start --limit --sort --all` for the list subcommands, checked by the spec's rules before
//! any request: a wrong sort key or a limit over 50 is refused in words, offline.

use super::render::{ListWriter, OutputFormat, Row};
use crate::error::{CliError, Result};
use clap::Args as ClapArgs;
use futures::StreamExt;
use partner_api::ListRuleError;
use partner_api::SortSpec;
use partner_client::{ClientError, Listed, PageRequest, PagerOptions, PartnerClient};
use serde::Serialize;

#[derive(Debug, Clone, ClapArgs)]
pub struct ListArgs {
    /// Index of the first item.
    #[arg(long, default_value_t = 0)]
    pub start: u64,
    /// Items per page (at most 50).
    #[arg(long, default_value_t = 25)]
    pub limit: u64,
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
    let sort = SortSpec::parse(&args.sort, T::SORT_KEYS).map_err(rule)?;
    if args.all {
        let page_size = PageRequest::new(0, args.limit)
            .map_err(rule)?
            .page
            .limit
            .max(1);
        let mut items = client.pager::<T>(
            sort,
            PagerOptions {
                page_size,
                ..PagerOptions::default()
            },
        )?;
        let mut writer = ListWriter::<T>::new(args.output)?;
        while let Some(item) = items.next().await {
            writer.item(&item?)?;
        }
        let count = writer.finish()?;
        eprintln!("{count} items");
        return Ok(());
    }
    let request = PageRequest::new(args.start, args.limit)
        .map_err(rule)?
        .sorted(sort);
    let page = client.list::<T>(&request).await?;
    let mut writer = ListWriter::<T>::new(args.output)?;
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

fn rule(error: ListRuleError) -> CliError {
    CliError::Client(ClientError::Rule(error.into()))
}
