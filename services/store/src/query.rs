//! [`Query`]: one ranked read of a store, the single argument of
//! [`crate::Store::query`], and the checks both stores make of it before any
//! work.

use crate::{Filter, Hit, PayloadRead, Result, SparseVector, StoreError};
use trine_core::late::Tokens;

/// The lexical prefetch of Qdrant's one-call hybrid ([`Ranking::NativeHybrid`]).
#[derive(Debug, Clone, PartialEq)]
pub enum NativeLexical {
    /// Qdrant's BM25 over the text index (the text of the query).
    Bm25(String),
    /// The `sparse` space (the query's sparse encoding).
    Sparse(SparseVector),
}

/// What a query ranks the filter's points by.
#[derive(Debug, Clone, PartialEq)]
pub enum Ranking {
    /// Cosine to this vector in the `dense` space.
    Dense(Vec<f32>),
    /// Qdrant's BM25 over the text index, with the IDF statistics taken
    /// within the filter's tenant.
    Text(String),
    /// The `sparse` space (dot product, IDF modifier within the tenant).
    Sparse(SparseVector),
    /// Qdrant's own one-call hybrid search, for comparing trine with what a
    /// user would pick instead: a dense prefetch and a lexical prefetch
    /// (`prefetch` points each, within the filter, IDF within the tenant)
    /// fused by Qdrant's RRF with `rrf_k`; never any payload. Qdrant ranks
    /// from 0, so trine's k = 60 is `rrf_k` = 61.
    NativeHybrid {
        dense: Vec<f32>,
        lexical: NativeLexical,
        prefetch: usize,
        rrf_k: usize,
    },
    /// Late interaction: MaxSim of these query tokens with each point's in
    /// the `tokens` space ([`crate::TOKENS_VECTOR`]; [`trine_core::late`]).
    /// A collection without the space answers nothing, as does a point
    /// without tokens.
    Late(Tokens),
}

impl Ranking {
    /// The name of the read in metrics and logs.
    pub fn op(&self) -> &'static str {
        match self {
            Self::Dense(_) => "query_dense",
            Self::Text(_) => "query_text",
            Self::Sparse(_) => "query_sparse",
            Self::NativeHybrid { .. } => "query_native_hybrid",
            Self::Late(_) => "query_late",
        }
    }
}

/// The `limit` best points of the filter under a ranking, with as much of
/// each hit's payload as `payload` asks.
#[derive(Debug, Clone, PartialEq)]
pub struct Query {
    pub ranking: Ranking,
    pub filter: Filter,
    pub limit: usize,
    pub payload: PayloadRead,
}

impl Query {
    fn new(ranking: Ranking, filter: &Filter, limit: usize) -> Self {
        Self {
            ranking,
            filter: filter.clone(),
            limit,
            payload: PayloadRead::Nothing,
        }
    }

    /// The `limit` points nearest to `vector` by cosine; no payload.
    pub fn dense(vector: Vec<f32>, filter: &Filter, limit: usize) -> Self {
        Self::new(Ranking::Dense(vector), filter, limit)
    }

    /// The `limit` points ranked by Qdrant's BM25 for `text`; no payload.
    pub fn text(text: impl Into<String>, filter: &Filter, limit: usize) -> Self {
        Self::new(Ranking::Text(text.into()), filter, limit)
    }

    /// The `limit` points ranked by the `sparse` space; no payload.
    pub fn sparse(vector: SparseVector, filter: &Filter, limit: usize) -> Self {
        Self::new(Ranking::Sparse(vector), filter, limit)
    }

    /// Qdrant's one-call hybrid ([`Ranking::NativeHybrid`]).
    pub fn native_hybrid(
        dense: Vec<f32>,
        lexical: NativeLexical,
        filter: &Filter,
        prefetch: usize,
        rrf_k: usize,
        limit: usize,
    ) -> Self {
        let ranking = Ranking::NativeHybrid {
            dense,
            lexical,
            prefetch,
            rrf_k,
        };
        Self::new(ranking, filter, limit)
    }

