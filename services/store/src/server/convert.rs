//! Points and payload: trine's points, ids and sparse vectors as Qdrant's, and hits back.

use super::*;

pub(super) fn point_id(id: Uuid) -> q::PointId {
    q::PointId::from(id.to_string())
}

/// The `dense` vector of a point read back (empty where it has none).
#[allow(deprecated)]
pub(super) fn dense_output(vectors: &q::VectorsOutput) -> Vec<f32> {
    let Some(q::vectors_output::VectorsOptions::Vectors(named)) = &vectors.vectors_options else {
        return Vec::new();
    };
    let Some(output) = named.vectors.get(DENSE_VECTOR) else {
        return Vec::new();
    };
    match &output.vector {
        Some(q::vector_output::Vector::Dense(d)) => d.data.clone(),
        Some(_) => Vec::new(),
        None => output.data.clone(),
    }
}

/// The `tokens` multivector of a point read back, if it has one.
pub(super) fn tokens_output(vectors: &q::VectorsOutput) -> Option<trine_core::late::Tokens> {
    let Some(q::vectors_output::VectorsOptions::Vectors(named)) = &vectors.vectors_options else {
        return None;
    };
    match &named.vectors.get(TOKENS_VECTOR)?.vector {
        Some(q::vector_output::Vector::MultiDense(m)) => {
            let rows: Vec<&Vec<f32>> = m.vectors.iter().map(|v| &v.data).collect();
            trine_core::late::Tokens::of_rows(rows.first().map_or(0, |r| r.len()), &rows)
        }
        _ => None,
    }
}

/// The `sparse` vector of a point read back, if it has one (in either of the
/// forms a server sends: the `vector` oneof, or the older `data` and
/// `indices`).
#[allow(deprecated)]
pub(super) fn sparse_output(vectors: q::VectorsOutput) -> Option<SparseVector> {
    let Some(q::vectors_output::VectorsOptions::Vectors(named)) = vectors.vectors_options else {
        return None;
    };
    let output = named.vectors.get(SPARSE_VECTOR)?;
    match &output.vector {
        Some(q::vector_output::Vector::Sparse(s)) => Some(SparseVector {
            indices: s.indices.clone(),
            values: s.values.clone(),
        }),
        Some(_) => None,
        None => output.indices.as_ref().map(|i| SparseVector {
            indices: i.data.clone(),
            values: output.data.clone(),
        }),
    }
}

pub(super) fn uuid_of(id: Option<&q::PointId>) -> Result<Uuid> {
    match id.and_then(|id| id.point_id_options.as_ref()) {
        Some(q::point_id::PointIdOptions::Uuid(s)) => Uuid::parse_str(s)
            .map_err(|e| StoreError::Backend(format!("point id `{s}` is not a uuid: {e}"))),
        Some(q::point_id::PointIdOptions::Num(n)) => Err(StoreError::Backend(format!(
            "point id {n} is a number: trine collections use uuid ids"
        ))),
        None => Err(StoreError::Backend(
            "a point came back without id".to_string(),
        )),
    }
}

/// Refuses a point whose vectors do not fit the collection.
pub(super) fn check_point(collection: &str, point: &Point, want: usize) -> Result<()> {
    if point.dense.len() != want {
        return Err(StoreError::DimensionMismatch {
            collection: collection.to_string(),
            got: point.dense.len(),
            want,
        });
    }
    match &point.sparse {
        Some(sparse) => check_sparse(sparse),
        None => Ok(()),
    }
}

pub(super) fn check_sparse(v: &SparseVector) -> Result<()> {
    crate::query::matched(v)
}

/// The update of a point's `sparse` vector alone.
pub(super) fn sparse_point_vectors(id: Uuid, vector: &SparseVector) -> q::PointVectors {
    let vectors = q::NamedVectors::default().add_vector(
        SPARSE_VECTOR,
        q::Vector::new_sparse(vector.indices.clone(), vector.values.clone()),
    );
    q::PointVectors {
        id: Some(point_id(id)),
        vectors: Some(vectors.into()),
    }
}

