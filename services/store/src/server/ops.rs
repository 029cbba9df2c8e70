//! The store's own Qdrant calls, one method each (the collection, points,
//! scrolls, queries), every one through [`ServerStore::call`]; the `Store`
//! methods in `server.rs` are built from them.

use super::*;

impl ServerStore {
    pub(super) fn no_collection(&self) -> StoreError {
        StoreError::NoCollection(self.collection.clone())
    }

    /// The server's collection info, or `None` when the collection does not exist.
    pub(super) async fn raw_info(&self) -> Result<Option<q::CollectionInfo>> {
        let name = self.collection.as_str();
        match self.call(|c| Box::pin(c.collection_info(name))).await {
            Ok(resp) => resp.result.map(Some).ok_or_else(|| {
                StoreError::Backend(format!(
                    "the server sent no info for collection `{}`",
                    self.collection
                ))
            }),
            Err(StoreError::NoCollection(_)) => Ok(None),
            Err(other) => Err(other),
        }
    }

    /// The dimension of the `dense` vector, read once from the server.
    pub(super) async fn dense_dim(&self) -> Result<usize> {
        let known = self.dense_dim.load(Ordering::Relaxed);
        if known != 0 {
            return Ok(known);
        }
        let info = self.raw_info().await?.ok_or_else(|| self.no_collection())?;
        let dim = dense_dim_of(&info).ok_or_else(|| no_dense_vector(&self.collection))?;
        self.tokens
            .store(1 + u8::from(tokens_of(&info)), Ordering::Relaxed);
        self.dense_dim.store(dim, Ordering::Relaxed);
        Ok(dim)
    }

    /// Whether the collection has the `tokens` space (read once, with the
    /// dense dimension).
    pub(super) async fn tokens_space(&self) -> Result<bool> {
        if self.tokens.load(Ordering::Relaxed) == 0 {
            self.dense_dim.store(0, Ordering::Relaxed);
            self.dense_dim().await?;
        }
        Ok(self.tokens.load(Ordering::Relaxed) == 2)
    }

    pub(super) async fn create_collection(&self, spec: &CollectionSpec) -> Result<()> {
        let request: q::CreateCollection =
            create_request(&self.collection, spec, self.layout).into();
        self.call(|c| Box::pin(c.create_collection(request.clone())))
            .await
            .map(|_| ())
    }

    /// Gives a collection made before trine set its segment cap
    /// ([`uncapped`]) [`crate::MAX_SEGMENT_KB`], as Edge does at every load;
    /// segments already built keep their size until Qdrant next merges them.
    pub(super) async fn cap_segments(&self, info: &q::CollectionInfo) -> Result<()> {
        if !uncapped(info) {
            return Ok(());
        }
        let request: q::UpdateCollection = UpdateCollectionBuilder::new(self.collection.as_str())
            .optimizers_config(optimizers())
            .into();
        self.call(|c| Box::pin(c.update_collection(request.clone())))
            .await
            .map(|_| ())
    }

    /// Creates the payload index `index` on `field`, waiting until it is built.
    pub(super) async fn create_index(
        &self,
        field: &str,
        index: FieldIndex,
        fold: Fold,
    ) -> Result<()> {
        let (field_type, params) = index_params(index, self.schema.time_format, fold);
        let request: q::CreateFieldIndexCollection =
            CreateFieldIndexCollectionBuilder::new(self.collection.as_str(), field, field_type)
                .field_index_params(params)
                .wait(true)
                .into();
        self.call(|c| Box::pin(c.create_field_index(request.clone())))
            .await
            .map(|_| ())
    }

    /// The exact number of points matching `filter`.
    pub(super) async fn count_filtered(&self, filter: q::Filter) -> Result<u64> {
        let request: q::CountPoints = CountPointsBuilder::new(self.collection.as_str())
            .filter(filter)
            .exact(true)
            .into();
        let request = q::CountPoints {
            read_consistency: self.read_consistency,
            ..request
        };
        let resp = self.call(|c| Box::pin(c.count(request.clone()))).await?;
        resp.result.map(|r| r.count).ok_or_else(|| {
            StoreError::Backend(format!(
                "the server sent no count for `{}`",
                self.collection
            ))
        })
    }

