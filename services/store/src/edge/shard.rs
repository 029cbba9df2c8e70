//! The open shard: each synchronous Edge call trine makes of it (load,
//! upsert, delete, get, count, scroll, query, sparse updates), run by
//! `EdgeStore::with_shard` on the blocking pool.

use super::*;
use trine_core::sparse::TermVector;

impl Open {
    pub(super) fn load(dir: &Path, layout: Arc<PayloadSchema>) -> Result<Self> {
        let path = dir.join(SHARD_DIR);
        let shard = schema::below_services(|| {
            qe::EdgeShard::load(&path, Some(schema::load_config())).map_err(backend)
        })?;
        let info = shard.info().map_err(backend)?;
        let scoring = schema::text_index_info(&info, &layout).is_some_and(|t| t.scoring);
        let sparse_tf = schema::has_sparse_tf(&shard.config());
        let tokens = schema::has_tokens(&shard.config());
        // Checked against the points: those of every tenant but the one
        // recorded (all, where none is).
        let tenants = tenants::Tenants::load(dir, |tenant| {
            let filter = match tenant {
                Some(tenant) => filter::other_tenants(tenant, &layout)?,
                None => qe::Filter::default(),
            };
            count(&shard, Some(filter))
        })?;
        Ok(Self {
            shard,
            schema: layout,
            text_scoring: AtomicBool::new(scoring),
            sparse_tf,
            tokens,
            kept: kept::Kept::default(),
            tenants,
            maintenance: Mutex::new(()),
            unoptimized: std::sync::atomic::AtomicU64::new(0),
            optimizing: tokio::sync::watch::Sender::new(false),
        })
    }

    pub(super) fn dense_dim(&self) -> Option<usize> {
        self.shard
            .config()
            .vectors
            .get(DENSE_VECTOR)
            .map(|v| v.size)
    }

    /// Applies an update and waits until it is on disk.
    pub(super) fn write(&self, operation: qe::UpdateOperation) -> Result<()> {
        self.shard.update(operation).map_err(backend)?;
        self.shard.flush().map_err(backend)
    }

    /// Writes `points` (validated, dimension checked), the tenants they name
    /// recorded first and the document frequencies kept as the write went.
    pub(super) fn upsert(&self, inner: &Inner, points: Vec<Point>) -> Result<()> {
        if points.is_empty() {
            return Ok(());
        }
        let want = self.dense_dim().unwrap_or(0);
        let writing = self.kept.writing();
        // Where the statistics are kept: what this write replaces and
        // what it writes.
        let mut written = Vec::new();
        let mut batch = Vec::with_capacity(points.len());
        let mut tenants: HashSet<String> = HashSet::new();
        for point in points {
            point.memory.validate().map_err(|why| {
                StoreError::invalid("memory", format!("{}: {why}", point.memory.id))
            })?;
            if point.dense.len() != want {
                return Err(StoreError::DimensionMismatch {
                    collection: inner.name.clone(),
                    got: point.dense.len(),
                    want,
                });
            }
            if !tenants.contains(&point.memory.tenant) {
                tenants.insert(point.memory.tenant.clone());
            }
            if writing.reads {
                written.push(Document {
                    memory: point.memory.clone(),
                    sparse: point.sparse.clone(),
                });
            }
            batch.push(convert::to_point(
                point,
                &self.schema,
                self.sparse_tf,
                self.tokens,
            )?);
        }
        let replaced = if writing.reads {
            // A point written twice in one batch keeps its last version.
            let mut last = HashSet::new();
            written.reverse();
            written.retain(|d| last.insert(d.memory.id));
            let ids: Vec<Uuid> = written.iter().map(|d| d.memory.id).collect();
            Some(self.documents(&ids)?)
        } else {
            None
        };
        // The record first: no query may take a statistic of a tenant
        // it does not know is there.
        self.tenants
            .admit(&inner.dir, &writing, tenants.iter().map(String::as_str))?;
        let result = self.write(qe::UpdateOperation::PointOperation(
            qe::PointOperations::UpsertPoints(qe::PointInsertOperations::PointsList(batch)),
        ));
        let outcome = match &result {
            Ok(()) => Ok((replaced.as_deref(), written.as_slice())),
            Err(_) => Err(()),
        };
        self.kept.written(&writing, outcome);
        result
    }

