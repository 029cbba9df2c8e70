//! The domain types live in `trine-core`; the store speaks them.
pub use trine_core::model::*;

/// One read of [`crate::Store::read_batch`]: a first page from the start.
#[derive(Debug, Clone, PartialEq)]
pub enum BatchRead {
    /// As [`crate::Store::scroll_terms`] reads: each point's sparse encoding
    /// and, with `source`, its source.
    Terms {
        filter: Filter,
        limit: usize,
        source: bool,
    },
    /// As [`crate::Store::scroll`] reads: whole memories.
    Memories { filter: Filter, limit: usize },
}

impl BatchRead {
    /// The points read: those matching this filter.
    pub fn filter(&self) -> &Filter {
        let (Self::Terms { filter, .. } | Self::Memories { filter, .. }) = self;
        filter
    }

    /// At most this many points.
    pub fn limit(&self) -> usize {
        let (Self::Terms { limit, .. } | Self::Memories { limit, .. }) = self;
        *limit
    }
}

/// What one [`BatchRead`] found.
#[derive(Debug, Clone, PartialEq)]
pub enum BatchPage {
    Terms(TermPage),
    Memories(Vec<Memory>),
}

impl BatchPage {
    /// The term page of a [`BatchRead::Terms`].
    pub fn terms(self) -> Option<TermPage> {
        match self {
            Self::Terms(page) => Some(page),
            Self::Memories(_) => None,
        }
    }

    /// The memories of a [`BatchRead::Memories`].
    pub fn memories(self) -> Option<Vec<Memory>> {
        match self {
            Self::Memories(memories) => Some(memories),
            Self::Terms(_) => None,
        }
    }
}
