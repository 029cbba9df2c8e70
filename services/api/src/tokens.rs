//! Token vectors on the wire ([`v1::TokenRows`]): half-precision floats,
//! little-endian, row after row — what the store keeps, so that a memory
//! embedded in another process is judged as one embedded here.

use trine_core::late::{MAX_QUERY_TOKENS, Tokens};

use crate::v1;

/// The widest token vector the wire takes (MiniLM's is 384).
pub const MAX_TOKEN_DIM: usize = 4096;

/// The most tokens one text's rows may hold on the wire (MiniLM reads at
/// most 256 word pieces, the static model 512).
pub const MAX_TEXT_TOKENS: usize = 1024;

/// Tokens on the wire, each value rounded to half precision.
pub fn tokens_to_wire(tokens: &Tokens) -> v1::TokenRows {
    let mut half = Vec::with_capacity(tokens.rows.len() * 2);
    for &x in &tokens.rows {
        half.extend_from_slice(&half::f16::from_f32(x).to_le_bytes());
    }
    v1::TokenRows {
        dim: u32::try_from(tokens.dim).unwrap_or(u32::MAX),
        half,
    }
}

/// Tokens from the wire, checked before any work: a dimension in range,
/// whole rows, at most `max_rows` of them, every value finite.
pub fn tokens_from_wire(rows: &v1::TokenRows, max_rows: usize) -> Result<Tokens, String> {
    let dim = usize::try_from(rows.dim).unwrap_or(usize::MAX);
    if dim == 0 || dim > MAX_TOKEN_DIM {
        return Err(format!("token dimension {dim}: give 1 to {MAX_TOKEN_DIM}"));
    }
    let bytes = rows.half.len();
    if !bytes.is_multiple_of(2 * dim) {
        return Err(format!(
            "{bytes} bytes of tokens are not whole rows of {dim} half-precision values"
        ));
    }
    let count = bytes / (2 * dim);
    if count > max_rows {
        return Err(format!("{count} tokens, more than the {max_rows} allowed"));
    }
    let values: Vec<f32> = rows
        .half
        .chunks_exact(2)
        .map(|b| half::f16::from_le_bytes([b[0], b[1]]).to_f32())
        .collect();
    if values.iter().any(|x| !x.is_finite()) {
        return Err("a token value is not a finite number".to_string());
    }
    Ok(Tokens { dim, rows: values })
}

/// A query's tokens from the wire ([`tokens_from_wire`] with the query's
/// limit).
pub fn query_tokens_from_wire(rows: &v1::TokenRows) -> Result<Tokens, String> {
    tokens_from_wire(rows, MAX_QUERY_TOKENS)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_survive_the_wire_at_half_precision() {
        let tokens = Tokens {
            dim: 3,
            rows: vec![0.5, -0.25, 1.0, 0.1, 0.2, 0.3],
        };
        let back = tokens_from_wire(&tokens_to_wire(&tokens), 8).unwrap();
        assert_eq!(back.dim, 3);
        for (a, b) in tokens.rows.iter().zip(&back.rows) {
            assert!((a - b).abs() < 1e-3, "{a} {b}");
        }
    }

    #[test]
    fn bad_rows_are_refused_saying_why() {
        let rows = |dim: u32, half: Vec<u8>| v1::TokenRows { dim, half };
        let inf = half::f16::INFINITY.to_le_bytes().to_vec();
        // (rows, max rows, words of the refusal)
        let table = [
            (rows(0, vec![]), 8, "dimension 0"),
            (rows(5000, vec![]), 8, "dimension 5000"),
            (rows(2, vec![0, 0, 0]), 8, "not whole rows"),
            (rows(1, vec![0; 20]), 8, "10 tokens, more than the 8"),
            (rows(1, inf), 8, "not a finite number"),
        ];
        for (rows, max, words) in table {
            let err = tokens_from_wire(&rows, max).unwrap_err();
            assert!(err.contains(words), "{err:?} lacks {words:?}");
        }
    }
}