    /// Deletes `ids`, the document frequencies kept as the delete went.
    pub(super) fn delete(&self, ids: &[Uuid]) -> Result<()> {
        if ids.is_empty() {
            return Ok(());
        }
        let writing = self.kept.writing();
        let replaced = if writing.reads {
            Some(self.documents(ids)?)
        } else {
            None
        };
        let result = self.write(qe::UpdateOperation::PointOperation(
            qe::PointOperations::DeletePoints {
                ids: ids.iter().copied().map(qe::PointId::Uuid).collect(),
            },
        ));
        let outcome = match &result {
            Ok(()) => Ok((replaced.as_deref(), &[][..])),
            Err(_) => Err(()),
        };
        self.kept.written(&writing, outcome);
        result
    }

    /// The memories of those of `ids` that exist, in the order of `ids`.
    pub(super) fn get(&self, ids: &[Uuid]) -> Result<Vec<Memory>> {
        let mut found: HashMap<Uuid, Memory> = self
            .retrieve(ids, false)?
            .into_iter()
            .map(|d| (d.memory.id, d.memory))
            .collect();
        Ok(ids.iter().filter_map(|id| found.remove(id)).collect())
    }

    /// What the document frequencies count of those of `ids` that exist
    /// (the whole memory and the `sparse` vector), in no particular order.
    pub(super) fn documents(&self, ids: &[Uuid]) -> Result<Vec<Document>> {
        self.retrieve(ids, true)
    }

