//! Small vector helpers shared by the embedders.

/// Scales `v` to unit length. A zero (or non-finite) vector becomes the first
/// basis vector, so that cosine similarity stays defined.
pub(crate) fn normalize(v: &mut [f32]) {
    let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    if norm.is_finite() && norm > 0.0 {
        v.iter_mut().for_each(|x| *x /= norm);
    } else {
        v.iter_mut().for_each(|x| *x = 0.0);
        if let Some(first) = v.first_mut() {
            *first = 1.0;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::normalize;

    #[test]
    fn normalizes_and_handles_zero() {
        let mut v = vec![3.0, 4.0];
        normalize(&mut v);
        assert_eq!(v, vec![0.6, 0.8]);
        let mut zero = vec![0.0; 3];
        normalize(&mut zero);
        assert_eq!(zero, vec![1.0, 0.0, 0.0]);
    }
}
