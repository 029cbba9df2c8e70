//! Writing memories: embed their texts, encode their sparse vectors, build
//! points, upsert.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tokio::sync::OnceCell;

use trine_core::model::{CollectionSpec, EmbedderId, Memory, Point};
use trine_core::{ErrorKind, Fold};
use trine_embed::{EmbedError, Embedder, Side, Tokens};
use trine_store::{Store, StoreError};
use uuid::Uuid;

/// A failed write.
#[derive(Debug, thiserror::Error)]
pub enum WriteError {
    #[error("embedding failed: {0}")]
    Embed(#[from] EmbedError),
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error("embedder `{name}` returned {got} vectors for {want} texts")]
    VectorCount {
        name: String,
        got: usize,
        want: usize,
    },
}

impl WriteError {
    pub fn kind(&self) -> ErrorKind {
        match self {
            Self::Embed(e) => e.kind(),
            Self::Store(e) => e.kind(),
            Self::VectorCount { .. } => ErrorKind::Internal,
        }
    }
}

impl trine_core::Kinded for WriteError {
    fn kind(&self) -> trine_core::ErrorKind {
        WriteError::kind(self)
    }
}

/// A point a write did not store, by its position in the write.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refused {
    pub index: usize,
    pub id: Uuid,
    pub reason: String,
}

/// Stripes of the writer's id locks.
const STRIPES: usize = 64;

fn stripe(id: Uuid) -> usize {
    (id.as_u128() % STRIPES as u128) as usize
}

/// The points a write may store, given the tenant that holds each existing
/// id, and those it refuses: an id held by another tenant, or claimed by an
/// earlier point of the same write for another tenant. Order is kept.
pub fn claim(points: Vec<Point>, owners: &HashMap<Uuid, String>) -> (Vec<Point>, Vec<Refused>) {
    let mut claimed: HashMap<Uuid, String> = HashMap::new();
    let (mut kept, mut refused) = (Vec::with_capacity(points.len()), Vec::new());
    for (index, point) in points.into_iter().enumerate() {
        let id = point.memory.id;
        let owner = owners.get(&id).or_else(|| claimed.get(&id));
        match owner {
            Some(tenant) if *tenant != point.memory.tenant => refused.push(Refused {
                index,
                id,
                reason: format!(
                    "id {id} is held by another tenant: give this memory another id, or none (one is derived from its tenant, source and text)"
                ),
            }),
            _ => {
                claimed.insert(id, point.memory.tenant.clone());
                kept.push(point);
            }
        }
    }
    (kept, refused)
}

/// The points a write may store under each tenant's quota of memories
/// (`quota(tenant)`, `None`: no limit) given how many each holds: a point
/// replacing one of the tenant's memories (its id in `owners`) always; a new
/// one while the tenant is below its quota (an id new twice counts once).
/// Those beyond are refused. Order is kept.
pub fn within_quota(
    points: Vec<Point>,
    owners: &HashMap<Uuid, String>,
    held: &HashMap<String, u64>,
    quota: impl Fn(&str) -> Option<u64>,
) -> (Vec<Point>, Vec<Refused>) {
    let mut held = held.clone();
    let mut new: std::collections::HashSet<Uuid> = std::collections::HashSet::new();
    let (mut kept, mut refused) = (Vec::with_capacity(points.len()), Vec::new());
    for (index, point) in points.into_iter().enumerate() {
        let id = point.memory.id;
        let tenant = point.memory.tenant.as_str();
        let fresh = !owners.contains_key(&id) && !new.contains(&id);
        if let (true, Some(max)) = (fresh, quota(tenant)) {
            let n = held.entry(tenant.to_string()).or_insert(0);
            if *n >= max {
                refused.push(Refused {
                    index,
                    id,
                    reason: format!(
                        "tenant {tenant:?} holds {n} memories, its quota of {max}: delete some, or ask for a larger quota"
                    ),
                });
                continue;
            }
            *n += 1;
        }
        if fresh {
            new.insert(id);
        }
        kept.push(point);
    }
    (kept, refused)
}

