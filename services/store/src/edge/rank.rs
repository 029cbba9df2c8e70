//! The rankings of [`Store::query`] on the shard, after [`Query::check`]:
//! dense, BM25 over the text index, sparse, and Qdrant's native hybrid.

use super::*;
use crate::TOKENS_VECTOR;
use crate::query::{Rankings, check_dim};
use trine_core::late::Tokens;

/// The rankings of [`Store::query`], after [`Query::check`].
#[async_trait]
impl Rankings for EdgeStore {
    async fn dense(
        &self,
        vector: Vec<f32>,
        filter: &Filter,
        limit: usize,
        payload: PayloadRead,
    ) -> Result<Vec<Hit>> {
        let filter = filter::to_qdrant(filter, &self.inner.schema)?;
        self.with_shard(move |open, inner| {
            check_dim(&inner.name, vector.len(), open.dense_dim().unwrap_or(0))?;
            let query = nearest(qe::VectorInternal::Dense(vector), DENSE_VECTOR);
            let params = qe::SearchParams {
                hnsw_ef: Some(limit.max(MIN_HNSW_EF)),
                ..Default::default()
            };
            open.query(query, filter, params, limit, payload)
        })
        .await
    }

    /// BM25 over the text index, with Qdrant's statistics (N, each term's
    /// documents, the average length) over the tenant's points: gathered by
    /// a pass over them on each query, or, where every point ever written
    /// into the shard is the tenant's ([`tenants`]), read from the index's
    /// counts over the whole shard — the same points, and the versions of
    /// the tenant's own memories that were replaced or deleted in an
    /// optimized segment until they are vacuumed, as in any BM25 query of
    /// Qdrant without a corpus.
    async fn text(
        &self,
        query: &str,
        filter: &Filter,
        limit: usize,
        payload: PayloadRead,
    ) -> Result<Vec<Hit>> {
        let corpus = filter::tenant_only(filter, &self.inner.schema)?;
        let tenant = filter.tenant.clone();
        let filter = filter::to_qdrant(filter, &self.inner.schema)?;
        let query = query.to_string();
        self.with_shard(move |open, inner| {
            if !open.text_scoring.load(Ordering::Acquire) {
                return Err(StoreError::NoTextIndex(inner.name.clone()));
            }
            let text = qe::TextQueryBuilder::new(filter::path(&inner.schema.text)?, query).build();
            if let Some(mark) = open.tenants.sole(&tenant) {
                let hits = open.query(
                    text.clone(),
                    filter.clone(),
                    qe::SearchParams::default(),
                    limit,
                    payload,
                )?;
                if open.tenants.sole(&tenant) == Some(mark) {
                    return Ok(hits);
                }
            }
            open.query(text, filter, idf_within(corpus), limit, payload)
        })
        .await
    }

    async fn sparse(
        &self,
        vector: SparseVector,
        filter: &Filter,
        limit: usize,
        payload: PayloadRead,
    ) -> Result<Vec<Hit>> {
        let corpus = filter::tenant_only(filter, &self.inner.schema)?;
        let tenant = filter.tenant.clone();
        let filter = filter::to_qdrant(filter, &self.inner.schema)?;
        // Checked before the hop to the blocking pool.
        let checked = convert::to_sparse(vector.clone())?;
        self.with_shard(move |open, _| {
            let (query, params) = sparse_query(open, &tenant, &vector, checked, corpus)?;
            open.query(query, filter, params, limit, payload)
        })
        .await
    }