    /// Those of `ids` that exist, whole (memory, dense, sparse and tokens
    /// vectors), in the order of `ids`.
    pub(super) fn points(&self, ids: &[Uuid]) -> Result<Vec<Point>> {
        let mut found: HashMap<Uuid, Point> = HashMap::new();
        let records = self.retrieve_records(
            ids,
            qe::WithPayloadInterface::Bool(true),
            qe::WithVector::Bool(true),
        )?;
        for record in records {
            let id = convert::to_uuid(record.id);
            let (dense, sparse, tokens) = match record.vector {
                Some(vector) => convert::vectors_of(vector),
                None => (Vec::new(), None, None),
            };
            let memory = convert::to_memory(id, record.payload, &self.schema);
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

    /// Those of `ids` that exist, in no particular order: the whole memory
    /// and, with `sparse`, the `sparse` vector.
    fn retrieve(&self, ids: &[Uuid], sparse: bool) -> Result<Vec<Document>> {
        let with_vector = match sparse {
            true => qe::WithVector::Selector(vec![SPARSE_VECTOR.into()]),
            false => qe::WithVector::Bool(false),
        };
        Ok(self
            .retrieve_records(ids, qe::WithPayloadInterface::Bool(true), with_vector)?
            .into_iter()
            .map(|record| {
                let id = convert::to_uuid(record.id);
                Document {
                    memory: convert::to_memory(id, record.payload, &self.schema),
                    sparse: record.vector.and_then(convert::sparse_of),
                }
            })
            .collect())
    }

    /// The records of those of `ids` that exist, in no particular order,
    /// with the payload and vectors asked for.
    fn retrieve_records(
        &self,
        ids: &[Uuid],
        with_payload: qe::WithPayloadInterface,
        with_vector: qe::WithVector,
    ) -> Result<Vec<qe::Record>> {
        let request = qe::RetrieveRequest {
            point_ids: ids.iter().copied().map(qe::PointId::Uuid).collect(),
            with_payload: Some(with_payload),
            with_vector: Some(with_vector),
        };
        self.shard.retrieve(request).map_err(backend)
    }

    pub(super) fn count(&self, filter: Option<qe::Filter>) -> Result<u64> {
        count(&self.shard, filter)
    }

    /// Up to `limit` records matching `filter` with the payload and vectors
    /// asked for, in ascending id order from `offset` (inclusive), and the
    /// offset of the next page.
    pub(super) fn scroll_records(
        &self,
        filter: qe::Filter,
        limit: usize,
        offset: Option<Uuid>,
        with_payload: qe::WithPayloadInterface,
        with_vector: qe::WithVector,
    ) -> Result<(Vec<qe::Record>, Option<Uuid>)> {
        let request = qe::ScrollRequest {
            offset: offset.map(qe::PointId::Uuid),
            limit: Some(limit),
            filter: Some(filter),
            with_payload: Some(with_payload),
            with_vector,
            order_by: None,
        };
        let (records, next) = self.shard.scroll(request).map_err(backend)?;
        Ok((records, next.map(convert::to_uuid)))
    }

    /// The payload selector of the source alone: what the term scroll and a
    /// `PayloadRead::Source` query read of each point.
    pub(super) fn source_only(&self) -> Result<qe::WithPayloadInterface> {
        Ok(qe::WithPayloadInterface::Fields(vec![filter::path(
            &self.schema.source,
        )?]))
    }

    /// Up to `limit` points matching `filter` with their sparse vector and,
    /// with `source`, their source only, in ascending id order from `offset`
    /// (inclusive).
    pub(super) fn scroll_terms(
        &self,
        filter: qe::Filter,
        limit: usize,
        offset: Option<Uuid>,
        source: bool,
    ) -> Result<TermPage> {
        let source = if source {
            self.source_only()?
        } else {
            qe::WithPayloadInterface::Bool(false)
        };
        let sparse = qe::WithVector::Selector(vec![SPARSE_VECTOR.into()]);
        let (records, next_offset) = self.scroll_records(filter, limit, offset, source, sparse)?;
        let points = records
            .into_iter()
            .map(|record| {
                let id = convert::to_uuid(record.id);
                TermPoint {
                    id,
                    source: convert::to_memory(id, record.payload, &self.schema).source,
                    tf: record
                        .vector
                        .and_then(convert::sparse_of)
                        .map(|v| Arc::new(TermVector::new(&v))),
                }
            })
            .collect();
        Ok(TermPage {
            points,
            next_offset,
        })
    }

    /// Up to `limit` memories matching `filter`, in ascending id order from
    /// `offset` (inclusive).
    pub(super) fn scroll(
        &self,
        filter: qe::Filter,
        limit: usize,
        offset: Option<Uuid>,
    ) -> Result<ScrollPage> {
        let (records, next_offset) = self.scroll_records(
            filter,
            limit,
            offset,
            qe::WithPayloadInterface::Bool(true),
            qe::WithVector::Bool(false),
        )?;
        let memories = records
            .into_iter()
            .map(|record| {
                convert::to_memory(convert::to_uuid(record.id), record.payload, &self.schema)
            })
            .collect();
        Ok(ScrollPage {
            memories,
            next_offset,
        })
    }

    /// `page` (read from the kept postings) with each point's source, read
    /// here, when `source` asks for it.
    pub(super) fn with_sources(&self, mut page: TermPage, source: bool) -> Result<TermPage> {
        if !source || page.points.is_empty() {
            return Ok(page);
        }
        let ids: Vec<Uuid> = page.points.iter().map(|p| p.id).collect();
        let mut sources: HashMap<Uuid, Option<String>> = self
            .retrieve_records(&ids, self.source_only()?, qe::WithVector::Bool(false))?
            .into_iter()
            .map(|record| {
                let id = convert::to_uuid(record.id);
                (
                    id,
                    convert::to_memory(id, record.payload, &self.schema).source,
                )
            })
            .collect();
        for point in &mut page.points {
            point.source = sources.remove(&point.id).flatten();
        }
        Ok(page)
    }

    /// Up to `limit` points of every tenant, in ascending id order from
    /// `offset`, with only what the document frequencies count of them
    /// (tenant, text, source, validity, thread and `seq` — a point's place,
    /// kept with the postings — and the `sparse` vector; the memories'
    /// other fields are left empty), and the offset of the next page.
    pub(super) fn scan_for_frequencies(
        &self,
        limit: usize,
        offset: Option<Uuid>,
    ) -> Result<(Vec<Document>, Option<Uuid>)> {
        let layout = &self.schema;
        let fields = [
            &layout.tenant,
            &layout.text,
            &layout.source,
            &layout.valid_from,
            &layout.valid_until,
            &layout.thread,
            &layout.seq,
        ]
        .into_iter()
        .map(|key| filter::path(key))
        .collect::<Result<Vec<_>>>()?;
        let (records, next_offset) = self.scroll_records(
            qe::Filter::default(),
            limit,
            offset,
            qe::WithPayloadInterface::Fields(fields),
            qe::WithVector::Selector(vec![SPARSE_VECTOR.into()]),
        )?;
        let documents = records
            .into_iter()
            .map(|record| {
                // A bound the layout cannot read as a time is still a bound
                // (Qdrant's validity view leaves such a point out): the
                // tenant's validity views go to the store.
                let unread = |key: &str| {
                    record
                        .payload
                        .as_ref()
                        .is_some_and(|p| p.0.get(key).is_some_and(|v| !v.is_null()))
                };
                let (from, until) = (unread(&layout.valid_from), unread(&layout.valid_until));
                let mut memory =
                    convert::to_memory(convert::to_uuid(record.id), record.payload, layout);
                if (from && memory.valid_from.is_none()) || (until && memory.valid_until.is_none())
                {
                    memory.valid_from = Some(chrono::DateTime::<chrono::Utc>::MIN_UTC);
                }
                Document {
                    memory,
                    sparse: record.vector.and_then(convert::sparse_of),
                }
            })
            .collect();
        Ok((documents, next_offset))
    }

    /// Replaces the `sparse` vector (and `sparse_tf`, where the shard has
    /// it) of the points that exist, leaving their other vectors and payload
    /// as they are, and waits until it is on disk. Each vector is checked
    /// before anything is written.
    ///
    /// Edge refuses the whole update when one id is missing (`PointIdError`),
    /// so the ids are narrowed to the existing ones first; a point deleted
    /// between that read and the update is skipped by one more narrowing.
    pub(super) fn set_sparse(&self, vectors: Vec<(Uuid, SparseVector)>) -> Result<()> {
        let mut vectors = vectors
            .into_iter()
            .map(|(id, vector)| Ok((id, (convert::to_sparse(vector.clone())?, vector))))
            .collect::<Result<Vec<_>>>()?;
        let writing = self.kept.writing();
        for last_try in [false, true] {
            vectors = self.existing(vectors)?;
            if vectors.is_empty() {
                break;
            }
            let points = vectors
                .iter()
                .map(|(id, (vector, _))| qe::PointVectorsPersisted {
                    id: qe::PointId::Uuid(*id),
                    vector: qe::VectorStructInternal::Named(self.sparse_spaces(vector)).into(),
                })
                .collect();
            let operation = qe::UpdateOperation::VectorOperation(
                qe::VectorOperations::UpdateVectors(qe::UpdateVectorsOp {
                    points,
                    update_filter: None,
                }),
            );
            // What the document frequencies take out and put in.
            let replaced = if writing.reads {
                let ids: Vec<Uuid> = vectors.iter().map(|(id, _)| *id).collect();
                Some(self.documents(&ids)?)
            } else {
                None
            };
            let new: HashMap<Uuid, &SparseVector> = vectors
                .iter()
                .map(|(id, (_, vector))| (*id, vector))
                .collect();
            let written: Vec<Document> = replaced
                .iter()
                .flatten()
                .map(|old| Document {
                    memory: old.memory.clone(),
                    sparse: new.get(&old.memory.id).map(|v| (*v).clone()),
                })
                .collect();
            match self.shard.update(operation) {
                Ok(()) => {
                    self.kept
                        .written(&writing, Ok((replaced.as_deref(), written.as_slice())));
                    break;
                }
                Err(qe::OperationError::PointIdError { .. }) if !last_try => {}
                Err(e) => {
                    self.kept.written(&writing, Err(()));
                    return Err(backend(e));
                }
            }
        }
        self.shard.flush().map_err(backend)
    }

    /// A sparse vector under each sparse space the shard has: `sparse`, and
    /// `sparse_tf` where it exists.
    pub(super) fn sparse_spaces(
        &self,
        vector: &qe::VectorInternal,
    ) -> HashMap<String, qe::VectorInternal> {
        let mut spaces = HashMap::from([(SPARSE_VECTOR.to_string(), vector.clone())]);
        if self.sparse_tf {
            spaces.insert(SPARSE_TF_VECTOR.to_string(), vector.clone());
        }
        spaces
    }

    /// The entries whose point exists.
    pub(super) fn existing<T>(&self, entries: Vec<(Uuid, T)>) -> Result<Vec<(Uuid, T)>> {
        let request = qe::RetrieveRequest {
            point_ids: entries
                .iter()
                .map(|(id, _)| qe::PointId::Uuid(*id))
                .collect(),
            with_payload: Some(qe::WithPayloadInterface::Bool(false)),
            with_vector: Some(qe::WithVector::Bool(false)),
        };
        let found: HashSet<Uuid> = self
            .shard
            .retrieve(request)
            .map_err(backend)?
            .into_iter()
            .map(|record| convert::to_uuid(record.id))
            .collect();
        Ok(entries
            .into_iter()
            .filter(|(id, _)| found.contains(id))
            .collect())
    }

    /// One leaf query: `query` within `filter`, best first.
    pub(super) fn query(
        &self,
        query: qe::ScoringQuery,
        filter: qe::Filter,
        params: qe::SearchParams,
        limit: usize,
        payload: PayloadRead,
    ) -> Result<Vec<Hit>> {
        let request = qe::QueryRequestBuilder::new(limit)
            .query(query)
            .filter(filter)
            .params(params);
        self.run_query(request, payload)
    }

    /// Runs `request`, reading of each hit what `payload` says, and no vector.
    pub(super) fn run_query(
        &self,
        request: qe::QueryRequestBuilder,
        payload: PayloadRead,
    ) -> Result<Vec<Hit>> {
        let with_payload = match payload {
            PayloadRead::Nothing => qe::WithPayloadInterface::Bool(false),
            PayloadRead::Source => self.source_only()?,
            PayloadRead::Memory => qe::WithPayloadInterface::Bool(true),
        };
        let request = request
            .with_payload(with_payload)
            .with_vector(qe::WithVector::Bool(false))
            .build();
        let points = self.shard.query(request).map_err(backend)?;
        Ok(points
            .into_iter()
            .map(|point| {
                let id = convert::to_uuid(point.id);
                let memory = (payload != PayloadRead::Nothing)
                    .then(|| convert::to_memory(id, point.payload, &self.schema));
                Hit {
                    id,
                    score: point.score,
                    source: memory.as_ref().and_then(|m| m.source.clone()),
                    memory: memory.filter(|_| payload == PayloadRead::Memory),
                }
            })
            .collect())
    }
}

/// The exact number of `shard`'s points within `filter` (all: `None`).
fn count(shard: &qe::EdgeShard, filter: Option<qe::Filter>) -> Result<u64> {
    let request = qe::CountRequest {
        filter,
        exact: true,
    };
    let n = shard.count(request).map_err(backend)?;
    Ok(n as u64)
}
