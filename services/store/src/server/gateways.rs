//! The gateways that share a server collection, each heard from by its
//! heartbeat: one point a gateway in a sibling collection,
//! `<collection>__trine_gateways` (no vectors), holding when it last beat
//! and its tenants' demand (requests since its last beat) — what replicas
//! of the gateway read to split each tenant's request rate between them
//! (`trine_gateway::quota`). No tenant's data: names and counts.

use super::*;
use crate::Beat;

const AT: &str = "at";
const DEMAND: &str = "demand";
/// Heartbeats read at once: gateways sharing one collection, at most.
const MOST: u32 = 1_024;

impl ServerStore {
    fn gateways_name(&self) -> String {
        format!("{}__trine_gateways", self.collection)
    }

    /// Writes `me`'s heartbeat, then reads every gateway's heard within
    /// `live` (`me`'s included); those silent for ten times that are
    /// deleted.
    pub(super) async fn beat(&self, me: &Beat, live: Duration) -> Result<Vec<Beat>> {
        self.ensure_sibling(&self.gateways_name()).await?;
        let mut demand = Map::new();
        for (tenant, n) in &me.demand {
            demand.insert(tenant.clone(), Json::from(*n));
        }
        let mut payload = Map::new();
        payload.insert(AT.to_string(), Json::from(me.at));
        payload.insert(DEMAND.to_string(), Json::Object(demand));
        let payload = Payload::try_from(Json::Object(payload))
            .map_err(|e| StoreError::Backend(format!("a gateway's heartbeat: {e}")))?;
        let point = q::PointStruct::new(
            point_id(me.id),
            HashMap::<String, q::Vector>::new(),
            payload,
        );
        let request: q::UpsertPoints = UpsertPointsBuilder::new(self.gateways_name(), vec![point])
            .wait(true)
            .into();
        self.call(|c| Box::pin(c.upsert_points(request.clone())))
            .await?;
        let request: q::ScrollPoints = ScrollPointsBuilder::new(self.gateways_name())
            .limit(MOST)
            .with_payload(true)
            .into();
        let resp = self.call(|c| Box::pin(c.scroll(request.clone()))).await?;
        let live_from = me.at - micros(live);
        let (mut beats, mut silent) = (Vec::new(), Vec::new());
        for point in resp.result {
            let id = uuid_of(point.id.as_ref())?;
            let payload = json_map(point.payload);
            let at = payload.get(AT).and_then(Json::as_i64).unwrap_or(0);
            if at < me.at - 10 * micros(live) {
                silent.push(point_id(id));
                continue;
            }
            if at < live_from {
                continue;
            }
            let demand = payload
                .get(DEMAND)
                .and_then(Json::as_object)
                .map(|d| {
                    d.iter()
                        .filter_map(|(t, n)| Some((t.clone(), n.as_u64()?)))
                        .collect()
                })
                .unwrap_or_default();
            beats.push(Beat { id, at, demand });
        }
        if !silent.is_empty() {
            let request: q::DeletePoints = DeletePointsBuilder::new(self.gateways_name())
                .points(q::PointsIdsList { ids: silent })
                .into();
            if let Err(e) = self
                .call(|c| Box::pin(c.delete_points(request.clone())))
                .await
            {
                tracing::warn!(error = %e, "deleting silent gateways' heartbeats failed");
            }
        }
        Ok(beats)
    }
}