/// Writes memories into one collection with one embedder.
#[derive(Clone)]
pub struct Writer {
    store: Arc<dyn Store>,
    embedder: Arc<dyn Embedder>,
    /// Set once the collection is known to exist with this embedder.
    prepared: Arc<OnceCell<()>>,
    /// The collection's fold (its text index's), whether it keeps tokens,
    /// and when they were read.
    fold: Arc<Mutex<Option<(Instant, Layout)>>>,
    /// Locks striped by point id: a write holds those of its ids from the
    /// ownership check to the store call.
    stripes: Arc<Vec<tokio::sync::Mutex<()>>>,
    /// Tenants' quotas of memories, when set.
    quotas: Option<Arc<crate::quota::Quotas>>,
    /// How a collection this writer creates normalises tokens.
    new_fold: Fold,
    /// The language whose common words a memory's late-interaction tokens
    /// leave out (a query's leave out the same: `[lexical] common_words`).
    common_words: Option<trine_core::Language>,
    /// Where the quota's refusals are counted (the gateway's metrics).
    metrics: Option<Arc<trine_telemetry::Metrics>>,
}

/// What the writer reads of the collection: how its text index folds, and
/// whether it keeps each memory's tokens (the `tokens` space).
#[derive(Debug, Clone, Copy, PartialEq)]
struct Layout {
    fold: Fold,
    tokens: bool,
}

/// How long the collection's fold is trusted before it is read again: an
/// upgrade by `trine text-index --ascii-folding` shows within this time.
pub const FOLD_FOR: Duration = Duration::from_secs(30);

impl Writer {
    pub fn new(store: Arc<dyn Store>, embedder: Arc<dyn Embedder>) -> Self {
        Self {
            store,
            embedder,
            prepared: Arc::new(OnceCell::new()),
            fold: Arc::new(Mutex::new(None)),
            stripes: Arc::new((0..STRIPES).map(|_| tokio::sync::Mutex::new(())).collect()),
            quotas: None,
            new_fold: Fold::default(),
            common_words: Some(trine_core::Language::English),
            metrics: None,
        }
    }

    /// Leaves `language`'s common words out of a memory's tokens (none:
    /// every word), as semantic-svc leaves them out of a query's.
    pub fn with_common_words(self, language: Option<trine_core::Language>) -> Self {
        Self {
            common_words: language,
            ..self
        }
    }

    /// Creates a missing collection with a text index that stems in
    /// `stemmer`'s language (none: no stemming). An existing collection keeps
    /// its index: `trine text-index --stemmer` changes it.
    pub fn with_stemmer(self, stemmer: Option<trine_core::Language>) -> Self {
        Self {
            new_fold: Fold::default().with_stemmer(stemmer),
            ..self
        }
    }

    /// Refuses new memories beyond each tenant's quota.
    pub fn with_quotas(self, quotas: Arc<crate::quota::Quotas>) -> Self {
        Self {
            quotas: Some(quotas),
            ..self
        }
    }

    /// The same writer over `store` (the same store wrapped: retried and
    /// timed); its locks and state are shared with this one.
    pub fn with_store(self, store: Arc<dyn Store>) -> Self {
        Self { store, ..self }
    }

    /// Counts the memories its quotas refuse into `metrics`.
    pub fn with_metrics(self, metrics: Arc<trine_telemetry::Metrics>) -> Self {
        Self {
            metrics: Some(metrics),
            ..self
        }
    }

    pub fn store(&self) -> &Arc<dyn Store> {
        &self.store
    }

    /// The collection spec of this writer's embedder.
    pub fn spec(&self) -> CollectionSpec {
        CollectionSpec {
            embedder: EmbedderId {
                name: self.embedder.name().to_string(),
                dim: self.embedder.dim(),
            },
            fold: self.new_fold,
        }
    }

    /// Creates the collection when missing; refuses one written by another
    /// embedder. Checks the store once per writer.
    pub async fn prepare(&self) -> Result<(), WriteError> {
        self.prepared
            .get_or_try_init(|| async {
                self.store.ensure_collection(&self.spec()).await.map(drop)
            })
            .await?;
        Ok(())
    }

    /// The fold of the collection's text index (trine's default when it has
    /// none) and whether it keeps tokens, read at most every [`FOLD_FOR`]:
    /// the sparse encoding folds as the index does.
    async fn layout(&self) -> Result<Layout, WriteError> {
        let cached = self
            .fold
            .lock()
            .ok()
            .and_then(|slot| *slot)
            .filter(|(at, _)| at.elapsed() < FOLD_FOR);
        if let Some((_, layout)) = cached {
            return Ok(layout);
        }
        let info = self.store.info().await?;
        let layout = Layout {
            fold: info
                .as_ref()
                .and_then(|info| info.text_index.as_ref())
                .map_or(Fold::default(), |t| t.fold()),
            tokens: info.is_some_and(|info| info.tokens),
        };
        if let Ok(mut slot) = self.fold.lock() {
            *slot = Some((Instant::now(), layout));
        }
        Ok(layout)
    }

