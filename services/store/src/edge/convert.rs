//! Memories and points to and from Qdrant Edge's types (the payload layout
//! is [`crate::payload`]'s).

use std::collections::HashMap;

use qdrant_edge as qe;
use uuid::Uuid;

use super::SPARSE_TF_VECTOR;
use crate::payload::PayloadSchema;
use crate::{
    DENSE_VECTOR, Memory, Point, Result, SPARSE_VECTOR, SparseVector, StoreError, TOKENS_VECTOR,
};

/// A point as Edge stores it, its sparse vector in `sparse` and, with
/// `sparse_tf`, in the `sparse_tf` space too; its tokens in `tokens` where
/// the shard has that space and the point has any. The caller has checked
/// the dense dimension.
pub(super) fn to_point(
    point: Point,
    schema: &PayloadSchema,
    sparse_tf: bool,
    tokens_space: bool,
) -> Result<qe::PointStructPersisted> {
    let Point {
        memory,
        dense,
        sparse,
        tokens,
    } = point;
    let mut vectors = HashMap::from([(DENSE_VECTOR.to_string(), qe::VectorInternal::Dense(dense))]);
    if let Some(tokens) = tokens.filter(|t| tokens_space && !t.is_empty()) {
        vectors.insert(TOKENS_VECTOR.to_string(), to_multi(tokens)?);
    }
    if let Some(sparse) = sparse {
        let sparse = to_sparse(sparse)?;
        if sparse_tf {
            vectors.insert(SPARSE_TF_VECTOR.to_string(), sparse.clone());
        }
        vectors.insert(SPARSE_VECTOR.to_string(), sparse);
    }
    Ok(qe::PointStructPersisted {
        id: qe::PointId::Uuid(memory.id),
        vector: qe::VectorStructInternal::Named(vectors).into(),
        payload: Some(qe::Payload(schema.to_payload(&memory))),
    })
}

/// Tokens as a multivector, checked (whole rows of a dimension above 0).
pub(super) fn to_multi(tokens: trine_core::late::Tokens) -> Result<qe::VectorInternal> {
    qe::TypedMultiDenseVector::<f32>::try_from_flatten(tokens.rows, tokens.dim)
        .map(qe::VectorInternal::MultiDense)
        .map_err(|e| StoreError::invalid("tokens", e.to_string()))
}

/// A sparse vector, checked (as many values as indices, no index twice).
pub(super) fn to_sparse(sparse: SparseVector) -> Result<qe::VectorInternal> {
    let SparseVector { indices, values } = sparse;
    qe::SparseVector::new(indices, values)
        .map(qe::VectorInternal::Sparse)
        .map_err(|e| StoreError::invalid("sparse vector", e.to_string()))
}

/// The `sparse` vector of a point read back, if it has one.
pub(super) fn sparse_of(vector: qe::VectorStructInternal) -> Option<SparseVector> {
    let qe::VectorStructInternal::Named(mut named) = vector else {
        return None;
    };
    match named.remove(SPARSE_VECTOR)? {
        qe::VectorInternal::Sparse(sparse) => Some(SparseVector {
            indices: sparse.indices,
            values: sparse.values,
        }),
        _ => None,
    }
}

/// The `dense`, `sparse` and `tokens` vectors of a point read back.
pub(super) fn vectors_of(
    vector: qe::VectorStructInternal,
) -> (
    Vec<f32>,
    Option<SparseVector>,
    Option<trine_core::late::Tokens>,
) {
    let qe::VectorStructInternal::Named(mut named) = vector else {
        return (Vec::new(), None, None);
    };
    let tokens = match named.remove(TOKENS_VECTOR) {
        Some(qe::VectorInternal::MultiDense(m)) => Some(trine_core::late::Tokens {
            dim: m.dim,
            rows: m.flattened_vectors,
        }),
        _ => None,
    };
    let dense = match named.remove(DENSE_VECTOR) {
        Some(qe::VectorInternal::Dense(dense)) => dense,
        _ => Vec::new(),
    };
    let sparse = match named.remove(SPARSE_VECTOR) {
        Some(qe::VectorInternal::Sparse(sparse)) => Some(SparseVector {
            indices: sparse.indices,
            values: sparse.values,
        }),
        _ => None,
    };
    (dense, sparse, tokens)
}

/// The memory of a point read back ([`PayloadSchema::to_memory`]).
pub(super) fn to_memory(id: Uuid, payload: Option<qe::Payload>, schema: &PayloadSchema) -> Memory {
    schema.to_memory(id, payload.map(|p| p.0).unwrap_or_default())
}

/// A point id as a memory id. trine writes UUIDs; a numeric id of a
/// collection written by another tool maps to the UUID of that number.
pub(super) fn to_uuid(id: qe::PointId) -> Uuid {
    match id {
        qe::PointId::Uuid(uuid) => uuid,
        qe::PointId::NumId(n) => Uuid::from_u128(u128::from(n)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sparse_vector_is_checked() {
        let bad = SparseVector {
            indices: vec![1, 2],
            values: vec![1.0],
        };
        assert!(matches!(to_sparse(bad), Err(StoreError::Invalid { .. })));
    }
}
