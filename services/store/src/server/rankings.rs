//! The rankings of [`Store::query`] on the server, after [`Query::check`]:
//! dense, BM25 over the text index, sparse, and Qdrant's native hybrid
//! (both prefetched, fused by RRF).

use super::*;

/// The rankings of [`Store::query`], after [`Query::check`].
#[async_trait]
impl Rankings for ServerStore {
    async fn dense(
        &self,
        vector: Vec<f32>,
        filter: &Filter,
        limit: usize,
        payload: PayloadRead,
    ) -> Result<Vec<Hit>> {
        check_dim(&self.collection, vector.len(), self.dense_dim().await?)?;
        let request = self
            .query_request(filter, limit, payload)?
            .query(q::Query::new_nearest(q::VectorInput::new_dense(vector)))
            .using(DENSE_VECTOR);
        self.run_query(request, payload).await
    }

    async fn text(
        &self,
        query: &str,
        filter: &Filter,
        limit: usize,
        payload: PayloadRead,
    ) -> Result<Vec<Hit>> {
        let request = self.query_request(filter, limit, payload)?;
        if let Some(why) = self.engine.lacks_text_scoring() {
            return Err(StoreError::Unsupported(why));
        }
        let request = request
            .query(q::Query::new_text(query))
            .using(self.schema.text.as_str())
            .params(tenant_idf(&self.schema, &filter.tenant));
        match self.run_query(request, payload).await {
            Ok(hits) => Ok(hits),
            Err(err @ (StoreError::Invalid { .. } | StoreError::Backend(_))) => {
                // A refused BM25 query most likely means no scored text index: say so.
                match self.raw_info().await {
                    Ok(Some(info))
                        if !text_index_of(&info, &self.schema).is_some_and(|t| t.scoring) =>
                    {
                        Err(StoreError::NoTextIndex(self.collection.clone()))
                    }
                    _ => Err(err),
                }
            }
            Err(err) => Err(err),
        }
    }

    /// MaxSim over the `tokens` space, exact (the space has no graph); a
    /// collection made before the space answers nothing.
    async fn late(&self, tokens: Tokens, filter: &Filter, limit: usize) -> Result<Vec<Hit>> {
        check_dim(&self.collection, tokens.dim, self.dense_dim().await?)?;
        if !self.tokens_space().await? {
            return Ok(Vec::new());
        }
        let request = self
            .query_request(filter, limit, PayloadRead::Nothing)?
            .query(q::Query::new_nearest(q::VectorInput::new_multi(rows_of(
                &tokens,
            ))))
            .using(TOKENS_VECTOR)
            .params(SearchParamsBuilder::default().exact(true));
        self.run_query(request, PayloadRead::Nothing).await
    }

    async fn sparse(
        &self,
        vector: SparseVector,
        filter: &Filter,
        limit: usize,
        payload: PayloadRead,
    ) -> Result<Vec<Hit>> {
        let request = self
            .query_request(filter, limit, payload)?
            .query(q::Query::new_nearest(q::VectorInput::new_sparse(
                vector.indices,
                vector.values,
            )))
            .using(SPARSE_VECTOR)
            .params(tenant_idf(&self.schema, &filter.tenant));
        self.run_query(request, payload).await
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
        check_dim(&self.collection, dense.len(), self.dense_dim().await?)?;
        let conditions = qdrant_filter(filter, &self.schema)?;
        let lexical = match lexical {
            NativeLexical::Bm25(text) => {
                if let Some(why) = self.engine.lacks_text_scoring() {
                    return Err(StoreError::Unsupported(why));
                }
                PrefetchQueryBuilder::default()
                    .query(q::Query::new_text(text))
                    .using(self.schema.text.as_str())
            }
            NativeLexical::Sparse(vector) => PrefetchQueryBuilder::default()
                .query(q::Query::new_nearest(q::VectorInput::new_sparse(
                    vector.indices,
                    vector.values,
                )))
                .using(SPARSE_VECTOR),
        };
        let lexical = lexical
            .filter(conditions.clone())
            .params(tenant_idf(&self.schema, &filter.tenant))
            .limit(prefetch as u64);
        let dense = PrefetchQueryBuilder::default()
            .query(q::Query::new_nearest(q::VectorInput::new_dense(dense)))
            .using(DENSE_VECTOR)
            .filter(conditions)
            .limit(prefetch as u64);
        let rrf_k = u32::try_from(rrf_k)
            .map_err(|_| StoreError::invalid("rrf k", "it is above 4,294,967,295"))?;
        let request = self
            .query_request(filter, limit, payload)?
            .prefetch(vec![dense.build(), lexical.build()])
            .query(q::Query::new_rrf(RrfBuilder::with_k(rrf_k)));
        self.run_query(request, payload).await
    }
}
