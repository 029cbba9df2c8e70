//! The lexical channel's reads, answered first from what the process keeps
//! of the collection ([`Store::kept_terms`], [`Store::holds_no_phrase`]: the
//! embedded store's postings, or a lexical service's over a server
//! collection, [`crate::Tracked`]), the rest from the store in one call.

use uuid::Uuid;

use crate::{BatchPage, BatchRead, Filter, Memory, Result, Store, StoreError, TermPage};

/// Each read's first page, as [`Store::read_batch`] reads it: those the kept
/// postings decide without a store call, the others in one
/// [`Store::read_batch`] (none where the postings decide them all).
pub async fn read_kept(store: &dyn Store, reads: &[BatchRead]) -> Result<Vec<BatchPage>> {
    let kept: Vec<Option<BatchPage>> = reads.iter().map(|read| kept(store, read)).collect();
    let rest: Vec<BatchRead> = reads
        .iter()
        .zip(&kept)
        .filter(|(_, page)| page.is_none())
        .map(|(read, _)| read.clone())
        .collect();
    let read = if rest.is_empty() {
        Vec::new()
    } else {
        store.read_batch(&rest).await?
    };
    if read.len() != rest.len() {
        return Err(StoreError::Backend(format!(
            "a batch of {} reads answered {} pages",
            rest.len(),
            read.len()
        )));
    }
    let mut read = read.into_iter();
    Ok(kept
        .into_iter()
        .filter_map(|page| page.or_else(|| read.next()))
        .collect())
}

/// A term read ([`Store::scroll_terms`]), from the kept postings where they
/// decide it.
pub async fn scroll_terms_kept(
    store: &dyn Store,
    filter: &Filter,
    limit: usize,
    offset: Option<Uuid>,
    source: bool,
) -> Result<TermPage> {
    match store.kept_terms(filter, offset, limit, source) {
        Some(page) => Ok(page),
        None => store.scroll_terms(filter, limit, offset, source).await,
    }
}

/// The memories within `filter` ([`Store::scroll`]'s first page), none
/// without a call where the kept postings show no point holds its phrase.
pub async fn scroll_kept(store: &dyn Store, filter: &Filter, limit: usize) -> Result<Vec<Memory>> {
    if store.holds_no_phrase(filter) {
        return Ok(Vec::new());
    }
    Ok(store.scroll(filter, limit, None).await?.memories)
}

/// One read's page where the kept postings decide it.
fn kept(store: &dyn Store, read: &BatchRead) -> Option<BatchPage> {
    match read {
        BatchRead::Terms {
            filter,
            limit,
            source,
        } => store
            .kept_terms(filter, None, *limit, *source)
            .map(BatchPage::Terms),
        BatchRead::Memories { filter, .. } => store
            .holds_no_phrase(filter)
            .then(|| BatchPage::Memories(Vec::new())),
    }
}