    /// MaxSim of `tokens` with the points `ids` (of the filter still),
    /// best first; no payload.
    pub fn late(tokens: Tokens, ids: &[uuid::Uuid], filter: &Filter) -> Self {
        let filter = Filter {
            ids: Some(ids.to_vec()),
            ..filter.clone()
        };
        Self::new(Ranking::Late(tokens), &filter, ids.len())
    }

    /// The same query reading `payload` of each hit.
    pub fn with_payload(self, payload: PayloadRead) -> Self {
        Self { payload, ..self }
    }

    /// The checks every store makes of a query before any work, so that
    /// both refuse the same input with the same error: a limit or prefetch
    /// of 0, a blank text, a sparse vector whose indices and values differ
    /// in number, an RRF k beyond 32 bits. `Ok(false)`: the query ranks
    /// nothing (an empty sparse vector) and its answer is empty. What needs
    /// the collection (the dense dimension, the text index) and the filter's
    /// own checks are each store's.
    pub fn check(&self) -> Result<bool> {
        let positive = |what: &'static str, n: usize| {
            if n == 0 {
                Err(StoreError::invalid(
                    what,
                    format!("the {what} is 0: ask for at least one"),
                ))
            } else {
                Ok(())
            }
        };
        positive("limit", self.limit)?;
        match &self.ranking {
            Ranking::Dense(_) => Ok(true),
            Ranking::Late(tokens) => {
                let rows = tokens.rows.len();
                if tokens.dim == 0 || rows % tokens.dim != 0 {
                    return Err(StoreError::invalid(
                        "query tokens",
                        format!("{rows} values are not rows of {} values", tokens.dim),
                    ));
                }
                if tokens.len() > trine_core::late::MAX_QUERY_TOKENS {
                    return Err(StoreError::invalid(
                        "query tokens",
                        format!(
                            "{} tokens, more than the {} a query may have",
                            tokens.len(),
                            trine_core::late::MAX_QUERY_TOKENS
                        ),
                    ));
                }
                Ok(!tokens.is_empty())
            }
            Ranking::Text(text) => nonblank(text).map(|()| true),
            Ranking::Sparse(vector) => {
                matched(vector)?;
                Ok(!vector.indices.is_empty())
            }
            Ranking::NativeHybrid {
                lexical,
                prefetch,
                rrf_k,
                ..
            } => {
                positive("prefetch", *prefetch)?;
                if u32::try_from(*rrf_k).is_err() {
                    return Err(StoreError::invalid("rrf k", "it is above 4,294,967,295"));
                }
                match lexical {
                    NativeLexical::Bm25(text) => nonblank(text)?,
                    NativeLexical::Sparse(vector) => matched(vector)?,
                }
                Ok(true)
            }
        }
    }
}

/// A store's rankings, each after [`Query::check`]: what [`run`] dispatches
/// a query to.
#[async_trait::async_trait]
pub(crate) trait Rankings: Sync {
    async fn dense(
        &self,
        vector: Vec<f32>,
        filter: &Filter,
        limit: usize,
        payload: PayloadRead,
    ) -> Result<Vec<Hit>>;

    async fn text(
        &self,
        text: &str,
        filter: &Filter,
        limit: usize,
        payload: PayloadRead,
    ) -> Result<Vec<Hit>>;

    async fn sparse(
        &self,
        vector: SparseVector,
        filter: &Filter,
        limit: usize,
        payload: PayloadRead,
    ) -> Result<Vec<Hit>>;

    // The `Ranking::NativeHybrid` fields, then the query's own.
    #[allow(clippy::too_many_arguments)]
    async fn native_hybrid(
        &self,
        dense: Vec<f32>,
        lexical: NativeLexical,
        filter: &Filter,
        prefetch: usize,
        rrf_k: usize,
        limit: usize,
        payload: PayloadRead,
    ) -> Result<Vec<Hit>>;

    /// [`Ranking::Late`] over the filter's points.
    async fn late(&self, tokens: Tokens, filter: &Filter, limit: usize) -> Result<Vec<Hit>>;
}

