//! The kernels behind the bulk entry points: the scalar reference, the SIMD algorithms written
//! once over a vector trait (`generic`), and one thin module per instruction set that supplies
//! the trait.

#[cfg(target_arch = "aarch64")]
pub(crate) mod aarch64;
#[cfg_attr(not(any(target_arch = "x86_64", target_arch = "aarch64")), allow(dead_code))]
pub(crate) mod generic;
pub(crate) mod scalar;
#[cfg(target_arch = "x86_64")]
pub(crate) mod x86_64;

use crate::error::Result;

/// One backend's bulk kernels. The functions are `unsafe` because a SIMD backend's may only run
/// on a CPU with its instruction set; a table is handed out only after that has been checked.
pub(crate) struct KernelFns {
    pub decode_u64: unsafe fn(&[u8], &mut [u64]) -> Result<usize>,
    pub decode_u32: unsafe fn(&[u8], &mut [u32]) -> Result<usize>,
    pub decode_sint64: unsafe fn(&[u8], &mut [i64]) -> Result<usize>,
    pub decode_sint32: unsafe fn(&[u8], &mut [i32]) -> Result<usize>,
    pub decode_bool: unsafe fn(&[u8], &mut [bool]) -> Result<usize>,
    pub count_varints: unsafe fn(&[u8]) -> usize,
    pub encode_u64: unsafe fn(&[u64], &mut [u8]) -> Result<usize>,
    pub encode_u32: unsafe fn(&[u32], &mut [u8]) -> Result<usize>,
    pub encode_i32: unsafe fn(&[i32], &mut [u8]) -> Result<usize>,
    pub encode_sint64: unsafe fn(&[i64], &mut [u8]) -> Result<usize>,
    pub encode_sint32: unsafe fn(&[i32], &mut [u8]) -> Result<usize>,
    pub encode_bool: unsafe fn(&[bool], &mut [u8]) -> Result<usize>,
}