/// The points, of every tenant, with no `sparse` vector. A point written
/// with an empty sparse vector has one (Qdrant stores it; no query finds it),
/// so it is not matched.
pub(super) fn no_sparse() -> q::Filter {
    q::Filter::must_not([q::Condition::has_vector(SPARSE_VECTOR)])
}

/// A point as the server stores it; its tokens in `tokens` where the
/// collection has that space and the point has any.
pub(super) fn point_struct(
    point: Point,
    layout: &PayloadSchema,
    tokens_space: bool,
) -> q::PointStruct {
    let id = point_id(point.memory.id);
    let mut vectors =
        q::NamedVectors::default().add_vector(DENSE_VECTOR, q::Vector::new_dense(point.dense));
    if let Some(s) = point.sparse {
        vectors = vectors.add_vector(SPARSE_VECTOR, q::Vector::new_sparse(s.indices, s.values));
    }
    if let Some(tokens) = point.tokens.filter(|t| tokens_space && !t.is_empty()) {
        vectors = vectors.add_vector(TOKENS_VECTOR, q::Vector::new_multi(rows_of(&tokens)));
    }
    q::PointStruct::new(id, vectors, Payload::from(layout.to_payload(&point.memory)))
}

/// Tokens as the rows of a multivector.
pub(super) fn rows_of(tokens: &trine_core::late::Tokens) -> Vec<Vec<f32>> {
    tokens.iter().map(<[f32]>::to_vec).collect()
}

/// The payload of a memory: `model::keys`, datetimes as RFC 3339 UTC strings,
/// metadata as a JSON object, absent options omitted.
pub(super) fn json_map(payload: HashMap<String, q::Value>) -> Map<String, Json> {
    payload
        .into_iter()
        .map(|(k, v)| (k, v.into_json()))
        .collect()
}