    /// Embeds and stores validated memories, replacing any of the same
    /// tenant with the same ids. Returns when the store has made them
    /// durable, with those refused ([`Self::upsert`]).
    pub async fn write(&self, memories: Vec<Memory>) -> Result<Vec<Refused>, WriteError> {
        let points = self.points(memories).await?;
        self.upsert(points).await
    }

    /// The points `memories` become — embedded, with the sparse encoding of
    /// the collection's fold — not yet stored: a bulk ingest embeds the next
    /// batch while [`Self::upsert`] stores this one.
    pub async fn points(&self, memories: Vec<Memory>) -> Result<Vec<Point>, WriteError> {
        if memories.is_empty() {
            return Ok(Vec::new());
        }
        let texts: Vec<String> = memories.iter().map(|m| m.text.clone()).collect();
        let Layout { fold, tokens } = self.layout().await?;
        // Where the collection keeps tokens, they come from the same pass.
        let embedded: Vec<(Vec<f32>, Option<Tokens>)> = if tokens {
            let both = self
                .embedder
                .embed_tokens(&texts, Side::Memory(self.common_words))
                .await?;
            both.into_iter().map(|(v, t)| (v, Some(t))).collect()
        } else {
            let vectors = self.embedder.embed(&texts).await?;
            vectors.into_iter().map(|v| (v, None)).collect()
        };
        if embedded.len() != memories.len() {
            return Err(WriteError::VectorCount {
                name: self.embedder.name().to_string(),
                got: embedded.len(),
                want: memories.len(),
            });
        }
        Ok(memories
            .into_iter()
            .zip(embedded)
            .map(|(memory, (dense, tokens))| Point {
                sparse: Some(trine_core::sparse::encode_text(&memory.text, fold)),
                memory,
                dense,
                tokens,
            })
            .collect())
    }