/// [`crate::Store::query`] of both stores: the shared checks, then the
/// store's ranking.
pub(crate) async fn run<R: Rankings + ?Sized>(store: &R, query: Query) -> Result<Vec<Hit>> {
    if !query.check()? {
        return Ok(Vec::new());
    }
    let Query {
        ranking,
        filter,
        limit,
        payload,
    } = query;
    match ranking {
        Ranking::Dense(vector) => store.dense(vector, &filter, limit, payload).await,
        Ranking::Text(text) => store.text(&text, &filter, limit, payload).await,
        Ranking::Sparse(vector) => store.sparse(vector, &filter, limit, payload).await,
        Ranking::Late(tokens) => store.late(tokens, &filter, limit).await,
        Ranking::NativeHybrid {
            dense,
            lexical,
            prefetch,
            rrf_k,
        } => {
            store
                .native_hybrid(dense, lexical, &filter, prefetch, rrf_k, limit, payload)
                .await
        }
    }
}

/// A dense vector of the collection's dimension.
pub(crate) fn check_dim(collection: &str, got: usize, want: usize) -> Result<()> {
    if got != want {
        return Err(StoreError::DimensionMismatch {
            collection: collection.to_string(),
            got,
            want,
        });
    }
    Ok(())
}

fn nonblank(text: &str) -> Result<()> {
    if text.trim().is_empty() {
        return Err(StoreError::invalid("text query", "it is empty"));
    }
    Ok(())
}

/// A sparse vector has one value per index.
pub(crate) fn matched(v: &SparseVector) -> Result<()> {
    if v.indices.len() != v.values.len() {
        return Err(StoreError::invalid(
            "sparse vector",
            format!(
                "{} indices but {} values: give one value per index",
                v.indices.len(),
                v.values.len()
            ),
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sparse(indices: &[u32], values: &[f32]) -> SparseVector {
        SparseVector {
            indices: indices.to_vec(),
            values: values.to_vec(),
        }
    }

    #[test]
    fn both_stores_check_a_query_the_same_way() {
        let f = Filter::tenant("t");
        let native = |lexical, prefetch, rrf_k| {
            Query::native_hybrid(vec![1.0], lexical, &f, prefetch, rrf_k, 5)
        };
        // (query, Ok(ranks something) or the error's field)
        let table: Vec<(Query, std::result::Result<bool, &str>)> = vec![
            (Query::dense(vec![1.0], &f, 1), Ok(true)),
            (Query::dense(vec![1.0], &f, 0), Err("limit")),
            (Query::text("fox", &f, 10), Ok(true)),
            (Query::text("  ", &f, 10), Err("text query")),
            (Query::sparse(sparse(&[1], &[1.0]), &f, 10), Ok(true)),
            (Query::sparse(sparse(&[], &[]), &f, 10), Ok(false)),
            (
                Query::sparse(sparse(&[1, 2], &[1.0]), &f, 10),
                Err("sparse vector"),
            ),
            (native(NativeLexical::Bm25("fox".into()), 20, 61), Ok(true)),
            (
                native(NativeLexical::Bm25(String::new()), 20, 61),
                Err("text query"),
            ),
            (
                native(NativeLexical::Bm25("fox".into()), 0, 61),
                Err("prefetch"),
            ),
            (
                native(NativeLexical::Bm25("fox".into()), 20, 1 << 33),
                Err("rrf k"),
            ),
            (
                native(NativeLexical::Sparse(sparse(&[1], &[])), 20, 61),
                Err("sparse vector"),
            ),
        ];
        for (query, want) in table {
            match (query.check(), want) {
                (Ok(got), Ok(want)) => assert_eq!(got, want, "{query:?}"),
                (Err(StoreError::Invalid { what, .. }), Err(field)) => {
                    assert_eq!(what, field, "{query:?}")
                }
                (got, want) => panic!("{query:?}: {got:?}, want {want:?}"),
            }
        }
        let q = Query::text("fox", &f, 3).with_payload(PayloadRead::Memory);
        assert_eq!(
            (q.payload, q.ranking.op()),
            (PayloadRead::Memory, "query_text")
        );
    }
}
