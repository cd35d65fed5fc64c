//! The x86-64 vector instruction sets lioscope's kernels are written for, which of them
//! this CPU has (detected once), and the names `v$` views give them. The column store's
//! predicate kernels and the redo diff choose by it.
//!
//! Invariant: [`Isa::effective`] returns only an instruction set the CPU has, so a
//! kernel that runs what it returns never meets an illegal instruction.

use std::fmt;
use std::sync::OnceLock;

/// An instruction set vector kernels can run on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Isa {
    /// Plain Rust, any CPU; the reference the others must agree with.
    Scalar,
    /// x86-64 AVX2 (with POPCNT, which every CPU with AVX2 has): 32-byte vectors,
    /// masks through `movemask`.
    Avx2,
    /// x86-64 AVX-512 F and BW: 64-byte vectors, compares straight into mask registers.
    Avx512,
}

impl Isa {
    /// The fastest instruction set this CPU supports, detected once.
    pub fn best() -> Isa {
        static BEST: OnceLock<Isa> = OnceLock::new();
        *BEST.get_or_init(|| [Isa::Avx512, Isa::Avx2].into_iter().find(|isa| isa.is_supported()).unwrap_or(Isa::Scalar))
    }

    #[cfg(test)]
    /// Every instruction set this CPU supports, slowest first.
    pub fn available() -> Vec<Isa> {
        [Isa::Scalar, Isa::Avx2, Isa::Avx512].into_iter().filter(|isa| isa.is_supported()).collect()
    }

    /// The name shown in statistics and `v$` views.
    pub fn name(self) -> &'static str {
        match self {
            Isa::Scalar => "scalar",
            Isa::Avx2 => "avx2",
            Isa::Avx512 => "avx512",
        }
    }

    /// Whether this CPU can run the kernels for `self`.
    pub fn is_supported(self) -> bool {
        match self {
            Isa::Scalar => true,
            #[cfg(target_arch = "x86_64")]
            Isa::Avx2 => std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("popcnt"),
            #[cfg(target_arch = "x86_64")]
            Isa::Avx512 => {
                std::arch::is_x86_feature_detected!("avx512f") && std::arch::is_x86_feature_detected!("avx512bw")
            }
            #[cfg(not(target_arch = "x86_64"))]
            Isa::Avx2 | Isa::Avx512 => false,
        }
    }

    /// `self` if this CPU supports it, else the best supported one below it. The kernels
    /// run only what this returns, which is what makes their `unsafe` calls sound.
    pub fn effective(self) -> Isa {
        match self {
            Isa::Avx512 if Isa::Avx512.is_supported() => Isa::Avx512,
            Isa::Avx512 | Isa::Avx2 if Isa::Avx2.is_supported() => Isa::Avx2,
            _ => Isa::Scalar,
        }
    }
}

impl fmt::Display for Isa {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}
