//! Where a byte occurs in a block of 64: a 64-bit mask, bit `i` set when byte `i` is the
//! one looked for. Four SSE2 compares and `movemask`s on x86-64 (SSE2 is part of the
//! x86-64 baseline, so no detection is needed); a portable loop elsewhere, which is also
//! what the tests hold the SSE2 kernel to.
//!
//! A CSV record is split at its delimiters with one mask per 64 bytes instead of one
//! search per field: records have a delimiter every few bytes, too often for a search
//! call (`memchr`) per field to pay for its setup.

/// Bytes a mask covers.
pub const BLOCK: usize = 64;

/// Bit `i` set where `block[i] == c`.
#[inline(always)]
pub fn byte_mask(block: &[u8; BLOCK], c: u8) -> u64 {
    #[cfg(target_arch = "x86_64")]
    {
        sse2_mask(block, c)
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        portable_mask(block, c)
    }
}

#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn sse2_mask(block: &[u8; BLOCK], c: u8) -> u64 {
    use std::arch::x86_64::{_mm_cmpeq_epi8, _mm_loadu_si128, _mm_movemask_epi8, _mm_set1_epi8};
    let mut mask = 0;
    for (k, part) in block.chunks_exact(16).enumerate() {
        // SAFETY: SSE2 is in every x86-64 CPU; the load reads the 16 bytes of `part` and
        // needs no alignment.
        let bits = unsafe {
            let bytes = _mm_loadu_si128(part.as_ptr().cast());
            _mm_movemask_epi8(_mm_cmpeq_epi8(bytes, _mm_set1_epi8(c as i8))) as u16
        };
        mask |= u64::from(bits) << (16 * k);
    }
    mask
}

fn portable_mask(block: &[u8], c: u8) -> u64 {
    block.iter().enumerate().fold(0, |mask, (i, &b)| mask | (u64::from(b == c) << i))
}

/// [`byte_mask`] of a block shorter than [`BLOCK`] (bits past its end are clear).
pub fn partial_byte_mask(block: &[u8], c: u8) -> u64 {
    assert!(block.len() <= BLOCK, "a partial block has at most {BLOCK} bytes");
    portable_mask(block, c)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn marks_every_occurrence() {
        let mut block = [b'x'; BLOCK];
        for i in [0, 2, 3, 15, 16, 31, 40, 63] {
            block[i] = b',';
        }
        let expected = [0, 2, 3, 15, 16, 31, 40, 63].iter().fold(0u64, |m, i| m | 1 << i);
        assert_eq!(byte_mask(&block, b','), expected);
        assert_eq!(byte_mask(&block, b'z'), 0);
        assert_eq!(byte_mask(&[0xff; BLOCK], 0xff), u64::MAX);
        assert_eq!(partial_byte_mask(b",a,", b','), 0b101);
    }

    proptest! {
        #[test]
        fn agrees_with_the_portable_loop(block in proptest::collection::vec(0u8..4, BLOCK), c in 0u8..4) {
            let block: [u8; BLOCK] = block.try_into().expect("64 bytes");
            prop_assert_eq!(byte_mask(&block, c), portable_mask(&block, c));
            let shifted = block.map(|b| b.wrapping_add(126));
            prop_assert_eq!(byte_mask(&shifted, c.wrapping_add(126)), portable_mask(&block, c));
        }
    }
}
