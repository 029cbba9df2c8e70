//! The change journal: after each write trine makes to a server collection
//! lands, one point in a sibling collection, `<collection>__trine_changes`,
//! names the ids it wrote or deleted, stamped with the writer's clock (µs).
//! Every process writing through a [`ServerStore`] journals; a process that
//! keeps statistics over the collection ([`crate::Tracked`]) reads the
//! journal to hear of the writes the others made, and reads those points
//! again. The journal holds ids only (no text, no tenant's data); entries
//! older than [`RETENTION`] are pruned by the writers.

use super::*;

/// How long an entry is kept: a reader further behind than this rebuilds.
pub(crate) const RETENTION: Duration = Duration::from_secs(15 * 60);
/// One append in this many prunes what is older than [`RETENTION`].
const PRUNE_EVERY: usize = 256;
const SEQ: &str = "seq";
const IDS: &str = "ids";

/// The writers' clock: microseconds since the epoch (exact in a payload's
/// range condition, which compares as `f64`).
pub(crate) fn now_micros() -> i64 {
    Utc::now().timestamp_micros()
}

/// A span of that clock.
pub(crate) fn micros(span: Duration) -> i64 {
    i64::try_from(span.as_micros()).unwrap_or(i64::MAX)
}

impl ServerStore {
    fn journal_name(&self) -> String {
        format!("{}__trine_changes", self.collection)
    }

    /// Creates the sibling collection `name` (no vectors, the main
    /// collection's layout) when missing; whether it was there already.
    /// Another process making it meanwhile is no error.
    pub(super) async fn ensure_sibling(&self, name: &str) -> Result<bool> {
        let exists = self.call(|c| Box::pin(c.collection_exists(name))).await?;
        if !exists {
            let request: q::CreateCollection =
                laid_out(CreateCollectionBuilder::new(name), self.layout).into();
            if let Err(e) = self
                .call(|c| Box::pin(c.create_collection(request.clone())))
                .await
            {
                let made = self.call(|c| Box::pin(c.collection_exists(name))).await?;
                if !made {
                    return Err(e);
                }
            }
        }
        Ok(exists)
    }

    /// Drops the journal (a restore: what it names is gone); the next
    /// write makes it again.
    pub(super) async fn clear_journal(&self) -> Result<()> {
        let name = self.journal_name();
        let exists = self
            .call(|c| Box::pin(c.collection_exists(name.as_str())))
            .await?;
        if exists {
            self.call(|c| Box::pin(c.delete_collection(name.as_str())))
                .await?;
        }
        self.journal_ready.store(false, Ordering::Release);
        Ok(())
    }

    /// Creates the journal when missing: no vectors, the main collection's
    /// layout, an integer range index on the stamp.
    async fn ensure_journal(&self) -> Result<()> {
        if self.journal_ready.load(Ordering::Acquire) {
            return Ok(());
        }
        let name = self.journal_name();
        if !self.ensure_sibling(&name).await? {
            let index: q::CreateFieldIndexCollection =
                CreateFieldIndexCollectionBuilder::new(name.as_str(), SEQ, q::FieldType::Integer)
                    .field_index_params(q::payload_index_params::IndexParams::IntegerIndexParams(
                        q::IntegerIndexParams {
                            lookup: Some(false),
                            range: Some(true),
                            ..Default::default()
                        },
                    ))
                    .wait(true)
                    .into();
            self.call(|c| Box::pin(c.create_field_index(index.clone())))
                .await?;
        }
        self.journal_ready.store(true, Ordering::Release);
        Ok(())
    }