    async fn native_hybrid(
        &self,
        dense: Vec<f32>,
        lexical: NativeLexical,
        filter: &Filter,
        prefetch: usize,
        rrf_k: usize,
        limit: usize,
        payload: PayloadRead,
    ) -> Result<Vec<Hit>> {
        let corpus = filter::tenant_only(filter, &self.inner.schema)?;
        let filter = filter::to_qdrant(filter, &self.inner.schema)?;
        let bm25 = matches!(lexical, NativeLexical::Bm25(_));
        let lexical = match lexical {
            NativeLexical::Bm25(text) => {
                qe::TextQueryBuilder::new(filter::path(&self.inner.schema.text)?, text).build()
            }
            NativeLexical::Sparse(vector) => nearest(convert::to_sparse(vector)?, SPARSE_VECTOR),
        };
        self.with_shard(move |open, inner| {
            check_dim(&inner.name, dense.len(), open.dense_dim().unwrap_or(0))?;
            if bm25 && !open.text_scoring.load(Ordering::Acquire) {
                return Err(StoreError::NoTextIndex(inner.name.clone()));
            }
            let dense = qe::PrefetchBuilder::new(prefetch)
                .query(nearest(qe::VectorInternal::Dense(dense), DENSE_VECTOR))
                .filter(filter.clone())
                .params(qe::SearchParams {
                    hnsw_ef: Some(prefetch.max(MIN_HNSW_EF)),
                    ..Default::default()
                })
                .build();
            let lexical = qe::PrefetchBuilder::new(prefetch)
                .query(lexical)
                .filter(filter.clone())
                .params(idf_within(corpus))
                .build();
            let request = qe::QueryRequestBuilder::new(limit)
                .add_prefetch(dense)
                .add_prefetch(lexical)
                .query(qe::ScoringQuery::Fusion(qe::Fusion::Rrf {
                    k: rrf_k,
                    weights: None,
                }))
                .filter(filter);
            open.run_query(request, payload)
        })
        .await
    }

    /// MaxSim over the `tokens` space, exact (the space has no graph); a
    /// shard made before the space answers nothing.
    async fn late(&self, tokens: Tokens, filter: &Filter, limit: usize) -> Result<Vec<Hit>> {
        let filter = filter::to_qdrant(filter, &self.inner.schema)?;
        self.with_shard(move |open, inner| {
            if !open.tokens {
                return Ok(Vec::new());
            }
            check_dim(&inner.name, tokens.dim, open.dense_dim().unwrap_or(0))?;
            let query = nearest(convert::to_multi(tokens)?, TOKENS_VECTOR);
            let params = qe::SearchParams {
                exact: true,
                ..Default::default()
            };
            open.query(query, filter, params, limit, PayloadRead::Nothing)
        })
        .await
    }
}

/// The `sparse` ranking's query of the tenant's points: where the document
/// frequencies are kept, `vector` weighted by them in `sparse_tf` — the same
/// scores as the IDF space's, without the modifier's pass over the tenant —,
/// else the IDF space with the tenant as the corpus. `checked` is `vector`
/// as Edge takes it.
pub(super) fn sparse_query(
    open: &Open,
    tenant: &str,
    vector: &SparseVector,
    checked: qe::VectorInternal,
    corpus: qe::Filter,
) -> Result<(qe::ScoringQuery, qe::SearchParams)> {
    let weighted = match open.sparse_tf {
        true => open.kept.idf_weighted(tenant, vector),
        false => None,
    };
    Ok(match weighted {
        Some(weighted) => (
            nearest(convert::to_sparse(weighted)?, SPARSE_TF_VECTOR),
            qe::SearchParams::default(),
        ),
        None => (nearest(checked, SPARSE_VECTOR), idf_within(corpus)),
    })
}

/// Nearest neighbours of `vector` in the named space.
pub(super) fn nearest(vector: qe::VectorInternal, using: &str) -> qe::ScoringQuery {
    qe::ScoringQuery::Vector(qe::QueryEnum::Nearest(qe::NamedQuery::new(vector, using)))
}

/// Search parameters taking IDF statistics over `corpus` only.
pub(super) fn idf_within(corpus: qe::Filter) -> qe::SearchParams {
    qe::SearchParams {
        idf: Some(qe::IdfParams::Corpus(qe::IdfCorpusParams { corpus })),
        ..Default::default()
    }
}