    /// Up to `limit` points matching `filter` with the payload and vectors
    /// asked for, in ascending id order from `offset` (inclusive), and the
    /// offset of the next page.
    pub(super) async fn scroll_points(
        &self,
        filter: q::Filter,
        limit: usize,
        offset: Option<Uuid>,
        payload: impl Into<q::with_payload_selector::SelectorOptions>,
        vectors: impl Into<q::with_vectors_selector::SelectorOptions>,
    ) -> Result<(Vec<q::RetrievedPoint>, Option<Uuid>)> {
        let limit = u32::try_from(limit)
            .ok()
            .filter(|l| *l > 0)
            .ok_or_else(|| {
                StoreError::invalid("scroll limit", format!("{limit}: use 1 to {}", u32::MAX))
            })?;
        let mut request = ScrollPointsBuilder::new(self.collection.as_str())
            .filter(filter)
            .limit(limit)
            .with_payload(payload)
            .with_vectors(vectors);
        if let Some(offset) = offset {
            request = request.offset(point_id(offset));
        }
        let request = q::ScrollPoints {
            read_consistency: self.read_consistency,
            ..request.into()
        };
        let resp = self.call(|c| Box::pin(c.scroll(request.clone()))).await?;
        let next_offset = match resp.next_page_offset {
            Some(id) => Some(uuid_of(Some(&id))?),
            None => None,
        };
        Ok((resp.result, next_offset))
    }