pub(super) fn scored_hit(
    p: q::ScoredPoint,
    payload: PayloadRead,
    layout: &PayloadSchema,
) -> Result<Hit> {
    let id = uuid_of(p.id.as_ref())?;
    let memory =
        (payload != PayloadRead::Nothing).then(|| layout.to_memory(id, json_map(p.payload)));
    Ok(Hit {
        id,
        score: p.score,
        source: memory.as_ref().and_then(|m| m.source.clone()),
        memory: memory.filter(|_| payload == PayloadRead::Memory),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::keys;
    use crate::payload::PayloadSchema;
    use chrono::TimeZone;
    use serde_json::json;

    fn full_memory() -> Memory {
        let mut metadata = Map::new();
        metadata.insert("a".into(), json!({"b": [1, 2.5, "c"], "d": null}));
        Memory {
            id: Uuid::from_u128(7),
            text: "Meeting 2026-11-11 09:58".into(),
            source: Some("git:log".into()),
            tenant: "acme".into(),
            project: Some("p".into()),
            kind: Some("note".into()),
            created_at: Some(t("2026-11-11T09:58:00Z")),
            valid_from: Some(t("2026-01-01T00:00:00.123456789Z")),
            valid_until: Some(
                Utc.timestamp_opt(1_900_000_000, 0)
                    .single()
                    .unwrap_or_default(),
            ),
            metadata: Some(metadata),
            thread: Some("session 9".into()),
            seq: Some(trine_core::model::MAX_SEQ),
        }
    }

    #[test]
    fn payload_round_trips_through_qdrant_values() {
        let cases = [
            full_memory(),
            Memory::new(Uuid::from_u128(8), "acme", "only text"),
        ];
        for m in cases {
            let qdrant: HashMap<String, q::Value> =
                Payload::from(PayloadSchema::default().to_payload(&m)).into();
            assert_eq!(
                PayloadSchema::default().to_memory(m.id, json_map(qdrant)),
                m
            );
        }
    }

    #[test]
    fn payload_layout() {
        let p = PayloadSchema::default().to_payload(&full_memory());
        assert_eq!(p[keys::CREATED_AT], json!("2026-11-11T09:58:00Z"));
        assert_eq!(p[keys::VALID_FROM], json!("2026-01-01T00:00:00.123456789Z"));
        assert_eq!(p[keys::TENANT], json!("acme"));
        assert!(p[keys::METADATA].is_object());

        let minimal = PayloadSchema::default().to_payload(&Memory {
            metadata: None,
            source: None,
            valid_until: None,
            ..full_memory()
        });
        for key in [keys::METADATA, keys::SOURCE, keys::VALID_UNTIL] {
            assert!(!minimal.contains_key(key), "{key} should be omitted");
        }
    }

    #[test]
    fn payload_tolerates_missing_and_odd_keys() {
        let id = Uuid::from_u128(9);
        let cases: Vec<(Json, Memory)> = vec![
            (json!({}), Memory::new(id, "", "")),
            (
                json!({"text": "x", "tenant": "t", "created_at": "yesterday",
                       "metadata": [1], "project": 3, "valid_until": null, "extra": 1}),
                Memory::new(id, "t", "x"),
            ),
            (
                json!({"text": "x", "tenant": "t", "created_at": "2026-11-11T10:58:00+01:00"}),
                Memory {
                    created_at: Some(t("2026-11-11T09:58:00Z")),
                    ..Memory::new(id, "t", "x")
                },
            ),
        ];
        for (payload, want) in cases {
            let Json::Object(map) = payload else {
                panic!("test payload must be an object")
            };
            assert_eq!(PayloadSchema::default().to_memory(id, map), want);
        }
    }

    #[test]
    fn point_ids() {
        let id = Uuid::from_u128(0xdead_beef);
        assert_eq!(uuid_of(Some(&point_id(id))).ok(), Some(id));
        assert!(uuid_of(Some(&q::PointId::from(5u64))).is_err());
        assert!(uuid_of(Some(&q::PointId::from("nope"))).is_err());
        assert!(uuid_of(None).is_err());
    }

    #[test]
    fn sparse_back_fill_requests() {
        let id = Uuid::from_u128(3);
        let v = SparseVector {
            indices: vec![4, 1],
            values: vec![0.5, 2.0],
        };
        let update = sparse_point_vectors(id, &v);
        assert_eq!(update.id, Some(point_id(id)));
        let Some(q::vectors::VectorsOptions::Vectors(named)) =
            update.vectors.and_then(|v| v.vectors_options)
        else {
            panic!("named vectors expected")
        };
        let names: Vec<&str> = named.vectors.keys().map(String::as_str).collect();
        assert_eq!(names, [SPARSE_VECTOR], "only the sparse vector is sent");
        assert_eq!(
            named.vectors.get(SPARSE_VECTOR),
            Some(&q::Vector::new_sparse(vec![4, 1], vec![0.5, 2.0]))
        );
        assert_eq!(
            no_sparse(),
            q::Filter {
                must_not: vec![q::Condition::has_vector(SPARSE_VECTOR)],
                ..Default::default()
            },
            "no tenant condition: the back-fill spans every tenant"
        );
    }

    #[test]
    fn point_vectors_are_checked() {
        let point = |dense: usize, sparse: Option<(usize, usize)>| Point {
            memory: full_memory(),
            dense: vec![0.5; dense],
            sparse: sparse.map(|(i, v)| SparseVector {
                indices: (0..i as u32).collect(),
                values: vec![1.0; v],
            }),
            tokens: None,
        };
        assert!(check_point("c", &point(4, None), 4).is_ok());
        assert!(check_point("c", &point(4, Some((2, 2))), 4).is_ok());
        assert!(matches!(
            check_point("c", &point(3, None), 4),
            Err(StoreError::DimensionMismatch {
                got: 3,
                want: 4,
                ..
            })
        ));
        assert!(matches!(
            check_point("c", &point(4, Some((2, 1))), 4),
            Err(StoreError::Invalid { .. })
        ));
    }
}