    /// Journals a write of `ids` that has landed.
    pub(super) async fn journal(&self, ids: impl IntoIterator<Item = Uuid>) -> Result<()> {
        let ids: Vec<Json> = ids
            .into_iter()
            .map(|id| Json::String(id.to_string()))
            .collect();
        if ids.is_empty() {
            return Ok(());
        }
        self.ensure_journal().await?;
        let mut payload = Map::new();
        payload.insert(SEQ.to_string(), Json::from(now_micros()));
        payload.insert(IDS.to_string(), Json::Array(ids));
        let payload = Payload::try_from(Json::Object(payload))
            .map_err(|e| StoreError::Backend(format!("a journal entry: {e}")))?;
        let entry = q::PointStruct::new(
            point_id(Uuid::new_v4()),
            HashMap::<String, q::Vector>::new(),
            payload,
        );
        let request: q::UpsertPoints = UpsertPointsBuilder::new(self.journal_name(), vec![entry])
            .wait(true)
            .into();
        let appended = self
            .call(|c| Box::pin(c.upsert_points(request.clone())))
            .await;
        if let Err(StoreError::NoCollection(_)) = appended {
            // Dropped since this process made it (a restore): made again.
            self.journal_ready.store(false, Ordering::Release);
            self.ensure_journal().await?;
            self.call(|c| Box::pin(c.upsert_points(request.clone())))
                .await?;
        } else {
            appended?;
        }
        if self
            .journaled
            .fetch_add(1, Ordering::Relaxed)
            .is_multiple_of(PRUNE_EVERY)
        {
            self.prune_journal().await;
        }
        Ok(())
    }

    /// Deletes the entries older than [`RETENTION`]; a failure is only
    /// logged (the next prune takes them).
    async fn prune_journal(&self) {
        let before = now_micros() - micros(RETENTION);
        let filter = q::Filter::must([q::Condition::range(
            SEQ,
            q::Range {
                lt: Some(before as f64),
                ..Default::default()
            },
        )]);
        let request: q::DeletePoints = DeletePointsBuilder::new(self.journal_name())
            .points(filter)
            .into();
        if let Err(e) = self
            .call(|c| Box::pin(c.delete_points(request.clone())))
            .await
        {
            tracing::warn!(error = %e, "pruning the change journal failed");
        }
    }

    /// The journal's entries stamped at or after `from`, oldest first.
    pub(super) async fn journaled(&self, from: i64, limit: usize) -> Result<Vec<Change>> {
        self.ensure_journal().await?;
        let limit = u32::try_from(limit).unwrap_or(u32::MAX).max(1);
        let filter = q::Filter::must([q::Condition::range(
            SEQ,
            q::Range {
                gte: Some(from as f64),
                ..Default::default()
            },
        )]);
        let request = ScrollPointsBuilder::new(self.journal_name())
            .filter(filter)
            .limit(limit)
            .with_payload(true)
            .order_by(q::OrderBy {
                key: SEQ.to_string(),
                direction: Some(q::Direction::Asc as i32),
                start_from: None,
            });
        let request = q::ScrollPoints {
            read_consistency: self.read_consistency,
            ..request.into()
        };
        let resp = self
            .call(|c| Box::pin(c.scroll(request.clone())))
            .await
            .inspect_err(|e| {
                if let StoreError::NoCollection(_) = e {
                    // Dropped (a restore): the next read makes it again.
                    self.journal_ready.store(false, Ordering::Release);
                }
            })?;
        resp.result.into_iter().map(change_of).collect()
    }
}

/// A journal point as a [`Change`].
fn change_of(point: q::RetrievedPoint) -> Result<Change> {
    let key = uuid_of(point.id.as_ref())?;
    let payload = json_map(point.payload);
    let bad = |what: &str| StoreError::Backend(format!("journal entry {key}: {what}"));
    let seq = payload
        .get(SEQ)
        .and_then(Json::as_i64)
        .ok_or_else(|| bad("no stamp"))?;
    let ids = payload
        .get(IDS)
        .and_then(Json::as_array)
        .ok_or_else(|| bad("no ids"))?
        .iter()
        .map(|id| {
            id.as_str()
                .and_then(|s| Uuid::parse_str(s).ok())
                .ok_or_else(|| bad("an id that is not a uuid"))
        })
        .collect::<Result<Vec<_>>>()?;
    Ok(Change { key, seq, ids })
}