    /// Up to `limit` memories matching `filter`, in ascending id order from
    /// `offset` (inclusive).
    pub(super) async fn scroll_filtered(
        &self,
        filter: q::Filter,
        limit: usize,
        offset: Option<Uuid>,
    ) -> Result<ScrollPage> {
        let (points, next_offset) = self
            .scroll_points(filter, limit, offset, true, false)
            .await?;
        let memories = points
            .into_iter()
            .map(|p| {
                let id = uuid_of(p.id.as_ref())?;
                Ok(self.schema.to_memory(id, json_map(p.payload)))
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(ScrollPage {
            memories,
            next_offset,
        })
    }

    /// The payload selector of the source alone: what the term scroll and a
    /// `PayloadRead::Source` query read of each point.
    pub(super) fn source_only(&self) -> q::PayloadIncludeSelector {
        q::PayloadIncludeSelector {
            fields: vec![self.schema.source.clone()],
        }
    }

    /// Up to `limit` points matching `filter` with their `sparse` vector and,
    /// with `source`, their source only, in ascending id order from `offset`
    /// (inclusive).
    pub(super) async fn scroll_terms_filtered(
        &self,
        filter: q::Filter,
        limit: usize,
        offset: Option<Uuid>,
        source: bool,
    ) -> Result<TermPage> {
        let payload: q::with_payload_selector::SelectorOptions = if source {
            self.source_only().into()
        } else {
            false.into()
        };
        let vectors = q::VectorsSelector {
            names: vec![SPARSE_VECTOR.to_string()],
        };
        let (points, next_offset) = self
            .scroll_points(filter, limit, offset, payload, vectors)
            .await?;
        let points = points
            .into_iter()
            .map(|p| self.term_point(p.id.as_ref(), p.payload, p.vectors))
            .collect::<Result<Vec<_>>>()?;
        Ok(TermPage {
            points,
            next_offset,
        })
    }

    /// A point of a term read: its sparse encoding and, where read, its source.
    fn term_point(
        &self,
        id: Option<&q::PointId>,
        payload: HashMap<String, q::Value>,
        vectors: Option<q::VectorsOutput>,
    ) -> Result<TermPoint> {
        let id = uuid_of(id)?;
        Ok(TermPoint {
            id,
            source: self.schema.to_memory(id, json_map(payload)).source,
            tf: vectors
                .and_then(sparse_output)
                .map(|v| std::sync::Arc::new(trine_core::sparse::TermVector::new(&v))),
        })
    }

    /// The reads in one call, Qdrant's batch query: each query without a
    /// vector reads the points in ascending id order, as a scroll does. A
    /// term read asks one point more than its limit; that point's id is the
    /// offset of its next page.
    pub(super) async fn read_batch_points(&self, reads: &[BatchRead]) -> Result<Vec<BatchPage>> {
        if reads.is_empty() {
            return Ok(Vec::new());
        }
        let mut queries = Vec::with_capacity(reads.len());
        for read in reads {
            queries.push(self.batch_query(read)?);
        }
        let request = q::QueryBatchPoints {
            collection_name: self.collection.clone(),
            query_points: queries,
            read_consistency: self.read_consistency,
            timeout: None,
        };
        let resp = self
            .call(|c| Box::pin(c.query_batch(request.clone())))
            .await?;
        if resp.result.len() != reads.len() {
            return Err(StoreError::Backend(format!(
                "a batch of {} reads came back with {} results",
                reads.len(),
                resp.result.len()
            )));
        }
        reads
            .iter()
            .zip(resp.result)
            .map(|(read, found)| self.batch_page(read, found.result))
            .collect()
    }

    /// One read of [`Self::read_batch_points`] as a query: a term read one
    /// point more than its limit, with the `sparse` vector (and the source
    /// if asked); a memory read with the payload.
    fn batch_query(&self, read: &BatchRead) -> Result<q::QueryPoints> {
        let (filter, limit) = (read.filter(), read.limit());
        if limit == 0 || u32::try_from(limit).is_err() {
            return Err(StoreError::invalid(
                "read limit",
                format!("{limit}: use 1 to {}", u32::MAX - 1),
            ));
        }
        let request = QueryPointsBuilder::new(self.collection.as_str())
            .filter(qdrant_filter(filter, &self.schema)?);
        let request = match read {
            BatchRead::Terms { source, .. } => request
                .limit(limit as u64 + 1)
                .with_payload(if *source {
                    q::with_payload_selector::SelectorOptions::from(self.source_only())
                } else {
                    false.into()
                })
                .with_vectors(q::VectorsSelector {
                    names: vec![SPARSE_VECTOR.to_string()],
                }),
            BatchRead::Memories { .. } => request
                .limit(limit as u64)
                .with_payload(true)
                .with_vectors(false),
        };
        Ok(request.build())
    }

    /// The page of one read of [`Self::read_batch_points`] from the points
    /// its query found: past a term read's limit, the next page's offset.
    fn batch_page(&self, read: &BatchRead, found: Vec<q::ScoredPoint>) -> Result<BatchPage> {
        match read {
            BatchRead::Terms { limit, .. } => {
                let mut points = found;
                let next_offset = if points.len() > *limit {
                    let next = points.split_off(*limit);
                    Some(uuid_of(next[0].id.as_ref())?)
                } else {
                    None
                };
                let points = points
                    .into_iter()
                    .map(|p| self.term_point(p.id.as_ref(), p.payload, p.vectors))
                    .collect::<Result<Vec<_>>>()?;
                Ok(BatchPage::Terms(TermPage {
                    points,
                    next_offset,
                }))
            }
            BatchRead::Memories { .. } => Ok(BatchPage::Memories(
                found
                    .into_iter()
                    .map(|p| {
                        let id = uuid_of(p.id.as_ref())?;
                        Ok(self.schema.to_memory(id, json_map(p.payload)))
                    })
                    .collect::<Result<Vec<_>>>()?,
            )),
        }
    }

    /// The points with these ids, without vectors; with payload if asked.
    pub(super) async fn retrieve(
        &self,
        ids: &[Uuid],
        with_payload: bool,
    ) -> Result<Vec<q::RetrievedPoint>> {
        self.get_points(ids, with_payload, false).await
    }

    /// The points with these ids, at the collection's read consistency.
    async fn get_points(
        &self,
        ids: &[Uuid],
        with_payload: bool,
        with_vectors: bool,
    ) -> Result<Vec<q::RetrievedPoint>> {
        let point_ids: Vec<q::PointId> = ids.iter().copied().map(point_id).collect();
        let request: q::GetPoints = GetPointsBuilder::new(self.collection.as_str(), point_ids)
            .with_payload(with_payload)
            .with_vectors(with_vectors)
            .into();
        let request = q::GetPoints {
            read_consistency: self.read_consistency,
            ..request
        };
        let resp = self
            .call(|c| Box::pin(c.get_points(request.clone())))
            .await?;
        Ok(resp.result)
    }

    /// Those of `ids` that exist, whole (memory, dense, sparse and tokens
    /// vectors), in the order of `ids`.
    pub(super) async fn whole_points(&self, ids: &[Uuid]) -> Result<Vec<Point>> {
        if ids.is_empty() {
            return Ok(Vec::new());
        }
        let mut found: HashMap<Uuid, Point> = HashMap::new();
        for point in self.get_points(ids, true, true).await? {
            let id = uuid_of(point.id.as_ref())?;
            let memory = self.schema.to_memory(id, json_map(point.payload));
            let (dense, tokens, sparse) = match point.vectors {
                Some(vectors) => (
                    dense_output(&vectors),
                    tokens_output(&vectors),
                    sparse_output(vectors),
                ),
                None => (Vec::new(), None, None),
            };
            found.insert(
                id,
                Point {
                    memory,
                    dense,
                    sparse,
                    tokens,
                },
            );
        }
        Ok(ids.iter().filter_map(|id| found.remove(id)).collect())
    }

    /// Which of `ids` are points of the collection.
    pub(super) async fn existing(&self, ids: &[Uuid]) -> Result<HashSet<Uuid>> {
        if ids.is_empty() {
            return Ok(HashSet::new());
        }
        let found = self.retrieve(ids, false).await?;
        found.iter().map(|p| uuid_of(p.id.as_ref())).collect()
    }

    /// Replaces the `sparse` vector of the points of `batch` that exist.
    ///
    /// The server refuses an update naming a missing point, so the batch is
    /// narrowed to the existing points first; should the update still fail
    /// because points were deleted meanwhile, it is narrowed again and
    /// retried (each retry has fewer points, so this ends).
    pub(super) async fn set_sparse_batch(
        &self,
        mut batch: Vec<(Uuid, SparseVector)>,
    ) -> Result<()> {
        let ids: Vec<Uuid> = batch.iter().map(|(id, _)| *id).collect();
        let found = self.existing(&ids).await?;
        batch.retain(|(id, _)| found.contains(id));
        loop {
            if batch.is_empty() {
                return Ok(());
            }
            let points: Vec<q::PointVectors> = batch
                .iter()
                .map(|(id, vector)| sparse_point_vectors(*id, vector))
                .collect();
            let request: q::UpdatePointVectors =
                UpdatePointVectorsBuilder::new(self.collection.as_str(), points)
                    .wait(true)
                    .into();
            let Err(err) = self
                .call(|c| Box::pin(c.update_vectors(request.clone())))
                .await
            else {
                return Ok(());
            };
            let ids: Vec<Uuid> = batch.iter().map(|(id, _)| *id).collect();
            let found = self.existing(&ids).await?;
            if found.len() == batch.len() {
                return Err(err);
            }
            batch.retain(|(id, _)| found.contains(id));
        }
    }

    /// Runs a query and turns its points into hits.
    pub(super) async fn run_query(
        &self,
        request: QueryPointsBuilder,
        payload: PayloadRead,
    ) -> Result<Vec<Hit>> {
        let request = q::QueryPoints {
            read_consistency: self.read_consistency,
            ..request.into()
        };
        let resp = self.call(|c| Box::pin(c.query(request.clone()))).await?;
        resp.result
            .into_iter()
            .map(|p| scored_hit(p, payload, &self.schema))
            .collect()
    }

    /// A query request on this collection: filter, limit, payload.
    pub(super) fn query_request(
        &self,
        filter: &Filter,
        limit: usize,
        payload: PayloadRead,
    ) -> Result<QueryPointsBuilder> {
        let request = QueryPointsBuilder::new(self.collection.as_str())
            .filter(qdrant_filter(filter, &self.schema)?)
            .limit(limit as u64);
        Ok(match payload {
            PayloadRead::Nothing => request.with_payload(false),
            PayloadRead::Source => request.with_payload(self.source_only()),
            PayloadRead::Memory => request.with_payload(true),
        })
    }
}
