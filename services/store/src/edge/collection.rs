//! The collection on disk: the shard opened, created when missing (with
//! the embedder checked), and what it holds ([`CollectionInfo`]).

use super::*;

impl Inner {
    pub(super) fn state(&self) -> MutexGuard<'_, State> {
        locked(&self.state)
    }

    /// The open shard, or `NoCollection`.
    pub(super) fn opened(&self) -> Result<Arc<Open>> {
        self.state()
            .open
            .clone()
            .ok_or_else(|| StoreError::NoCollection(self.name.clone()))
    }

    /// Creates the collection when missing and checks the embedder.
    pub(super) fn ensure(&self, spec: &CollectionSpec) -> Result<Arc<Open>> {
        let mut state = self.state();
        let open = if let Some(open) = state.open.clone() {
            open
        } else {
            fs::create_dir_all(&self.dir).map_err(io(&self.dir))?;
            if state.lock.is_none() {
                state.lock = Some(lock(&self.dir)?);
            }
            if !self.dir.join(SHARD_DIR).is_dir() {
                create_shard(&self.dir, spec, &self.schema)?;
            }
            let open = Arc::new(Open::load(&self.dir, self.schema.clone())?);
            state.open = Some(open.clone());
            open
        };
        crate::check_schema(&self.name, schema::read_schema(&self.dir)?)?;
        let wanted = &spec.embedder;
        match schema::read_embedder(&self.dir)? {
            Some(found) if found == *wanted => Ok(open),
            Some(found) => Err(self.mismatch(found, wanted)),
            // A shard trine did not create: adopt it when the dimension fits.
            None => match open.dense_dim() {
                Some(dim) if dim == wanted.dim => {
                    schema::write_embedder(&self.dir, wanted)?;
                    Ok(open)
                }
                dim => {
                    let found = EmbedderId {
                        name: "unknown".into(),
                        dim: dim.unwrap_or(0),
                    };
                    Err(self.mismatch(found, wanted))
                }
            },
        }
    }

    pub(super) fn mismatch(&self, found: EmbedderId, wanted: &EmbedderId) -> StoreError {
        StoreError::EmbedderMismatch {
            collection: self.name.clone(),
            found: found.name,
            found_dim: found.dim,
            wanted: wanted.name.clone(),
            wanted_dim: wanted.dim,
        }
    }

    pub(super) fn info(&self, open: &Open) -> Result<CollectionInfo> {
        let info = open.shard.info().map_err(backend)?;
        let points = open.count(None)?;
        let config = open.shard.config();
        let sparse_idf = config
            .sparse_vectors
            .get(SPARSE_VECTOR)
            .is_some_and(|s| s.modifier == Some(qe::Modifier::Idf));
        drop(config);
        Ok(CollectionInfo {
            engine: trine_core::model::Engine {
                version: format!("qdrant-edge {}", EDGE_VERSION),
                text_scoring: true,
            },
            name: self.name.clone(),
            backend: "edge".into(),
            embedder: schema::read_embedder(&self.dir)?,
            dense_dim: open.dense_dim(),
            sparse_idf,
            sparse_tf: open.sparse_tf,
            tokens: open.tokens,
            one_tenant: open.tenants.one(),
            schema: schema::read_schema(&self.dir)?,
            points,
            segments: info.segments_count,
            payload_indexes: schema::payload_index_list(&info),
            text_index: schema::text_index_info(&info, &self.schema),
            source_phrases: schema::source_phrases(&info, &self.schema),
        })
    }
}

/// Creates a complete shard in `shard.tmp/`, records the embedder, then
/// renames it to `shard/`. A crash leaves either no `shard/` or a whole one.
pub(super) fn create_shard(
    dir: &Path,
    spec: &CollectionSpec,
    layout: &PayloadSchema,
) -> Result<()> {
    if spec.embedder.dim == 0 {
        return Err(StoreError::invalid(
            "collection spec",
            "the embedder's dimension is 0",
        ));
    }
    let tmp = dir.join(NEW_SHARD_DIR);
    if tmp.exists() {
        fs::remove_dir_all(&tmp).map_err(io(&tmp))?;
    }
    {
        let shard = qe::EdgeShard::new(&tmp, schema::new_config(spec)).map_err(backend)?;
        for (key, params) in schema::payload_indexes(layout, spec.fold) {
            shard
                .update(schema::create_index(key, params)?)
                .map_err(backend)?;
        }
        shard.flush().map_err(backend)?;
    }
    schema::write_embedder(dir, &spec.embedder)?;
    tenants::Tenants::create(dir)?;
    let target = dir.join(SHARD_DIR);
    fs::rename(&tmp, &target).map_err(io(&target))?;
    schema::sync_dir(dir)
}