    /// Stores points made by [`Self::points`]; returns when they are
    /// durable, with the points refused because their id is held by another
    /// tenant ([`Refused`]): a write never creates, changes or removes
    /// another tenant's point. The check and the store call run under the
    /// ids' stripe locks, so two writes through this writer cannot race
    /// past each other's check.
    pub async fn upsert(&self, points: Vec<Point>) -> Result<Vec<Refused>, WriteError> {
        if points.is_empty() {
            return Ok(Vec::new());
        }
        let mut stripes: Vec<usize> = points.iter().map(|p| stripe(p.memory.id)).collect();
        stripes.sort_unstable();
        stripes.dedup();
        let mut held = Vec::with_capacity(stripes.len());
        for i in stripes {
            held.push(self.stripes[i].lock().await); // in stripe order: no deadlock
        }
        let ids: Vec<Uuid> = points.iter().map(|p| p.memory.id).collect();
        let owners: HashMap<Uuid, String> = self
            .store
            .get(&ids)
            .await?
            .into_iter()
            .map(|m| (m.id, m.tenant))
            .collect();
        let (kept, mut refused) = claim(points, &owners);
        let kept = match &self.quotas {
            Some(quotas) => {
                let positions: Vec<usize> = {
                    // Positions of the kept points in the write, for the
                    // quota's refusals.
                    let taken: std::collections::HashSet<usize> =
                        refused.iter().map(|r| r.index).collect();
                    (0..kept.len() + taken.len())
                        .filter(|i| !taken.contains(i))
                        .collect()
                };
                let mut held = HashMap::new();
                for point in &kept {
                    let tenant = &point.memory.tenant;
                    if quotas.points(tenant).is_some() && !held.contains_key(tenant) {
                        let filter = trine_core::model::Filter {
                            tenant: tenant.clone(),
                            ..trine_core::model::Filter::default()
                        };
                        held.insert(tenant.clone(), self.store.count(&filter).await?);
                    }
                }
                let (kept, over) = within_quota(kept, &owners, &held, |t| quotas.points(t));
                if let (Some(metrics), false) = (&self.metrics, over.is_empty()) {
                    metrics.quota_refused("memories", over.len() as u64);
                }
                refused.extend(over.into_iter().map(|r| Refused {
                    index: positions[r.index],
                    ..r
                }));
                refused.sort_by_key(|r| r.index);
                kept
            }
            None => kept,
        };
        if !kept.is_empty() {
            self.store.upsert(kept).await?;
        }
        drop(held);
        Ok(refused)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn point(id: u128, tenant: &str) -> Point {
        Point {
            memory: Memory::new(Uuid::from_u128(id), tenant, "text"),
            dense: Vec::new(),
            sparse: None,
            tokens: None,
        }
    }

    #[test]
    fn new_memories_beyond_a_tenants_quota_are_refused() {
        // (existing owners, held counts, the write's (id, tenant)s, kept ids, refused positions)
        type Row = (
            &'static [(u128, &'static str)],
            &'static [(&'static str, u64)],
            &'static [(u128, &'static str)],
            &'static [u128],
            &'static [usize],
        );
        let table: [Row; 5] = [
            // Below the quota of 3: new ids are written.
            (
                &[],
                &[("acme", 1)],
                &[(1, "acme"), (2, "acme")],
                &[1, 2],
                &[],
            ),
            // At it: the third new id and beyond are refused.
            (
                &[],
                &[("acme", 1)],
                &[(1, "acme"), (2, "acme"), (3, "acme")],
                &[1, 2],
                &[2],
            ),
            // Replacing the tenant's own memories takes no room.
            (
                &[(9, "acme")],
                &[("acme", 3)],
                &[(9, "acme"), (4, "acme")],
                &[9],
                &[1],
            ),
            // An id new twice in one write counts once.
            (
                &[],
                &[("acme", 2)],
                &[(5, "acme"), (5, "acme")],
                &[5, 5],
                &[],
            ),
            // Each tenant against its own quota (globex: none).
            (
                &[],
                &[("acme", 3)],
                &[(6, "globex"), (7, "acme"), (8, "globex")],
                &[6, 8],
                &[1],
            ),
        ];
        for (owners, held, write, kept_ids, refused_at) in table {
            let owners: HashMap<Uuid, String> = owners
                .iter()
                .map(|&(id, t)| (Uuid::from_u128(id), t.to_string()))
                .collect();
            let held: HashMap<String, u64> =
                held.iter().map(|&(t, n)| (t.to_string(), n)).collect();
            let points = write.iter().map(|&(id, t)| point(id, t)).collect();
            let quota = |t: &str| (t == "acme").then_some(3);
            let (kept, refused) = within_quota(points, &owners, &held, quota);
            let kept: Vec<Uuid> = kept.iter().map(|p| p.memory.id).collect();
            let want: Vec<Uuid> = kept_ids.iter().map(|&id| Uuid::from_u128(id)).collect();
            assert_eq!(kept, want, "{write:?}");
            let at: Vec<usize> = refused.iter().map(|r| r.index).collect();
            assert_eq!(at, refused_at, "{write:?}");
            assert!(refused.iter().all(|r| r.reason.contains("its quota of 3")));
        }
    }

    #[test]
    fn a_write_claims_only_free_ids_and_its_tenants_own() {
        // (existing owners, the write's (id, tenant)s, kept ids, refused positions)
        type Row = (
            &'static [(u128, &'static str)],
            &'static [(u128, &'static str)],
            &'static [u128],
            &'static [usize],
        );
        let table: [Row; 6] = [
            (&[], &[], &[], &[]),
            // New ids and the tenant's own ids are written.
            (&[(1, "acme")], &[(1, "acme"), (2, "acme")], &[1, 2], &[]),
            // Another tenant's id is refused, the rest written.
            (&[(1, "acme")], &[(2, "globex"), (1, "globex")], &[2], &[1]),
            // Within one write, the first tenant to name a new id keeps it.
            (
                &[],
                &[(3, "acme"), (3, "globex"), (3, "acme")],
                &[3, 3],
                &[1],
            ),
            // An id named twice by its owner's tenant is written twice (the last wins).
            (&[(4, "acme")], &[(4, "acme"), (4, "acme")], &[4, 4], &[]),
            // Tenants are compared exactly.
            (&[(5, "acme")], &[(5, "Acme")], &[], &[0]),
        ];
        for (owners, write, kept_ids, refused_at) in table {
            let owners: HashMap<Uuid, String> = owners
                .iter()
                .map(|&(id, t)| (Uuid::from_u128(id), t.to_string()))
                .collect();
            let points = write.iter().map(|&(id, t)| point(id, t)).collect();
            let (kept, refused) = claim(points, &owners);
            let kept: Vec<Uuid> = kept.iter().map(|p| p.memory.id).collect();
            let want: Vec<Uuid> = kept_ids.iter().map(|&id| Uuid::from_u128(id)).collect();
            assert_eq!(kept, want, "{write:?} over {owners:?}");
            let at: Vec<usize> = refused.iter().map(|r| r.index).collect();
            assert_eq!(at, refused_at, "{write:?} over {owners:?}");
            assert!(
                refused
                    .iter()
                    .all(|r| r.reason.contains("held by another tenant"))
            );
        }
    }
}
